"""A sealed scenario served under a neutral id: ``--seal acme-crash=tape-9``.

``acme-crash`` (or a title like "choppy and mean-reverting") tells an agent what comes,
so a runtime that seals ``SOURCE=SERVED`` serves a renamed copy instead of the source:
the scenario ``SERVED``, titled ``Sealed scenario``, whose description names nothing,
with the source's tape, terms and instruments. Its id is part of its root, so every
frame, session id, proof and grade names only ``SERVED``; the source is not served by
that runtime (a request for it is refused as for an id the catalog lacks). The copy
shares the source's lineage (:mod:`.lineage`): bars shown of one were shown of both.

The copy is made by one function, :func:`renamed_copy`, from the ``scenario.toml`` text
it returns, so a runtime and ``kestrel scenario sealed-copy`` (which writes it, for a
verifier, once the evaluation is over) make the same scenario, root for root. The tape
root is the source's: a copy of a tape published elsewhere (a shipped scenario) is
recognisable by it; seal a tape nobody else has published (an import, a disguise).
"""

from __future__ import annotations

from collections.abc import Iterable

from .lineage import twin_toml
from .model import LoadedScenario
from .objects import scenario_object
from .reveal import scenario_commitment
from .seal_salt import salted_description
from .tapes import TapeShape, render_tape
from .terms import ID_PATTERN

__all__ = [
    "NEUTRAL_DESCRIPTION",
    "OPAQUE_TITLE",
    "RenamedCopy",
    "renamed_copy",
    "seal_spec",
    "seal_specs",
]

OPAQUE_TITLE = "Sealed scenario"
NEUTRAL_DESCRIPTION = "A sealed scenario: its tape is served bar by bar up to the clock."


def seal_spec(text: str) -> tuple[str, str | None]:
    """``SOURCE`` or ``SOURCE=SERVED`` as (source, served id or None).

    Raises ``ValueError`` naming what is wrong: an empty part, an invalid served id, a
    served id equal to the source's or containing it (it is to name nothing of it)."""
    source, sep, served = text.partition("=")
    source, served = source.strip(), served.strip()
    if not source or (sep and not served):
        raise ValueError(f"{text!r}: expected SCENARIO or SCENARIO=SERVED_ID")
    if not sep:
        return source, None
    if not ID_PATTERN.fullmatch(served):
        raise ValueError(
            f"{text!r}: the served id {served!r} must be lower-case letters, digits and "
            "'-' (at most 64), starting with a letter or digit"
        )
    if served == source:
        raise ValueError(f"{text!r}: the served id must differ from the scenario's")
    if source.lower() in served:
        raise ValueError(
            f"{text!r}: the served id {served!r} names the scenario ({source}); choose a "
            "neutral one"
        )
    return source, served


def seal_specs(entries: Iterable[str]) -> list[tuple[str, str | None]]:
    """Every entry as :func:`seal_spec` reads it; ``ValueError`` also for a scenario
    sealed twice or two scenarios served under one id."""
    specs = [seal_spec(entry) for entry in entries]
    sources = [source for source, _ in specs]
    served = [name for _, name in specs if name is not None]
    for names, what in ((sources, "scenario"), (served, "served id")):
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"the {what} {twice[0]!r} is named by more than one seal")
    return specs


class RenamedCopy:
    """The copy of a scenario served under ``served_id``: its ``scenario.toml`` text
    (tape file ``tape.csv``, the source's tape) and the loaded scenario."""

    def __init__(self, toml: str, loaded: LoadedScenario) -> None:
        self.toml = toml
        self.loaded = loaded


def renamed_copy(source: LoadedScenario, served_id: str) -> RenamedCopy:
    """``source`` as the scenario ``served_id``: a neutral title, a description that
    names nothing (a disguise keeps its own, which carries only its commitment; any
    other copy's is the neutral one salted with its tape, :mod:`.seal_salt`, so its
    root tells nothing of the tape's length), the same tape, terms and instruments,
    and the source's lineage."""
    scenario = source.scenario
    commitment = scenario_commitment(scenario)
    description = (
        scenario.description
        if commitment is not None
        else salted_description(NEUTRAL_DESCRIPTION, render_tape(source.tape))
    )
    # the toml says no seal: the copy is the runtime's to seal (a published copy is not)
    toml, terms = twin_toml(
        source,
        scenario_id=served_id,
        title=OPAQUE_TITLE,
        description=description,
        instruments=[
            {"symbol": item.symbol, "tick": item.tick, "lot": item.lot}
            for item in scenario.instruments
        ],
        sealed=False,
    )
    tape = scenario.tape
    shape = TapeShape(bars=tape.bars, start=tape.start, end=tape.end, root=tape.root)
    loaded = LoadedScenario(
        scenario_object(terms, shape, scenario.news_root),
        source.origin,
        lambda: source.tape,
        sealed=True,
        max_open_orders=source.max_open_orders,
        lineage=terms.lineage,
        news=source.news,
    )
    return RenamedCopy(toml, loaded)
