"""The least a step can cost in pure Python, layer by layer, against the peers.

Run: ``uv run python benchmarks/step_floor.py [--runs 5] [--steps 50000]``.

A step does only what some caller asked for (issue 48). What every step must do,
whoever calls: take the statement (parse it when new, reuse it when seen), match and
fill (here: read the bar, move the position and the account in integers), keep the
journal row (a list append on the memory store; on SQLite one committed statement and
the horizon read, as the runtime's crash and lookahead guarantees need) and have the
values a training loop observes (position, cash, equity, the bar's close). That is the
``bare`` floor. On top of it, layer by layer, what callers ask for:

- ``roots``: the frame's canonical text and its sha256 root, the pentad's text and
  root: what a JSON face sends (and what the runtime's journal binds today).
- ``objects``: the response's protocol objects (response, pentad, delivery, frame,
  clock, bar, account, position and events when they changed), built through
  pydantic-core's public schema, the cheapest way the public API allows: what an SDK
  caller reading ``response.delivery.frame`` asks for. Objects carry the roots, so this
  layer sits on ``roots``.

Each layer is one straight-line function over real bars of ``minute-200k``, every text
prepared ahead where it can be, no engine, no layers of code (no transport, runtime or
lock): a measuring stick, not an implementation. Rates are set against backtesting.py's
bars/s (the SMA(20) cross of ``engine.py``'s (a)) and gym-trading-env's steps/s (random
actions, ``gym_env.py``), measured in the same run, alternated, by process CPU.

``gym as Gymnasium's step`` is the gym's mix called as ``gym_env.py`` calls both envs:
the caller draws a random action each step (gym-trading-env's rate includes that draw),
and the step hands back what Gymnasium's API asks of every env (an observation array,
the reward, ``terminated``, ``truncated``, an empty ``info``).

``gym graded and proved`` is that step on the roots layer, and at each episode's end
(every 2,519 steps) what a graded and proved episode hands its caller: its grade's
metrics, measured as the runtime measures them on the episode's closed engine (the
metrics are the grade's definition: exact sums, the 50-digit logarithms and roots
``docs/engine.md`` names), and its proof's canonical text written from its values in
one ``orjson`` call, hashed and kept, as a graded env keeps every proof (as its text:
the object is made when someone asks for it). The values are prepared ahead; no record,
blotter or pentad is written by Python code, and nothing is replayed.

``(a)`` mixes the variants as the SMA(20) cross agent of ``engine.py`` meets them on the
first ``--steps`` bars (flat bars, bars holding its position, bars it trades on); the
gym's mix is two trades in three steps (random actions over positions −1/0/1).
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import engine  # benchmarks/engine.py: the SMA(20) peer run and its tape frame
import gym_env  # benchmarks/gym_env.py: gym-trading-env on the same tape
import numpy as np
import orjson
from gymnasium import spaces
from kestrel_protocol import (
    AccountState,
    Clock,
    Delivery,
    FrameBar,
    FrameEvent,
    GradeResult,
    Pentad,
    PentadBody,
    Position,
    ScenarioRef,
    SessionFrame,
    SessionResponse,
)
from kestrel_protocol.surface.arguments import SubmitArgs
from kestrel_sdk.gym import TradingEnv
from kestrel_sdk.gym.spaces import ACCOUNT_FEATURES, BAR_FEATURES
from kestrel_sdk.runtime.catalog import LoadedScenario, load_catalog
from kestrel_sdk.runtime.engine.core import SessionEngine
from kestrel_sdk.runtime.engine.grade import measure_grade
from kestrel_sdk.runtime.engine.wire import builder
from kestrel_sdk.runtime.lang import parse_located

with warnings.catch_warnings():  # gym_trading_env turns every warning into an error
    from gym_trading_env.environments import (  # type: ignore[import-untyped]
        TradingEnv as PeerEnv,
    )

SID = "ks_g2ujp7wmcuwnqywdoj2d5repwa"
ROOT = "sha256:" + "c" * 64
NEW_BAR, NEW_CLOCK, NEW_FRAME = builder(FrameBar), builder(Clock), builder(SessionFrame)
NEW_DELIVERY, NEW_RESPONSE, NEW_PENTAD = (
    builder(Delivery),
    builder(SessionResponse),
    builder(Pentad),
)
NEW_ACCOUNT, NEW_POSITION, NEW_EVENT = builder(AccountState), builder(Position), builder(FrameEvent)
SCENARIO = builder(ScenarioRef)({"id": engine.SCENARIO, "root": ROOT})
FLAT_ACCOUNT = {
    "cash": "100000.00",
    "equity": "100000.00",
    "realized": "0.00",
    "unrealized": "0.00",
    "fees": "0.00",
    "peak": "100000.00",
    "drawdown": "0.00000000",
}
FLAT = (
    NEW_ACCOUNT(FLAT_ACCOUNT),
    '{"cash":"100000.00","drawdown":"0.00000000","equity":"100000.00","fees":"0.00"'
    ',"peak":"100000.00","realized":"0.00","unrealized":"0.00"}',
)


LAYERS = ("bare", "roots", "objects")
"""What a step makes, each layer on the one before (see the module docstring)."""


class Floor:
    """The straight-line step over one tape, keeping its journal in ``journal``, making
    what ``layer`` asks for."""

    def __init__(self, journal: Callable[[int, str, str, str], None], layer: str) -> None:
        self.layer = LAYERS.index(layer)
        self.programs: dict[str, Any] = {}
        self.cash = 10_000_000
        tape = load_catalog().get(engine.SCENARIO).tape  # type: ignore[union-attr]
        self.cols = tape.columns[engine.SYMBOL]
        self.times = tape.times
        self.last = len(tape) - 1
        self.journal = journal
        self.texts: dict[int, str] = {}
        self.bodies: dict[str, Any] = {}
        self.seq, self.bar, self.prev = 0, 0, ROOT

    def price(self, value: int) -> str:
        text = self.texts.get(value)
        if text is None:
            text = self.texts[value] = f"{value // 100}.{value % 100:02d}"
        return text

    def step(self, arguments: dict[str, str], held: int, trade: bool) -> Any:
        """One step of ``arguments['source']``; ``held`` shares after it; ``trade``: the
        source is new (parsed) and placed an order that filled (two events)."""
        source = SubmitArgs.model_validate(arguments).source
        program = self.programs.get(source)
        if program is None:
            program = parse_located(source)
            if len(self.programs) < 512:
                self.programs[source] = program
        seq, bar, prev = self.seq + 1, self.bar + 1, self.prev
        cols = self.cols
        close = cols.close[bar]
        if trade:  # the fill at the bar's open, its fee, the position moved
            self.cash -= (held or -10) * cols.open[bar] // 100 + 103
        observed = (held, self.cash, self.cash + held * close // 100, close)
        if not self.layer:
            self.journal(seq, source, "", "")
            self.seq, self.bar = seq, bar
            return observed
        pentad = (
            f'{{"body":{{"bytes":"{source}","mediaType":"text/x-kestrel"}},"prev":"{prev}"'
            f',"seq":{seq},"session":"{SID}"}}'
        )
        pentad_root = "sha256:" + hashlib.sha256(pentad.encode()).hexdigest()
        price = self.price
        o, h, lo, c = (
            price(cols.open[bar]),
            price(cols.high[bar]),
            price(cols.low[bar]),
            price(cols.close[bar]),
        )
        volume, when = cols.volume[bar], self.times[bar]
        events: list[Any] = []
        events_json = ""
        if trade:
            events = [
                NEW_EVENT({"type": "accepted", "bar": bar - 1, "order": "o1", "qty": 10}),
                NEW_EVENT(
                    {
                        "type": "fill",
                        "bar": bar,
                        "order": "o1",
                        "qty": 10,
                        "price": o,
                        "fee": "1.03",
                    }
                ),
            ]
            events_json = (
                f'{{"bar":{bar - 1},"order":"o1","qty":10,"type":"accepted"}},{{"bar":{bar}'
                f',"fee":"1.03","order":"o1","price":"{o}","qty":10,"type":"fill"}}'
            )
        if held:
            equity = 10_000_000 + held * (cols.close[bar] - cols.close[0])
            e = f"{equity // 100}.{equity % 100:02d}"
            account = NEW_ACCOUNT({**FLAT_ACCOUNT, "equity": e, "peak": e, "unrealized": e})
            account_json = (
                f'{{"cash":"100000.00","drawdown":"0.00000000","equity":"{e}","fees":"0.00"'
                f',"peak":"{e}","realized":"0.00","unrealized":"{e}"}}'
            )
            positions = [
                NEW_POSITION({"symbol": "ACME", "qty": held, "avg_price": c, "unrealized": e})
            ]
            positions_json = f'{{"avgPrice":"{c}","qty":{held},"symbol":"ACME","unrealized":"{e}"}}'
        else:
            (account, account_json), positions, positions_json = FLAT, [], ""
        frame = (
            f'{{"account":{account_json},"bars":{{"ACME":{{"close":"{c}","high":"{h}"'
            f',"low":"{lo}","open":"{o}","volume":{volume}}}}},"clock":{{"bar":{bar}'
            f',"remaining":{self.last - bar},"time":"{when}"}},"events":[{events_json}]'
            f',"kind":"kestrel.frame","marks":{{"ACME":"{c}"}},"orders":[]'
            f',"positions":[{positions_json}],"scenario":{{"id":"minute-200k","root":"{ROOT}"}}'
            f',"seq":{seq},"session":"{SID}","status":"open"}}'
        )
        frame_root = "sha256:" + hashlib.sha256(frame.encode()).hexdigest()
        self.journal(seq, source, pentad_root, frame_root)
        self.seq, self.bar, self.prev = seq, bar, frame_root
        if self.layer == 1:
            return frame
        body = self.bodies.get(source)
        if body is None:
            body = PentadBody(media_type="text/x-kestrel", bytes=source)
            if len(self.bodies) < 512:
                self.bodies[source] = body
        model = NEW_FRAME(
            {
                "kind": "kestrel.frame",
                "session": SID,
                "seq": seq,
                "scenario": SCENARIO,
                "clock": NEW_CLOCK({"bar": bar, "time": when, "remaining": self.last - bar}),
                "status": "open",
                "marks": {"ACME": c},
                "bars": {
                    "ACME": NEW_BAR({"open": o, "high": h, "low": lo, "close": c, "volume": volume})
                },
                "account": account,
                "positions": positions,
                "orders": [],
                "events": events,
            }
        )
        return NEW_RESPONSE(
            {
                "ok": True,
                "disposition": "applied",
                "pentad": NEW_PENTAD(
                    {"session": SID, "seq": seq, "prev": prev, "body": body, "root": pentad_root}
                ),
                "delivery": NEW_DELIVERY({"frame": model, "frame_root": frame_root}),
            }
        )


def sqlite_journal(directory: str) -> Callable[[int, str, str, str], None]:
    """One autocommitted journal row a step, then the horizon read, as the SQLite store
    does (WAL, ``synchronous = NORMAL``, the store's tables)."""
    conn = sqlite3.connect(Path(directory) / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE journal (session TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT NOT"
        " NULL, pentad_root TEXT NOT NULL, frame_root TEXT NOT NULL, PRIMARY KEY (session,"
        " seq)) WITHOUT ROWID"
    )
    conn.execute(
        "CREATE TABLE horizons (principal TEXT NOT NULL, scenario TEXT NOT NULL, bar INTEGER"
        " NOT NULL, what TEXT NOT NULL, sessions INTEGER NOT NULL, PRIMARY KEY (principal,"
        " scenario)) WITHOUT ROWID"
    )
    conn.execute("INSERT INTO sessions VALUES (?, 'open')", (SID,))
    conn.execute("INSERT INTO horizons VALUES ('local', ?, -1, '', 1)", (engine.SCENARIO,))
    append = (
        "INSERT INTO journal SELECT id, ?, ?, ?, ? FROM sessions WHERE id = ?"
        " AND status <> 'closed'"
    )
    horizon = "SELECT bar, what, sessions FROM horizons WHERE principal = ? AND scenario = ?"

    def journal(seq: int, source: str, pentad_root: str, frame_root: str) -> None:
        conn.execute(append, (seq, source, pentad_root, frame_root, SID))
        conn.execute(horizon, ("local", engine.SCENARIO)).fetchone()

    return journal


def sma_mix(steps: int) -> list[tuple[str, int, bool]]:
    """(source, shares held after, traded) of each step the SMA(20) agent of
    ``engine.py`` takes over the first ``steps`` bars (its signal, exactly)."""
    tape = load_catalog().get(engine.SCENARIO).tape  # type: ignore[union-attr]
    closes = tape.columns[engine.SYMBOL].close
    window: list[int] = []
    prev: tuple[int, int] | None = None
    held, out = 0, []
    for bar in range(steps):
        close = closes[bar] // 10 ** (tape.scale - 2)
        window = [*window[-(engine.WINDOW - 1) :], close]
        order = ""
        if len(window) == engine.WINDOW:
            now = (close * engine.WINDOW, sum(window))
            if prev is not None:
                # a trade's source is made new (its quantity), as an agent's usually is
                if prev[0] < prev[1] and now[0] > now[1] and not held:
                    order, held = f"buy {engine.QTY + bar} {engine.SYMBOL}\n", engine.QTY
                elif prev[0] > prev[1] and now[0] < now[1] and held:
                    order, held = f"sell {engine.QTY + bar} {engine.SYMBOL}\n", 0
            prev = now
        out.append((order + "advance 1", held, bool(order)))
    return out


def floor_rate(plan: list[tuple[str, int, bool]], journal: Any, layer: str) -> float:
    """Steps per CPU second of the straight-line step over ``plan`` up to ``layer``."""
    floor = Floor(journal, layer)
    step = floor.step
    cpu = time.process_time()
    for source, held, trade in plan:
        step({"sessionId": SID, "source": source}, held, trade)
    return len(plan) / (time.process_time() - cpu)


class GradedEpisode:
    """One graded episode of ``gym_env.py``'s env (random actions, seeded), as its end
    needs it again: its proof's values (whose canonical text ``orjson`` writes) and its
    closed engine (the episode's sources applied to a fresh engine and closed: the state
    the runtime measures a grade on), with the scenario and record a grade reads."""

    def __init__(self, catalog: Path) -> None:
        env = TradingEnv(gym_env.SCENARIO, catalog_paths=[catalog], window=gym_env.WINDOW)
        env.action_space.seed(0)
        gym_env.episode(env)
        proved = env.proofs[-1]
        env.close()
        text = proved.text.encode("utf-8")
        self.values = orjson.loads(text)
        written = orjson.dumps(self.values, option=orjson.OPT_SORT_KEYS)
        assert written == text, "orjson does not write this proof's canonical text"
        proof = proved.model()
        self.steps = len(proof.pentads)
        loaded = load_catalog([catalog]).get(gym_env.SCENARIO)
        assert loaded is not None
        self.loaded: LoadedScenario = loaded
        self.record = proof.record
        self.engine = SessionEngine(loaded, proof.record.session)
        for pentad in proof.pentads:  # the episode's sources, each as its pentad binds it
            self.engine.submit(pentad.body.bytes)
        self.engine.close()
        measured = measure_grade(loaded, self.record, self.engine)
        assert measured.root == proof.grade.root, "the floor measures another state"

    def end(self) -> tuple[GradeResult, bytes]:
        """What the end of a graded and proved episode makes: the grade's metrics, and
        the proof's text written from its values (and hashed, as its root is)."""
        grade = measure_grade(self.loaded, self.record, self.engine)
        text = orjson.dumps(self.values, option=orjson.OPT_SORT_KEYS)
        hashlib.sha256(text).hexdigest()
        return grade, text


def gym_rate(
    plan: list[tuple[str, int, bool]], layer: str, graded: GradedEpisode | None = None
) -> float:
    """Steps per CPU second of :func:`floor_rate`'s step over ``plan`` up to ``layer``,
    called as ``gym_env.py`` calls an env: the caller draws its action
    (``action_space.sample()`` of a ``Discrete(3)``, as against gym-trading-env), and the
    step answers what Gymnasium's API makes it answer: the observation (the bars' part
    of its row prepared ahead, as both envs prepare theirs, copied, then the account's
    three features set), the reward, ``terminated``, ``truncated`` and an empty ``info``.

    With ``graded`` (:class:`GradedEpisode`), every episode's last step also makes what
    the end of a graded and proved episode hands its caller (:meth:`GradedEpisode.end`),
    and keeps the proof's text, as a graded env keeps every episode's proof, the
    collector on as in any process.
    """
    kept: list[bytes] = []
    every = graded.steps if graded is not None else 1
    floor = Floor(lambda *_: None, layer)
    step = floor.step
    sample = spaces.Discrete(3, seed=0).sample
    width = gym_env.WINDOW * BAR_FEATURES + ACCOUNT_FEATURES
    rows = np.zeros((len(plan) + 1, width), dtype=np.float32)
    equity = float(floor.cash)
    start = equity
    cpu = time.process_time()
    for index, (source, held, trade) in enumerate(plan):
        sample()
        values = step({"sessionId": SID, "source": source}, held, trade)
        if not isinstance(values, tuple):  # the roots and objects layers: the bare values
            values = (held, floor.cash, floor.cash + held * floor.cols.close[floor.bar] // 100)
        observation = rows[index].copy()
        now = float(values[2])
        observation[-3] = held * floor.cols.close[floor.bar] / now
        observation[-2] = values[1] / now
        observation[-1] = now / start - 1.0
        reward = now - equity
        equity = now
        _ = (observation, reward, False, False, {})
        if graded is not None and index % every == every - 1:
            kept.append(graded.end()[1])
    return len(plan) / (time.process_time() - cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50_000)
    args = parser.parse_args()
    loaded = load_catalog().get(engine.SCENARIO)
    assert loaded is not None
    df = engine.tape_frame(loaded.tape, args.steps + 1)
    sma = sma_mix(args.steps)
    trades = sum(1 for _, _, traded in sma if traded)
    longs = sum(1 for _, held, traded in sma if held and not traded)
    gym = [  # two trades in three steps, each a new quantity (the env sizes by equity)
        (f"buy {index} ACME\nadvance 1" if index % 3 else "advance 1", 1, index % 3 != 0)
        for index in range(args.steps)
    ]
    print(
        f"{engine.SCENARIO}, first {args.steps} bars; SMA(20) agent: {trades} trade steps, "
        f"{longs} holding, {args.steps - trades - longs} flat; process CPU, {args.runs} runs"
    )
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as directory:
        catalog, frame = gym_env.make_catalog(Path(directory))
        graded = GradedEpisode(catalog)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer_env = PeerEnv(
                df=frame,
                positions=[-1, 0, 1],
                trading_fees=gym_env.FEES,
                windows=gym_env.WINDOW,
                initial_position=0,
                portfolio_initial_value=100_000,
                verbose=0,
            )
            peer_env.reset(seed=0)
            peer_env.action_space.seed(0)
        for run in range(args.runs):
            row: dict[str, float] = {}
            for layer in LAYERS:
                row[f"memory {layer}"] = floor_rate(sma, lambda *_: None, layer)
                with tempfile.TemporaryDirectory() as files:
                    row[f"SQLite {layer}"] = floor_rate(sma, sqlite_journal(files), layer)
                row[f"gym {layer}"] = floor_rate(gym, lambda *_: None, layer)
                row[f"gym as Gymnasium's step {layer}"] = gym_rate(gym, layer)
            row["gym graded and proved"] = gym_rate(gym, "roots", graded)
            _, row["backtesting.py"], _ = engine.peer(df, engine.SmaCross)
            row["gym-trading-env"], _ = gym_env.timed(lambda: gym_env.episode(peer_env), 2)
            rows.append(row)
            print(f"  run {run + 1}: " + ", ".join(f"{k} {v:,.0f}" for k, v in row.items()))
    print("floor ÷ peer by process CPU, median of the runs' ratios; µs per step of each layer:")
    for mix, peer in (
        ("memory", "backtesting.py"),
        ("SQLite", "backtesting.py"),
        ("gym", "gym-trading-env"),
        ("gym as Gymnasium's step", "gym-trading-env"),
    ):
        cells = []
        for layer in LAYERS:
            ratio = statistics.median(r[f"{mix} {layer}"] / r[peer] for r in rows)
            micros = statistics.median(1e6 / r[f"{mix} {layer}"] for r in rows)
            cells.append(f"{layer} {ratio:.2f}x ({micros:.1f} µs)")
        print(f"  {mix:<7} vs {peer:<16} " + " | ".join(cells))
    proved = [(r["gym graded and proved"], r["gym-trading-env"]) for r in rows]
    graded_ratio = statistics.median(ours / peer for ours, peer in proved)
    graded_us = statistics.median(1e6 / ours for ours, _ in proved)
    print(
        "  gym graded and proved (as Gymnasium's step, roots; each episode's grade measured,"
        f" its proof written and kept) vs gym-trading-env {graded_ratio:.2f}x ({graded_us:.1f} µs)"
    )
    peer_us = {
        p: statistics.median(1e6 / r[p] for r in rows)
        for p in ("backtesting.py", "gym-trading-env")
    }
    print("  peers: " + ", ".join(f"{p} {v:.1f} µs" for p, v in peer_us.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
