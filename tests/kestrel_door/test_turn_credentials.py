from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_door import (
    CREDENTIAL_IDLE_MS,
    TURN_CREDENTIAL_PREFIX,
    TurnCredentials,
    create_turn_credentials,
)
from kestrel_protocol.ports import LiveTurn, RunContext


@dataclass
class _Tools:
    calls: list[str] = field(default_factory=list)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append(name)
        return {"content": [], "isError": False}


def _turn(principal: str = "alice") -> LiveTurn:
    return LiveTurn(RunContext("harness", "present", principal), _Tools())


class _Clock:
    def __init__(self) -> None:
        self.ms = 1_000.0

    def __call__(self) -> float:
        return self.ms


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def creds(clock: _Clock) -> TurnCredentials:
    return create_turn_credentials(now=clock, idle_ms=1_000)


def test_default_idle_is_exported_and_positive() -> None:
    assert CREDENTIAL_IDLE_MS >= 60_000


def test_mint_outside_a_turn_is_none(creds: TurnCredentials) -> None:
    assert creds.mint("t1") is None


@pytest.mark.anyio
async def test_token_shape_prefix_and_entropy(creds: TurnCredentials) -> None:
    creds.publish("t1", _turn())
    tokens = {creds.mint("t1") for _ in range(50)}
    assert None not in tokens
    assert len(tokens) == 50
    for token in tokens:
        assert token is not None
        assert token.startswith(TURN_CREDENTIAL_PREFIX)
        # 256 bits of base64url = 43 characters after the prefix
        assert len(token) - len(TURN_CREDENTIAL_PREFIX) >= 43


@pytest.mark.anyio
async def test_only_a_hash_is_kept(creds: TurnCredentials) -> None:
    creds.publish("t1", _turn())
    token = creds.mint("t1")
    assert token is not None
    state = repr(vars(creds)) if hasattr(creds, "__dict__") else ""
    state += repr([getattr(creds, s) for s in getattr(type(creds), "__slots__", ())])
    state += repr(creds._credentials)
    assert token not in state
    assert token[len(TURN_CREDENTIAL_PREFIX) :] not in state


# Each row: a sequence of steps after publishing turn A on thread t1 and minting token X.
# Steps: ("advance", ms) | ("resolve", expected) | ("dispose",) | ("revoke",) |
# ("publish_b",) publishes turn B on t1 | ("publish_other",) publishes on t2.
TABLE: list[tuple[str, list[tuple[Any, ...]]]] = [
    ("resolves while in flight", [("resolve", "A")]),
    (
        "use keeps it alive",
        [("advance", 900), ("resolve", "A"), ("advance", 900), ("resolve", "A")],
    ),
    ("idle expiry", [("advance", 1_000), ("resolve", None)]),
    (
        "idle expiry is final",
        [("advance", 1_000), ("resolve", None), ("publish_b",), ("resolve", None)],
    ),
    ("just under idle", [("advance", 999), ("resolve", "A")]),
    ("revoke", [("revoke",), ("resolve", None)]),
    ("revoke is final", [("revoke",), ("publish_b",), ("resolve", None)]),
    ("dispose ends the turn", [("dispose",), ("resolve", None)]),
    ("re-publish on the same thread", [("dispose",), ("publish_b",), ("resolve", "B")]),
    ("re-publish replaces without dispose", [("publish_b",), ("resolve", "B")]),
    ("stale disposer keeps newer turn", [("publish_b",), ("dispose",), ("resolve", "B")]),
    ("another thread's turn is not reached", [("dispose",), ("publish_other",), ("resolve", None)]),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "steps"), TABLE, ids=[row[0] for row in TABLE])
async def test_table(name: str, steps: list[tuple[Any, ...]], clock: _Clock) -> None:
    creds = create_turn_credentials(now=clock, idle_ms=1_000)
    turns = {"A": _turn("alice"), "B": _turn("alice"), "O": _turn("bob")}
    dispose = creds.publish("t1", turns["A"])
    token = creds.mint("t1")
    assert token is not None
    for step in steps:
        match step:
            case ("advance", ms):
                clock.ms += ms
            case ("resolve", expected):
                got = await creds.resolve(token)
                assert got is (None if expected is None else turns[expected]), name
            case ("dispose",):
                dispose()
            case ("revoke",):
                creds.revoke(token)
            case ("publish_b",):
                creds.publish("t1", turns["B"])
            case ("publish_other",):
                creds.publish("t2", turns["O"])
            case _:
                raise AssertionError(step)


@pytest.mark.anyio
async def test_credential_from_one_thread_never_reaches_another(creds: TurnCredentials) -> None:
    a, b = _turn("alice"), _turn("bob")
    creds.publish("t1", a)
    creds.publish("t2", b)
    ta, tb = creds.mint("t1"), creds.mint("t2")
    assert ta is not None
    assert tb is not None
    assert await creds.resolve(ta) is a
    assert await creds.resolve(tb) is b


def _abandon(creds: TurnCredentials, clock: _Clock, turns: int) -> None:
    """A harness running ``turns`` turns 100 ms apart, minting one credential per turn and
    never revoking it."""
    for n in range(turns):
        dispose = creds.publish(f"t{n % 7}", _turn())
        assert creds.mint(f"t{n % 7}") is not None
        dispose()
        clock.ms += 100


def test_abandoned_credentials_are_swept_and_memory_stays_flat(clock: _Clock) -> None:
    creds = create_turn_credentials(now=clock, idle_ms=1_000)
    _abandon(creds, clock, 200)  # warm up: allocator pools, interned thread names
    gc.collect()
    tracemalloc.start()
    try:
        _abandon(creds, clock, 200)
        gc.collect()
        after_few, _ = tracemalloc.get_traced_memory()
        _abandon(creds, clock, 20_000)
        gc.collect()
        after_many, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Kept, each credential costs a digest and a record (a few hundred bytes): 20,000
    # of them would be megabytes. Swept, at most one idle period's worth stays.
    assert after_many - after_few < 16 * 1024
    assert len(creds._credentials) <= 10


@pytest.mark.anyio
async def test_the_sweep_keeps_a_credential_in_use(clock: _Clock) -> None:
    creds = create_turn_credentials(now=clock, idle_ms=1_000)
    turn = _turn()
    creds.publish("busy", turn)
    token = creds.mint("busy")
    assert token is not None
    for _ in range(50):  # used every 600 ms, while others are minted and abandoned
        _abandon(creds, clock, 6)
        assert await creds.resolve(token) is turn
    assert len(creds._credentials) <= 11


@pytest.mark.anyio
async def test_mint_after_dispose_is_none(creds: TurnCredentials) -> None:
    dispose = creds.publish("t1", _turn())
    dispose()
    assert creds.mint("t1") is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    "garbage",
    [
        "",
        " ",
        "Bearer x",
        TURN_CREDENTIAL_PREFIX,
        TURN_CREDENTIAL_PREFIX + "A" * 43,
        "x" * (1024 * 1024),
        TURN_CREDENTIAL_PREFIX + "é" * 43,
        "\udcff" * 56,
        "\x00" * 56,
    ],
    ids=["empty", "space", "bearer", "prefix", "wrong", "megabyte", "unicode", "surrogate", "nul"],
)
async def test_resolve_never_raises_on_garbage(creds: TurnCredentials, garbage: str) -> None:
    creds.publish("t1", _turn())
    assert creds.mint("t1") is not None
    assert await creds.resolve(garbage) is None
    creds.revoke(garbage)  # also never raises


@pytest.mark.anyio
async def test_resolve_never_raises_on_non_strings(creds: TurnCredentials) -> None:
    for value in (None, 1, b"bytes", object()):
        assert await creds.resolve(value) is None  # type: ignore[arg-type]


@pytest.mark.anyio
@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
async def test_resolve_never_raises_property(text: str) -> None:
    creds = create_turn_credentials()
    creds.publish("t1", _turn())
    assert creds.mint("t1") is not None
    assert await creds.resolve(text) is None
