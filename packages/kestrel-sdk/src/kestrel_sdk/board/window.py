"""The board's own check, ``whole-window``: the session traded its scenario's window.

An agent that trades ten bars of 2,520 and stops would rank on a ten-bar Sharpe; the
grade alone passes it. The board fails such a row, saying "stopped at bar 10 of 2519".
The session's last bar is the clock of the proof's head (the frame replay reproduced);
the last bar it could have traded is its clock plus what remained (or, where a sealed
door's frame does not say what remains, the scenario's bar count less one: for a forward
scenario, whose terms count its declared prefix alone, the bars its tape held when the
door signed the grade, as the door's statement says (``edge``); without a statement,
the bars of the tape the proof embeds, the proof's own word, which the row says), unless the
runtime stood it down at the scenario's ``maxDrawdown``: then the window ended there,
and a session that lost that much is ranked with its loss, never dropped. A forward
session is graded at the edge of a tape still growing when its agent stops before the
window closes: one could stop after a lucky stretch and be signed there, passing on the
edge alone. So under ``--trust`` a forward session whose door's statement says the
window was still open when it signed (``windowClosed: false``: the feed not frozen) did
not trade its whole window either; a statement that does not say (an older door's)
leaves it unconfirmed, said on the row.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..forward_edge import member, signed_edge, statement_predicate
from .catalog import BoardCatalog
from .forward import tape_times

__all__ = [
    "WHOLE_WINDOW",
    "open_window",
    "stopped_early",
    "unsigned_edge",
    "window",
    "window_unsaid",
]


WHOLE_WINDOW = "whole-window"
"""The board's own check: the session traded its scenario's whole window."""


def _terms(data: dict[str, Any], catalog: BoardCatalog) -> dict[str, Any]:
    """The proof's scenario terms: the embedded scenario's, else the catalog's scenario of
    that id and root (verification found one or the other)."""
    embedded = member(member(data, "embedded"), "scenario")
    if embedded:
        return embedded
    ref = member(data, "scenario")
    known = catalog.index.get(str(ref.get("id")))
    if known is None or known.scenario.root != ref.get("root"):
        return {}
    return known.scenario.to_json()


def window(data: dict[str, Any], catalog: BoardCatalog | None = None) -> tuple[int, int] | None:
    """The session's last clock bar (the proof's head, the frame replay reproduced) and
    the last bar it could have traded: the scenario's last bar (``clock.bar +
    clock.remaining``, or the scenario's bar count less one where a sealed door's frame
    does not say what remains), or its clock when the runtime stood it down at the
    scenario's ``maxDrawdown`` (its drawdown reached the limit: the window ended there).
    A scenario the proof does not embed is ``catalog``'s (``None``:
    ``KESTREL_CATALOG_PATH``'s)."""
    head = member(data, "head")
    clock = member(head, "clock")
    bar, remaining = clock.get("bar"), clock.get("remaining")
    if not isinstance(bar, int):
        return None
    catalog = catalog if catalog is not None else BoardCatalog()
    terms = _terms(data, catalog)
    limit = member(terms, "account").get("maxDrawdown")
    drawdown = member(head, "account").get("drawdown")
    if isinstance(limit, str) and isinstance(drawdown, str) and Decimal(drawdown) >= Decimal(limit):
        return bar, bar
    if isinstance(remaining, int):
        return bar, bar + remaining
    bars = member(terms, "tape").get("bars")
    if member(terms, "forward"):  # its tape as it grew (its terms count the prefix alone)
        edge = signed_edge(data)
        if edge is not None:
            bars = edge.bars
        elif isinstance(member(data, "embedded").get("tape"), str):
            bars = len(tape_times(data, catalog))
    return (bar, bars - 1) if isinstance(bars, int) else None


def unsigned_edge(data: dict[str, Any], catalog: BoardCatalog, *, checked: bool) -> bool:
    """Whether the proof is of a forward scenario whose window end is its own word: no
    door's statement whose signature was ``checked`` (``--trust``) says where its tape
    ended (nor the frame what remained); an unchecked statement's edge is the proof's
    word too."""
    remaining = member(member(data, "head"), "clock").get("remaining")
    if isinstance(remaining, int) or (checked and signed_edge(data) is not None):
        return False
    return bool(member(_terms(data, catalog), "forward"))  # embedded, or the catalog's


def stopped_early(window: tuple[int, int] | None) -> str | None:
    """Why the session did not trade its whole window, or None when it did."""
    if window is None:
        return "the proof says neither its session's last bar nor its scenario's"
    bar, last = window
    if bar < last:
        return f"stopped at bar {bar} of {last}: the session did not trade its whole window"
    return None


def open_window(data: dict[str, Any], *, checked: bool) -> str | None:
    """Why a forward session did not trade its whole window though it reached the edge
    its door signed: the statement (its signature ``checked``, ``--trust``) says the
    window was still open then; ``None`` when it says it had closed, or says nothing
    (:func:`window_unsaid`), or is no forward session's."""
    predicate = statement_predicate(data) if checked else {}
    if predicate.get("forward") is not True or predicate.get("windowClosed") is not False:
        return None
    edge = signed_edge(data)
    bars = "?" if edge is None else edge.bars
    return (
        f"stopped at the edge of its forward tape ({bars} bars published) while its window "
        "was still open: its door signed the grade before the feed was frozen"
    )


def window_unsaid(data: dict[str, Any], *, checked: bool) -> bool:
    """Whether a forward session's checked statement does not say whether its window had
    closed when signed (an older door's): its whole window is unconfirmed."""
    predicate = statement_predicate(data) if checked else {}
    return predicate.get("forward") is True and "windowClosed" not in predicate
