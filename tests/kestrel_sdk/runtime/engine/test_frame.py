"""Frames, blotters and grades are pinned byte for byte on fixed sessions.

The roots below were recorded from the engine before its per-step path was optimised;
any change to a frame, blotter or grade byte (a rounding, a member, an event's order)
changes a digest and fails here. Each session mixes every statement kind, order type
and time in force with refused sources (whose diagnostics are pinned too), and ends in
a stand-down or a close. The engine's root (the sha256 of the text it built each frame
with) is also checked against the protocol's own ``root_of`` of the frame's model, so the
engine's fast hashing can never drift from the specification's JCS; the frame's object,
which the engine builds from its text unchecked (``kestrel_protocol.wire``), must equal
the one pydantic validates from the same text, members set and all; and a twin engine
replays every session (roots alone, reading a frame now and then) and must reach the
same root at every step, with the same frame when one is read.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from decimal import Decimal

import pytest
from kestrel_protocol import (
    KestrelError,
    Pentad,
    SessionFrame,
    SessionRecord,
    canonical_json,
    root_of,
)
from kestrel_sdk.runtime.catalog import build_loaded_scenario, load_catalog
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.engine import SessionEngine, compute_grade
from kestrel_sdk.runtime.frame_values import FrameValues

from tests.kestrel_sdk.runtime.engine.tapes import daily

Chooser = Callable[[int, SessionEngine], str]


def _shipped(scenario_id: str) -> LoadedScenario:
    loaded = load_catalog([]).get(scenario_id)
    assert loaded is not None
    return loaded


def _drive(
    loaded: LoadedScenario, steps: int, choose: Chooser, *, check_every: int = 1
) -> dict[str, str]:
    """Run ``steps`` sources; digest every frame root (and every refusal), then close,
    grade, and return the digests."""
    session = "ks_pinned"
    engine = SessionEngine(loaded, session)
    twin = SessionEngine(loaded, session)  # replays what engine accepts
    head = engine.frame_root()
    assert head == root_of(engine.frame())
    log = [head]
    pentads: list[Pentad] = []
    for i in range(steps):
        if engine.status != "open":
            break
        source = choose(i, engine)
        try:
            step = engine.submit(source)
        except KestrelError as exc:
            log.append(f"{exc.code}:{canonical_json(exc.detail or {}).decode()}")
            continue
        root = engine.frame_root()
        if i % check_every == 0:
            assert root == root_of(step.frame), f"frame_root differs from root_of at step {i}"
            validated = SessionFrame.model_validate_json(step.text)
            assert step.frame == validated, f"the frame built unchecked differs at step {i}"
            assert step.frame.model_fields_set == validated.model_fields_set
            assert step.frame.to_json() == validated.to_json()
        if (i // 7) % 3:  # two blocks of replays (roots alone), then one of frames read
            assert twin.replay(source) == root, f"the replay differs at step {i}"
            if i % 11 == 0:  # a replayed frame read after all: parsed from its text
                assert twin.frame().to_json() == step.frame.to_json()
        else:
            assert twin.submit(source).frame.to_json() == step.frame.to_json()
            assert twin.frame_root() == root
        pentads.append(
            Pentad.with_root(
                session=session,
                seq=len(pentads) + 1,
                prev=head,
                body={"media_type": "text/x-kestrel", "bytes": source},
            )
        )
        head = root
        log.append(root)
    closed = engine.close()
    closed_root = engine.frame_root()
    assert closed_root == root_of(closed)
    assert twin.close().to_json() == closed.to_json()
    assert twin.frame_root() == closed_root
    log.append(closed_root)
    record = SessionRecord.with_root(
        session=session,
        scenario={"id": loaded.scenario.id, "root": loaded.scenario.root},
        label="1",
        pentads=[p.root for p in pentads],
        head=closed_root,
        blotter_root=engine.blotter().root,
        lookahead={"sealed": False, "reads": []},
    )
    grade = compute_grade(loaded, record, pentads)
    return {
        "frames": hashlib.sha256("\n".join(log).encode()).hexdigest(),
        "blotter": engine.blotter().root,
        "grade": grade.root,
        "last": f"{engine.status} seq={engine.seq} bar={engine.clock} steps={len(log)}",
    }


def _price(mark: str, factor: float, tick: Decimal) -> str:
    value = Decimal(mark) * Decimal(str(factor))
    return str(max(tick, (value / tick).quantize(Decimal(1)) * tick))


def _mixed(seed: int, tick: str = "0.01", big: int = 4000) -> Chooser:
    """A random but seeded agent: every statement kind, some refusals, mostly advances."""
    rng = random.Random(seed)
    grid = Decimal(tick)

    def choose(i: int, engine: SessionEngine) -> str:
        frame: SessionFrame = engine.frame()
        symbols = sorted(frame.marks)
        lines: list[str] = []
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            sym = rng.choice(symbols)
            mark = frame.marks[sym]
            qty = rng.choice((1, 3, 7, 10, 25, 40, 100, big))
            side = rng.choice(("buy", "sell"))
            tif = rng.choice(("", " tif day", " tif gtc", " tif ioc"))
            roll = rng.random()
            if roll < 0.25:
                lines.append(f"{side} {qty} {sym}{tif}")
            elif roll < 0.4:
                f = 0.97 if side == "buy" else 1.03
                alias = f" as a{i}x{len(lines)}" if rng.random() < 0.5 else ""
                lines.append(f"{side} {qty} {sym} limit {_price(mark, f, grid)}{tif}{alias}")
            elif roll < 0.5:
                f = 1.02 if side == "buy" else 0.98
                lines.append(f"{side} {qty} {sym} stop {_price(mark, f, grid)}{tif}")
            elif roll < 0.58:
                s, lim = (1.01, 1.015) if side == "buy" else (0.99, 0.985)
                if rng.random() < 0.3:
                    lim = 2 - lim  # a limit on the far side of the stop: rests after trigger
                lines.append(
                    f"{side} {qty} {sym} stop {_price(mark, s, grid)}"
                    f" limit {_price(mark, lim, grid)}{tif}"
                )
            elif roll < 0.68:
                lines.append(f"cancel o{rng.randint(1, len(engine.orders) + 2)}")
            elif roll < 0.72:
                lines.append(f"cancel a{rng.randint(0, i + 1)}x0")
            elif roll < 0.78:
                lines.append(rng.choice(("cancel all", f"cancel all {sym}")))
            elif roll < 0.8:
                lines.append(rng.choice(("buy 0 ACME", "sell 5 NOPE", "advance soon")))
            elif roll < 0.84:
                to = min(engine.clock + rng.randint(-1, 3), len(loaded_times(engine)) - 1)
                lines.append(f"advance to {loaded_times(engine)[max(to, 0)]}")
            else:
                lines.append(f"advance {rng.randint(1, 4)}")
        lines.append(rng.choice(("advance", "advance 1", "advance 2", "advance\n")))
        return "\n".join(lines)

    return choose


def loaded_times(engine: SessionEngine) -> tuple[str, ...]:
    return tuple(engine.context().times)


def _then(choose: Chooser, steps: int, final: str) -> Chooser:
    def wrapped(i: int, engine: SessionEngine) -> str:
        return final if i == steps - 1 else choose(i, engine)

    return wrapped


def _minute_agent(i: int, engine: SessionEngine) -> str:
    """Mostly ``advance 1`` (the benchmark's path) with orders on a fixed rhythm."""
    mark = engine.frame().marks["ACME"]
    if i % 50 == 0:
        return "buy 10 ACME\nadvance 1"
    if i % 50 == 25:
        return "sell 10 ACME\nadvance 1"
    if i % 333 == 7:
        return f"buy 5 ACME limit {_price(mark, 0.999, Decimal('0.01'))} tif day\nadvance 1"
    if i % 777 == 9:
        return f"sell 20 ACME stop {_price(mark, 0.998, Decimal('0.01'))} tif gtc\nadvance"
    if i % 400 == 11:
        return "cancel all\nadvance 1"
    return "advance 1"


def _odd_scenario() -> LoadedScenario:
    """Finer prices (4 places, tick 0.0005), a fee minimum, participation, slippage and
    lots: fractional averages and P > 2 money rounding on every frame."""
    rng = random.Random(11)
    rows = []
    price = Decimal("50.0000")
    for _ in range(260):
        o = price + Decimal(rng.randint(-40, 40)) * Decimal("0.0005")
        c = o + Decimal(rng.randint(-300, 300)) * Decimal("0.0005")
        h = max(o, c) + Decimal(rng.randint(0, 200)) * Decimal("0.0005")
        lo = min(o, c) - Decimal(rng.randint(0, 200)) * Decimal("0.0005")
        rows.append((str(o), str(h), str(lo), str(c), rng.choice((0, 40, 200, 5000))))
        price = c
    return daily(
        rows,
        cash="25000.0050",
        shortable=True,
        max_position=600,
        bps="7.5",
        minimum="0.35",
        participation="0.25",
        slippage_bps="13",
        tick="0.0005",
        lot=5,
    )


def _fives(choose: Chooser) -> Chooser:
    """Quantities that are multiples of the lot (5) except where a K203 is wanted."""

    def wrapped(i: int, engine: SessionEngine) -> str:
        out = []
        for line in choose(i, engine).split("\n"):
            parts = line.split(" ")
            if parts[0] in ("buy", "sell") and parts[1].isdigit() and i % 17:
                parts[1] = str(int(parts[1]) * 5)
            out.append(" ".join(parts))
        return "\n".join(out)

    return wrapped


# Issue 32: the "frames" digests changed with K205's wording (a refusal names no bar the
# session has not reached, nor the bars left), acme-crash's grade with its description
# (its scenario root); every blotter and every other grade is as before.
PINNED = {
    "acme-trend": {
        "frames": "24604f5ba76b895b06f5f7e288fb09ee5e979e097dc688cdd1a6e3880403fe62",
        "blotter": "sha256:074d306c8e851d56fd5a2d39209f8574469967c380dbfb03b9381f3402bc65b9",
        "grade": "sha256:c17ae632adde300dc6593f829e055844cb3060d406799f85044057f88d7086e5",
        "last": "closed seq=353 bar=2519 steps=402",
    },
    "pairs-kx": {
        "frames": "6e292d68eb6eebba87176337e12bb46c24b1c197e4e0dbf2e05e3282f823082d",
        "blotter": "sha256:d9b91d8b6d549fa65ef59b2b03ebbb019f2cddb57a81a65dd81e548d203f98ee",
        "grade": "sha256:1a742b5971bcf90004f09944aedab5842a2438a98fa06cb9690a620ee8672115",
        "last": "closed seq=357 bar=638 steps=402",
    },
    "acme-crash": {
        "frames": "370d746f9b3109df709a46e9da86fe061b6728d0c534f0b6b10f4c9850a65d66",
        "blotter": "sha256:9c5855a8025cee6e64e0f32a4e216a2924dc78f755114c523fbb9369c473252b",
        "grade": "sha256:ac07b4fe2dad4ba7cb599376d98573a3b4edbca12087ab133ca0adffb2cc6d73",
        "last": "closed seq=271 bar=1514 steps=302",
    },
    "odd": {
        "frames": "8d12d4cfd19ddb5e78023f4990a07a2253fd0cfb3ad68f8a35587124eb5b4717",
        "blotter": "sha256:c6b7856f794c41cb74831f4bc5de964b40aededa44e92de275b11d36790537e0",
        "grade": "sha256:32f90111cba4123e89ada2af0dd3613692818a47fb20eb7dc138c28fc2c5d620",
        "last": "closed seq=132 bar=259 steps=162",
    },
    "minute-200k": {
        "frames": "1ef49545b7dd4659985e12a25c900eb0741109406978de45d6c8b5fcb0a617c9",
        "blotter": "sha256:9b86a0f99617099f1f7ce1fbb091cf0b293172a6e2a60db193985a7b52f13fb4",
        "grade": "sha256:022700c34628eebd6a3ac528256524fe4c255b728e6096d5930270f5cffe23f0",
        "last": "closed seq=5000 bar=5000 steps=5002",
    },
}


def test_acme_trend_mixed_session_is_pinned() -> None:
    got = _drive(_shipped("acme-trend"), 400, _then(_mixed(1), 400, "advance 5000"))
    assert got == PINNED["acme-trend"]


def test_pairs_kx_shorts_and_stand_down_statement_are_pinned() -> None:
    chooser = _then(_mixed(2), 400, 'buy 3 KAPPA\nadvance\nstand down "done"')
    got = _drive(_shipped("pairs-kx"), 400, chooser)
    assert got == PINNED["pairs-kx"]


def test_acme_crash_max_drawdown_is_pinned() -> None:
    got = _drive(_shipped("acme-crash"), 300, _then(_mixed(3), 300, "buy 900 ACME\nadvance 5000"))
    assert got == PINNED["acme-crash"]


def test_fine_prices_fees_participation_and_slippage_are_pinned() -> None:
    got = _drive(_odd_scenario(), 400, _fives(_mixed(4, tick="0.0005", big=700)))
    assert got == PINNED["odd"]


def test_minute_200k_first_5000_bars_are_pinned() -> None:
    got = _drive(_shipped("minute-200k"), 5000, _minute_agent, check_every=97)
    assert got == PINNED["minute-200k"]


@pytest.mark.parametrize("scenario_id", ["acme-trend", "pairs-kx"])
def test_frame_root_is_root_of_the_frame(scenario_id: str) -> None:
    engine = SessionEngine(_shipped(scenario_id), "ks_roots")
    symbols = sorted(engine.frame().marks)
    sources = [f"buy 10 {s} tif gtc as x{i}\nadvance" for i, s in enumerate(symbols)]
    sources += ["sell 4 " + symbols[0] + "\nadvance 3", "cancel all\nadvance"]
    for source in sources:
        frame = engine.submit(source).frame
        assert engine.frame_root() == root_of(frame)
        assert engine.frame_text().encode() == canonical_json(frame)
        # a frame rebuilt from its JSON hashes the same through either path
        again = SessionFrame.parse(frame.to_json())
        assert root_of(again) == engine.frame_root()


@pytest.mark.parametrize("scenario_id", ["acme-trend", "pairs-kx", "basket-20"])
def test_a_frame_read_late_or_at_once_is_the_frame_its_text_validates_to(scenario_id: str) -> None:
    # The object of a step's frame is made when first read: from the engine's values
    # while the engine is still at that frame, from the frame's text once it moved on.
    # Both must be what pydantic validates from the text (members set and all).
    loaded = _shipped(scenario_id)
    late, now = SessionEngine(loaded, "ks_late"), SessionEngine(loaded, "ks_late")
    chooser = _mixed(7)
    steps, read, values = [], [], []
    for i in range(150):
        if now.status != "open":
            break
        source = chooser(i, now)
        try:
            made = now.submit(source)
        except KestrelError:
            continue
        values.append(made.values())  # at once, from the engine's state: no object
        read.append(made.frame)  # at once: from the engine's state
        steps.append(late.submit(source))  # read only after the session moved on
    assert len(steps) > 50
    for step, at_once, plain in zip(steps, read, values, strict=True):
        validated = SessionFrame.model_validate_json(step.text)
        assert plain == step.values() == FrameValues.of(validated)
        for frame in (step.frame, at_once):
            assert frame == validated
            assert frame.model_fields_set == validated.model_fields_set
            assert frame.to_json() == validated.to_json()
            assert canonical_json(frame).decode() == step.text


def test_a_fractional_volume_tape_frames_its_volumes_as_their_exact_decimal_text() -> None:
    # every volume of a tape with a fractional one is a string (one JSON type per tape),
    # and the engine's text is still the canonical JSON of the model
    bars = [
        ("100", "101", "99", "100", "2012.25343589"),
        ("100", "101", "99", "100", "4761"),
        ("100", "101", "99", "100", "0.5"),
    ]
    engine = SessionEngine(build_loaded_scenario(bars), "ks_roots")
    shown = [engine.frame().bars["ACME"].volume]
    for source in ("buy 1 ACME\nadvance", "advance"):
        frame = engine.submit(source).frame
        shown.append(frame.bars["ACME"].volume)
        assert engine.frame_root() == root_of(frame)
        assert engine.frame_text().encode() == canonical_json(frame)
        assert '"volume":"' in engine.frame_text()
        again = SessionFrame.parse(frame.to_json())
        assert root_of(again) == engine.frame_root()
    assert shown == ["2012.25343589", "4761", "0.5"]


def test_a_frame_read_while_the_engine_changes_is_the_frame_it_was() -> None:
    # An SDK caller may read a response's frame on one thread while another thread has
    # begun the session's next submission (the object is made on first read). Here the
    # read happens in the middle of the next submission (on its first event, when the
    # order is placed but nothing is built yet): the object must still be the frame
    # that step showed, never a mix of that state and the next.
    engine = SessionEngine(_shipped("acme-trend"), "ks_race")
    engine.submit("buy 10 ACME\nadvance 2")
    step = engine.submit("advance 1")
    read: list[SessionFrame] = []
    plain: list[FrameValues] = []

    def read_mid_change(_: object) -> None:
        if not read:
            plain.append(step.values())
            read.append(step.frame)

    engine._bus.subscribe(read_mid_change)  # the engine's own event bus: mid-submission
    engine.submit("sell 4 ACME\nbuy 1 ACME limit 1 tif gtc\nadvance 3")
    assert read, "the next submission published no event"
    assert read[0] == SessionFrame.model_validate_json(step.text)
    assert plain[0] == FrameValues.of(read[0])
    assert read[0].positions[0].qty == 10
    assert read[0].orders == []
