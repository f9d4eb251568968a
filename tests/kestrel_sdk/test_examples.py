from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest
from kestrel_protocol import GradeResult, KestrelError
from kestrel_sdk import create_sdk, local_transport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _sma_cross() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sma_cross_example", EXAMPLES / "sma_cross.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("scenario", ["acme-chop", "pairs-kx"])
def test_sma_cross_example_trades_any_scenario_and_prints_a_grade(
    scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    grade = anyio.run(_sma_cross().main, scenario)
    assert isinstance(grade, GradeResult)
    assert grade.scenario.id == scenario  # pairs-kx has no ACME: its first symbol is traded
    assert grade.metrics.fills > 10  # both tapes cross their SMA often
    assert grade.passed
    out = capsys.readouterr().out
    assert "stood-down" in out  # the last frame: the tape ended
    assert grade.root in out


def test_sma_cross_example_closes_its_session_when_the_loop_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = _sma_cross()
    calls = 0

    def cents(mark: str) -> int:
        nonlocal calls
        calls += 1
        if calls == 30:
            raise RuntimeError("the agent crashed")
        return int(mark.replace(".", ""))

    monkeypatch.setattr(module, "cents", cents)
    with pytest.raises(RuntimeError, match="the agent crashed"):
        anyio.run(module.main, "acme-trend")

    async def reopen() -> None:
        async with create_sdk(local_transport()) as sdk:
            await sdk.open_session("acme-trend", label="1")

    with pytest.raises(KestrelError, match="is closed"):  # label 1 was the example's
        anyio.run(reopen)
