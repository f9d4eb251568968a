"""A proof's verification, from its JSON data, never from a parsed model (parsing
would stop at the first root that does not verify instead of naming the member that
changed). Its only inputs are the session id and label, the scenario and the pentads'
sources; every other member, the roots included, is derived and compared: ``scenario``
(:mod:`.scenario`), then each ``pentads[i]`` as it is replayed, then ``record``,
``head``, ``blotter``, ``grade``, any other member, and the proof's ``root``.
"""

from __future__ import annotations

from typing import Any

from kestrel_protocol import (
    KestrelError,
    Lookahead,
    Mismatch,
    Pentad,
    SessionRecord,
    VerificationReport,
    root_of,
)

from ..catalog.model import CatalogIndex, LoadedScenario
from ..engine import SessionEngine, chain_engine, compute_grade
from ..sealed import sealed_frame_data
from .mismatch import MismatchFound, as_text, compare, member, same
from .scenario import (
    PublishedTape,
    checked_scenario,
    forward_reach,
    forward_tape_note,
    provenance,
)

__all__ = ["refused", "verify_proof"]


def _check_proof(
    index: CatalogIndex, data: dict[str, Any], published: PublishedTape | None
) -> LoadedScenario:
    loaded = checked_scenario(index, data, published)
    forward_reach(loaded, data)
    scenario = loaded.scenario
    presented_record = member(data, "record", dict)
    session, label = presented_record.get("session"), presented_record.get("label")
    if not isinstance(session, str):
        raise MismatchFound("record.session", "a session id", as_text(session))
    if not isinstance(label, str):
        raise MismatchFound("record.label", "a session label", as_text(label))
    presented_pentads = member(data, "pentads", list)

    engine = _proof_engine(loaded, session, presented_pentads, presented_record, data.get("head"))
    pentads: list[Pentad] = []
    for i, presented in enumerate(presented_pentads):
        where = f"pentads[{i}]"
        body = presented.get("body") if isinstance(presented, dict) else None
        source = body.get("bytes") if isinstance(body, dict) else None
        if not isinstance(source, str):
            raise MismatchFound(f"{where}.body.bytes", "the source text", as_text(source))
        pentad = Pentad.with_root(
            session=session,
            seq=i + 1,
            prev=engine.frame_root(),
            body={"media_type": "text/x-kestrel", "bytes": source},
        )
        compare(where, pentad.to_json(), presented)
        try:
            engine.replay(source)
        except KestrelError as exc:
            found = f"{exc.code}: {exc.message}"
            raise MismatchFound(
                f"{where}.body.bytes", "a source the session accepts", found
            ) from None
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
    compare("record", record.to_json(), presented_record)
    presented_head = _presented_head(closed.to_json(), data.get("head"))
    compare("head", presented_head, data.get("head"))
    compare("blotter", blotter.to_json(), data.get("blotter"))
    grade = compute_grade(loaded, record, pentads)
    compare("grade", grade.to_json(), data.get("grade"))
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
    compare("", {k: v for k, v in expected.items() if k not in data}, rest)
    same("kind", "kestrel.proof", data.get("kind"))
    same("version", 1, data.get("version"))
    same("root", root_of(expected), data.get("root"))
    return loaded


def _proof_engine(
    loaded: LoadedScenario, session: str, pentads: list[Any], record: dict[str, Any], head: Any
) -> SessionEngine:
    """The engine the proof's chain starts from (see :func:`~..engine.chain_engine`): in
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
        raise MismatchFound("record.lookahead", "a kestrel lookahead object", str(data)) from None


def _roots(data: dict[str, Any]) -> tuple[str, str]:
    """The proof's grade root and its own root, as it says them."""
    grade = data.get("grade")
    grade_root = as_text(grade.get("root")) if isinstance(grade, dict) else "(absent)"
    return grade_root, as_text(data.get("root"))


def refused(data: dict[str, Any], mismatch: Mismatch) -> VerificationReport:
    """The report of the proof ``data`` that ``mismatch`` refutes."""
    grade, proof = _roots(data)
    return VerificationReport(ok=False, grade=grade, proof=proof, mismatch=mismatch)


def verify_proof(
    index: CatalogIndex, data: Any, published: PublishedTape | None = None
) -> VerificationReport:
    """The verification report of a proof given as JSON data (``ok`` or the first
    mismatch), replayed over ``index``'s scenario or the one the proof embeds (a forward
    scenario of ``index`` over the tape ``published``, where given).

    Raises ``ValueError`` when ``data`` is not a ``kestrel.proof`` object, and
    ``KestrelError(UNKNOWN_SCENARIO)`` naming the scenario's id and root when it is
    neither in ``index`` nor embedded, or, for a forward scenario, when its session
    reached a bar past the tape held here (:func:`~.scenario.forward_reach`).
    """
    if not isinstance(data, dict) or data.get("kind") != "kestrel.proof":
        raise ValueError("expected a kestrel.proof object")
    try:
        loaded = _check_proof(index, data, published)
    except MismatchFound as exc:
        return refused(data, exc.mismatch)
    found = provenance(index, data)
    found = found.model_copy(
        update={"detail": found.detail + forward_tape_note(loaded, data, published)}
    )
    grade, proof = _roots(data)
    return VerificationReport(ok=True, grade=grade, proof=proof, provenance=found)
