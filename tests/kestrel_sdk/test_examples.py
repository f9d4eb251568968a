from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import anyio
import pytest
from kestrel_protocol import GradeResult

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_sma_cross_example_trades_and_prints_a_grade(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = importlib.util.spec_from_file_location("sma_cross_example", EXAMPLES / "sma_cross.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    grade = anyio.run(module.main, "acme-chop")
    assert isinstance(grade, GradeResult)
    assert grade.metrics.fills > 10  # a choppy tape crosses its SMA often
    assert grade.passed
    out = capsys.readouterr().out
    assert "stood-down" in out  # the last frame: the tape ended
    assert grade.root in out
