"""``verify(grade)``: replay a grade from the artifact store and name the first mismatch.

Verification trusts nothing it is shown: it loads the record and the pentads by root
(the store refuses to serve a row whose bytes do not hash to its root), replays every
pentad on a fresh engine over the catalog's scenario, recomputes every frame root, the
head, the blotter root and the grade, and compares them with what was presented, in a
fixed order, reporting the first field that differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kestrel_protocol import (
    GradeResult,
    KestrelError,
    Mismatch,
    Pentad,
    SessionRecord,
    VerificationReport,
    root_of,
)
from kestrel_protocol.ports import ArtifactStore

from .catalog.model import CatalogIndex
from .engine.frame import frame_root
from .engine.session import SessionEngine, compute_grade

__all__ = ["flatten", "verify_grade"]


class _Mismatch(Exception):
    def __init__(self, field: str, expected: object, found: object) -> None:
        super().__init__(field)
        self.mismatch = Mismatch(field=field, expected=_text(expected), found=_text(found))


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _same(field: str, expected: object, found: object) -> None:
    if expected != found:
        raise _Mismatch(field, expected, found)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of JSON data as ``(path, value)``; list items with an ``id`` are named by it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else key)
    elif isinstance(value, list):
        if not value:
            yield prefix, "[]"
        for index, item in enumerate(value):
            name = item.get("id") if isinstance(item, dict) else None
            yield from flatten(item, f"{prefix}[{name if isinstance(name, str) else index}]")
    else:
        yield prefix, value


def _load(store: ArtifactStore, root: str, field: str) -> dict[str, Any]:
    obj = store.get(root)
    if obj is None:
        raise _Mismatch(field, root, "missing or corrupt in the artifact store")
    return obj


def _check(store: ArtifactStore, index: CatalogIndex, grade: GradeResult) -> None:
    presented = grade.to_json()
    record_data = _load(store, grade.record, "record")
    record = SessionRecord.parse(record_data)
    _same("session", record.session, grade.session)
    _same("scenario.id", record.scenario.id, grade.scenario.id)
    _same("scenario.root", record.scenario.root, grade.scenario.root)
    loaded = index.get(grade.scenario.id)
    if loaded is None:
        raise _Mismatch("scenario.id", "a scenario of this catalog", grade.scenario.id)
    _same("scenario.root", loaded.scenario.root, grade.scenario.root)
    _same("head", record.head, grade.head)

    pentads: list[Pentad] = []
    for i, root in enumerate(record.pentads):
        pentads.append(Pentad.parse(_load(store, root, f"record.pentads[{i}]")))

    engine = SessionEngine(loaded, record.session)
    prev = frame_root(engine.frame())
    for i, pentad in enumerate(pentads):
        where = f"record.pentads[{i}]"
        _same(f"{where}.session", record.session, pentad.session)
        _same(f"{where}.seq", i + 1, pentad.seq)
        _same(f"{where}.prev", prev, pentad.prev)
        try:
            step = engine.submit(pentad.body.bytes)
        except KestrelError as exc:
            raise _Mismatch(f"{where}.body", "a source the session accepts", exc.code) from None
        prev = frame_root(step.frame)
    head = frame_root(engine.close())
    _same("record.head", record.head, head)
    _same("record.blotterRoot", record.blotter_root, engine.blotter().root)

    recomputed = compute_grade(loaded, record, pentads).to_json()
    found = dict(flatten({k: v for k, v in presented.items() if k != "root"}))
    for path, expected in flatten({k: v for k, v in recomputed.items() if k != "root"}):
        _same(path, expected, found.pop(path, "(absent)"))
    for path, value in found.items():
        _same(path, "(absent)", value)
    _same("root", recomputed["root"], presented.get("root"))
    _same("root", root_of(presented), presented.get("root"))


def verify_grade(
    store: ArtifactStore, index: CatalogIndex, grade: GradeResult
) -> VerificationReport:
    """The verification report of ``grade`` (``ok`` or the first mismatch)."""
    try:
        _check(store, index, grade)
    except _Mismatch as exc:
        return VerificationReport(ok=False, grade=grade.root, mismatch=exc.mismatch)
    return VerificationReport(ok=True, grade=grade.root)
