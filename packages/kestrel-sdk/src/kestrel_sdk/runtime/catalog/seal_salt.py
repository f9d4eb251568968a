"""A sealed scenario's default description, salted with a digest of its tape.

A sealed scenario is served without its tape's end and length, but its root (in the
catalog, the sealed view, every frame and session id) is the root of the whole scenario,
those two included. With every other member served or guessable (a default description
such as ``Sealed daily bars of ZQX.`` or a renamed copy's neutral one), trying lengths
and end dates against the root finds both in a fraction of a second. So the
descriptions Kestrel writes for a sealed scenario end with a salt: sha256 of the tape's
canonical CSV under a domain of its own, which no one computes without the bars (and
anyone checks once the tape is published). It is a function of the tape alone, so the
same tape makes the same description, and the same roots, on every machine.
"""

from __future__ import annotations

import hashlib

__all__ = ["TapeSalt", "salted_description"]

_DOMAIN = b"kestrel.sealed-description\n"


class TapeSalt:
    """The salt of a tape whose canonical CSV bytes arrive in pieces: ``update`` with
    each in order, then ``salted``."""

    __slots__ = ("_hash",)

    def __init__(self) -> None:
        self._hash = hashlib.sha256(_DOMAIN)

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def salted(self, description: str) -> str:
        """``description`` with the salt after it."""
        return f"{description} Salt sha256:{self._hash.hexdigest()}."


def salted_description(description: str, tape_csv: str) -> str:
    """``description`` salted with the tape whose canonical CSV is ``tape_csv``."""
    salt = TapeSalt()
    salt.update(tape_csv.encode("utf-8"))
    return salt.salted(description)
