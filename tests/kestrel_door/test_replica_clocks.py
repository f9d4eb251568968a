"""One clock for the order of events across door replicas and feeds (issue 48).

The door signs, per submission to a forward session, when it arrived and when the bar
it traded into was published, and ``kestrel verify --trust`` calls a decision on time
when it arrived before its bar. Those two times were read from the clocks of whichever
processes did the work: the replica the submission reached, and the replica or
``kestrel-door feed`` process that appended the bar, each its own host's. Replicas on
one PostgreSQL store run on several hosts, and host clocks drift: a decision that
reached a replica whose clock ran behind, after a bar was published by a process whose
clock ran ahead, was signed as made before the bar, and ``--trust`` passed it
("forward: each of 2 decisions preceded its bar"), though it was sent once the bar
could be seen.

Here replica A's host clock runs 30 s ahead, replica B's 30 s behind, and so does a
``kestrel-door feed append`` process's: bar 3 is appended through A's feed route, bar
4 by the feed process, each decision into them sent through B once the bar is
published. Every time now comes from the store's clock (the database server's), one
for every process: both decisions are signed as arrived after their bar was visible,
and ``--trust`` names the first.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import JWKS_PATH

from tests.doors import serve_door
from tests.forward_door import PREFIX, SCENARIO, bars, feed_token, forward_catalog
from tests.kestrel_door.test_forward_live import _verify

SKEWED = """
import datetime as _dt, kestrel_door.arrivals as _arrivals
class _Skewed(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return _dt.datetime.now(tz) + _dt.timedelta(seconds={seconds})
_arrivals.datetime = _Skewed
"""
"""Python a process runs first: its host's clock (``door_time``) ``seconds`` off."""


def _skewed(seconds: int) -> str:
    return SKEWED.replace("{seconds}", str(seconds))


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return found


def _feed(home: Path, *args: str, data: str = "", setup: str = "") -> None:
    """``kestrel-door feed ARGS`` in its own process (``data`` on stdin, ``setup`` first)."""
    command = [sys.executable, "-c", f"{setup}\nfrom kestrel_door.cli import main; main()"]
    done = subprocess.run(
        [*command, "--home", str(home), "feed", *args],
        input=data,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_replicas_and_feeds_whose_host_clocks_differ_sign_one_order_of_events(
    postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_STORE", postgres_dsn)  # every door and feed on one store
    forward_catalog(tmp_path / "catalog")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(tmp_path / "catalog"))
    ahead, behind = _skewed(30), _skewed(-30)
    feeder = {"Authorization": f"Bearer {feed_token(tmp_path / 'a')}", "Content-Type": "text/csv"}
    with (
        serve_door(tmp_path / "a", principal="alice", setup=ahead) as a,
        serve_door(tmp_path / "b", principal="alice", setup=behind) as b,
        httpx.Client(headers={"Authorization": f"Bearer {b.token}"}, timeout=60) as http,
    ):
        opened = http.post(b.url + "/v1/sessions", json={"scenario": SCENARIO, "label": "x"})
        sid = opened.json()["sessionId"]
        submit = f"{b.url}/v1/sessions/{sid}/submit"
        prefix = http.post(submit, json={"source": f"advance {PREFIX - 1}"})  # no decision
        assert prefix.status_code == 200, prefix.text

        appended = http.post(
            f"{a.url}/v1/feeds/{SCENARIO}/bars", content=bars(PREFIX, PREFIX + 1), headers=feeder
        )
        assert appended.status_code == 200, appended.text
        late = http.post(submit, json={"source": "buy 10 ACME\nadvance 1"})  # bar 3 is out
        assert late.status_code == 200, late.text

        _feed(tmp_path / "a", "append", SCENARIO, data=bars(PREFIX + 1, PREFIX + 2), setup=ahead)
        later = http.post(submit, json={"source": "sell 10 ACME\nadvance 1"})  # bar 4 is out
        assert later.status_code == 200, later.text

        jwks = tmp_path / "door-keys.json"
        jwks.write_text(httpx.get(a.url + JWKS_PATH, timeout=60).text)
        for verb in ("freeze", "unseal"):
            _feed(tmp_path / "a", verb, SCENARIO)
        proof = http.get(f"{a.url}/v1/sessions/{sid}/proof?embedTape=true").json()

    submissions = _statement(proof)["predicate"]["submissions"]
    forward = [s for s in submissions if "barPublishedAt" in s]
    assert [(s["seq"], s["bar"]) for s in forward] == [(2, PREFIX), (3, PREFIX + 1)]
    for s in forward:  # each sent once its bar could be seen: so signed
        assert s["barPublishedAt"] <= s["barVisibleBy"] < s["arrivedAt"], s
    code, said = _verify(tmp_path, "skewed", proof, "--trust", str(jwks))
    assert code != 0, said
    assert "statement.predicate.submissions[seq 2]" in said, said
    assert "once the bar could be seen" in said, said
