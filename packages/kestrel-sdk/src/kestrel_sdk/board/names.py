"""Names: one display name carried by the rows of more than one signed identity.

A row is credited to the name its run was given (``-T agent=NAME``, ``kestrel-door
board publish --agent NAME``) before the identity its door's signed statement names
(the trial's parent, else the principal, ``p_…``). A name is a claim, the identity is
signed: two entrants who picked the same name would be one cell, their runs averaged,
and an entrant naming its runs after a rival (its name or its ``p_…``) would pad or
sink the rival's cell. So a name that attested rows of more than one identity carry is
kept apart: each such row is credited to ``NAME (IDENTITY)``, except the rows whose
identity the name is. One identity under several names stays several agents (an
evaluator may run several agents under one parent token).
"""

from __future__ import annotations

from collections import defaultdict

from .rows import BoardRow

__all__ = ["keep_names_apart"]


def keep_names_apart(rows: list[BoardRow]) -> None:
    """Credit each attested row whose name other identities' rows carry too to
    ``NAME (IDENTITY)`` (the rows' order and everything else unchanged)."""
    identities: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if row.identity is not None and row.badge != "failed":
            identities[row.agent].add(row.identity)
    for row in rows:
        shared = len(identities.get(row.agent, ())) > 1
        if shared and row.identity is not None and row.agent != row.identity:
            row.agent = f"{row.agent} ({row.identity})"
