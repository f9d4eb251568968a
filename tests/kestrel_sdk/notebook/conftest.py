"""A session traded through the synchronous facade, as a notebook does: the SMA(10/30)
cross on acme-trend, one bar per blocking ``submit``, then graded."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

import pytest
from kestrel_sdk import GradeView, Kestrel, SyncSession
from kestrel_sdk.report.agent import SmaCrossAgent


def trade_sma(session: SyncSession, symbol: str = "ACME") -> None:
    """The demo agent's decisions, submitted with blocking calls until the tape ends."""
    agent = SmaCrossAgent(symbol)
    close = session.frame().frame.marks[symbol]
    while True:
        response = session.submit(agent.decide(Decimal(close)))
        if response.disposition == "stood-down":
            return
        close = response.delivery.frame.marks[symbol]


@dataclass(frozen=True)
class Graded:
    kestrel: Kestrel
    session: SyncSession
    grade: GradeView


@pytest.fixture(scope="module")
def graded() -> Iterator[Graded]:
    with Kestrel(store="memory:") as kestrel:
        session = kestrel.open("acme-trend")
        trade_sma(session)
        session.close()
        yield Graded(kestrel, session, session.grade())
