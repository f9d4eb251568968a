"""Artifacts as every runtime store serves them: verified against their root.

A store never holds a lie (an object claiming a root its content does not hash to is
refused on write) and never serves one (bytes that are not the canonical JSON of an
object with that root are logged as corrupt and not returned). ``OwnedArtifacts`` is one
principal's view of a store, and :func:`unknown_artifact` the one refusal of a root not
served, whichever the reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kestrel_protocol import KestrelError, RefusalCode, canonical_json, root_of, root_of_bytes
from kestrel_protocol.store import ArtifactStatus, RuntimeStore

__all__ = [
    "OwnedArtifacts",
    "checked_root",
    "pruned_session",
    "unknown_artifact",
    "verified_artifact",
]

log = logging.getLogger(__name__)


def verified_artifact(
    root: str, body: bytes, where: object
) -> tuple[dict[str, Any] | None, ArtifactStatus]:
    """``body`` parsed, when it is the canonical JSON of an object whose root is ``root``
    (and that claims no other); else ``(None, "corrupt")``, logged with ``where``."""
    try:
        obj = json.loads(body.decode("utf-8"))
        found = root_of(obj) if isinstance(obj, dict) else root_of_bytes(body)
        claimed = obj.get("root") if isinstance(obj, dict) else None
        intact = (
            isinstance(obj, dict)
            and found == root
            and claimed in (None, root)
            and canonical_json(obj) == body
        )
    except (UnicodeDecodeError, ValueError):
        intact = False
        found = root_of_bytes(body)
    if not intact:
        log.error(
            "artifact %s in %s is corrupt (its stored bytes hash to %s); not served",
            root,
            where,
            found,
        )
        return None, "corrupt"
    assert isinstance(obj, dict)
    return obj, "ok"


def checked_root(obj: Mapping[str, Any]) -> str:
    """``obj``'s root; ``ValueError`` when it carries a ``root`` member that lies."""
    root = root_of(obj)
    claimed = obj.get("root")
    if claimed is not None and claimed != root:
        raise ValueError(f"object claims root {claimed} but its content hashes to {root}")
    return root


def unknown_artifact(root: str, status: str) -> KestrelError:
    """The one refusal of a root not served (missing, another principal's, corrupt)."""
    message = (
        f"artifact {root} is corrupt in the store and is not served"
        if status == "corrupt"
        else f"no artifact {root}"
    )
    return KestrelError(RefusalCode.UNKNOWN_ARTIFACT, message, {"root": root, "status": status})


def pruned_session(session_id: str, pruned_at: str) -> KestrelError:
    """The refusal of what needs a pruned session's steps (its proof, a replay of its
    grade): they are not served because they are no longer stored."""
    when = f" on {pruned_at}" if pruned_at else ""
    return KestrelError(
        RefusalCode.UNKNOWN_ARTIFACT,
        f"session {session_id} was pruned{when} (kestrel prune): its steps are no longer "
        "in this store, so it can be neither proved nor replayed here; its grade, record, "
        "head frame and blotter are kept (a proof exported before pruning verifies anywhere)",
        {"session": session_id, "status": "pruned", "prunedAt": pruned_at},
    )


@dataclass(frozen=True, slots=True)
class OwnedArtifacts:
    """A store's reads limited to one principal's artifacts (a remote caller's view:
    another principal's artifact is missing)."""

    store: RuntimeStore
    principal: str

    def get(self, root: str) -> dict[str, Any] | None:
        return self.store.lookup(root, self.principal)[0]
