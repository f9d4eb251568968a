"""A forward evaluation through two door replicas on one PostgreSQL store (issue 47).

A recorded day is replayed into a forward scenario at 50 ms a bar (``kestrel-door feed
replay``, its own process) while three scripted agents trade through both replicas in
turn, each waiting at the edge for the next bar (``advance 1 wait 10s``): a bar
appended by the replay releases a wait on either replica. When the day is over the
operator freezes and unseals the tape; every agent's proof (its tape embedded) is
checked in an empty home once the doors are gone: ``kestrel verify --trust`` says each of
its decisions preceded its bar, or, for an agent that fell behind the feed (a decision
arriving after its bar: at 50 ms a bar on a loaded machine it happens), names the first
that did not, exactly as the signed times say.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_sdk.trust import load_trusted_keys

from tests.doors import SCOPES, serve_door
from tests.forward_door import PREFIX, SCENARIO, bars, forward_catalog
from tests.kestrel_door.test_forward_door import _verify_in_empty_home

DAY = 30
"""Bars the recorded day holds (after the prefix)."""


def _door(home: Path, *args: str) -> str:
    result = CliRunner().invoke(door_group, ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_replayed_day_through_two_replicas_verifies_with_its_order(
    tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_STORE", postgres_dsn)
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(forward_catalog(tmp_path / "catalog")))
    home = tmp_path / "home"
    token = _door(home, "token", "issue", "--principal", "agent-2", "--scope", SCOPES)
    with ExitStack() as stack:
        a = stack.enter_context(serve_door(tmp_path / "a", principal="agent-0"))
        b = stack.enter_context(serve_door(tmp_path / "b", principal="agent-1"))
        agents = [a.token, b.token, token.strip().splitlines()[-1]]
        replicas = [a.url, b.url]
        clients = [
            stack.enter_context(httpx.Client(timeout=60, headers={"Authorization": f"Bearer {t}"}))
            for t in agents
        ]
        sids: list[str] = []
        for n, client in enumerate(clients):  # each opens on one replica, at the prefix's end
            made = client.post(f"{replicas[n % 2]}/v1/sessions", json={"scenario": SCENARIO})
            assert made.status_code == 200, made.text
            sids.append(made.json()["sessionId"])
            ran = client.post(
                f"{replicas[(n + 1) % 2]}/v1/sessions/{sids[n]}/submit",
                json={"source": f"advance {PREFIX - 1}"},
            )
            assert ran.status_code == 200, ran.text

        recorded = tmp_path / "day.csv"
        recorded.write_text(bars(PREFIX, PREFIX + DAY))
        command = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]
        command += ["--home", str(home), "feed", "replay", SCENARIO, str(recorded)]
        replay = subprocess.Popen(
            [*command, "--every", "50ms"],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        failures: list[str] = []

        def trade(n: int) -> None:
            client, sid = clients[n], sids[n]
            for step in range(DAY):
                order = "buy 1 ACME\n" if (step + n) % 4 == 0 else ""
                url = f"{replicas[(n + step) % 2]}/v1/sessions/{sid}/submit"
                made = client.post(url, json={"source": order + "advance 1 wait 10s"})
                if made.status_code != 200:
                    failures.append(f"agent {n} step {step}: {made.text}")
                    return

        traders = [threading.Thread(target=trade, args=(n,)) for n in range(3)]
        for trader in traders:
            trader.start()
        for trader in traders:
            trader.join(timeout=240)
        out, err = replay.communicate(timeout=240)
        assert replay.returncode == 0, err
        assert out.count("published ") == DAY
        assert failures == []

        _door(home, "feed", "freeze", SCENARIO)
        _door(home, "feed", "unseal", SCENARIO)
        proofs: list[dict[str, Any]] = []
        for n, client in enumerate(clients):
            url = f"{replicas[(n + 1) % 2]}/v1/sessions/{sids[n]}/proof"
            made = client.get(url, params={"embedTape": "true"})
            assert made.status_code == 200, made.text
            proofs.append(made.json())
        jwks = tmp_path / "jwks.json"
        jwks.write_text(json.dumps(dict(load_trusted_keys(a.url))))

    for n, proof in enumerate(proofs):  # the doors are gone
        statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
        submissions = statement["predicate"]["submissions"]
        assert len(submissions) == 1 + DAY
        waited = submissions[1:]
        assert [s["bar"] for s in waited] == list(range(PREFIX, PREFIX + DAY))
        (tmp_path / f"proof-{n}.json").write_text(json.dumps(proof))
        verified = _verify_in_empty_home(tmp_path, f"proof-{n}.json", "--trust", str(jwks))
        late = [s["seq"] for s in waited if not s["arrivedAt"] < s["barPublishedAt"]]
        if not late:  # the agent kept up with the feed: every decision preceded its bar
            assert verified.returncode == 0, verified.stderr
            assert f"forward: each of {DAY} decisions preceded its bar" in verified.stdout
        else:  # it fell behind (a loaded machine): the first late decision is named
            assert verified.returncode != 0
            assert f"statement.predicate.submissions[seq {late[0]}]" in verified.stderr
            assert "verified by replay" not in verified.stdout
