"""Issue 47's Must show: a forward evaluation through two door replicas, then replayed.

Two ``kestrel-door serve`` replicas on one PostgreSQL store; a forward scenario
(``acme-forward``: acme-chop's terms, a three-bar prefix) whose tape ``kestrel-door feed
replay --every 50ms`` grows from a recorded file of 40 bars. Three scripted agents, each
its own principal with its own token, trade it through the SDK's remote transport,
alternating replicas A and B on every submission, each submission ``advance 1 wait 30s``
on A, ``advance 1`` with the submit's ``wait`` argument (30 s) on B (after a buy or a
sell now and then), sent right after the frame before it. A fourth, the
laggard, sends its first forward decision only once the test has seen that bar
published. Then ``feed freeze`` and ``feed unseal``; every proof (its tape embedded)
verifies by replay with ``kestrel verify`` in an empty HOME, and with ``--trust`` (the
doors' key set, saved once both replicas still served it).

What is asserted of the order of events, and why it cannot be flaky: a decision is on
time when it reaches the door before its bar is published. An agent that keeps up sends
``advance 1 wait`` for bar k+1 while bar k+1 is unpublished and the door holds the call
until it is; but on a loaded machine an agent can fall behind the 50 ms feed (a frame
read late, a replica descheduled), and its next submission then trades into a bar that
is already published: a decision after its bar, truly, which the check must name. It
catches up at once (the bars it lacks are there, so its next calls return without
waiting) and is on time again at the edge. So the test asserts, per statement, what the
statement itself shows and what the test saw independently, never a timing:

* every submission's ``arrivedAt`` lies between when its agent sent it and when the
  answer came back (the door's clock read during the call, not after its wait); every
  bar's ``barPublishedAt`` is the same in every statement and no later than when the test
  read the replay's line saying it was published;
* ``verify --trust`` passes, saying ``forward: each of 40 decisions preceded its bar``,
  exactly when every decision arrived before its bar; it fails naming the first one
  that arrived once its bar could be seen (after ``barVisibleBy``, the door's clock read
  after the bar's commit), and the proof still verifies by replay alone; one arriving
  between the two reads passes, its order said unconfirmed, naming it;
* the laggard's first forward decision, certainly late (sent after the test saw its
  bar published), is named by its seq; the three agents' first forward decisions are
  sent as the feed process starts, a second or more before it can publish a bar, so at
  least one of them is on time (a door that noted arrivals after the wait, not before,
  would have none: the test fails so);
* a statement whose order is altered (a decision's arrival and its bar's publication
  swapped) and re-signed with the door's own key fails ``--trust`` naming that submission.

When the agents keep up, their statements all pass; when one does not, the run
logs which decisions were late.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import JWKS_PATH
from kestrel_door.cli import door_group
from kestrel_door.keys import DoorKeys
from kestrel_door.stores import open_door_store
from kestrel_protocol import PAYLOAD_TYPE, KestrelError, RefusalCode, canonical_json, pae
from kestrel_sdk import create_sdk, remote_transport

from tests.forward_door import PREFIX, SCENARIO, bars, forward_catalog
from tests.kestrel_door.test_attested import SCOPES, Replicas

logger = logging.getLogger(__name__)

APPENDED = 40
LAST = PREFIX + APPENDED - 1
AGENTS = ("ada", "bo", "cy")
LAGGARD = "lag"
WAIT = "advance 1 wait 30s"


def _now() -> datetime:
    return datetime.now(UTC)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _door_cli(store: str, home: Path, *args: str) -> str:
    result = CliRunner().invoke(door_group, ["--home", str(home), "--store", store, *args])
    assert result.exit_code == 0, result.output
    return result.output


class Feed:
    """``kestrel-door feed replay`` in its own process; the times the test read each of
    its ``published`` lines, and an event per bar index once its line was read."""

    def __init__(self, store: str, home: Path, recorded: Path) -> None:
        command = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]
        command += ["--home", str(home), "--store", store, "feed", "replay", SCENARIO]
        command += [str(recorded), "--every", "50ms"]
        self.read: dict[int, datetime] = {}
        self.seen = {k: threading.Event() for k in range(PREFIX, LAST + 1)}
        self.lines: list[str] = []
        home.mkdir(parents=True, exist_ok=True)
        self.errors = home / "feed-replay.err"
        with self.errors.open("w") as errors:
            self.proc = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=errors, text=True, bufsize=1
            )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            at = _now()
            self.lines.append(line)
            if line.startswith("published "):  # "published TIME: N bar(s)"
                index = int(line.split(": ", 1)[1].split()[0]) - 1
                self.read[index] = at
                self.seen[index].set()

    def finish(self) -> None:
        self.proc.wait(timeout=300)
        self.reader.join(timeout=30)
        assert self.proc.returncode == 0, self.errors.read_text()
        assert self.lines[-1].startswith(f"replayed {APPENDED} bar(s)"), self.lines[-3:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


@dataclass
class Trader:
    """One agent's session and, per forward submission (by seq), when it was sent and
    its answer received, by the test's clock."""

    name: str
    token: str
    session: str = ""
    sent: dict[int, tuple[datetime, datetime]] = field(default_factory=dict)
    bars: dict[int, int] = field(default_factory=dict)
    not_published: int = 0
    error: BaseException | None = None


def _decision(trader: Trader, clock: int, held: int) -> str:
    """A few trades, each agent's own: buy 5 every eighth bar when flat, sell four later."""
    phase = (clock + AGENTS.index(trader.name) if trader.name in AGENTS else clock) % 8
    if phase == 0 and held == 0:
        return "buy 5 ACME\n"
    if phase == 4 and held > 0:
        return f"sell {held} ACME\n"
    return ""


async def _trade(trader: Trader, urls: tuple[str, str], ready: threading.Event, go: Any) -> None:
    transports = [remote_transport(url, trader.token) for url in urls]
    async with create_sdk(transports[0]) as a, create_sdk(transports[1]) as b:
        opened = await a.open_session(SCENARIO)
        assert opened.session is not None
        trader.session = opened.session.id
        answer = await a.session(trader.session).submit(f"advance {PREFIX - 1}")  # the prefix
        clock, seq, held = answer.delivery.frame.clock.bar, answer.pentad.seq, 0
        ready.set()
        while clock < LAST:
            go(clock)
            # seq 2 on B, 3 on A, …: every other call on each; on A the statement form
            # (advance 1 wait 30s), on B the submit's wait argument
            on_b = seq % 2 == 1
            source = _decision(trader, clock, held) + ("advance 1" if on_b else WAIT)
            session = (a, b)[on_b].session(trader.session)
            sent = _now()
            try:
                answer = await session.submit(source, wait=30 if on_b else None)
            except KestrelError as exc:  # the wait ran out: nothing journaled, again
                if exc.code != RefusalCode.BAR_NOT_PUBLISHED or trader.not_published > 20:
                    raise
                trader.not_published += 1
                continue
            seq = answer.pentad.seq
            trader.sent[seq] = (sent, _now())
            trader.bars[seq] = clock + 1
            frame = answer.delivery.frame
            assert frame.clock.bar == clock + 1, frame.clock
            clock = frame.clock.bar
            held = sum(int(p.qty) for p in frame.positions if p.symbol == "ACME")


def _agent(trader: Trader, urls: tuple[str, str], ready: threading.Event, go: Any) -> None:
    try:
        anyio.run(_trade, trader, urls, ready, go)
    except BaseException as exc:  # said by the test's thread
        trader.error = exc
        ready.set()


def _proof(url: str, token: str, session: str) -> dict[str, Any]:
    async def fetch() -> dict[str, Any]:
        async with create_sdk(remote_transport(url, token)) as sdk:
            data: dict[str, Any] = (await sdk.proof(session, embed_tape=True)).to_json()
            return data

    return anyio.run(fetch)


def _verify(tmp_path: Path, name: str, proof: dict[str, Any], *args: str) -> tuple[int, str]:
    """``kestrel verify`` of ``proof`` in a new process, HOME a new empty directory and no
    Kestrel variable (no catalog path: the proof's embedded tape is all it has)."""
    path = tmp_path / "proofs" / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(canonical_json(proof))
    home = tmp_path / "empty-homes" / f"{name}-{len(args)}"
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(home)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    done = subprocess.run(
        [*command, str(path), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return found


def _late(submissions: list[dict[str, Any]]) -> list[int]:
    """The seqs of the forward decisions that arrived once their bar could be seen
    (after the door's read of its clock following the bar's commit)."""
    return [
        s["seq"]
        for s in submissions
        if "barPublishedAt" in s and _instant(s["barVisibleBy"]) < _instant(s["arrivedAt"])
    ]


def _unconfirmed(submissions: list[dict[str, Any]]) -> list[int]:
    """The seqs of the forward decisions that arrived while their bar was being
    published (from the read before its commit to the read after it)."""
    return [
        s["seq"]
        for s in submissions
        if "barPublishedAt" in s
        and _instant(s["barPublishedAt"]) <= _instant(s["arrivedAt"]) <= _instant(s["barVisibleBy"])
    ]


def _first_late(proof: dict[str, Any]) -> int:
    """The seq of the first decision of ``proof``'s statement after its bar (or one past
    its last submission)."""
    submissions = _statement(proof)["predicate"]["submissions"]
    return min(_late(submissions), default=len(submissions) + 1)


def _resigned(proof: dict[str, Any], statement: dict[str, Any], keys: DoorKeys) -> dict[str, Any]:
    payload = canonical_json(statement)
    kid, key = keys.signer()
    signature = base64.b64encode(key.sign(pae(PAYLOAD_TYPE, payload))).decode("ascii")
    envelope = {
        **proof["attestation"],
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": kid, "sig": signature}],
    }
    return {**proof, "attestation": envelope}


def test_a_forward_evaluation_through_two_replicas_replays_and_its_order_is_checked(
    postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(forward_catalog(tmp_path / "catalog")))
    home = tmp_path / "operator"
    recorded = tmp_path / "day.csv"
    recorded.write_text(bars(PREFIX, PREFIX + APPENDED))
    replicas = Replicas(postgres_dsn, tmp_path)
    feed: Feed | None = None
    try:
        urls = (replicas.a, replicas.b)
        traders = [
            Trader(
                name,
                _door_cli(postgres_dsn, home, "token", "issue", "--principal", name, *SCOPES)
                .strip()
                .splitlines()[-1],
            )
            for name in (*AGENTS, LAGGARD)
        ]
        readies = [threading.Event() for _ in traders]
        started = threading.Event()

        def go_for(trader: Trader) -> Any:
            def go(clock: int) -> None:
                started.wait(timeout=300)
                if trader.name == LAGGARD and clock == PREFIX - 1:
                    feed_seen = feed.seen[PREFIX] if feed is not None else None
                    assert feed_seen is not None
                    assert feed_seen.wait(timeout=300)

            return go

        threads = [
            threading.Thread(target=_agent, args=(t, urls, r, go_for(t)), daemon=True)
            for t, r in zip(traders, readies, strict=True)
        ]
        for thread in threads:
            thread.start()
        for ready in readies:  # every session opened and at the prefix's end
            assert ready.wait(timeout=300)
        for trader in traders:
            assert trader.error is None, repr(trader.error)
        feed = Feed(postgres_dsn, home, recorded)
        started.set()
        for thread in threads:
            thread.join(timeout=600)
            assert not thread.is_alive()
        for trader in traders:
            assert trader.error is None, repr(trader.error)
        feed.finish()
        read = feed.read

        assert "froze" in _door_cli(postgres_dsn, home, "feed", "freeze", SCENARIO)
        assert "unsealed" in _door_cli(postgres_dsn, home, "feed", "unseal", SCENARIO)
        jwks = tmp_path / "door-keys.json"
        jwks.write_text(httpx.get(replicas.b + JWKS_PATH, timeout=60).text)
        proofs = {t.name: _proof(urls[n % 2], t.token, t.session) for n, t in enumerate(traders)}
    finally:
        if feed is not None:
            feed.stop()
        replicas.stop()

    published: dict[int, str] = {}
    for trader in traders:
        proof = proofs[trader.name]
        predicate = _statement(proof)["predicate"]
        assert predicate["forward"] is True
        submissions = predicate["submissions"]
        assert [s["seq"] for s in submissions] == list(range(1, len(proof["pentads"]) + 1))
        forward = [s for s in submissions if "barPublishedAt" in s]
        assert [s["bar"] for s in forward] == list(range(PREFIX, LAST + 1))
        assert [s["seq"] for s in forward] == sorted(trader.sent)  # the prefix's: not forward
        for s in forward:  # the door's clock, read during the call (not after its wait)
            sent, received = trader.sent[s["seq"]]
            assert trader.bars[s["seq"]] == s["bar"]
            assert sent <= _instant(s["arrivedAt"]) <= received, (s, sent, received)
            assert _instant(s["barPublishedAt"]) <= _instant(s["barVisibleBy"]) <= read[s["bar"]], s
            assert published.setdefault(s["bar"], s["barPublishedAt"]) == s["barPublishedAt"]

        replayed, said = _verify(tmp_path, trader.name, proof)
        assert replayed == 0, said
        assert f"ok: proof {proof['root']}" in said
        trusted, said = _verify(tmp_path, trader.name, proof, "--trust", str(jwks))
        late = _late(submissions)
        if trader.name == LAGGARD:
            # sent once the test had read that its bar was published: certainly late
            assert late[:1] == [forward[0]["seq"]], late
        unconfirmed = _unconfirmed(submissions)
        if late:
            logger.warning("%s: decisions after their bar: seqs %s", trader.name, late)
            assert trusted != 0, said
            assert f"statement.predicate.submissions[seq {late[0]}]" in said, said
            assert f"submission {late[0]} arrived at" in said, said
        else:
            assert trusted == 0, said
            on_time = APPENDED - len(unconfirmed)
            assert f"forward: each of {on_time} decisions preceded its bar" in said, said
            for seq in unconfirmed:  # arrived while its bar was being published
                logger.warning("%s: decision %s arrived as its bar was published", trader.name, seq)
                assert f"order unconfirmed: statement.predicate.submissions[seq {seq}]" in said

    # the order altered: an on-time decision (before any late one of its statement)
    # has its arrival and its bar's publication swapped, and the statement is re-signed
    # with the door's own key, so that only the order check can see it
    candidates = [
        (t, s)
        for t in traders
        if t.name != LAGGARD
        for s in _statement(proofs[t.name])["predicate"]["submissions"]
        if "barPublishedAt" in s
        and s["seq"] < _first_late(proofs[t.name])
        and _instant(s["arrivedAt"]) < _instant(s["barPublishedAt"])
    ]
    assert candidates, "no agent's first forward decision was on time"
    victim, chosen = candidates[len(candidates) // 2]
    statement = _statement(proofs[victim.name])
    submissions = [dict(s) for s in statement["predicate"]["submissions"]]
    entry = next(s for s in submissions if s["seq"] == chosen["seq"])
    entry["arrivedAt"], entry["barPublishedAt"] = entry["barPublishedAt"], entry["arrivedAt"]
    entry["barVisibleBy"] = entry["barPublishedAt"]  # and the bar visible by then
    altered = {**statement, "predicate": {**statement["predicate"], "submissions": submissions}}
    keys = DoorKeys(open_door_store(postgres_dsn))
    forged = _resigned(proofs[victim.name], altered, keys)
    code, said = _verify(tmp_path, "altered", forged, "--trust", str(jwks))
    assert code != 0, said
    assert f"statement.predicate.submissions[seq {entry['seq']}]" in said, said
    assert f"submission {entry['seq']} arrived at {entry['arrivedAt']}" in said, said
    assert "attestation.signatures" not in said, said  # its signature holds: the order fails
