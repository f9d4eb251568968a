"""Verification: replay a grade (from the artifact store) or a proof (from itself) and
name the first mismatch.

Verification trusts nothing it is shown. A grade's record and pentads are loaded by
root (the store refuses to serve a row whose bytes do not hash to its root); a proof
carries them. Every pentad is replayed on a fresh engine over the scenario, every frame
root, the head, the blotter and the grade are recomputed and compared with what was
presented, in a fixed order, reporting the first field that differs.

A proof is verified from its JSON data, never from a parsed model (parsing would stop
at the first root that does not verify instead of naming the member that changed). Its
only inputs are the session id and label, the scenario and the pentads' sources; every
other member, the roots included, is derived and compared: ``scenario`` (the
embedded scenario rebuilt from its terms and tape, or the catalog's), then each
``pentads[i]`` as it is replayed, then ``record``, ``head``, ``blotter``, ``grade``,
any other member, and the proof's ``root``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

from kestrel_protocol import (
    GradeResult,
    KestrelError,
    Lookahead,
    Mismatch,
    Pentad,
    Provenance,
    RefusalCode,
    SessionRecord,
    VerificationReport,
    root_of,
    root_of_bytes,
)

from .catalog import load_embedded
from .catalog.model import CatalogIndex, LoadedScenario
from .engine import SessionEngine, chain_engine, compute_grade
from .sealed import sealed_frame_data

__all__ = ["flatten", "proof_scenario", "verify_grade", "verify_proof"]

M = TypeVar("M", SessionRecord, Pentad)


class ArtifactReader(Protocol):
    """What a grade's verification reads: objects by root (``None`` when absent)."""

    def get(self, root: str) -> dict[str, Any] | None: ...


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


def _load(store: ArtifactReader, root: str, field: str) -> dict[str, Any]:
    obj = store.get(root)
    if obj is None:
        raise _Mismatch(field, root, "missing or corrupt in the artifact store")
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
        raise _Mismatch(field, f"{what} at {root}", found) from None


def _check(store: ArtifactReader, index: CatalogIndex, grade: GradeResult) -> None:
    presented = grade.to_json()
    record = _load_as(store, grade.record, "record", SessionRecord, "a kestrel.session record")
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
        pentads.append(_load_as(store, root, f"record.pentads[{i}]", Pentad, "a pentad"))

    first = pentads[0].prev if pentads else None
    engine = chain_engine(loaded, record.session, first, head=record.head)
    prev = engine.frame_root()
    for i, pentad in enumerate(pentads):
        where = f"record.pentads[{i}]"
        _same(f"{where}.session", record.session, pentad.session)
        _same(f"{where}.seq", i + 1, pentad.seq)
        _same(f"{where}.prev", prev, pentad.prev)
        try:
            prev = engine.replay(pentad.body.bytes)
        except KestrelError as exc:
            raise _Mismatch(f"{where}.body", "a source the session accepts", exc.code) from None
    engine.close()
    head = engine.frame_root()
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
    store: ArtifactReader, index: CatalogIndex, grade: GradeResult
) -> VerificationReport:
    """The verification report of ``grade`` (``ok`` or the first mismatch)."""
    provenance = Provenance(
        source="catalog",
        detail=f"scenario {grade.scenario.id} {grade.scenario.root} from this machine's catalog",
    )
    try:
        _check(store, index, grade)
    except _Mismatch as exc:
        return VerificationReport(ok=False, grade=grade.root, mismatch=exc.mismatch)
    return VerificationReport(ok=True, grade=grade.root, provenance=provenance)


def _root_last(leaf: tuple[str, Any]) -> tuple[int, int]:
    """Content before roots, inner roots before outer ones: a changed member is named
    rather than the root that no longer covers it."""
    path = leaf[0]
    if path == "root" or path.endswith(".root"):
        return 1, -path.count(".")
    return 0, 0


def _compare(prefix: str, expected: Any, presented: Any) -> None:
    """Every leaf of ``expected`` against ``presented`` (then any extra leaf of it)."""
    found = dict(flatten(presented, prefix))
    for path, value in sorted(flatten(expected, prefix), key=_root_last):
        _same(path, value, found.pop(path, "(absent)"))
    for path, value in found.items():
        _same(path, "(absent)", value)


def _member(data: dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise _Mismatch(name, f"a {'list' if kind is list else 'JSON object'}", _text(value))
    return value


def _embedded(data: Any) -> LoadedScenario:
    """The scenario a proof embeds, rebuilt from its terms and tape, its object compared."""
    if not isinstance(data, dict):
        raise _Mismatch("embedded", "an object with scenario and tape", _text(data))
    tape, scenario = data.get("tape"), data.get("scenario")
    if not isinstance(tape, str):
        raise _Mismatch("embedded.tape", "the tape as canonical CSV text", _text(tape))
    if not isinstance(scenario, dict):
        raise _Mismatch("embedded.scenario", "a kestrel.scenario object", _text(scenario))
    news = data.get("news")
    if news is not None and not isinstance(news, str):
        raise _Mismatch("embedded.news", "the news as canonical JSONL text", _text(news))
    try:
        loaded = load_embedded(scenario, tape, news)
    except ValueError as exc:
        raise _Mismatch("embedded", "a scenario the catalog would accept", str(exc)) from None
    if not loaded.forward:  # a forward tape's prefix is checked by its rebuilt object
        _same("embedded.tape", loaded.scenario.tape.root, root_of_bytes(tape.encode("utf-8")))
    # the news embedded (or none) is what the scenario's newsRoot commits to
    rebuilt = loaded.scenario.news_root or "(absent)"
    _same("embedded.scenario.newsRoot", rebuilt, scenario.get("newsRoot", "(absent)"))
    _compare("embedded.scenario", loaded.scenario.to_json(), scenario)
    return loaded


def proof_scenario(index: CatalogIndex, data: dict[str, Any]) -> LoadedScenario:
    """The scenario a proof replays on: the one it embeds, else the catalog's (its id,
    root and tape root checked against the proof's reference)."""
    try:
        return _proof_scenario(index, data)
    except _Mismatch as exc:
        raise ValueError(f"{exc.mismatch.field}: {exc.mismatch.found}") from None


def _proof_scenario(index: CatalogIndex, data: dict[str, Any]) -> LoadedScenario:
    ref = _member(data, "scenario", dict)
    scenario_id, root = ref.get("id"), ref.get("root")
    if "embedded" in data:
        loaded = _embedded(data["embedded"])
    else:
        found = index.get(scenario_id) if isinstance(scenario_id, str) else None
        if found is None or found.scenario.root != root:
            has = f" (its {scenario_id} is {found.scenario.root})" if found is not None else ""
            raise KestrelError(
                RefusalCode.UNKNOWN_SCENARIO,
                f"cannot verify the proof: its scenario {scenario_id} ({root}) is not in this "
                f"catalog{has} and the proof does not embed it; {_remedy(data)}",
                {"scenario": scenario_id, "root": root},
            )
        loaded = found
    scenario = loaded.scenario
    expected = {"id": scenario.id, "root": scenario.root, "tapeRoot": scenario.tape.root}
    _compare("scenario", expected, ref)
    return loaded


def _was_sealed(data: dict[str, Any]) -> bool:
    """Whether the proof says its scenario was sealed: its record's lookahead, or a head
    served without ``clock.remaining``."""
    record, head = data.get("record"), data.get("head")
    lookahead = record.get("lookahead") if isinstance(record, dict) else None
    clock = head.get("clock") if isinstance(head, dict) else None
    if isinstance(lookahead, dict) and lookahead.get("sealed") is True:
        return True
    return isinstance(clock, dict) and "remaining" not in clock


def _remedy(data: dict[str, Any]) -> str:
    """What makes an unknown scenario's proof verifiable: its tape embedded, unless the
    scenario is sealed (a sealed proof cannot embed its tape)."""
    if _was_sealed(data):
        return (
            "the scenario is sealed, so no proof of it can embed its tape: verify it where "
            "the catalog holds the scenario (its operator's, or once it is unsealed, its "
            "directory added to KESTREL_CATALOG_PATH)"
        )
    return (
        "make the proof with `kestrel proof SESSION --embed-tape`, or add the scenario to "
        "KESTREL_CATALOG_PATH"
    )


def _check_proof(index: CatalogIndex, data: dict[str, Any]) -> None:
    loaded = _proof_scenario(index, data)
    scenario = loaded.scenario
    presented_record = _member(data, "record", dict)
    session, label = presented_record.get("session"), presented_record.get("label")
    if not isinstance(session, str):
        raise _Mismatch("record.session", "a session id", _text(session))
    if not isinstance(label, str):
        raise _Mismatch("record.label", "a session label", _text(label))
    presented_pentads = _member(data, "pentads", list)

    engine = _proof_engine(loaded, session, presented_pentads, presented_record, data.get("head"))
    pentads: list[Pentad] = []
    for i, presented in enumerate(presented_pentads):
        where = f"pentads[{i}]"
        body = presented.get("body") if isinstance(presented, dict) else None
        source = body.get("bytes") if isinstance(body, dict) else None
        if not isinstance(source, str):
            raise _Mismatch(f"{where}.body.bytes", "the source text", _text(source))
        pentad = Pentad.with_root(
            session=session,
            seq=i + 1,
            prev=engine.frame_root(),
            body={"media_type": "text/x-kestrel", "bytes": source},
        )
        _compare(where, pentad.to_json(), presented)
        try:
            engine.replay(source)
        except KestrelError as exc:
            found = f"{exc.code}: {exc.message}"
            raise _Mismatch(f"{where}.body.bytes", "a source the session accepts", found) from None
        pentads.append(pentad)
    closed = engine.close()
    head = engine.frame_root()
    blotter = engine.blotter()
    record = SessionRecord.with_root(
        session=session,
        scenario={"id": scenario.id, "root": scenario.root},
        label=label,
        pentads=[p.root for p in pentads],
        head=head,
        blotter_root=blotter.root,
        lookahead=_presented_lookahead(presented_record),
    )
    _compare("record", record.to_json(), presented_record)
    presented_head = _presented_head(closed.to_json(), data.get("head"))
    _compare("head", presented_head, data.get("head"))
    _compare("blotter", blotter.to_json(), data.get("blotter"))
    grade = compute_grade(loaded, record, pentads)
    _compare("grade", grade.to_json(), data.get("grade"))
    expected: dict[str, Any] = {
        "kind": "kestrel.proof",
        "version": 1,
        "scenario": {"id": scenario.id, "root": scenario.root, "tapeRoot": scenario.tape.root},
        "grade": grade.to_json(),
        "record": record.to_json(),
        "head": presented_head,
        "pentads": [p.to_json() for p in pentads],
        "blotter": blotter.to_json(),
    }
    if "embedded" in data:
        expected["embedded"] = data["embedded"]  # rebuilt and compared above
    # ``attestation`` is about the proof, outside its root (checked by ``--trust``)
    rest = {k: v for k, v in data.items() if k not in expected and k not in ("root", "attestation")}
    _compare("", {k: v for k, v in expected.items() if k not in data}, rest)
    _same("kind", "kestrel.proof", data.get("kind"))
    _same("version", 1, data.get("version"))
    _same("root", root_of(expected), data.get("root"))


def _proof_engine(
    loaded: LoadedScenario, session: str, pentads: list[Any], record: dict[str, Any], head: Any
) -> SessionEngine:
    """The engine the proof's chain starts from (see :func:`~.engine.chain_engine`): in
    the form its first pentad's ``prev`` (or, with none, its record's head) is a root
    of, the sealed form first when its head frame omits ``clock.remaining``."""
    first = pentads[0].get("prev") if pentads and isinstance(pentads[0], dict) else None
    clock = head.get("clock") if isinstance(head, dict) else None
    sealed = isinstance(clock, dict) and "remaining" not in clock
    head_root = record.get("head")
    return chain_engine(
        loaded,
        session,
        first if isinstance(first, str) else None,
        head=head_root if isinstance(head_root, str) else None,
        sealed=sealed,
    )


def _presented_head(head: dict[str, Any], presented: Any) -> dict[str, Any]:
    """The replayed head frame as the proof may present it: a sealed session's has no
    ``clock.remaining`` (the tape's length), nor its root; a session served in the full
    form before it was sealed may present its head without it, the record's ``head``
    root, which the replay recomputed, covering the whole frame."""
    clock = presented.get("clock") if isinstance(presented, dict) else None
    if isinstance(clock, dict) and "remaining" not in clock:
        return sealed_frame_data(head)
    return head


def _presented_lookahead(record: Any) -> Lookahead:
    """The lookahead the presented record claims (a replay cannot see reads): its
    record's root binds it, and the grade's ``no-lookahead`` check is recomputed from it."""
    data = record.get("lookahead") if isinstance(record, dict) else None
    try:
        return Lookahead.parse(data)
    except ValueError:
        raise _Mismatch("record.lookahead", "a kestrel lookahead object", str(data)) from None


def verify_proof(index: CatalogIndex, data: Any) -> VerificationReport:
    """The verification report of a proof given as JSON data (``ok`` or the first
    mismatch), replayed over ``index``'s scenario or the one the proof embeds.

    Raises ``ValueError`` when ``data`` is not a ``kestrel.proof`` object, and
    ``KestrelError(UNKNOWN_SCENARIO)`` naming the scenario's id and root when it is
    neither in ``index`` nor embedded.
    """
    if not isinstance(data, dict) or data.get("kind") != "kestrel.proof":
        raise ValueError("expected a kestrel.proof object")
    grade = data.get("grade")
    grade_root = _text(grade.get("root")) if isinstance(grade, dict) else "(absent)"
    proof_root = _text(data.get("root"))
    try:
        _check_proof(index, data)
    except _Mismatch as exc:
        return VerificationReport(
            ok=False, grade=grade_root, proof=proof_root, mismatch=exc.mismatch
        )
    return VerificationReport(
        ok=True, grade=grade_root, proof=proof_root, provenance=_provenance(index, data)
    )


def _provenance(index: CatalogIndex, data: dict[str, Any]) -> Provenance:
    """Where a verified proof's scenario came from: this machine's catalog (its root
    matches, whether the proof embeds it or not), or only the proof."""
    ref = data["scenario"]
    scenario_id, root = ref["id"], ref["root"]
    found = index.get(scenario_id)
    if found is not None and found.scenario.root == root:
        how = "embedded in the proof, identical to" if "embedded" in data else "from"
        return Provenance(
            source="catalog", detail=f"scenario {scenario_id} {root} {how} this machine's catalog"
        )
    here = (
        f"this machine's {scenario_id} is {found.scenario.root}"
        if found is not None
        else f"this machine's catalog has no {scenario_id}"
    )
    return Provenance(
        source="embedded",
        detail=f"scenario {scenario_id} {root} embedded in the proof and unknown here ({here})",
    )
