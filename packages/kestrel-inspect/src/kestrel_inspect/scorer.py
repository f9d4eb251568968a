"""The Kestrel scorer: grade the session the sample's agent traded and score from the
grade, keeping the session's proof in the Inspect log.

The scorer opens nothing and submits nothing: it asks the face the agent traded on for
the proof of the agent's session (the tool projecting ``proof``, which grades it first,
closing it for good), and scores from that proof's grade. Each sample's score carries, under
``metadata["kestrel"]``, the session, the grade and proof roots and the proof itself
(with the door's attestation when the door signed the grade), so anyone holding the log
can ``kestrel verify`` or ``kestrel board`` it.

Each metric is reported as the mean over the samples with its standard error (over
epochs, Inspect first reduces a sample's epochs to their mean). A sample Kestrel could not
serve (the door could not make its trial or brief it, or did not answer for the proof, or
could not make the grade: ``BACKEND_UNAVAILABLE``, an outage, a rate limit) is
**unscored**, its reason said, and left out of the metrics: it is no 0 of the agent's. An
agent that opened no session on its scenario still scores 0.

A sample passes as the board's row of its proof passes: every check of its grade passed
(``no-lookahead`` among them) and the board's own check ``whole-window`` holds (the
session traded its scenario's whole window: :mod:`kestrel_sdk.board.window`, the board's
code itself), where it can be told: a sealed scenario's proof does not say how many
bars remain, and where no catalog here holds the scenario (a remote door's) the check is
``unconfirmed`` in the metadata, not failed. A sample that does not pass earns nothing on
the money metrics (``return``, ``sharpe``, ``max_drawdown`` are 0, as for an agent that
opened no session): an agent that scouted the tape or traded ten bars of 2,520 cannot
raise the mean. Its grade's figures
stay in the score's metadata (``graded``), and its explanation names each failed check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.board.catalog import BoardCatalog
from kestrel_sdk.board.window import WHOLE_WINDOW, stopped_early, window

from .agent import UNAVAILABLE_KEY
from .calls import call_kestrel, tool_name
from .connection import KestrelConnection
from .sessions import opened_sessions
from .trials import TrialUnavailable

__all__ = ["METADATA_KEY", "SCORE_KEYS", "UNAVAILABLE", "kestrel_scorer", "score_of_proof"]

METADATA_KEY = "kestrel"
"""The key of a score's metadata that holds the session, its roots and its proof."""

MONEY_KEYS = ("return", "sharpe", "max_drawdown")
"""The members of a score's value from the grade's metrics: 0 unless the sample passed."""
SCORE_KEYS = (*MONEY_KEYS, "no_lookahead", "passed")
"""The members of a score's value: three of the grade's metrics, and two checks as 1 or 0."""

UNAVAILABLE = "kestrel_unavailable"
"""The ``reason`` of an unscored sample: Kestrel could not serve it (not the agent's doing)."""

NO_LOOKAHEAD = "no-lookahead"
PROOF_TOOL = tool_name("proof")


def _nothing(explanation: str, metadata: dict[str, Any]) -> Score:
    """A sample without a graded session: nothing earned, nothing passed."""
    return Score(
        value=dict.fromkeys(SCORE_KEYS, 0.0),
        explanation=explanation,
        metadata={METADATA_KEY: metadata},
    )


def _unscored(explanation: str, metadata: dict[str, Any]) -> Score:
    """A sample Kestrel could not serve: kept in the log with why, left out of the metrics."""
    return Score.unscored(
        reason=UNAVAILABLE, explanation=explanation, metadata={METADATA_KEY: metadata}
    )


_UNTOLD = (
    "neither the proof nor a catalog here says how many bars its scenario has (a sealed "
    "scenario of a remote door: score where its catalog is to judge its window)"
)


def score_of_proof(
    proof: dict[str, Any], catalog_paths: Sequence[str] = (), home: str | None = None
) -> Score:
    """The score of a session from its proof's grade (figures are the grade's decimals),
    judged as the board judges it: the grade's checks and the board's ``whole-window``
    (a scenario the proof does not embed read from the catalog of ``catalog_paths``, else
    ``KESTREL_CATALOG_PATH``'s, with the Kestrel home ``home``: the connection's)."""
    grade = proof["grade"]
    metrics = grade["metrics"]
    checks = {c["id"]: c for c in grade["conformance"]["checks"]}
    lookahead = checks.get(NO_LOOKAHEAD, {"passed": False, "detail": "no no-lookahead check"})
    failed = [f"{c['id']} ({c['detail']})" for c in checks.values() if not c["passed"]]
    paths, at = [Path(p) for p in catalog_paths] or None, None if home is None else Path(home)
    span = window(proof, BoardCatalog(paths, at))
    stopped = None if span is None else stopped_early(span)
    if stopped is not None:
        failed.append(f"{WHOLE_WINDOW} ({stopped})")
    passed = bool(grade["passed"]) and stopped is None
    graded = {
        "return": float(metrics["return"]),
        "sharpe": float(metrics["sharpe"]),
        "max_drawdown": float(metrics["maxDrawdown"]),
    }
    explanation = (
        f"grade {grade['root']} of session {grade['session']} on {grade['scenario']['id']}: "
        f"return {metrics['return']}, sharpe {metrics['sharpe']}, max drawdown "
        f"{metrics['maxDrawdown']}; "
        + ("passed" if passed else "did not pass: scored 0 on return, sharpe and max drawdown")
        + (f"; failed: {'; '.join(failed)}" if failed else "")
    )
    kestrel: dict[str, Any] = {
        "session": grade["session"],
        "scenario": grade["scenario"]["id"],
        "grade": grade["root"],
        "proof_root": proof["root"],
        "passed": passed,
        "no_lookahead": lookahead["detail"],
        "whole_window": (
            f"unconfirmed: {_UNTOLD}"
            if span is None
            else "passed"
            if stopped is None
            else f"failed: {stopped}"
        ),
        "graded": graded,
        "proof": proof,
    }
    if "attestation" in proof:
        kestrel["attestation"] = proof["attestation"]
    earned = graded if passed else dict.fromkeys(MONEY_KEYS, 0.0)
    return Score(
        value=earned
        | {
            "no_lookahead": 1.0 if lookahead["passed"] else 0.0,
            "passed": 1.0 if passed else 0.0,
        },
        answer=grade["session"],
        explanation=explanation,
        metadata={METADATA_KEY: kestrel},
    )


@scorer(metrics={key: [mean(), stderr()] for key in SCORE_KEYS})
def kestrel_scorer(connection: KestrelConnection, embed_tape: bool = False) -> Scorer:
    """Grade the last session the agent opened on the sample's scenario, through the
    face it traded on; ``embed_tape`` embeds the scenario and its tape in the proof (for
    a scenario the verifier's catalog does not ship)."""

    async def score(state: TaskState, target: Target) -> Score:
        scenario = str(state.metadata["scenario"])
        opened = opened_sessions(state.messages)
        mine = [o.session for o in opened if o.scenario == scenario]
        where: dict[str, Any] = {
            "connection": connection.where,
            "sessions": [o.session for o in opened],
        }
        unavailable = state.store.get(UNAVAILABLE_KEY)
        if unavailable is not None:
            return _unscored(f"Kestrel could not serve the sample: {unavailable}", where)
        try:
            trial = await connection.trial(state)
        except TrialUnavailable as exc:
            return _unscored(f"Kestrel could not serve the sample: {exc}", where)
        where["trial"] = trial.principal
        if not mine:
            others = f" (it opened {', '.join(where['sessions'])})" if opened else ""
            return _nothing(f"the agent opened no session on {scenario}{others}", where)
        session = mine[-1]
        try:
            async with connection.client(trial) as client:
                proof = await call_kestrel(
                    client, PROOF_TOOL, {"sessionId": session, "embedTape": embed_tape}
                )
        except KestrelError as exc:
            said = f"session {session} was not graded: {exc.code}: {exc}"
            if exc.code == RefusalCode.BACKEND_UNAVAILABLE:
                return _unscored(said, where)
            return _nothing(said, where)
        except Exception as exc:  # the face did not answer (a door down, a 429, a timeout)
            return _unscored(
                f"session {session} was not graded: {connection.where} did not answer "
                f"({type(exc).__name__})",
                where,
            )
        result = score_of_proof(proof, connection.catalog_paths, connection.home)
        assert result.metadata is not None
        result.metadata[METADATA_KEY].update(where)
        return result

    return score
