"""The scorer judges a session as the board judges its proof: real sessions of scripted
agents over ``kestrel-mcp``, each scored by the task.

An agent that trades ten bars and stops does not pass (the board's ``whole-window``, in
the board's words); one that scouted the tape (a first session run to its end, then a
second traded behind it) fails ``no-lookahead``; neither earns anything on the money
metrics, so neither raises the task's mean, and the grade's figures stay in the score's
metadata. An honest agent passes and earns its grade's figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score
from kestrel_inspect import METADATA_KEY, kestrel_trading

from tests.kestrel_inspect.scripted import HONEST, OPEN, SUBMITS, scripted_model
from tests.kestrel_inspect.test_board_agents import kestrel_board

STOPS_EARLY = (OPEN, "buy 10 ACME\nadvance 6", "sell 10 ACME\nadvance 4")
"""Ten bars of acme-chop, flat, then graded: every check of the grade passes."""
SCOUTS = (OPEN, "advance 3000", OPEN, *SUBMITS)
"""A first session run to the end of the tape, then a second traded behind it."""
MONEY = ("return", "sharpe", "max_drawdown")


def _evaluate(script: tuple[str, ...], tmp: Path) -> tuple[EvalLog, Score]:
    logs = tmp / "logs"
    [log] = inspect_eval(
        kestrel_trading("acme-chop", home=str(tmp / "kestrel")),
        model=scripted_model(script),
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    assert sample.scores is not None
    return log, sample.scores["kestrel_scorer"]


def _means(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {s.name: s.metrics["mean"].value for s in log.results.scores}


def _graded(score: Score) -> tuple[dict[str, Any], dict[str, Any]]:
    """The score's value and its Kestrel metadata."""
    assert isinstance(score.value, dict)
    assert score.metadata is not None
    return score.value, score.metadata[METADATA_KEY]


def test_a_session_stopped_early_does_not_pass_and_earns_nothing(tmp_path: Path) -> None:
    log, score = _evaluate(STOPS_EARLY, tmp_path)
    value, kestrel = _graded(score)
    grade = kestrel["proof"]["grade"]
    assert grade["passed"] is True  # the grade alone passes ten bars
    assert value["passed"] == 0.0
    assert value["no_lookahead"] == 1.0
    assert {k: value[k] for k in MONEY} == dict.fromkeys(MONEY, 0.0)
    stopped = "stopped at bar 10 of 2519: the session did not trade its whole window"
    assert f"failed: whole-window ({stopped})" in (score.explanation or "")
    assert kestrel["whole_window"] == f"failed: {stopped}"
    assert kestrel["graded"]["return"] == float(grade["metrics"]["return"]) != 0.0
    assert _means(log)["return"] == 0.0
    # the board fails the row of the same proof with the same words
    board = kestrel_board(str(tmp_path / "logs"), "--json")
    [row] = json.loads(board.stdout)["rows"]
    assert row["badge"] == "failed"
    assert f"whole-window failed: {stopped}" in row["reason"]


def test_a_session_behind_a_scout_fails_no_lookahead_and_earns_nothing(tmp_path: Path) -> None:
    log, score = _evaluate(SCOUTS, tmp_path)
    value, kestrel = _graded(score)
    grade = kestrel["proof"]["grade"]
    assert kestrel["session"] == kestrel["sessions"][1]  # the second session is scored
    assert "had been shown bars after the session's clock" in kestrel["no_lookahead"]
    assert value["no_lookahead"] == value["passed"] == 0.0
    assert {k: value[k] for k in MONEY} == dict.fromkeys(MONEY, 0.0)
    assert kestrel["graded"] == {
        "return": float(grade["metrics"]["return"]),
        "sharpe": float(grade["metrics"]["sharpe"]),
        "max_drawdown": float(grade["metrics"]["maxDrawdown"]),
    }
    assert kestrel["graded"]["return"] != 0.0
    assert kestrel["whole_window"] == "passed"
    assert "did not pass: scored 0 on return, sharpe and max drawdown" in (score.explanation or "")
    assert _means(log)["return"] == 0.0  # the cheat does not raise the task's mean


def test_an_honest_session_passes_and_earns_its_grade(tmp_path: Path) -> None:
    log, score = _evaluate(HONEST, tmp_path)
    value, kestrel = _graded(score)
    metrics = kestrel["proof"]["grade"]["metrics"]
    assert kestrel["whole_window"] == "passed"
    assert value["passed"] == value["no_lookahead"] == 1.0
    assert value["return"] == float(metrics["return"]) == kestrel["graded"]["return"]
    assert value["sharpe"] == float(metrics["sharpe"])
    assert _means(log)["return"] == float(metrics["return"])
