"""Catalog and scenario objects: what an agent can open a session on."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..model import DecimalStr, ProtocolModel, RootStr, SelfRooted

__all__ = [
    "AccountTerms",
    "Catalog",
    "CatalogScenario",
    "FeeTerms",
    "FillTerms",
    "Instrument",
    "Scenario",
    "StatementKind",
    "TapeInfo",
]

Interval = Literal["1m", "5m", "1h", "1d"]


class CatalogScenario(ProtocolModel):
    """One catalog entry; ``root`` is the full :class:`Scenario`'s root."""

    id: str
    title: str
    symbols: list[str]
    interval: Interval
    bars: int
    root: RootStr


class StatementKind(ProtocolModel):
    """One of the four Kestrel statement kinds, taught by example."""

    kind: Literal["order", "cancel", "advance", "stand-down"]
    syntax: str
    example: str
    summary: str


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
    lot: int = Field(ge=1)


class TapeInfo(ProtocolModel):
    """The tape's shape; ``root`` is the root of its canonical CSV bytes."""

    interval: Interval
    bars: int
    start: str
    end: str
    bars_per_year: int
    root: RootStr


class AccountTerms(ProtocolModel):
    """Starting cash and the account's limits."""

    cash: DecimalStr
    shortable: bool
    max_position: int
    max_drawdown: DecimalStr


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
