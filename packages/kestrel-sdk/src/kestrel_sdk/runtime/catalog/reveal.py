"""Commit, then reveal: a disguised scenario's commitment, its reveal, and the check
that a disguised tape is exactly the transform of the source a reveal names.

A disguised scenario carries only its commitment: the root of the canonical JSON of
``{kind, version, scenario, source: {id, root, tapeRoot}, transform, secret}``, written
into its description (so the scenario's root, and every proof on it, binds it). The
reveal is that object with its ``commitment``; :func:`check_reveal` recomputes the
transform from (source, secret) and the disguised tape from it, and names the first
thing that differs: a member of the reveal, the source, a term, or a bar and symbol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kestrel_protocol import Scenario, canonical_json, root_of_bytes

from .disguise import (
    CALENDARS,
    DisguiseTransform,
    disguise_transform,
    disguised_volume,
    scaled_price,
)
from .instrument_terms import tick_scale
from .model import LoadedScenario
from .news_disguise import disguised_news

__all__ = [
    "REVEAL_KIND",
    "RevealMismatch",
    "check_reveal",
    "commitment_of",
    "lineage_tag",
    "rebuilt_transform",
    "reveal_object",
    "scenario_commitment",
    "source_ref",
]

REVEAL_KIND = "kestrel.disguise-reveal"
_COMMITMENT = re.compile(r"[Cc]ommitment (sha256:[0-9a-f]{64})")


@dataclass(frozen=True, slots=True)
class RevealMismatch(Exception):
    """What differs between a reveal, its source and the disguised scenario."""

    field: str
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.field}: expected {self.expected}, found {self.found}"


def source_ref(source: Scenario) -> dict[str, str]:
    return {"id": source.id, "root": source.root, "tapeRoot": source.tape.root}


def commitment_of(body: dict[str, Any]) -> str:
    """The commitment to a reveal's members (every member but ``commitment``)."""
    return root_of_bytes(canonical_json({k: v for k, v in body.items() if k != "commitment"}))


def reveal_object(
    scenario_id: str, source: Scenario, transform: DisguiseTransform, secret: bytes
) -> dict[str, Any]:
    """The reveal of a disguise (its ``commitment`` included)."""
    body: dict[str, Any] = {
        "kind": REVEAL_KIND,
        "version": 1,
        "scenario": scenario_id,
        "source": source_ref(source),
        "transform": transform.to_json(),
        "secret": secret.hex(),
    }
    return {**body, "commitment": commitment_of(body)}


def scenario_commitment(scenario: Scenario) -> str | None:
    """The commitment a disguised scenario's description carries, if any."""
    found = _COMMITMENT.search(scenario.description)
    return found.group(1) if found else None


def lineage_tag(loaded: LoadedScenario) -> str:
    """The lineage a disguise of ``loaded`` records: its own when it is a disguise, else
    a tag of its tape root (twins share it; it names nothing)."""
    if loaded.lineage is not None:
        return loaded.lineage
    return root_of_bytes(b"kestrel.lineage\n" + loaded.scenario.tape.root.encode())


def _same(field: str, expected: object, found: object) -> None:
    if expected != found:
        raise RevealMismatch(field, str(expected), str(found))


def _secret(reveal: dict[str, Any]) -> bytes:
    secret = reveal.get("secret")
    try:
        return bytes.fromhex(secret) if isinstance(secret, str) else b""
    except ValueError:
        raise RevealMismatch("reveal.secret", "hex digits", str(secret)) from None


def rebuilt_transform(
    disguised: LoadedScenario, source: LoadedScenario, secret: bytes
) -> DisguiseTransform:
    """The transform of ``disguised`` rebuilt from its ``secret``: its price ticks are
    its instruments', its volume steps the rule's where every volume is on them, else
    one unit (a disguise made before volume steps), its calendar the one its commitment
    names (else the first of :data:`~.disguise.CALENDARS`, newest first, that lays the
    source's bars where the disguise's are; :func:`check_reveal` checks every bar either
    way)."""
    made = disguise_transform(source.tape, secret)
    ticks = {item.symbol: item.tick for item in disguised.scenario.instruments}
    scale = disguised.tape.volume_scale
    volume_ticks = {
        part.disguised: part.volume_tick
        if all(
            v % int(Decimal(part.volume_tick).scaleb(scale)) == 0
            for v in disguised.tape.columns[part.disguised].volume
        )
        else "1"
        for part in made.symbols
        if part.disguised in disguised.tape.columns
    }
    candidates = [made.with_rules(ticks, volume_ticks, calendar) for calendar in CALENDARS]
    commitment = scenario_commitment(disguised.scenario)
    for rebuilt in candidates:  # one calendar may lay the bars as another
        if reveal_object(disguised.id, source.scenario, rebuilt, secret)["commitment"] == (
            commitment
        ):
            return rebuilt
    times = list(disguised.tape.times)
    return next(
        (each for each in candidates if each.calendar_of(source.tape.times).bar_times() == times),
        candidates[0],
    )


def _ticks(reveal: dict[str, Any], name: str, absent: str | None) -> dict[str, Any]:
    """The ticks (``name``: ``tick`` or ``volumeTick``) a reveal's transform names, by
    disguised symbol, ``absent`` where it names none (a disguise made before the tick
    rules changed keeps its own; every bar is checked on them)."""
    transform = reveal.get("transform")
    parts = transform.get("symbols") if isinstance(transform, dict) else None
    if not isinstance(parts, list):
        return {}
    return {
        part["as"]: part.get(name, absent)
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("as"), str)
    }


def check_reveal(disguised: LoadedScenario, reveal: Any, source: LoadedScenario) -> None:
    """Raise :class:`RevealMismatch` naming the first thing that differs, unless the
    disguised scenario is exactly the transform ``reveal`` names of ``source``."""
    if not isinstance(reveal, dict) or reveal.get("kind") != REVEAL_KIND:
        found = reveal.get("kind") if isinstance(reveal, dict) else type(reveal).__name__
        raise RevealMismatch("reveal.kind", REVEAL_KIND, str(found))
    _same("reveal.commitment", commitment_of(reveal), reveal.get("commitment"))
    _same("commitment", scenario_commitment(disguised.scenario), reveal["commitment"])
    _same("scenario", disguised.id, reveal.get("scenario"))
    named = reveal.get("source")
    named = named if isinstance(named, dict) else {}
    for key, value in source_ref(source.scenario).items():
        _same(f"source.{key}", named.get(key), value)
    made = disguise_transform(source.tape, _secret(reveal))
    transform = made.with_rules(
        _ticks(reveal, "tick", None),
        _ticks(reveal, "volumeTick", "1"),
        reveal["transform"].get("calendar") if isinstance(reveal.get("transform"), dict) else None,
    )
    _same("transform", canonical_json(transform.to_json()), canonical_json(reveal.get("transform")))
    _check_terms(disguised.scenario, source.scenario, transform)
    _check_bars(disguised, source, transform)
    news = source.news
    moved = (
        None
        if news is None
        else disguised_news(news, transform, source.news_aliases, source.tape.times).root
    )
    _same("newsRoot", moved, disguised.scenario.news_root)


def _check_terms(disguised: Scenario, source: Scenario, transform: DisguiseTransform) -> None:
    for name in ("account", "fees", "fill"):
        _same(name, getattr(source, name).to_json(), getattr(disguised, name).to_json())
    _same("tape.interval", source.tape.interval, disguised.tape.interval)
    _same("tape.barsPerYear", source.tape.bars_per_year, disguised.tape.bars_per_year)
    _same("tape.bars", source.tape.bars, disguised.tape.bars)
    lots = {item.symbol: item.lot for item in source.instruments}
    expected = sorted((part.disguised, part.tick, lots[part.symbol]) for part in transform.symbols)
    found = sorted((item.symbol, item.tick, item.lot) for item in disguised.instruments)
    _same("instruments", expected, found)


def _check_bars(
    disguised: LoadedScenario, source: LoadedScenario, transform: DisguiseTransform
) -> None:
    tape, original = disguised.tape, source.tape
    volume = Decimal(transform.volume_factor)
    for index, moved in enumerate(transform.calendar_of(original.times).bar_times()):
        _same(f"bar {index}: time", moved, tape.times[index])
        for part in transform.symbols:
            src, got = original.columns[part.symbol], tape.columns[part.disguised]
            factor, shift = Decimal(part.factor), tape.scale - tick_scale(part.tick)
            for column in ("open", "high", "low", "close"):
                want = scaled_price(getattr(src, column)[index], original.scale, factor, part.tick)
                have = getattr(got, column)[index]
                if want * 10**shift != have:
                    raise RevealMismatch(
                        f"bar {index} ({moved}) {part.disguised} {column}",
                        tape.price_text(want * 10**shift),
                        tape.price_text(have),
                    )
            shown = disguised_volume(
                src.volume[index], original.volume_scale, volume, part.volume_tick
            )
            want_volume = original.volume_text(shown)
            have_volume = tape.volume_text(got.volume[index])
            if Decimal(want_volume) != Decimal(have_volume):
                raise RevealMismatch(
                    f"bar {index} ({moved}) {part.disguised} volume", want_volume, have_volume
                )
