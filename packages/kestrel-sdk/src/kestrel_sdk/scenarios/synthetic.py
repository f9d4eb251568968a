"""Integer-exact synthetic bars: the building blocks of the shipped generated scenarios.

The output of anything built on these is byte-stable on every machine: the only
randomness is a seeded Mersenne Twister used through ``getrandbits`` (integer exact), and
prices evolve in integer micro-dollars (no floats, so no libm differences). Normal-looking
noise is the centred popcount of 256 random bits (a binomial, standard deviation 8).
``packages/kestrel-sdk/scripts/generate_catalog.py`` writes the shipped catalog with them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = [
    "HEADER",
    "MICRO",
    "PPM",
    "SD",
    "Bar",
    "Noise",
    "cents",
    "grow",
    "make_bar",
    "price_text",
    "weekdays",
]

HEADER = "time,symbol,open,high,low,close,volume"
MICRO = 1_000_000  # prices evolve in micro-dollars
PPM = 1_000_000  # returns are in parts per million
SD = 8  # standard deviation of Noise.normal()


class Noise:
    """Integer-exact pseudo-random numbers from a seed derived from a name."""

    def __init__(self, name: str) -> None:
        seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
        self._rng = random.Random(seed)

    def normal(self) -> int:
        """Approximately normal, mean 0, standard deviation ``SD`` (= 8)."""
        return self._rng.getrandbits(256).bit_count() - 128

    def scaled(self, sigma: int) -> int:
        """Normal noise with standard deviation ``sigma`` (an integer amount)."""
        return sigma * self.normal() // SD

    def below(self, bound: int) -> int:
        """An integer in ``[0, bound)`` (uniform enough for a small ``bound``)."""
        return self._rng.getrandbits(64) % bound


def grow(price: int, return_ppm: int) -> int:
    return price * (PPM + return_ppm) // PPM


def cents(micro: int) -> int:
    return max(1, (micro + 5_000) // 10_000)


def price_text(cent_value: int) -> str:
    return f"{cent_value // 100}.{cent_value % 100:02d}"


@dataclass(frozen=True, slots=True)
class Bar:
    open: int  # cents
    high: int
    low: int
    close: int
    volume: int

    def row(self, time: str, symbol: str) -> str:
        prices = ",".join(price_text(v) for v in (self.open, self.high, self.low, self.close))
        return f"{time},{symbol},{prices},{self.volume}\n"


def make_bar(noise: Noise, open_micro: int, close_micro: int, range_ppm: int, volume: int) -> Bar:
    """A bar around an open and a close: wicks of random size beyond both."""
    top, bottom = max(open_micro, close_micro), min(open_micro, close_micro)
    high = grow(top, abs(noise.scaled(range_ppm)))
    low = grow(bottom, -min(abs(noise.scaled(range_ppm)), PPM // 2))
    return Bar(cents(open_micro), cents(high), cents(low), cents(close_micro), max(1, volume))


def weekdays(start: date) -> Iterator[date]:
    day = start
    while True:
        if day.weekday() < 5:
            yield day
        day += timedelta(days=1)
