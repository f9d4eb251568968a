"""What checking a door's signed statement gives: :class:`Attested` (who signed, whom
it names, what it vouched for) or :class:`NotAttested` (the field that does not hold, and
why). Shared by :mod:`.trust` and :mod:`.forward_order`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kestrel_protocol.canonical import canonical_json
from kestrel_protocol.quoting import counted

__all__ = ["ORDER_UNCONFIRMED", "Attested", "NotAttested", "statement_text"]

ORDER_UNCONFIRMED = "order unconfirmed"
"""How a result begins to say that a forward decision arrived while its bar was being
published (between the door's two reads of its clock): whether it preceded the bar is
not known (what the statement says of it follows, in the words a late one is named
with)."""


class NotAttested(Exception):
    """The statement does not hold for this proof: ``field`` and why."""

    def __init__(self, field: str, expected: str, found: str) -> None:
        super().__init__(f"{field}: expected {expected}, found {found}")
        self.field, self.expected, self.found = field, expected, found


@dataclass(frozen=True, slots=True)
class Attested:
    """Who signed (the statement's issuer), with which key, and the keys' source; whom
    the statement names (the principal's pseudonym, ``p_…``, or None when it names none),
    and, for a trial the evaluator's harness minted, whose trial it was (``trialOf``) and
    its number among that principal's trials (``trialNumber``) and how many that principal
    had minted when the door signed (``trialsMinted``);
    for a forward session, how many of its decisions were each found to precede their
    bar (``decisions``) and what the statement says of each whose order is unconfirmed
    (``unconfirmed``: it arrived while its bar was being published); for a replay of a
    complete forward tape (``replay``), how many of its submissions were each found to
    follow theirs."""

    issuer: str
    kid: str
    source: str | None = None
    principal: str | None = None
    trial_of: str | None = None
    trial_number: int | None = None
    """The trial's number among ``trial_of``'s (``trialNumber``); ``None``: not numbered."""
    trials_minted: int | None = None
    """How many trials ``trial_of`` had minted when the door signed (``trialsMinted``, at
    least ``trial_number``); ``None``: not said."""
    decisions: int | None = None
    unconfirmed: tuple[str, ...] = ()
    replay: bool = False

    def __str__(self) -> str:
        """As a verification's ``attestedBy`` says it on every face (``kestrel verify
        --trust`` prints it): the signer, the keys' source, the trial the statement names
        (its number and how many its parent had minted when signed) and the forward order
        found."""
        trusted = f"; keys trusted from {self.source}" if self.source is not None else ""
        return f"{self.issuer} (key {self.kid}){trusted}{self._trial()}{self._order()}"

    def _trial(self) -> str:
        if self.trial_of is None:
            return ""
        if self.trial_number is None:
            return f"; a trial of {self.trial_of}, not numbered"
        minted = "" if self.trials_minted is None else f" ({self.trials_minted} minted when signed)"
        return f"; trial {self.trial_number} of {self.trial_of}{minted}"

    def _order(self) -> str:
        order = ""
        if self.replay:
            order = (
                f"; forward scenario replayed: {_each(self.decisions, 'submission')} was made "
                "after its bar was published (the tape was complete: not a forward run)"
            )
        elif self.decisions is not None:
            order = f"; forward: {_each(self.decisions, 'decision')} preceded its bar"
        return order + self.order_unconfirmed()

    def order_unconfirmed(self) -> str:
        """What the statement says of each decision whose order is unconfirmed
        (``"; order unconfirmed: statement.predicate.submissions[seq N]: …"``), or
        ``""``: for every face, the signer's line or a board's row."""
        return "".join(f"; {ORDER_UNCONFIRMED}: {said}" for said in self.unconfirmed)


def _each(count: int | None, noun: str) -> str:
    """``each of 3 decisions``, or ``its one decision``: the subject of a line that says
    the same of every one of a session's decisions."""
    return f"its one {noun}" if count == 1 else f"each of {counted(count or 0, noun)}"


def statement_text(value: Any) -> str:
    """``value`` of a statement as a mismatch names it (its canonical JSON)."""
    return canonical_json(value).decode("utf-8")
