"""Trials withheld: which of a parent's numbered trials its attested rows show.

A door numbers the trials each parent principal mints (1, 2, 3 ... in mint order) and
signs the number (``trialNumber``) beside ``trialOf`` in the statement of each trial's
sessions, with how many trials the parent had minted when it signed (``trialsMinted``).
Each trial is its own principal, so an operator could mint ten, run the agent ten times
and publish the best proof alone; the board ranks what it is given, but for each parent
(its door and pseudonym) it states what the attested rows show: the numbers shown, that
at least as many trials were minted as the largest signed ``trialsMinted`` (or the
highest number shown, if larger), and every number up to it that no row shows. It ranks
nothing differently (a missing run may have crashed). A trial whose statement has no
number is counted apart. Trials minted after the last statement shown was signed are
seen through the door's own signed count of the parent's trials (:mod:`..trials_minted`),
from a :data:`CountSource`: a board under trusted keys asks each parent's door now
(:func:`asking_doors`); a door's published board reads the counts its door signed into
the published document (:mod:`.published`), the same bytes whoever rebuilds it. The
larger is stated, with when the door signed it and where anyone asks again
(``countUrl``); "none missing" is said only under a count that held: where the count
could not be read or does not hold, the parent's row says why and "none missing of those
signed". Asking, each door is asked at most once per parent, and a door that could not
be reached, or answered a status that is not about the parent asked (a 5xx: its store
down; a 404), is not asked again: the rows of its other parents say so, with why (a
door out of reach costs one timeout, not one per parent).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rows import BoardRow

if TYPE_CHECKING:
    import httpx

    from ..trials_minted import DoorCount

__all__ = ["CountSource", "TrialsShown", "asking_doors", "trials_shown"]

CountSource = Callable[[Sequence[tuple[str, str]]], Mapping[tuple[str, str], "DoorCount"]]
"""``[(issuer, parent), …] → what each parent's door signs of its trials minted``."""


def _spans(numbers: Sequence[int]) -> str:
    """``1, 2, 3, 5`` as ``1–3, 5``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


@dataclass(frozen=True, slots=True)
class TrialsShown:
    """One parent's attested trial rows: the agents they are credited to, the trial
    numbers they show, how many show no number and the largest count of trials minted
    that their statements sign (0: none signs one); ``door``: what the parent's door
    signs of its count (``None``: not asked)."""

    issuer: str
    parent: str
    agents: tuple[str, ...]
    shown: tuple[int, ...]
    unnumbered: int = 0
    minted: int = 0
    door: DoorCount | None = None

    @property
    def highest(self) -> int:
        """At least this many trials were minted (0: no numbered row): the largest signed
        ``trialsMinted``, the door's signed count now or the highest number shown."""
        counted = self.door.minted if self.door is not None else None
        return max(self.minted, counted or 0, *self.shown, 0)

    @property
    def missing(self) -> tuple[int, ...]:
        """The numbers up to the highest that no row shows."""
        return tuple(n for n in range(1, self.highest + 1) if n not in self.shown)

    @property
    def counted(self) -> bool:
        """The door's signed count held: nothing minted up to then is unseen."""
        return self.door is not None and self.door.minted is not None

    @property
    def all_shown(self) -> bool:
        """Every trial the door had minted when it signed its count is shown."""
        return self.counted and not self.missing and not self.unnumbered

    @property
    def url(self) -> str:
        """Where the parent's door serves its signed count: anyone asks again there."""
        from ..trials_minted import count_url  # noqa: PLC0415 - httpx loads only here

        return count_url(self.issuer, self.parent)

    def __str__(self) -> str:
        said = []
        if self.highest:
            minted = "trial 1" if self.highest == 1 else f"trials 1–{self.highest}"
            missing = f"{_spans(self.missing)} not shown" if self.missing else "none missing"
            signed = "" if self.missing or self.counted else " of those signed"
            said.append(f"{minted} minted at least; {missing}{signed}")
        if self.unnumbered:
            said.append(f"{self.unnumbered} trial row(s) without a number")
        if self.door is not None and self.door.unread is not None:
            said.append(f"trials minted since unknown: {self.door.unread}")
        elif self.door is not None:
            said.append(f"the door's count as of {self.door.signed_at or 'a time it did not sign'}")
        return "; ".join(said)

    def to_json(self) -> dict[str, Any]:
        door = self.door
        return {
            "agents": list(self.agents),
            "issuer": self.issuer,
            "trialOf": self.parent,
            "shown": list(self.shown),
            "mintedAtLeast": self.highest,
            "missing": list(self.missing),
            "allShown": self.all_shown,
            **(
                {}
                if door is None
                else {
                    "doorCount": door.minted,
                    "doorCountAsOf": door.signed_at,
                    "doorUnread": door.unread,
                }
            ),
            "countUrl": self.url,
            "unnumbered": self.unnumbered,
            "said": str(self),
        }


def trials_shown(rows: Sequence[BoardRow], counts: CountSource | None = None) -> list[TrialsShown]:
    """Per parent (its door and pseudonym), what the rows whose door's statement held and
    named a trial show (after ranking: each row credited to its agent), with the count
    each parent's door signs from ``counts`` (``None``: none asked)."""
    found: dict[tuple[str, str], list[BoardRow]] = defaultdict(list)
    for row in rows:
        if row.issuer is not None and row.trial_of is not None:
            found[(row.issuer, row.trial_of)].append(row)
    said = {} if counts is None or not found else counts(list(found))
    shown = [
        TrialsShown(
            issuer,
            parent,
            tuple(sorted({row.agent for row in trials})),
            tuple(sorted({row.trial for row in trials if row.trial is not None})),
            sum(1 for row in trials if row.trial is None),
            max((row.minted for row in trials if row.minted is not None), default=0),
            said.get((issuer, parent)),
        )
        for (issuer, parent), trials in found.items()
    ]
    return sorted(shown, key=lambda t: (t.agents, t.issuer, t.parent))


def asking_doors(
    trusted_keys: Mapping[str, Any], client: httpx.Client | None = None
) -> CountSource:
    """The counts each parent's door signs now, asked through ``client`` (``None``: one
    of the build's own) and checked under ``trusted_keys`` (those the rows were checked
    under)."""

    def counts(parents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], DoorCount]:
        return _door_counts(parents, trusted_keys, client)

    return counts


def _door_counts(
    parents: Sequence[tuple[str, str]],
    trusted_keys: Mapping[str, Any],
    client: httpx.Client | None,
) -> dict[tuple[str, str], DoorCount]:
    """What each parent's door (``(issuer, parent)``, each once) signs of its count now,
    through one client; a door that could not be reached, or answered a status not about
    the parent asked, is not asked again, and each of its other parents' counts says why."""
    import httpx  # noqa: PLC0415 - httpx loads only when a door is asked

    from ..trials_minted import DoorCount, fetch_trials_minted  # noqa: PLC0415

    counts: dict[tuple[str, str], DoorCount] = {}
    unreached: dict[str, DoorCount] = {}  # issuer -> the failure of the one time asked
    http = client if client is not None else httpx.Client(timeout=10.0)
    try:
        for issuer, parent in parents:
            failed = unreached.get(issuer)
            if failed is not None:
                said = f"not asked again, the door did not answer a count: {failed.unread}"
                counts[(issuer, parent)] = DoorCount(unread=said, reached=False)
                continue
            count = fetch_trials_minted(issuer, parent, trusted_keys, http)
            if not count.reached:
                unreached[issuer] = count
            counts[(issuer, parent)] = count
    finally:
        if client is None:
            http.close()
    return counts
