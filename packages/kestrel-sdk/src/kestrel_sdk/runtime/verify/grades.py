"""A grade's verification: its record and pentads loaded by root from the artifact
store (which refuses to serve a row whose bytes do not hash to its root), replayed on a
fresh engine over the catalog's scenario, every frame root, the head, the blotter and the
grade recomputed and compared in a fixed order.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from kestrel_protocol import (
    GradeResult,
    KestrelError,
    Pentad,
    Provenance,
    SessionRecord,
    VerificationReport,
    root_of,
)

from ..catalog.model import CatalogIndex, LoadedScenario
from ..engine import chain_engine, compute_grade
from .mismatch import MismatchFound, compare, same
from .scenario import forward_tape_note

__all__ = ["NOT_STORED", "ArtifactReader", "verify_grade"]

M = TypeVar("M", SessionRecord, Pentad)

NOT_STORED = "missing or corrupt in the artifact store"
"""What a grade's mismatch says was found for an artifact the store does not serve: one
never stored here (the grade was made in another home), or another principal's."""


class ArtifactReader(Protocol):
    """What a grade's verification reads: objects by root (``None`` when absent)."""

    def get(self, root: str) -> dict[str, Any] | None: ...


def _load(store: ArtifactReader, root: str, field: str) -> dict[str, Any]:
    obj = store.get(root)
    if obj is None:
        raise MismatchFound(field, root, NOT_STORED)
    return obj


def _load_as(store: ArtifactReader, root: str, field: str, model: type[M], what: str) -> M:
    """The artifact ``root`` as a ``model`` object; another kind of artifact (a grade
    whose ``record`` names the caller's frame, say) is the mismatch of ``field``."""
    obj = _load(store, root, field)
    try:
        return model.parse(obj)
    except (ValueError, KestrelError):
        kind = obj.get("kind")
        found = f"a {kind} object" if isinstance(kind, str) else f"an object that is not {what}"
        raise MismatchFound(field, f"{what} at {root}", found) from None


def _check(store: ArtifactReader, index: CatalogIndex, grade: GradeResult) -> LoadedScenario:
    presented = grade.to_json()
    record = _load_as(store, grade.record, "record", SessionRecord, "a kestrel.session record")
    same("session", record.session, grade.session)
    same("scenario.id", record.scenario.id, grade.scenario.id)
    same("scenario.root", record.scenario.root, grade.scenario.root)
    loaded = index.get(grade.scenario.id)
    if loaded is None:
        raise MismatchFound("scenario.id", "a scenario of this catalog", grade.scenario.id)
    same("scenario.root", loaded.scenario.root, grade.scenario.root)
    same("head", record.head, grade.head)

    pentads: list[Pentad] = []
    for i, root in enumerate(record.pentads):
        pentads.append(_load_as(store, root, f"record.pentads[{i}]", Pentad, "a pentad"))

    first = pentads[0].prev if pentads else None
    engine = chain_engine(loaded, record.session, first, head=record.head)
    prev = engine.frame_root()
    for i, pentad in enumerate(pentads):
        where = f"record.pentads[{i}]"
        same(f"{where}.session", record.session, pentad.session)
        same(f"{where}.seq", i + 1, pentad.seq)
        same(f"{where}.prev", prev, pentad.prev)
        try:
            prev = engine.replay(pentad.body.bytes)
        except KestrelError as exc:
            raise MismatchFound(f"{where}.body", "a source the session accepts", exc.code) from None
    engine.close()
    head = engine.frame_root()
    same("record.head", record.head, head)
    same("record.blotterRoot", record.blotter_root, engine.blotter().root)

    recomputed = compute_grade(loaded, record, pentads).to_json()
    rest = {k: v for k, v in presented.items() if k != "root"}
    compare("", {k: v for k, v in recomputed.items() if k != "root"}, rest)
    same("root", recomputed["root"], presented.get("root"))
    same("root", root_of(presented), presented.get("root"))
    return loaded


def verify_grade(
    store: ArtifactReader, index: CatalogIndex, grade: GradeResult
) -> VerificationReport:
    """The verification report of ``grade`` (``ok`` or the first mismatch)."""
    try:
        loaded = _check(store, index, grade)
    except MismatchFound as exc:
        return VerificationReport(ok=False, grade=grade.root, mismatch=exc.mismatch)
    detail = f"scenario {grade.scenario.id} {grade.scenario.root} from this machine's catalog"
    provenance = Provenance(source="catalog", detail=detail + forward_tape_note(loaded, {}))
    return VerificationReport(ok=True, grade=grade.root, provenance=provenance)
