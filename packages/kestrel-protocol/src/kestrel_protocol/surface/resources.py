"""Kestrel's resources: a tool's answer read at a ``kestrel://`` URI (the tool's
arguments from the URI's variables), one per scenario or one per template.

They name their tools by the method each runs (:class:`.tool_names.ToolNames`): the
registry spells the names, and :data:`~.registry.RESOURCES` is :func:`resources` of
its tools.
"""

from __future__ import annotations

from typing import Final

from .resource import Resource
from .tool_names import ToolNames

__all__ = ["resources"]

_SCENARIO_ID: Final = "[a-z0-9][a-z0-9-]{0,63}"
_SESSION_ID: Final = "ks_[a-z2-7]{26}"
_ROOT: Final = "sha256(?::|%3[aA])[0-9a-f]{64}"
"""A root in a URI (hosts that URL-encode a template variable send sha256%3A...)."""


def resources(_tool: ToolNames) -> tuple[Resource, ...]:
    """Kestrel's resources, each read as the call of the tool ``_tool`` names."""
    return (
        Resource(
            uri="kestrel://catalog",
            name="catalog",
            title="Kestrel catalog",
            description="Every scenario and the four statement kinds (kestrel.catalog).",
            mime="application/json",
            tool=_tool("catalog"),
        ),
        Resource(
            uri="kestrel://catalog/scenarios/{id}",
            name="scenario",
            title="Kestrel scenario",
            description=(
                "A scenario's full description (kestrel.scenario): instruments, tape, "
                "account, fees and fill terms."
            ),
            mime="application/json",
            tool=_tool("scenario"),
            variables={"id": _SCENARIO_ID},
            arguments=lambda v: {"scenario": v["id"]},
            per_scenario=True,
            item_name="scenario {id}",
            complete={"id": "scenario"},
        ),
        Resource(
            uri="kestrel://catalog/scenarios/{id}/tape",
            name="scenario-tape",
            title="Kestrel scenario tape",
            description=(
                "A scenario's tape as canonical CSV (time,symbol,open,high,low,close,volume), "
                "the future included: reading it while you trade the scenario fails the "
                f"grade's no-lookahead check (use {_tool('history')} instead). Refused for "
                "a sealed scenario."
            ),
            mime="text/csv",
            tool=_tool("tape"),
            variables={"id": _SCENARIO_ID},
            arguments=lambda v: {"scenario": v["id"]},
            per_scenario=True,
            item_name="tape {id}",
            item_title="{title} (tape)",
            complete={"id": "scenario"},
        ),
        Resource(
            uri="kestrel://sessions/{id}/frame",
            name="session-frame",
            title="Kestrel session frame",
            description=(
                f"One of your sessions' latest frame and its root (as {_tool('frame')} "
                "answers). Subscribe to it (resources/subscribe, where the server says it "
                "can) to be told after each submit or close that changes it, instead of "
                "polling."
            ),
            mime="application/json",
            tool=_tool("frame"),
            variables={"id": _SESSION_ID},
            arguments=lambda v: {"sessionId": v["id"]},
            updated_by=("trade", "close"),
        ),
        Resource(
            uri="kestrel://sessions/{id}/news",
            name="session-news",
            title="Kestrel session news",
            description=(
                "The newest news items visible at one of your sessions' clock, whole (as "
                f"{_tool('news')} answers): never an item after the clock."
            ),
            mime="application/json",
            tool=_tool("news"),
            variables={"id": _SESSION_ID},
            arguments=lambda v: {"sessionId": v["id"]},
            updated_by=("trade", "close"),
        ),
        Resource(
            uri="kestrel://artifacts/{root}",
            name="artifact",
            title="Kestrel artifact",
            description=(
                "Any stored object (session record, pentad, blotter, grade) by its root, "
                "sha256:<hex>, verbatim."
            ),
            mime="application/json",
            tool=_tool("artifact"),
            variables={"root": _ROOT},
            arguments=lambda v: {"root": "sha256:" + v["root"][-64:]},
            complete={"root": "root"},
        ),
        Resource(
            uri="kestrel://proofs/{gradeRoot}",
            name="proof",
            title="Kestrel proof",
            description=(
                "The proof (kestrel.proof) of one of your graded sessions by its grade's root: "
                "verifiable anywhere with `kestrel verify FILE`."
            ),
            mime="application/json",
            tool=_tool("proof_of_grade"),
            variables={"gradeRoot": _ROOT},
            arguments=lambda v: {"gradeRoot": "sha256:" + v["gradeRoot"][-64:]},
            complete={"gradeRoot": "root"},
        ),
    )
