"""The buy-and-hold baseline of a board: the same tapes, traded by no one.

For each catalog scenario on the board, the board trades one session itself, on this
machine's runtime over a store in memory (nothing kept; the catalog's remembered tape
shapes are the command's home's): at bar 0 it buys about half the account's equity
of the scenario's first symbol (whole lots, within ``maxPosition``; the rule of the
offline agent ``kestrel/hold``) and advances to the end of the tape; the runtime grades
it. The session id, every root and every figure derive from the scenario alone, so the
baseline is the same on every machine. A scenario sealed (in this machine's catalog, or
on the door that published the board) has none, the board saying why: its figures are
the hidden tape's. It is shown beside the agents, labelled a
baseline, and never ranked or credited to anyone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any

import anyio
from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .catalog import BoardCatalog

__all__ = ["BASELINE", "SEALED_ON_DOOR", "Baseline", "buy_and_hold"]

logger = logging.getLogger(__name__)

BASELINE = "buy-and-hold"
"""The baseline's name on the board (never an agent's)."""

FRACTION = Decimal("0.5")


@dataclass(frozen=True, slots=True)
class Baseline:
    """The baseline's grade figures on one scenario, or why there are none."""

    scenario: str
    root: str
    metrics: dict[str, Any] | None = None
    grade: str | None = None
    why: str | None = None


class _SealedHere(Exception):
    """The scenario is sealed on this machine: no face serves where its tape ends."""


async def _trade(scenario: str, catalog: BoardCatalog) -> dict[str, Any]:
    from ..client import create_sdk  # noqa: PLC0415 - the runtime loads only here
    from ..transports import local_transport  # noqa: PLC0415

    runtime = local_transport(
        home=catalog.home,
        principal=BASELINE,
        store="memory:",
        catalog_paths=catalog.paths,
        catalog=catalog.index,
    )
    sdk = create_sdk(runtime)
    async with sdk:
        described = (await sdk.scenario(scenario)).to_json()
        opened = await sdk.open_session(scenario, label=BASELINE)
        assert opened.session is not None
        frame = (await opened.session.frame()).to_json()["frame"]
        instrument = described["instruments"][0]
        symbol, lot = instrument["symbol"], Decimal(str(instrument["lot"]))
        close = Decimal(frame["marks"][symbol])
        equity = Decimal(frame["account"]["equity"])
        with localcontext(DEFAULT_DECIMAL_CONTEXT):
            lots = (equity * FRACTION / close / lot).to_integral_value(rounding=ROUND_FLOOR)
            qty = min(int(lots * lot), int(described["account"]["maxPosition"]))
        if "remaining" not in frame["clock"]:  # sealed here: its end is not served
            raise _SealedHere
        remaining = int(frame["clock"]["remaining"])
        source = (f"buy {qty} {symbol}\n" if qty > 0 else "") + f"advance {remaining}"
        await opened.session.submit(source)
        proof = (await sdk.proof(opened.session.id)).to_json()
    grade: dict[str, Any] = proof["grade"]
    return grade


SEALED_ON_DOOR = (
    "sealed on the door that published this board: no figure of its tape is shown "
    "until the door lifts the seal"
)


def buy_and_hold(
    scenario: str,
    root: str,
    *,
    sealed: bool = False,
    catalog: BoardCatalog | None = None,
) -> Baseline:
    """The baseline on the catalog's ``scenario`` (whose root must be ``root``; the
    catalog ``catalog``, ``None``: ``KESTREL_CATALOG_PATH``'s); none
    when ``sealed`` (the door that published the board seals it: agents may still be
    trading it, and the baseline's figures are the hidden tape's)."""
    if sealed:
        return Baseline(scenario, root, why=SEALED_ON_DOOR)
    catalog = catalog if catalog is not None else BoardCatalog()
    known = catalog.index.get(scenario)
    if known is None or known.scenario.root != root:
        return Baseline(scenario, root, why="not a scenario of this machine's catalog")
    try:
        grade = anyio.run(_trade, scenario, catalog)
    except _SealedHere:
        why = "sealed in this machine's catalog: its tape's end is not served"
        return Baseline(scenario, root, why=why)
    except Exception as exc:  # the board is still written, saying why there is none
        logger.warning("board: no buy-and-hold baseline on %s", scenario, exc_info=True)
        return Baseline(scenario, root, why=f"could not be traded: {type(exc).__name__}")
    return Baseline(scenario, root, dict(grade["metrics"]), grade["root"])
