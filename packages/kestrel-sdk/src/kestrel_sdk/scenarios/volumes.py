"""An imported file's volumes: kept exactly, a binary double's noise rounded away.

A volume is a non-negative decimal of at most 8 places (``runtime.catalog.volumes``
holds the tape's rules, which the import applies as they are). A file's volume with more
places is refused unless it is a float64's noise around a decimal of at most 8 places: a
sum of doubles written with 17 digits (backtesting.py's ``BTCUSD.csv`` has
``397787.41249925003``) is that decimal (``397787.41249925``), and the import notes it,
as it notes prices rounded from float32 noise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal, localcontext

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT
from kestrel_protocol.quoting import counted

from ..runtime.catalog.volumes import (
    MAX_PLACES,
    MAX_WHOLE_DIGITS,
    canonical_volume,
    volume_fault,
    volume_places,
    volume_scale_fault,
)
from .problems import ImportProblem

__all__ = ["ImportedVolume", "import_volume", "noise_note", "volume_problems"]

# the relative error of a value that went through float64
_FLOAT64_NOISE = DEFAULT_DECIMAL_CONTEXT.power(2, -52)
_LIMIT = Decimal(10**MAX_WHOLE_DIGITS)

ImportedVolume = tuple[str, bool]
"""A volume's canonical text, and whether a double's noise was rounded off it."""


def import_volume(value: Decimal, text: str) -> ImportedVolume | str:
    """The volume of a cell (``value``, parsed from ``text``, finite), or the reason it
    is none (``Volume -5 is negative``)."""
    if value < 0:
        return f"Volume {text} is negative"
    if not value:
        return "0", False  # -0 and 0E+99 too
    if value.adjusted() >= MAX_WHOLE_DIGITS:  # told before its digits are written out
        return f"Volume {text} is too large"
    if value.adjusted() < -MAX_PLACES - 1:  # 1e-9 and below: no 8-place decimal's noise
        return f"Volume {text} has more than {MAX_PLACES} decimal places"
    exact = canonical_volume(f"{value:f}")
    assert exact is not None  # positive and finite: plain digits
    kept = _without_noise(value, exact)
    reason = volume_fault(kept)
    if reason is not None:
        return f"Volume {text} {reason}"
    return kept, kept != exact


def _without_noise(value: Decimal, exact: str) -> str:
    """``exact`` (the canonical text of ``value``), or when it has more than 8 places, the
    fewest places that hold ``value`` to float64 precision, if any do."""
    if volume_places(exact) <= MAX_PLACES or value >= _LIMIT:
        return exact  # too large is a fault of its own
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        for places in range(MAX_PLACES + 1):
            rounded = round(value, places)
            if abs(value - rounded) <= value * _FLOAT64_NOISE:
                return canonical_volume(f"{rounded:f}") or "0"
    return exact


def volume_problems(volumes: Iterable[tuple[int, str]], places: int) -> Iterator[ImportProblem]:
    """A problem for each ``(row, canonical volume)`` that the tape cannot hold when its
    volumes have ``places`` decimal places, the most of them all (``runtime.catalog.volumes``)."""
    for row, volume in volumes:
        reason = volume_scale_fault(volume, places)
        if reason is not None:
            yield ImportProblem(row, f"Volume {volume} {reason}")


def noise_note(first: tuple[int, str, str], count: int) -> str:
    """The note for ``count`` volumes rounded from noise, the ``first`` of them ``(row, text
    in the file, volume kept)``."""
    row, text, kept = first
    return (
        f"{counted(count, 'volume')} rounded to at most {MAX_PLACES} decimal places: "
        f"{text} (row {row}) is "
        f"{kept} stored as a binary float"
    )
