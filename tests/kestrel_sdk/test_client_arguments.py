"""An SDK call's arguments: checked as every face checks them, an agent's recurring
step (the same session and source, again and again) checked once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import SURFACE, Tool
from kestrel_sdk import KestrelSession, SdkLocalError, create_sdk, local_transport

pytestmark = pytest.mark.anyio


def counted_checks(monkeypatch: pytest.MonkeyPatch, method: str) -> list[Any]:
    """From now on, the arguments each check of the tool running ``method`` was given,
    the tool's remembered checks forgotten first."""
    tool: Tool = SURFACE.projecting(method)
    check: Callable[[Any], Any] = tool._validate  # made on first use, then kept
    checked: list[Any] = []

    def counting(given: Any) -> Any:
        checked.append(dict(given))
        return check(given)

    monkeypatch.setitem(vars(tool), "_validate", counting)
    monkeypatch.setitem(vars(tool), "_bound", {})
    return checked


async def _session(sdk: Any) -> KestrelSession:
    opened = await sdk.open_session("acme-trend")
    assert opened.session is not None
    return opened.session  # type: ignore[no-any-return]


async def test_an_agents_recurring_step_is_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = counted_checks(monkeypatch, "submit")
    async with create_sdk(local_transport(home=tmp_path, store="memory:")) as sdk:
        session = await _session(sdk)
        bars = [(await session.submit("advance 1")).delivery.frame.clock.bar for _ in range(5)]
        assert bars == [1, 2, 3, 4, 5]
        await session.submit("buy 10 ACME\nadvance 1")
        await session.submit("advance 1")
    assert checked == [
        {"sessionId": session.id, "source": "advance 1"},
        {"sessionId": session.id, "source": "buy 10 ACME\nadvance 1"},
    ]


async def test_a_refused_argument_is_refused_on_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = counted_checks(monkeypatch, "submit")
    async with create_sdk(local_transport(home=tmp_path, store="memory:")) as sdk:
        session = await _session(sdk)
        for source, wait in [("advance 1\ud800", None)] * 2 + [("advance 1", 0.0)] * 2:
            with pytest.raises(KestrelError) as refused:
                await session.submit(source, wait=wait)
            assert refused.value.code == RefusalCode.INVALID_ARGUMENT
        assert (await session.submit("advance 1", wait=5.0)).delivery.frame.clock.bar == 1
        assert (await session.submit("advance 1", wait=5.0)).delivery.frame.clock.bar == 2
        program = "advance 1\n" * 110  # a long program: not kept
        assert (await session.submit(program)).delivery.frame.clock.bar == 112
        assert (await session.submit(program)).delivery.frame.clock.bar == 222
    # nothing refused, given as a number or long is remembered
    assert len(checked) == 8


async def test_a_remembered_check_is_of_the_same_arguments_by_name(tmp_path: Path) -> None:
    async with create_sdk(local_transport(home=tmp_path, store="memory:")) as sdk:
        valid = await sdk.call("kestrel_validate", source="advance 1", scenario="acme-trend")
        assert valid.ok  # type: ignore[attr-defined]
        # the same two strings, each given as the other argument: another call
        with pytest.raises(SdkLocalError) as refused:
            await sdk.call("kestrel_validate", scenario="advance 1", source="acme-trend")
        assert refused.value.code == RefusalCode.UNKNOWN_SCENARIO
        again = await sdk.call("kestrel_validate", scenario="acme-trend", source="advance 1")
        assert again.ok  # type: ignore[attr-defined]
