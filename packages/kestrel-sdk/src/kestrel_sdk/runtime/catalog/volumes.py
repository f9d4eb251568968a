"""Volumes: the rules of a bar's volume, its canonical text, and its scaled integer.

A volume is a non-negative decimal: a share count (``120000``) or a fraction of a coin
or a lot (``2012.25343589``). It is kept exactly, never as a float:

* **Canonical text**: no leading zeros, no trailing zeros after the point, no point when
  the volume is whole (``007`` → ``7``, ``10.50`` → ``10.5``, ``3.0`` → ``3``). A tape of
  whole volumes is written exactly as before fractional volumes existed.
* **Limits**: at most :data:`MAX_PLACES` decimal places and :data:`MAX_WHOLE_DIGITS`
  digits before the point.
* **Scaled integer**: a tape holds its volumes as integers in units of ``10**-places``,
  where ``places`` is the most decimal places any of its volumes has (0 on a tape of
  whole volumes, whose integers are the volumes themselves). Each scaled volume must fit
  :data:`MAX_SCALED_DIGITS` digits (so with 8 places somewhere on the tape, every volume
  of it is below 10**10).

The importer (``kestrel_sdk.scenarios``) and the tape parser apply these same rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .tape_format import decimal_units

__all__ = [
    "MAX_PLACES",
    "MAX_SCALED_DIGITS",
    "MAX_WHOLE_DIGITS",
    "canonical_volume",
    "scaled_volume",
    "tape_places",
    "volume_fault",
    "volume_places",
    "volume_scale_fault",
    "volume_text",
]

MAX_PLACES = 8
"""The most decimal places a volume may have (a satoshi, 1e-8 of a bitcoin)."""
MAX_WHOLE_DIGITS = 15
"""The most digits before the point (a whole volume below 10**15, as always)."""
MAX_SCALED_DIGITS = 18
"""The most digits of a volume in units of its tape's finest place (within int64)."""

_DECIMAL = re.compile(r"([0-9]+)(?:\.([0-9]+))?")


def canonical_volume(text: str) -> str | None:
    """The canonical text of a plain non-negative decimal (``0012.50`` → ``12.5``), or
    ``None`` when ``text`` is not one (a sign, an exponent, a lone point, ``nan``)."""
    match = _DECIMAL.fullmatch(text)
    if match is None:
        return None
    whole = match.group(1).lstrip("0") or "0"
    frac = (match.group(2) or "").rstrip("0")
    return f"{whole}.{frac}" if frac else whole


def volume_places(canonical: str) -> int:
    """The decimal places of a canonical volume (0 when whole)."""
    point = canonical.find(".")
    return 0 if point < 0 else len(canonical) - point - 1


def volume_fault(canonical: str) -> str | None:
    """Why a canonical volume breaks a limit of its own, or ``None`` (the reason reads
    after the volume: ``volume 0.123456789 has more than 8 decimal places``)."""
    if volume_places(canonical) > MAX_PLACES:
        return f"has more than {MAX_PLACES} decimal places"
    if len(canonical.partition(".")[0]) > MAX_WHOLE_DIGITS:
        return "is too large"
    return None


def volume_scale_fault(canonical: str, places: int) -> str | None:
    """Why a canonical volume cannot be held on a tape whose volumes have ``places``
    decimal places at most, or ``None``."""
    whole = canonical.partition(".")[0]
    if whole != "0" and len(whole) + places > MAX_SCALED_DIGITS:
        return (
            f"is too large for a tape whose volumes have {places} decimal places "
            f"(at most {MAX_SCALED_DIGITS} digits with them)"
        )
    return None


def tape_places(canonicals: Iterable[str]) -> int:
    """The most decimal places among canonical volumes (0 when all are whole)."""
    return max((volume_places(text) for text in canonicals if "." in text), default=0)


def scaled_volume(canonical: str, places: int) -> int:
    """A canonical volume as an integer in units of ``10**-places``."""
    return decimal_units(canonical, places)


def volume_text(value: int, places: int) -> str:
    """The canonical text of a volume scaled by ``10**places``."""
    if not places:
        return str(value)
    whole, frac = divmod(value, 10**places)
    digits = f"{frac:0{places}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)
