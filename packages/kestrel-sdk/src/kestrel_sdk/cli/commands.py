"""The verbs of docs/spec.md §11: catalog, validate, run, grade, verify, artifact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import click
from kestrel_protocol import (
    GradeResult,
    Mismatch,
    OperationResumption,
    ValidationReport,
    VerificationReport,
    root_of,
)
from kestrel_protocol.exits import ExitCode
from kestrel_protocol.quoting import counted
from kestrel_protocol.settings import KestrelSettings

from ..cli_convention import TRUSTED_KEYS, Duration, fail
from ..client import KestrelSdk
from ..errors import SdkError
from .bootstrap import open_sdk, settings_of
from .proofs import (
    GRADE_ELSEWHERE,
    conclude_grade,
    conclude_verification,
    read_proof_or_grade,
    verify_proof_data,
    write_out,
    write_proof,
)
from .sending import send_program
from .show import (
    catalog_table,
    diagnostics_lines,
    grade_table,
    json_text,
    pretty_json,
    progress_bar,
    stdout,
)

__all__ = ["artifact", "catalog", "grade", "run", "validate", "verify"]


def _rerooted(data: Any) -> tuple[GradeResult, Mismatch | None]:
    """The presented grade with its roots recomputed, and the first root it got wrong.

    The replay compares every member, so a tampered member is named by the replay; a
    tampered root alone (content intact) is named here.
    """
    if not isinstance(data, dict) or not isinstance(data.get("conformance"), dict):
        raise ValueError("expected a kestrel.grade object")
    conformance = dict(data["conformance"])
    conformance["root"] = root_of(conformance)
    body = {**data, "conformance": conformance}
    body["root"] = root_of(body)
    mismatch = None
    if data["conformance"].get("root") != conformance["root"]:
        found = str(data["conformance"].get("root"))
        mismatch = Mismatch(field="conformance.root", expected=conformance["root"], found=found)
    elif data.get("root") != body["root"]:
        mismatch = Mismatch(field="root", expected=body["root"], found=str(data.get("root")))
    return GradeResult.parse(body), mismatch


def _read_source(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("INVALID_INPUT", f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise fail("INVALID_INPUT", f"{path}: {exc.strerror}") from None


async def _finish(sdk: KestrelSdk, session_id: str, quiet: bool) -> GradeResult:
    """Grade to the end (with a progress bar when it takes a while)."""
    progress = progress_bar("grading", quiet)
    task: Any = None

    def show(running: OperationResumption) -> None:
        nonlocal task
        if task is None:
            progress.start()
            task = progress.add_task("grade", total=None)
        total = running.progress.total or None
        progress.update(task, completed=running.progress.done, total=total)

    try:
        return await sdk.grade_until_done(session_id, show)
    finally:
        if task is not None:
            progress.stop()


@click.command("catalog")
@click.option("--check", is_flag=True, help="Check user scenarios; report each problem.")
@click.option("--json", "as_json", is_flag=True, help="Print the catalog object as JSON.")
@click.pass_context
def catalog(ctx: click.Context, check: bool, as_json: bool) -> None:
    """List the scenarios (shipped and from KESTREL_CATALOG_PATH)."""
    if check:
        from ..runtime.catalog import check_catalog  # noqa: PLC0415 - local files only

        settings = settings_of(ctx)
        problems = check_catalog(settings.catalog_dirs, home=settings.home)
        for problem in problems:
            click.echo(str(problem))
        if problems:
            raise fail("CHECK_FAILED", f"{len(problems)} catalog problem(s)")
        if not as_json:
            click.echo("catalog ok")
            return

    async def go(settings: KestrelSettings) -> None:
        async with open_sdk(settings) as sdk:
            cat = await sdk.catalog()
        if as_json:
            click.echo(json_text(cat))
        else:
            stdout().print(catalog_table(cat))

    anyio.run(go, settings_of(ctx))


@click.command("validate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scenario", help="Also check symbols, ticks and lots against a scenario.")
@click.option("--json", "as_json", is_flag=True, help="Print the ValidationReport as JSON.")
@click.pass_context
def validate(ctx: click.Context, file: Path, scenario: str | None, as_json: bool) -> None:
    """Check a Kestrel program without running it (exit 1 on errors)."""
    source = _read_source(file)

    async def go(settings: KestrelSettings) -> None:
        async with open_sdk(settings) as sdk:
            report = await sdk.validate(source, scenario)
        if as_json:
            click.echo(json_text(report))
        else:
            for line in diagnostics_lines(str(file), report):
                click.echo(line)
            if report.ok:
                click.echo(f"{file}: ok ({counted(report.statements, 'statement')})")
        if not report.ok:
            raise click.exceptions.Exit(int(ExitCode.FAILED))

    anyio.run(go, settings_of(ctx))


@click.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scenario", required=True, help="Scenario id (see `kestrel catalog`).")
@click.option("--label", help="Session label (default: the next unused one).")
@click.option("--json", "as_json", is_flag=True, help="Print the GradeResult as JSON.")
@click.option("--quiet", is_flag=True, help="No progress and no table.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the session's proof (the grade, verifiable anywhere with `kestrel verify`).",
)
@click.option(
    "--embed-tape", is_flag=True, help="With --out: carry the scenario and its tape in the proof."
)
@click.option("--atomic", is_flag=True, help="Send the program as one submission.")
@click.option(
    "--wait",
    type=Duration(),
    metavar="DURATION",
    help="On a forward scenario: wait up to DURATION in all (30s, 10m, 2h) for bars "
    "not yet published, rather than stop at the tape's edge.",
)
@click.pass_context
def run(  # noqa: PLR0917 - one parameter per click option
    ctx: click.Context,
    file: Path,
    scenario: str,
    label: str | None,
    as_json: bool,
    quiet: bool,
    out: Path | None,
    embed_tape: bool,
    atomic: bool,
    wait: float | None,
) -> None:
    """Open a session, run a program, close, grade and summarise."""
    source = _read_source(file)
    unfinished: str | None = None  # the session opened and not yet graded, for a Ctrl-C

    async def go(settings: KestrelSettings) -> None:
        nonlocal unfinished
        async with open_sdk(settings) as sdk:
            report = await sdk.validate(source, scenario)
            if not report.ok:
                for line in diagnostics_lines(str(file), report):
                    click.echo(line, err=True)
                raise click.exceptions.Exit(int(ExitCode.FAILED))
            opened = await sdk.open_session(scenario, label)
            if opened.gated or opened.session is None:
                offer = opened.payment
                what = f"offer {offer.offer_id}: {offer.amount} {offer.currency}" if offer else ""
                raise fail("PAYMENT_INVALID", f"opening a session needs payment ({what})")
            session = opened.session
            unfinished = session.id
            try:
                await send_program(session, source, atomic, quiet or as_json, wait)
            except SdkError as exc:
                if exc.code == "BAR_NOT_PUBLISHED":  # a forward tape's edge
                    how = "--wait DURATION waits for its bars" if wait is None else "--wait ran out"
                    left = f"{exc.message} (session {session.id} left open; {how})"
                    raise fail(exc.code, left) from None
                diagnostics = exc.detail.get("diagnostics")
                if exc.code != "INVALID_SOURCE" or not diagnostics:
                    raise
                # session-dependent errors (K204/K205) show up only when submitted
                report = ValidationReport(ok=False, statements=0, diagnostics=diagnostics)
                for line in diagnostics_lines(str(file), report):
                    click.echo(line, err=True)
                raise fail(
                    "INVALID_SOURCE", f"{exc.message} (session {session.id} left open)"
                ) from None
            await session.close()
            graded = await _finish(sdk, session.id, quiet or as_json)
            unfinished = None
            if out is not None:
                await write_proof(sdk, session.id, out, embed_tape)
        if as_json:
            click.echo(json_text(graded))
        elif not quiet:
            stdout().print(grade_table(graded))
            if out is not None:
                click.echo(f"proof written to {out}")
        conclude_grade(graded)

    try:
        anyio.run(go, settings_of(ctx))
    except KeyboardInterrupt:
        if unfinished is None:
            raise
        raise fail(
            "INTERRUPTED",
            f"interrupted: session {unfinished} on {scenario} is not graded "
            f"(`kestrel grade {unfinished}` closes and grades it as it stands); "
            "what it was shown counts in the no-lookahead check of your next session on "
            f"{scenario}",
        ) from None


@click.command("grade")
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="Print the GradeResult as JSON.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the grade.")
@click.pass_context
def grade(ctx: click.Context, session_id: str, as_json: bool, out: Path | None) -> None:
    """Grade a session (closing it if it is still open)."""

    async def go(settings: KestrelSettings) -> None:
        async with open_sdk(settings) as sdk:
            graded = await _finish(sdk, session_id, as_json)
        if out is not None:
            write_out(graded, out)
        if as_json:
            click.echo(json_text(graded))
        else:
            stdout().print(grade_table(graded))
        conclude_grade(graded)

    anyio.run(go, settings_of(ctx))


@click.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the VerificationReport as JSON.")
@click.option(
    "--require-catalog",
    is_flag=True,
    help="Fail a proof whose scenario is not this machine's catalog's (embedded, unknown).",
)
@click.option(
    "--trust",
    metavar=TRUSTED_KEYS,
    default=None,
    help="Check the door's signed statement in a proof with these keys (a door's URL, "
    "its JWKS URL, or a JWKS file).",
)
@click.option(
    "--reveal",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A disguise's reveal: check the proof's tape is exactly its source's disguise.",
)
@click.option(
    "--source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="With --reveal: the source's scenario directory (default: the catalog's).",
)
@click.pass_context
def verify(  # noqa: PLR0917 - one parameter per click option
    ctx: click.Context,
    file: Path,
    as_json: bool,
    require_catalog: bool,
    trust: str | None,
    reveal: Path | None,
    source: Path | None,
) -> None:
    """Replay a proof (from the file alone) or a grade (from the artifacts); exit 1
    naming the first mismatching field. Says where the scenario came from, and with
    --trust who attested the proof's grade."""
    data = read_proof_or_grade(file)
    if isinstance(data, dict) and data.get("kind") == "kestrel.proof":
        verify_proof_data(
            data,
            as_json,
            require_catalog=require_catalog,
            trust=trust,
            reveal=reveal,
            source=source,
            catalog_paths=settings_of(ctx).catalog_dirs,
            home=settings_of(ctx).home,
        )
        return
    if reveal is not None:
        raise fail("INVALID_INPUT", f"{file}: --reveal checks a proof; this is a grade")
    if trust is not None:
        raise fail(
            "INVALID_INPUT", f"{file}: a grade carries no signed statement; verify its proof"
        )
    try:
        presented, root_mismatch = _rerooted(data)
    except (ValueError, UnicodeDecodeError, TypeError, KeyError) as exc:
        first = str(exc).splitlines()[0]
        raise fail("INVALID_INPUT", f"{file}: not a Kestrel grade or proof: {first}") from None

    async def go(settings: KestrelSettings) -> None:
        async with open_sdk(settings) as sdk:
            report = await sdk.verify(presented)
        if report.ok and root_mismatch is not None:
            report = VerificationReport(
                ok=False, grade=data.get("root", ""), mismatch=root_mismatch
            )
        conclude_verification(
            report, as_json, f"ok: grade {report.grade} verified by replay", _elsewhere(report)
        )

    anyio.run(go, settings_of(ctx))


def _elsewhere(report: VerificationReport) -> str:
    """Why a grade whose record is not in this store fails, and what verifies anywhere."""
    from ..runtime.verify import NOT_STORED  # noqa: PLC0415 - the engine loads only here

    if report.mismatch is None or report.mismatch.found != NOT_STORED:
        return ""
    return f" ({GRADE_ELSEWHERE})"


@click.command("artifact")
@click.argument("root")
@click.option("--pretty", is_flag=True, help="Indented JSON instead of the canonical bytes.")
@click.pass_context
def artifact(ctx: click.Context, root: str, pretty: bool) -> None:
    """Print a stored object verbatim (canonical JSON)."""

    async def go(settings: KestrelSettings) -> None:
        async with open_sdk(settings) as sdk:
            obj = await sdk.artifact(root)
        click.echo(pretty_json(obj) if pretty else json_text(obj))

    anyio.run(go, settings_of(ctx))
