"""Proofs on the command line: ``kestrel proof``, and a proof's side of ``run --out``
and ``verify``.

A proof is verified on this machine from the file alone: the shipped catalog (plus
``KESTREL_CATALOG_PATH``) or the scenario embedded in the proof supplies the bars, and
nothing is read from or written to the Kestrel home, even with ``--remote``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import click
from kestrel_protocol import (
    GradeResult,
    Mismatch,
    Proof,
    ProtocolModel,
    Provenance,
    VerificationReport,
    canonical_json,
)
from kestrel_protocol.documents import Unreadable, read_json

from ..cli_convention import TRUSTED_KEYS, fail
from ..client import KestrelSdk
from .bootstrap import open_sdk, settings_of
from .show import json_text

__all__ = [
    "GRADE_ELSEWHERE",
    "conclude_grade",
    "proof",
    "proof_verification",
    "read_proof_or_grade",
    "reveal_verification",
    "verify_proof_data",
    "write_out",
    "write_proof",
]

GRADE_ELSEWHERE = (
    "a grade file is read only in the store that made it: its home's, or its door's "
    "through --remote; a proof verifies anywhere: kestrel proof SESSION -o p.json where "
    "the session ran"
)
"""Why a grade whose artifacts this store lacks cannot be verified or reported here."""

_KINDS = ("kestrel.grade", "kestrel.proof")


def read_proof_or_grade(path: Path) -> Any:
    """The JSON of the file ``kestrel verify`` or ``kestrel report`` was given. A file
    that cannot be read as JSON is ``INVALID_INPUT`` naming why; so is an Inspect log
    (a ``.eval`` file, or Inspect's ``.json`` log), saying that ``kestrel board`` reads
    it: it holds a proof per sample, not one proof. Any other JSON is returned as it is
    for the caller to judge."""
    try:
        data = read_json(path)
    except Unreadable as exc:
        _refuse_inspect_log(path, None)
        raise fail("INVALID_INPUT", f"{path}: not a Kestrel proof or grade: {exc}") from None
    if not (isinstance(data, dict) and data.get("kind") in _KINDS):
        _refuse_inspect_log(path, data)
    return data


def _refuse_inspect_log(path: Path, data: Any) -> None:
    from ..board.sources import is_inspect_log  # noqa: PLC0415 - only for a file refused

    if is_inspect_log(path, data):
        raise fail(
            "INVALID_INPUT",
            f"{path}: an Inspect log, not one proof: `kestrel board {path}` verifies the "
            "proof of every sample in it (with --trust DOOR, each door's statement too); "
            "to verify one sample's proof alone, write it out first "
            "(packages/kestrel-inspect/README.md, *One sample's proof*)",
        )


def write_out(made: ProtocolModel, out: Path) -> None:
    """Write ``made`` to an ``--out`` path, making its directory if need be; a path that
    cannot be written is ``INVALID_INPUT`` naming it (never ``INTERNAL``)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        made.write(out)
    except OSError as exc:
        raise fail("INVALID_INPUT", f"--out {out}: cannot write ({exc.strerror})") from None


async def write_proof(sdk: KestrelSdk, session_id: str, out: Path, embed_tape: bool) -> Proof:
    """Fetch the session's proof and write its canonical JSON to ``out``."""
    made = await sdk.proof(session_id, embed_tape)
    write_out(made, out)
    return made


def proof_verification(
    data: Any,
    *,
    require_catalog: bool = False,
    trusted_keys: Mapping[str, Any] | None = None,
    catalog_paths: Sequence[Path] | None = None,
    home: Path | None = None,
) -> VerificationReport:
    """A proof's verification as ``kestrel verify`` does it: replayed over this machine's
    catalog (shipped, plus ``KESTREL_CATALOG_PATH``) or the scenario the proof embeds,
    its provenance said; under ``require_catalog`` an embedded scenario unknown here is a
    mismatch; with ``trusted_keys`` (a JWKS) the door's signed statement is checked
    against the replayed proof (``attestedBy``, or the mismatch it names), and a proof of
    a forward scenario that does not embed its tape is replayed over the tape its door
    publishes, checked against the signed edge (``attestedBy`` says ``forward tape
    unconfirmed`` and why where it could not be fetched: :mod:`..published_tape`);
    ``catalog_paths``, the scenario directories ``kestrel --catalog-path`` names, in
    place of ``KESTREL_CATALOG_PATH`` (as every other verb takes them); ``home``, the
    Kestrel home the catalog remembers its tapes' shapes in (``load_catalog``'s).

    Raises ``ValueError`` for data that is not a ``kestrel.proof``, and ``KestrelError``
    (``UNKNOWN_SCENARIO``) for a scenario neither in the catalog nor embedded, or a
    forward session past the tape held here (saying why none was fetched).
    """
    from ..proof_check import check_proof  # noqa: PLC0415 - the engine loads only here
    from ..runtime.catalog import load_catalog  # noqa: PLC0415

    catalog = load_catalog(catalog_paths, home=home)
    checked = check_proof(data, catalog, require_catalog=require_catalog, trusted_keys=trusted_keys)
    return checked.report


def reveal_verification(
    report: VerificationReport,
    data: dict[str, Any],
    reveal: Any,
    source: Path | None,
    catalog_paths: Sequence[Path] | None = None,
    *,
    home: Path | None = None,
) -> VerificationReport:
    """A verified proof's report after checking its scenario against ``reveal``: the
    proof's tape must be exactly the transform the reveal names of its source (the
    catalog's scenario of that id, or the scenario directory ``source``); provenance
    ``disguised SOURCE, revealed``, else the first thing that differs."""
    from ..runtime.catalog import load_catalog  # noqa: PLC0415 - the engine loads only here
    from ..runtime.catalog.reveal import RevealMismatch, check_reveal  # noqa: PLC0415
    from ..runtime.verify import proof_scenario  # noqa: PLC0415

    index = load_catalog(catalog_paths, home=home)
    disguised = proof_scenario(index, data)
    named = reveal.get("source") if isinstance(reveal, dict) else None
    source_id = named.get("id") if isinstance(named, dict) else None
    if source is not None:
        given = load_catalog([source], home=home)
        ids = [i for i in given.ids() if (s := given.get(i)) is not None and s.origin is not None]
        original = given.get(ids[0]) if ids else None
        if original is None:
            raise fail("INVALID_INPUT", f"--source {source}: not a scenario directory")
    else:
        original = index.get(source_id) if isinstance(source_id, str) else None
        if original is None:
            raise fail(
                "UNKNOWN_SCENARIO",
                f"the reveal's source {source_id!r} is not in this catalog; give its scenario "
                "directory with --source DIR",
            )
    try:
        check_reveal(disguised, reveal, original)
    except RevealMismatch as exc:
        mismatch = Mismatch(field=exc.field, expected=exc.expected, found=exc.found)
        return report.model_copy(update={"ok": False, "mismatch": mismatch})
    detail = (
        f"disguised {original.id}, revealed: scenario {disguised.id} {disguised.scenario.root} "
        f"is the disguise of {original.id} {original.scenario.root} committed to by "
        f"{reveal['commitment']}"
    )
    provenance = Provenance(source="disguised", detail=detail)
    return report.model_copy(update={"provenance": provenance})


def verify_proof_data(
    data: dict[str, Any],
    as_json: bool,
    *,
    require_catalog: bool = False,
    trust: str | None = None,
    reveal: Path | None = None,
    source: Path | None = None,
    catalog_paths: Sequence[Path] | None = None,
    home: Path | None = None,
) -> None:
    """``kestrel verify`` of a proof: replay it, say where its scenario came from and,
    with ``trust`` (a JWKS file or URL), check the door's signed statement against it;
    exit 1 naming the first mismatch, an embedded scenario under ``require_catalog``, or
    what the statement gets wrong (a refusal, such as a scenario neither in the catalog
    nor embedded, propagates)."""
    from ..trust import load_trusted_keys  # noqa: PLC0415

    try:
        keys = load_trusted_keys(trust) if trust is not None else None
    except ValueError as exc:
        raise fail("INVALID_INPUT", str(exc)) from None
    try:
        report = proof_verification(
            data,
            require_catalog=require_catalog,
            trusted_keys=keys,
            catalog_paths=catalog_paths,
            home=home,
        )
    except ValueError as exc:
        raise fail("INVALID_INPUT", f"not a Kestrel proof: {exc}") from None
    if reveal is not None and report.ok:
        try:
            opened = read_json(reveal)
        except Unreadable as exc:
            raise fail("INVALID_INPUT", f"--reveal {reveal}: not a reveal: {exc}") from None
        report = reveal_verification(report, data, opened, source, catalog_paths, home=home)
    lines = [f"ok: proof {report.proof} of grade {report.grade} verified by replay"]
    if report.provenance is not None:
        lines.append(f"provenance: {report.provenance.source}: {report.provenance.detail}")
    if report.attested_by is not None:
        lines.append(f"attested by {report.attested_by}")
    if report.attestation == "unchecked":
        lines.append(f"attestation present, not checked: pass --trust {TRUSTED_KEYS} to check it")
    conclude_verification(report, as_json, "\n".join(lines))


def conclude_grade(grade: GradeResult) -> None:
    """Exit ``CHECK_FAILED`` naming the checks ``grade`` failed, once it is printed and
    written: a run or a grade that did not pass is not ok for a script (``kestrel run``,
    ``kestrel grade`` and ``kestrel demo`` alike)."""
    if grade.passed:
        return
    failed = ", ".join(c.id for c in grade.conformance.checks if not c.passed)
    raise fail(
        "CHECK_FAILED", f"grade {grade.root} of session {grade.session} failed check(s): {failed}"
    )


def conclude_verification(
    report: VerificationReport, as_json: bool, ok_line: str, hint: str = ""
) -> None:
    """Print a verification's outcome (JSON, or ``ok_line`` when it holds); a mismatch
    exits ``CHECK_FAILED`` naming the first differing field (then ``hint``)."""
    if as_json:
        click.echo(json_text(report))
    elif report.ok:
        click.echo(ok_line)
    if report.mismatch is not None:
        m = report.mismatch
        raise fail(
            "CHECK_FAILED",
            f"verification failed: {m.field}: expected {m.expected}, found {m.found}{hint}",
        )


@click.command("proof")
@click.argument("session_id", metavar="SESSION")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the proof here (default: print it).",
)
@click.option(
    "--embed-tape",
    is_flag=True,
    help="Carry the scenario and its tape (needed where the verifier's catalog lacks it).",
)
@click.pass_context
def proof(ctx: click.Context, session_id: str, out: Path | None, embed_tape: bool) -> None:
    """Write a session's proof: its grade with everything needed to re-verify it anywhere
    (`kestrel verify FILE`). Grades the session first if need be."""

    async def go() -> Proof:
        async with open_sdk(settings_of(ctx)) as sdk:
            if out is not None:
                return await write_proof(sdk, session_id, out, embed_tape)
            return await sdk.proof(session_id, embed_tape)

    made = anyio.run(go)
    if out is None:
        click.echo(canonical_json(made.to_json()).decode("utf-8"))
    else:
        click.echo(f"proof {made.root} of grade {made.grade.root} written to {out}")
