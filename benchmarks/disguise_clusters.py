"""Does a rounding of a disguise's prices hide the source's round-number clusters?

An agent's attack on a disguise, from its prices alone (session 16's): real prices bunch
on round numbers (GOOG's on 5, 10, 25 and 50 cents), and scaled by the secret factor and
rounded, the bunches keep their spacing. A Rayleigh test over candidate spacings ``c``
(``z(c) = |sum exp(2 pi i n / c)|**2 / N`` over the ``N`` prices, ``n`` in ticks) peaks
where they are; read as nickels, dimes and quarters, a peak gives the factor.

Three roundings of ``factor * source`` onto the disguise's tick, each keeping every
price within one tick of it (so every return within the tape's tick):

- ``nearest``: half up, the rule in use;
- ``offset``: ``floor(x + u)``, ``u`` a secret per tape in [0, 1) (keeps price order,
  so high >= open, close >= low);
- ``coin``: up or down by a secret coin per price (can break the bar's order).

For each, for three secrets: ``z`` at the spacings of 5, 10, 25 and 50 cents (scaled),
the largest ``z`` of the blind search (spacings 2 to 200 ticks, steps of 1e-4) away from
those, and the factor read from the blind search's top peak taken as the nickel, dime,
quarter or half-dollar nearest the rule's range, with its error.

Run: ``uv run python benchmarks/disguise_clusters.py`` (2 to 8 minutes on 2 shared cores;
numpy, which backtesting.py brings).
"""

from __future__ import annotations

import hashlib
import tempfile
from decimal import Decimal
from pathlib import Path

import numpy as np
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.disguise import disguise_transform
from kestrel_sdk.runtime.catalog.model import Tape
from kestrel_sdk.scenarios import scenario_from_file

STEPS = (Decimal("0.05"), Decimal("0.10"), Decimal("0.25"), Decimal("0.50"))
SECRETS = (bytes(range(32)), bytes(32), hashlib.sha256(b"third").digest())


def _source_prices() -> tuple[np.ndarray, int, Tape]:
    import backtesting.test  # type: ignore[import-untyped]

    bars = Path(backtesting.test.__file__).with_name("GOOG.csv")
    with tempfile.TemporaryDirectory() as directory:
        scenario_from_file(bars, "goog").write(Path(directory) / "goog")
        loaded = load_catalog([Path(directory)]).get("goog")
        assert loaded is not None
        tape = loaded.tape
        columns = tape.columns["GOOG"]
        units = [*columns.open, *columns.high, *columns.low, *columns.close]
        return np.array(units, dtype=np.float64), tape.scale, tape


def _rounded(scaled: np.ndarray, how: str, secret: bytes) -> np.ndarray:
    if how == "nearest":
        return np.asarray(np.floor(scaled + 0.5))
    if how == "offset":
        u = int.from_bytes(hashlib.sha256(b"offset" + secret).digest()[:8], "big") / 2**64
        return np.asarray(np.floor(scaled + u))
    coins = np.frombuffer(
        b"".join(
            hashlib.sha256(b"coin" + secret + i.to_bytes(8, "big")).digest()
            for i in range(len(scaled) // 32 + 1)
        ),
        dtype=np.uint8,
    )[: len(scaled)]
    return np.asarray(np.floor(scaled) + (coins & 1))


def _z(ticks: np.ndarray, spacings: np.ndarray) -> np.ndarray:
    out = np.empty(len(spacings))
    for start in range(0, len(spacings), 256):
        chunk = spacings[start : start + 256]
        phase = np.exp(2j * np.pi * np.outer(1 / chunk, ticks))
        out[start : start + 256] = np.abs(phase.sum(axis=1)) ** 2 / len(ticks)
    return out


def main() -> None:
    units, scale, tape = _source_prices()
    spacings = 2 * (1 + 1e-4) ** np.arange(int(np.log(100) / np.log(1 + 1e-4)))
    print(f"GOOG: {len(units)} prices; {len(spacings)} candidate spacings")
    for secret in SECRETS:
        (part,) = disguise_transform(tape, secret).symbols
        factor, tick = Decimal(part.factor), Decimal(part.tick)
        per_tick = float(factor / tick)  # disguised ticks per source dollar
        scaled = units / 10**scale * per_tick
        true = np.array([float(step) * per_tick for step in STEPS])
        print(f"secret {secret[:2].hex()}…: factor {factor}, tick {tick}")
        for how in ("nearest", "offset", "coin"):
            ticks = _rounded(scaled, how, secret)
            assert np.all(np.abs(ticks - scaled) < 1)
            at_true = _z(ticks, true)
            blind = _z(ticks, spacings)
            away = np.all(np.abs(spacings[:, None] / true[None, :] - 1) > 2e-3, axis=1)
            top = spacings[int(np.argmax(blind))]
            readings = [top / (float(step) * float(1 / tick)) for step in STEPS]
            best = min(readings, key=lambda f: abs(f / float(factor) - 1))
            print(
                f"  {how:8s} z at 5/10/25/50c: "
                + " ".join(f"{z:7.1f}" for z in at_true)
                + f" | max z elsewhere {blind[away].max():6.1f}"
                + f" | top peak {top:8.4f} ticks: factor {best:.6f}"
                + f" ({abs(best / float(factor) - 1) * 100:.4f} %)"
            )


if __name__ == "__main__":
    main()
