"""Twins a reveal confirms: the disguised scenario a verified proof on the board replays
on is exactly the transform the reveal names of its source (checked as ``kestrel verify
--reveal`` checks it), or the pair is refuted naming what differs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .catalog import BoardCatalog
from .gaps import Twins
from .rows import BoardRow
from .sources import Entry

__all__ = ["revealed_twins"]


def _text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _scenarios(
    rows: list[BoardRow], entries: Sequence[Entry], scenario: str
) -> dict[str, dict[str, Any]]:
    """Each root of ``scenario`` a verified proof on the board replays on, with one such
    proof (the first given)."""
    found: dict[str, dict[str, Any]] = {}
    for row, entry in zip(rows, entries, strict=True):
        if row.badge == "failed" or row.scenario != scenario or row.scenario_root is None:
            continue
        if isinstance(entry.data, dict):
            found.setdefault(row.scenario_root, entry.data)
    return found


def _one(
    where: str,
    reveal: Any,
    rows: list[BoardRow],
    entries: Sequence[Entry],
    catalog: BoardCatalog,
) -> list[Twins]:
    from ..runtime.catalog.reveal import RevealMismatch, check_reveal  # noqa: PLC0415
    from ..runtime.verify import proof_scenario  # noqa: PLC0415

    disguised, named = _text(reveal, "scenario"), reveal.get("source")
    source, source_root = _text(named, "id"), _text(named, "root")
    index = catalog.index
    original = index.get(source)
    if original is None or original.scenario.root != source_root:
        proofs = _scenarios(rows, entries, source).get(source_root)
        try:
            original = proof_scenario(index, proofs) if proofs is not None else None
        except Exception:  # a source that cannot be loaded is said below as not found
            original = None
    proofs_of = _scenarios(rows, entries, disguised)
    if original is None or not proofs_of:
        missing = (
            f"its source {source} ({source_root}) is neither in this catalog nor embedded in "
            "a verified proof on the board"
            if original is None
            else f"no verified proof of {disguised} on the board to check it against"
        )
        why = f"reveal {where} cannot be checked: {missing}; not counted"
        return [Twins(source, disguised, "unconfirmed", why, source_root or None)]
    twins = []
    for root, data in sorted(proofs_of.items()):
        try:
            check_reveal(proof_scenario(index, data), reveal, original)
        except Exception as exc:  # a reveal that breaks the check refutes its pair only
            said = str(exc) if isinstance(exc, RevealMismatch) else type(exc).__name__
            why = f"reveal {where} does not hold for {disguised} {root}: {said}; not counted"
            twins.append(Twins(source, disguised, "refuted", why, source_root, root))
            continue
        why = (
            f"revealed by {where}: {disguised} {root} is the disguise of {source} "
            f"{source_root} committed to by {_text(reveal, 'commitment')}"
        )
        twins.append(Twins(source, disguised, "confirmed", why, source_root, root))
    return twins


def revealed_twins(
    rows: list[BoardRow],
    entries: Sequence[Entry],
    reveals: Sequence[tuple[str, Any]],
    catalog: BoardCatalog,
) -> list[Twins]:
    """The pairs ``reveals`` name ((where each came from, its data)), each confirmed,
    refuted or unconfirmed (nothing on the board to check it against); once each; a
    source looked up in ``catalog``."""
    found: list[Twins] = []
    for where, reveal in reveals:
        for twins in _one(where, reveal, rows, entries, catalog):
            same = (twins.labelled, twins.labelled_root, twins.disguised, twins.disguised_root)
            if not any(
                (t.labelled, t.labelled_root, t.disguised, t.disguised_root) == same for t in found
            ):
                found.append(twins)
    return found
