"""Copies: a grade, session or proof that appears more than once on a board.

A proof copied into a second agent's folder verifies as well as the first: the board
ranks it once and flags every copy, naming every place it appeared. Two rows are copies
when they share a proof root or a grade root, or name the same session of the same door
(attested rows only: sessions opened locally by different people can share an id, since
it derives from the principal, scenario and label). Copies are grouped transitively.

The copy that is ranked is the attested one if any (it is credited to the principal the
door's statement names), else one whose grade passed, else the first given; the others
are not ranked and say where the ranked one is. Copies given under different names (a
run's name is a claim: one entrant may file another's proof under its own) credit the
ranked copy to the identity its door's statement names, never to whichever name came
first.
"""

from __future__ import annotations

from .rows import BoardRow

__all__ = ["flag_copies"]


def _identities(row: BoardRow) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name in ("proof", "grade"):
        root = row.roots.get(name)
        if root is not None:
            found.append((name, root))
    if row.issuer is not None and row.session is not None:
        found.append(("session", row.issuer, row.session))
    return found


def _groups(rows: list[BoardRow]) -> list[list[int]]:
    """The indexes of rows sharing an identity, transitively, in the order given."""
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, ...], int] = {}
    for i, row in enumerate(rows):
        for identity in _identities(row):
            j = first.setdefault(identity, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(rows)):
        groups.setdefault(root(i), []).append(i)
    return [members for members in groups.values() if len(members) > 1]


def _shared(copy: BoardRow, kept: BoardRow) -> str:
    shared = set(_identities(copy)) & set(_identities(kept))
    for name in ("proof", "grade", "session"):
        if any(identity[0] == name for identity in shared):
            return f"the same {name} as"
    return "a grade, session or proof shared with"


def flag_copies(rows: list[BoardRow]) -> None:
    """Set ``duplicates`` (every place, in order) on each verified row that has copies,
    and ``unranked`` on every copy but the one ranked."""
    verified = [row for row in rows if row.badge != "failed"]
    for members in _groups(verified):
        copies = [verified[i] for i in members]
        kept = min(
            range(len(copies)),
            key=lambda i: (not copies[i].attested, copies[i].passed is not True, i),
        )
        places = [row.source for row in copies]
        identity = copies[kept].identity
        if identity is not None and len({row.agent for row in copies}) > 1:
            copies[kept].agent = identity
        for i, row in enumerate(copies):
            row.duplicates = places
            if i != kept:
                row.unranked = (
                    f"a copy: {_shared(row, copies[kept])} {copies[kept].source} "
                    f"(ranked once, there); it appeared {len(places)} times"
                )
