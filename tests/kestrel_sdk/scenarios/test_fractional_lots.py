"""backtesting.py's BTCUSD imported with ``--lot 0.01`` and traded in hundredths of a
bitcoin: quantities are exact decimals everywhere (frames, blotter, grade), cash is the
tape's opens times the quantities less the fees to the cent, and a quantity finer than
the lot is refused naming the lot (issue 49, item 4)."""

from __future__ import annotations

import csv
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk import create_sdk, local_transport, render_frame

from tests.kestrel_sdk.scenarios.test_crypto_and_fx import _kestrel, _shipped, _verified

CENT = Decimal("0.01")


def _import(catalog: Path) -> list[Decimal]:
    """Import BTCUSD in 0.01 lots; the opens of its tape, by bar."""
    done = _kestrel(
        "scenario", "new", "btcusd", "--from", str(_shipped("BTCUSD")), "--lot", "0.01",
        "--out", str(catalog / "btcusd"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    toml = (catalog / "btcusd" / "scenario.toml").read_text(encoding="utf-8")
    assert 'lot = "0.01"' in toml
    check = _kestrel("--catalog-path", str(catalog), "catalog", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    with (catalog / "btcusd" / "tape.csv").open(newline="", encoding="utf-8") as handle:
        return [Decimal(row["open"]) for row in csv.DictReader(handle)]


def _fee(notional: Decimal) -> Decimal:
    """The scenario's fee: 10 bps of the notional, to the cent (half-even), minimum 0."""
    return (notional * Decimal(10) / Decimal(10000)).quantize(CENT, rounding=ROUND_HALF_EVEN)


async def _trade(catalog: Path, tmp_path: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with create_sdk(local_transport(catalog_paths=[catalog])) as sdk:
        scenario = await sdk.scenario("btcusd")
        seen["lot"] = scenario.instruments[0].lot
        session = (await sdk.open_session("btcusd")).session
        assert session is not None
        with pytest.raises(KestrelError) as refused:
            await session.submit("buy 0.001 BTCUSD\n")
        seen["refusal"] = refused.value
        frames = []
        for source in ("buy 0.01 BTCUSD\nadvance", "buy 0.25 BTCUSD\nadvance", "advance 2"):
            frames.append((await session.submit(source)).delivery.frame)
        frames.append((await session.submit("sell 0.26 BTCUSD\nadvance")).delivery.frame)
        seen["frames"] = frames
        blotter = await session.blotter()
        seen["blotter"] = blotter
        await session.close()
        grade = await sdk.grade_until_done(session.id)
        assert (await sdk.verify(grade)).ok
        seen["grade"] = grade
        proof = await sdk.proof(session.id, embed_tape=True)
        proof.write(tmp_path / "btcusd.proof.json")
    return seen


def test_btcusd_trades_in_hundredths_with_exact_cash(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    opens = _import(catalog)
    seen = anyio.run(_trade, catalog, tmp_path)
    assert seen["lot"] == "0.01"

    # finer than the lot: refused before anything is applied, the lot named
    refusal = seen["refusal"]
    assert isinstance(refusal, KestrelError)
    assert refusal.code == RefusalCode.INVALID_SOURCE
    (diagnostic,) = refusal.detail["diagnostics"]
    assert diagnostic["code"] == "K203"
    assert diagnostic["message"] == ("quantity 0.001 is not a multiple of BTCUSD's lot of 0.01")

    frames = seen["frames"]
    assert isinstance(frames, list)
    fills = [(e.bar, e.qty, e.price) for f in frames for e in f.events if e.type == "fill"]
    # market orders fill at the next bar's open, in the quantities written
    assert [(bar, qty) for bar, qty, _ in fills] == [(1, "0.01"), (2, "0.25"), (5, "0.26")]
    assert [Decimal(price or "0") for _, _, price in fills] == [opens[1], opens[2], opens[5]]
    cash = Decimal("100000.00")
    for qty, bar, sign in ((Decimal("0.01"), 1, -1), (Decimal("0.25"), 2, -1)):
        notional = qty * opens[bar]
        cash += sign * notional - _fee(notional)
    # the position is shown exactly while held, and the cash to the cent
    held = frames[1]
    assert [(p.symbol, p.qty) for p in held.positions] == [("BTCUSD", "0.26")]
    assert "  BTCUSD +0.26 @ " in render_frame(held)  # as the CLI and notebooks show it
    assert Decimal(held.account.cash) == cash.quantize(CENT, rounding=ROUND_HALF_EVEN)
    notional = Decimal("0.26") * opens[5]
    cash += notional - _fee(notional)
    last = frames[-1]
    assert last.positions == []
    assert Decimal(last.account.cash) == cash.quantize(CENT, rounding=ROUND_HALF_EVEN)
    assert Decimal(last.account.equity) == Decimal(last.account.cash)

    blotter = seen["blotter"]
    assert [(o.qty, o.filled, o.status) for o in blotter.orders] == [
        ("0.01", "0.01", "filled"),
        ("0.25", "0.25", "filled"),
        ("0.26", "0.26", "filled"),
    ]
    grade = seen["grade"]
    assert grade.metrics.fills == 3
    checks = {c.id: c for c in grade.conformance.checks}
    assert checks["flat-at-end"].passed is True
    assert checks["within-position-limits"].detail == (
        "largest |position| 0.26 of max_position 100000"
    )
    _verified(tmp_path / "btcusd.proof.json")
