"""The scenario a proof replays on: the one it embeds (rebuilt from its terms and
tape, its object compared), else the catalog's (its id, root and tape root checked
against the proof's reference); and where a verified proof's scenario came from.
"""

from __future__ import annotations

from typing import Any

from kestrel_protocol import KestrelError, Provenance, RefusalCode, root_of_bytes

from ..catalog import load_embedded
from ..catalog.model import CatalogIndex, LoadedScenario
from .mismatch import MismatchFound, as_text, compare, member, same

__all__ = ["checked_scenario", "proof_scenario", "provenance"]


def _embedded(data: Any) -> LoadedScenario:
    """The scenario a proof embeds, rebuilt from its terms and tape, its object compared."""
    if not isinstance(data, dict):
        raise MismatchFound("embedded", "an object with scenario and tape", as_text(data))
    tape, scenario = data.get("tape"), data.get("scenario")
    if not isinstance(tape, str):
        raise MismatchFound("embedded.tape", "the tape as canonical CSV text", as_text(tape))
    if not isinstance(scenario, dict):
        raise MismatchFound("embedded.scenario", "a kestrel.scenario object", as_text(scenario))
    news = data.get("news")
    if news is not None and not isinstance(news, str):
        raise MismatchFound("embedded.news", "the news as canonical JSONL text", as_text(news))
    try:
        loaded = load_embedded(scenario, tape, news)
    except ValueError as exc:
        raise MismatchFound("embedded", "a scenario the catalog would accept", str(exc)) from None
    if not loaded.forward:  # a forward tape's prefix is checked by its rebuilt object
        same("embedded.tape", loaded.scenario.tape.root, root_of_bytes(tape.encode("utf-8")))
    # the news embedded (or none) is what the scenario's newsRoot commits to
    rebuilt = loaded.scenario.news_root or "(absent)"
    same("embedded.scenario.newsRoot", rebuilt, scenario.get("newsRoot", "(absent)"))
    compare("embedded.scenario", loaded.scenario.to_json(), scenario)
    return loaded


def proof_scenario(index: CatalogIndex, data: dict[str, Any]) -> LoadedScenario:
    """The scenario a proof replays on: the one it embeds, else the catalog's (its id,
    root and tape root checked against the proof's reference)."""
    try:
        return checked_scenario(index, data)
    except MismatchFound as exc:
        raise ValueError(f"{exc.mismatch.field}: {exc.mismatch.found}") from None


def checked_scenario(index: CatalogIndex, data: dict[str, Any]) -> LoadedScenario:
    """:func:`proof_scenario`, a member that differs raised as :class:`MismatchFound`
    (what a proof's verification reports)."""
    ref = member(data, "scenario", dict)
    scenario_id, root = ref.get("id"), ref.get("root")
    if "embedded" in data:
        loaded = _embedded(data["embedded"])
    else:
        found = index.get(scenario_id) if isinstance(scenario_id, str) else None
        if found is None or found.scenario.root != root:
            has = f" (its {scenario_id} is {found.scenario.root})" if found is not None else ""
            raise KestrelError(
                RefusalCode.UNKNOWN_SCENARIO,
                f"cannot verify the proof: its scenario {scenario_id} ({root}) is not in this "
                f"catalog{has} and the proof does not embed it; {_remedy(data)}",
                {"scenario": scenario_id, "root": root},
            )
        loaded = found
    scenario = loaded.scenario
    expected = {"id": scenario.id, "root": scenario.root, "tapeRoot": scenario.tape.root}
    compare("scenario", expected, ref)
    return loaded


def _was_sealed(data: dict[str, Any]) -> bool:
    """Whether the proof says its scenario was sealed: its record's lookahead, or a head
    served without ``clock.remaining``."""
    record, head = data.get("record"), data.get("head")
    lookahead = record.get("lookahead") if isinstance(record, dict) else None
    clock = head.get("clock") if isinstance(head, dict) else None
    if isinstance(lookahead, dict) and lookahead.get("sealed") is True:
        return True
    return isinstance(clock, dict) and "remaining" not in clock


def _remedy(data: dict[str, Any]) -> str:
    """What makes an unknown scenario's proof verifiable: its tape embedded, unless the
    scenario is sealed (a sealed proof cannot embed its tape)."""
    if _was_sealed(data):
        return (
            "the scenario is sealed, so no proof of it can embed its tape: verify it where "
            "the catalog holds the scenario (its operator's, or once it is unsealed, its "
            "directory added to KESTREL_CATALOG_PATH)"
        )
    return (
        "make the proof with `kestrel proof SESSION --embed-tape`, or add the scenario to "
        "KESTREL_CATALOG_PATH"
    )


def provenance(index: CatalogIndex, data: dict[str, Any]) -> Provenance:
    """Where a verified proof's scenario came from: this machine's catalog (its root
    matches, whether the proof embeds it or not), or only the proof."""
    ref = data["scenario"]
    scenario_id, root = ref["id"], ref["root"]
    found = index.get(scenario_id)
    if found is not None and found.scenario.root == root:
        how = "embedded in the proof, identical to" if "embedded" in data else "from"
        return Provenance(
            source="catalog", detail=f"scenario {scenario_id} {root} {how} this machine's catalog"
        )
    here = (
        f"this machine's {scenario_id} is {found.scenario.root}"
        if found is not None
        else f"this machine's catalog has no {scenario_id}"
    )
    return Provenance(
        source="embedded",
        detail=f"scenario {scenario_id} {root} embedded in the proof and unknown here ({here})",
    )
