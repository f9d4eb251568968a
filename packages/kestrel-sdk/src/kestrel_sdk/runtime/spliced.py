"""A self-rooted object from members already in canonical form (RFC 8785 bytes).

``cls.with_root(**members)`` validates every member again and encodes the whole object
to find its root; a proof holds a pentad per submission, so that is most of its cost.
When each member is an object the caller built or read and verified, and its canonical
bytes are at hand (an artifact it stored, a pentad's rebuilt bytes), the object's
canonical bytes are those members' bytes under their keys in JCS order: hashed as they
are, and the object built from the members unchecked. A test compares both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from kestrel_protocol import SelfRooted, canonical_json, root_of_bytes

from .engine.wire import construct

__all__ = ["array_bytes", "spliced_rooted"]

R = TypeVar("R", bound=SelfRooted)


def array_bytes(items: Sequence[bytes]) -> bytes:
    """The canonical bytes of an array whose items' canonical bytes are ``items``."""
    return b"[" + b",".join(items) + b"]"


def spliced_rooted(cls: type[R], members: dict[str, tuple[Any, bytes]]) -> R:
    """``cls.with_root`` of ``members`` (by field name: the value, its canonical bytes),
    the root hashed from the members' bytes as given. A field with a default (``kind``,
    ``version``) is a member as ``with_root`` makes it; a member the root does not cover
    (``cls.unrooted``) is not given here."""
    given = dict(members)
    for name, info in cls.model_fields.items():
        if name not in given and name != "root" and not info.is_required():
            default = info.get_default(call_default_factory=True)
            if default is not None:
                given[name] = (default, canonical_json(default))
    pieces = sorted(
        (cls.model_fields[name].alias or name, text) for name, (_, text) in given.items()
    )
    pieces.sort(key=lambda piece: piece[0].encode("utf-16-be"))
    body = b",".join(canonical_json(key) + b":" + text for key, text in pieces)
    root = root_of_bytes(b"{" + body + b"}")
    return construct(cls, {name: value for name, (value, _) in given.items()} | {"root": root})
