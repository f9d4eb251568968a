"""A forward session through a real door (issue 47): it waits at the edge on ``/v1`` and
``/mcp`` without holding another session up, and its signed statement says the order.

Agents at the last published bar block on ``advance 1 wait 20s`` (a ``/v1`` submit and
an ``/mcp`` ``tools/call``) while the door answers another session at once; the
operator's bar releases both; past the edge without a wait is refused
``BAR_NOT_PUBLISHED``, retryable. The statement the door signs about the ``/v1``
session's grade says ``forward: true``, its waited decision arrived before its bar was
published. Frozen by the operator and unsealed, the proof (its tape embedded) verifies
by replay in an empty home once the door is gone, and ``kestrel verify --trust`` says
each decision preceded its bar; the same proof with its order swapped fails naming the
submission.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_sdk.trust import check_attestation, load_trusted_keys

from tests.doors import MCP_HEADERS, serve_door
from tests.forward_door import PREFIX, SCENARIO, bars, feed_token, forward_catalog


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The forward scenario, named by ``KESTREL_CATALOG_PATH``."""
    directory = forward_catalog(tmp_path / "catalog")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(directory))
    return directory


def _mcp_submit(client: httpx.Client, url: str, sid: str, source: str) -> dict[str, Any]:
    """``tools/call`` of the submit tool on ``/mcp``: its structured result."""
    params = {"name": "kestrel_session_submit", "arguments": {"sessionId": sid, "source": source}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    answer = client.post(url + "/mcp", json=message, headers=MCP_HEADERS)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


def test_a_forward_session_waits_on_the_door_and_its_statement_says_the_order(
    tmp_path: Path, catalog: Path
) -> None:
    home = tmp_path / "home"
    with serve_door(home) as door:
        operator = {"Authorization": f"Bearer {feed_token(home)}", "Content-Type": "text/csv"}
        appends = f"{door.url}/v1/feeds/{SCENARIO}/bars"
        auth = {"Authorization": f"Bearer {door.token}"}
        agent, mcp, other = (httpx.Client(timeout=60, headers=auth) for _ in range(3))
        with agent, mcp, other:

            def opened(label: str) -> str:
                body = {"scenario": SCENARIO, "label": label}
                made = agent.post(f"{door.url}/v1/sessions", json=body)
                assert made.status_code == 200, made.text
                sid: str = made.json()["sessionId"]
                return sid

            sid, by_mcp, idle = opened("trader"), opened("mcp-trader"), opened("idle")

            def submit(source: str, session: str = sid) -> httpx.Response:
                url = f"{door.url}/v1/sessions/{session}/submit"
                return agent.post(url, json={"source": source})

            # to the edge: the prefix's last bar (a decision into a bar published
            # before it arrived would be a late one)
            assert submit(f"advance {PREFIX - 1}").status_code == 200
            assert submit(f"advance {PREFIX - 1}", by_mcp).status_code == 200
            early = submit("advance 1")
            assert early.status_code != 200
            refusal = early.json()["refusal"]
            assert refusal["code"] == "BAR_NOT_PUBLISHED"
            assert refusal["detail"]["retryable"] is True

            waited: list[httpx.Response] = []
            mcp_waited: list[dict[str, Any]] = []
            waiters = [
                threading.Thread(target=lambda: waited.append(submit("advance 1 wait 20s"))),
                threading.Thread(
                    target=lambda: mcp_waited.append(
                        _mcp_submit(mcp, door.url, by_mcp, "advance 1 wait 20s")
                    )
                ),
            ]
            for waiter in waiters:
                waiter.start()
            try:
                for _ in range(3):  # the door answers another session while both wait
                    frame = other.get(f"{door.url}/v1/sessions/{idle}/frame")
                    assert frame.status_code == 200, frame.text
                assert all(waiter.is_alive() for waiter in waiters)  # bar 3 is not out
                made = httpx.post(appends, content=bars(PREFIX, PREFIX + 1), headers=operator)
                assert made.status_code == 200, made.text
            finally:
                for waiter in waiters:
                    waiter.join(timeout=60)
            assert waited[0].status_code == 200, waited[0].text
            assert waited[0].json()["delivery"]["frame"]["clock"]["bar"] == PREFIX
            assert not mcp_waited[0].get("isError"), mcp_waited[0]
            mcp_frame = mcp_waited[0]["structuredContent"]["delivery"]["frame"]
            assert mcp_frame["clock"]["bar"] == PREFIX

            frozen = httpx.post(f"{door.url}/v1/feeds/{SCENARIO}/freeze", headers=operator)
            assert frozen.status_code == 200, frozen.text
            assert frozen.json()["frozen"] is True
            unsealed = CliRunner().invoke(
                door_group, ["--home", str(home), "feed", "unseal", SCENARIO]
            )
            assert unsealed.exit_code == 0, unsealed.output
            url = f"{door.url}/v1/sessions/{sid}/proof"
            proof = agent.get(url, params={"embedTape": "true"})
            assert proof.status_code == 200, proof.text
        data = proof.json()
        predicate = json.loads(base64.b64decode(data["attestation"]["payload"]))["predicate"]
        assert predicate["forward"] is True
        first, second = predicate["submissions"]
        assert first["bar"] == 1
        assert "barPublishedAt" not in first  # a bar of the prefix
        assert second["bar"] == PREFIX
        assert second["arrivedAt"] < second["barPublishedAt"]
        keys = load_trusted_keys(door.url)
        attested = check_attestation(data, keys)
        assert attested.decisions == 1
        (tmp_path / "jwks.json").write_text(json.dumps(dict(keys)))

    # the door is gone: the proof verifies by replay in an empty home, and with --trust
    (tmp_path / "proof.json").write_text(json.dumps(data))
    verified = _verify_in_empty_home(tmp_path, "proof.json", "--trust", str(tmp_path / "jwks.json"))
    assert verified.returncode == 0, verified.stderr
    assert "forward: its one decision preceded its bar" in verified.stdout

    # the order tampered with (the waited decision's arrival and its bar's publication
    # swapped): fails naming the submission
    statement = json.loads(base64.b64decode(data["attestation"]["payload"]))
    entry = statement["predicate"]["submissions"][1]
    entry["arrivedAt"], entry["barPublishedAt"] = entry["barPublishedAt"], entry["arrivedAt"]
    entry["barVisibleBy"] = entry["barPublishedAt"]  # and the bar visible by then
    payload = base64.b64encode(json.dumps(statement).encode()).decode()
    tampered = {**data, "attestation": {**data["attestation"], "payload": payload}}
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    refused = _verify_in_empty_home(
        tmp_path, "tampered.json", "--trust", str(tmp_path / "jwks.json")
    )
    assert refused.returncode != 0
    assert "statement.predicate.submissions[seq 2]" in refused.stderr + refused.stdout


def _verify_in_empty_home(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` in a new, empty home, no catalog path: the proof alone."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    env.pop("KESTREL_CATALOG_PATH", None)
    env.pop("KESTREL_STORE", None)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    return subprocess.run(
        [*command, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_wait_longer_than_the_door_s_timeout_is_refused_in_time_and_never_applies(
    tmp_path: Path, catalog: Path
) -> None:
    """Behind ``serve --timeout 2`` an agent asks to wait 10 s for the next bar, which
    the operator publishes 3 s later: the door answers ``BAR_NOT_PUBLISHED`` (retryable,
    nothing applied) before its timeout, and the submission never applies (was: 504
    "the call timed out", retryable, and the submission applied once the bar came, so a
    retry bought and advanced twice)."""
    home = tmp_path / "home"
    with serve_door(home, "--timeout", "2") as door:
        operator = {"Authorization": f"Bearer {feed_token(home)}", "Content-Type": "text/csv"}
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(timeout=60, headers=auth) as agent:
            made = agent.post(f"{door.url}/v1/sessions", json={"scenario": SCENARIO})
            sid = made.json()["sessionId"]
            url = f"{door.url}/v1/sessions/{sid}"
            assert agent.post(f"{url}/submit", json={"source": f"advance {PREFIX - 1}"}).is_success
            appends = f"{door.url}/v1/feeds/{SCENARIO}/bars"
            later = threading.Timer(
                3,
                httpx.post,
                (appends,),
                {"content": bars(PREFIX, PREFIX + 1), "headers": operator},
            )
            later.start()
            try:
                waited = agent.post(
                    f"{url}/submit", json={"source": "buy 1 ACME\nadvance 1 wait 10s"}
                )
            finally:
                later.join()
            assert waited.status_code == 409, waited.text
            assert waited.json()["refusal"]["code"] == "BAR_NOT_PUBLISHED"
            assert waited.json()["refusal"]["detail"]["retryable"] is True
            frame = agent.get(f"{url}/frame").json()["frame"]
            assert (frame["seq"], frame["clock"]["bar"]) == (1, PREFIX - 1)  # nothing applied
            assert frame["orders"] == []  # the buy was never placed
