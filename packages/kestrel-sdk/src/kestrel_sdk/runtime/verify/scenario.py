"""The scenario a proof replays on: the one it embeds (rebuilt from its terms and
tape, its object compared), else the catalog's (its id, root and tape root checked
against the proof's reference); and where a verified proof's scenario came from.

A forward scenario's tape grows past its declared prefix: a verifier holds only the
bars the proof embeds, or the catalog's prefix (or, on the operator's store, the bars
published there, or those its door publishes once unsealed, fetched and checked against
the door's signed edge by the caller: :class:`PublishedTape`). A proof whose session
reached a bar the verifier does not hold is refused saying so (:func:`forward_reach`),
never replayed into a mismatch that reads as a forgery; one it verifies says over which
tape (:func:`forward_tape_note`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kestrel_protocol import KestrelError, Provenance, RefusalCode, root_of_bytes

from ..catalog import load_embedded
from ..catalog.model import CatalogIndex, LoadedScenario
from .mismatch import MismatchFound, as_text, compare, member, same

__all__ = [
    "PublishedTape",
    "checked_scenario",
    "forward_reach",
    "forward_tape_note",
    "proof_scenario",
    "provenance",
]


@dataclass(frozen=True, slots=True)
class PublishedTape:
    """A forward tape as its door published it, for a proof that does not embed it:
    ``text``, its bars up to the edge the door signed (their root checked by the caller
    against the signed one), read from ``source``."""

    text: str
    source: str


def _over_published(declared: LoadedScenario, published: PublishedTape) -> LoadedScenario:
    """The catalog's forward scenario ``declared`` over the tape its door published (read
    as an embedded tape is, its prefix checked by the rebuilt scenario's root)."""
    if not declared.forward:
        return declared
    where = f"the tape {published.source} publishes"
    try:
        rebuilt = load_embedded(declared.scenario.to_json(), published.text)
    except ValueError as exc:
        raise MismatchFound(where, "a tape the catalog would accept", str(exc)) from None
    same(where, declared.scenario.root, rebuilt.scenario.root)  # its prefix, its terms
    return declared.with_tape(rebuilt.tape)


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


def checked_scenario(
    index: CatalogIndex, data: dict[str, Any], published: PublishedTape | None = None
) -> LoadedScenario:
    """:func:`proof_scenario`, a member that differs raised as :class:`MismatchFound`
    (what a proof's verification reports); a catalog's forward scenario over the tape
    ``published`` when given."""
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
        loaded = found if published is None else _over_published(found, published)
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
            "directory named by `--catalog-path` or KESTREL_CATALOG_PATH)"
        )
    return (
        "make the proof with `kestrel proof SESSION --embed-tape`, or name the scenario's "
        "catalog directory by `--catalog-path` or KESTREL_CATALOG_PATH"
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


def forward_reach(loaded: LoadedScenario, data: dict[str, Any]) -> None:
    """Refuse (``UNKNOWN_SCENARIO``) a proof of a session on the forward ``loaded`` that
    reached a bar past the tape held here (its head frame's clock): the tape it traded
    on is not known to this verifier, which must not replay it over fewer bars. The
    clock is the proof's claim: a false one is refused or fails the replay, never
    verified."""
    head = data.get("head")
    clock = head.get("clock") if isinstance(head, dict) else None
    bar = clock.get("bar") if isinstance(clock, dict) else None
    held = len(loaded.tape)
    if not loaded.forward or not isinstance(bar, int) or isinstance(bar, bool) or bar < held:
        return
    scenario = loaded.scenario
    held_by = (
        f"the tape the proof embeds holds {held} bar(s)"
        if "embedded" in data
        else f"this verifier holds {held} bar(s) of its tape (the proof does not embed it)"
    )
    raise KestrelError(
        RefusalCode.UNKNOWN_SCENARIO,
        f"cannot verify the proof: its session traded forward scenario {scenario.id} to "
        f"bar {bar}, and {held_by}; nothing was replayed. Verify a proof made with "
        "`kestrel proof SESSION --embed-tape` once the feed is unsealed, or with the "
        "operator's runtime (Runtime.verify_proof on the store the feed was published to)",
        {"scenario": scenario.id, "bar": bar, "bars": held},
    )


def forward_tape_note(
    loaded: LoadedScenario, data: dict[str, Any], published: PublishedTape | None = None
) -> str:
    """What a verified proof of a forward scenario was replayed over (``""`` for any
    other scenario): the tape embedded, the one its door publishes (``published``), the
    one published on this store, or the declared prefix, which holds every bar its
    session reached."""
    forward = loaded.scenario.forward_tape
    if not loaded.forward or forward is None:
        return ""
    held = len(loaded.tape)
    if "embedded" in data:
        return f"; forward tape: replayed over the {held} bar(s) the proof embeds"
    if published is not None:
        return (
            f"; forward tape: replayed over the {held} bar(s) {published.source} publishes, "
            f"up to the edge its door signed ({forward.bars} of them the declared prefix)"
        )
    if held > forward.bars:
        return (
            f"; forward tape: replayed over the {held} bar(s) published on this store "
            f"({forward.bars} of them the declared prefix)"
        )
    return (
        f"; forward tape: replayed over its declared prefix of {held} bar(s), which holds "
        "every bar the session reached (the proof does not embed the tape)"
    )
