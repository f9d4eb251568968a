"""Catalog and scenario objects: what an agent can open a session on."""

from __future__ import annotations

from typing import Literal

from ..model import DecimalStr, ProtocolModel, Quantity, RootStr, SelfRooted

__all__ = [
    "AccountTerms",
    "Catalog",
    "CatalogScenario",
    "FeeTerms",
    "FillTerms",
    "ForwardInfo",
    "Instrument",
    "OrderForm",
    "Scenario",
    "SealedScenario",
    "SealedTapeInfo",
    "StatementKind",
    "TapeInfo",
]

Interval = Literal["1m", "5m", "1h", "1d"]


class CatalogScenario(ProtocolModel):
    """One catalog entry; ``root`` is the full :class:`Scenario`'s root.

    ``tapeRoot`` is the root of its tape's canonical CSV: for a ``sealed`` scenario (no
    face serves its tape or a bar after a session's clock) it is the commitment a later
    unsealing is checked against; its ``bars`` (the tape's length) is absent.
    ``commitment`` (a disguised scenario's only) commits to its source, transform and
    secret, which ``kestrel scenario reveal`` publishes after an evaluation.
    """

    id: str
    title: str
    symbols: list[str]
    interval: Interval
    bars: int | None = None
    root: RootStr
    tape_root: RootStr
    sealed: bool
    commitment: RootStr | None = None
    # a forward scenario's entry also says ``forward: true`` (absent on every other)


class OrderForm(ProtocolModel):
    """One form an ``order`` statement may take beyond a plain order (a bracket, a
    one-cancels-other group, a trailing stop, a target), taught by example."""

    form: str
    syntax: str
    example: str
    summary: str


class StatementKind(ProtocolModel):
    """One of the four Kestrel statement kinds, taught by example; the ``order`` kind
    also lists its ``forms`` (absent on the other kinds)."""

    kind: Literal["order", "cancel", "advance", "stand-down"]
    syntax: str
    example: str
    summary: str
    forms: list[OrderForm] | None = None


class Catalog(SelfRooted):
    """Every scenario of this process and the language's statement kinds."""

    kind: Literal["kestrel.catalog"] = "kestrel.catalog"
    version: int = 1
    scenarios: list[CatalogScenario]
    statement_kinds: list[StatementKind]


class Instrument(ProtocolModel):
    """A tradable symbol with its price grid and lot size."""

    symbol: str
    tick: DecimalStr
    lot: Quantity
    """Whole (an integer) as always, or a decimal string (``"0.01"``) for a fractional lot."""


class TapeInfo(ProtocolModel):
    """The tape's shape; ``root`` is the root of its canonical CSV bytes."""

    interval: Interval
    bars: int
    start: str
    end: str
    bars_per_year: int
    root: RootStr


class ForwardInfo(ProtocolModel):
    """A forward scenario's declared tape: its prefix's ``bars`` (0: it starts empty) and
    ``head``, the root the chain of its prefix roots starts from (docs/runtime.md,
    "Forward scenarios"). Bars appended later are bound by the frames that show them."""

    bars: int
    head: RootStr


class AccountTerms(ProtocolModel):
    """Starting cash and the account's limits."""

    cash: DecimalStr
    shortable: bool
    max_position: int
    max_drawdown: DecimalStr
    kind: Literal["margin"] | None = None
    """``"margin"`` for a margin account (absent: a cash account, as always); the four
    members below are present exactly when it is."""
    leverage: DecimalStr | None = None
    maintenance_margin: DecimalStr | None = None
    borrow_rate: DecimalStr | None = None
    cash_rate: DecimalStr | None = None


class FeeTerms(ProtocolModel):
    """Fee per fill: ``max(minimum, notional * bps / 10000)``."""

    bps: DecimalStr
    minimum: DecimalStr


class FillTerms(ProtocolModel):
    """How much of a bar one order may take and the slippage against it."""

    participation: DecimalStr
    slippage_bps: DecimalStr


class Scenario(SelfRooted):
    """A full scenario description (resource ``kestrel://catalog/scenarios/{id}``)."""

    kind: Literal["kestrel.scenario"] = "kestrel.scenario"
    id: str
    title: str
    description: str
    instruments: list[Instrument]
    tape: TapeInfo
    account: AccountTerms
    fees: FeeTerms
    fill: FillTerms
    news_root: RootStr | None = None
    """The root of the scenario's canonical ``news.jsonl`` (absent: no news)."""
    news_in_frame: int | None = None
    """The newest visible news items a frame shows (absent: 5)."""

    @property
    def forward_tape(self) -> ForwardInfo | None:
        """A forward scenario's declared prefix: its ``forward`` member (absent on every
        other scenario, whose object and root are as they always were)."""
        found = (self.model_extra or {}).get("forward")
        return None if found is None else ForwardInfo.model_validate(found)


class SealedTapeInfo(ProtocolModel):
    """A sealed tape's shape up to what bar 0 shows: no end time nor length, its root."""

    interval: Interval
    start: str
    bars_per_year: int
    root: RootStr


class SealedScenario(ProtocolModel):
    """A sealed scenario as every face serves it: the terms an agent trades by, without
    its description, its tape's end or its length (each may tell of bars after the clock).

    ``root`` is the full :class:`Scenario`'s root (as the catalog lists it): the
    commitment a later unsealing is checked against, not a root of this object.
    """

    kind: Literal["kestrel.sealed-scenario"] = "kestrel.sealed-scenario"
    id: str
    title: str
    sealed: Literal[True] = True
    root: RootStr
    instruments: list[Instrument]
    tape: SealedTapeInfo
    account: AccountTerms
    fees: FeeTerms
    fill: FillTerms
    news_root: RootStr | None = None
    news_in_frame: int | None = None

    @classmethod
    def of(cls, scenario: Scenario) -> SealedScenario:
        """The sealed view of ``scenario``."""
        tape = scenario.tape
        return cls(
            id=scenario.id,
            title=scenario.title,
            root=scenario.root,
            instruments=scenario.instruments,
            tape=SealedTapeInfo(
                interval=tape.interval,
                start=tape.start,
                bars_per_year=tape.bars_per_year,
                root=tape.root,
            ),
            account=scenario.account,
            fees=scenario.fees,
            fill=scenario.fill,
            **{
                name: getattr(scenario, name)
                for name in ("news_root", "news_in_frame")
                if getattr(scenario, name) is not None
            },
        )
