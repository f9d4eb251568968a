"""``kestrel report`` and ``kestrel demo``: plugin verbs of the ``kestrel`` CLI.

``demo`` is the README's main job: a full agent run on the shipped defaults that ends
with a verified grade and the path of its report.
"""

from __future__ import annotations

import json
import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import click
from kestrel_protocol import GradeResult, KestrelError, Proof, RefusalCode, SessionResponse
from kestrel_protocol.quoting import counted
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..cli.bootstrap import open_sdk, settings_of
from ..cli.proofs import GRADE_ELSEWHERE, conclude_grade, read_proof_or_grade
from ..cli_convention import fail
from ..client import KestrelSdk
from .agent import SmaCrossAgent
from .collect import collect_proof_data, collect_report_data
from .html import render_report

__all__ = ["DEMO_PRINCIPAL", "demo_command", "failed_checks", "report_command", "write_report"]

DEMO_PRINCIPAL = "demo"
"""Who ``kestrel demo`` trades as on a local home: its own principal, so the scenario it
shows is not shown to the home's owner (``local``), whose runs on it stay honest."""


async def write_report(sdk: KestrelSdk, subject: GradeResult | Proof, out: Path) -> Path:
    """Render the report of a grade (its artifacts fetched through ``sdk``) or of a proof
    (which carries them) into ``out`` (a self-contained HTML file)."""
    if isinstance(subject, Proof):
        data = await collect_proof_data(sdk, subject)
    else:
        data = await collect_report_data(sdk, subject)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(data), encoding="utf-8")
    return out.resolve()


@contextmanager
def _phase(console: Console, quiet: bool, what: str) -> Iterator[None]:
    """A status line (spinner and elapsed time) while one phase after the trading runs."""
    if quiet:
        yield
        return
    with console.status(f"{what}…"):
        yield
    console.print(f"[green]✓[/] {what}", highlight=False)


def _load_grade(path: Path) -> GradeResult | Proof:
    """The grade or proof in ``path``; any other file is refused as ``kestrel verify``
    refuses it (``INVALID_INPUT``, exit 1)."""
    data = read_proof_or_grade(path)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in {"kestrel.grade", "kestrel.proof"}:
        raise fail(
            "INVALID_INPUT",
            f"{path}: not a Kestrel grade or proof: expected a kestrel.grade or "
            "kestrel.proof object",
        )
    try:
        return Proof.parse(data) if kind == "kestrel.proof" else GradeResult.parse(data)
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise fail("INVALID_INPUT", f"{path}: not a Kestrel grade or proof: {first}") from None


@click.command("report")
@click.argument("grade_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the HTML (default: beside the grade, .html).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the report in a browser.")
@click.pass_context
def report_command(
    ctx: click.Context, grade_file: Path, out: Path | None, open_browser: bool
) -> None:
    """Write a self-contained HTML report of GRADE_FILE, a grade or a proof (equity,
    drawdown, fills, trades, checks)."""
    grade = _load_grade(grade_file)
    target = out or grade_file.with_suffix(".html")

    async def go() -> Path:
        async with open_sdk(settings_of(ctx)) as sdk:
            try:
                return await write_report(sdk, grade, target)
            except KestrelError as exc:  # a grade made in another store: say so
                unknown = exc.code == RefusalCode.UNKNOWN_ARTIFACT
                if not unknown or exc.detail.get("status") != "missing" or isinstance(grade, Proof):
                    raise
                raise fail("UNKNOWN_ARTIFACT", f"{exc.message} ({GRADE_ELSEWHERE})") from None

    written = anyio.run(go)
    click.echo(str(written))
    if open_browser:
        webbrowser.open(written.as_uri())


def failed_checks(grade: GradeResult) -> list[str]:
    """``check ID: DETAIL`` for each conformance check the grade failed."""
    return [
        f"{check.id}: {check.detail}" if check.detail else check.id
        for check in grade.conformance.checks
        if not check.passed
    ]


def _summary(grade: GradeResult, verified: bool) -> Table:
    m = grade.metrics
    table = Table(title=f"Kestrel demo — {grade.scenario.id}", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    failed = len(failed_checks(grade))
    for label, value in (
        ("session", grade.session),
        ("passed", "yes" if grade.passed else f"no ({failed} failed check(s), below)"),
        ("verified", "yes" if verified else "NO"),
        ("pnl", m.pnl),
        ("return", m.return_),
        ("max drawdown", m.max_drawdown),
        ("sharpe", m.sharpe),
        ("fills", str(m.fills)),
        ("fees", m.fees),
    ):
        table.add_row(label, value)
    return table


def _paths(grade: GradeResult, report: Path | str, grade_path: Path) -> str:
    """What a user copies next, one per line and never cut, whatever the terminal's width;
    each failed check first, by its id and detail."""
    failed = "".join(f"failed      {line}\n" for line in failed_checks(grade))
    return f"{failed}grade root  {grade.root}\ngrade       {grade_path}\nreport      {report}"


def _no_report(scenario: str) -> str:
    """Why a sealed scenario's demo has no report, and when it can have one."""
    return (
        f"none: {scenario} is sealed (a report needs its tape, which is not served); "
        "kestrel report GRADE.json makes it once the scenario is unsealed"
    )


@click.command("demo")
@click.option("--scenario", default="acme-trend", show_default=True, help="Scenario to trade.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for grade.json and report.html (default: $KESTREL_HOME/reports/<session>).",
)
@click.option(
    "--quiet",
    is_flag=True,
    help="No progress bar; print only the report path (the grade's, for a sealed scenario).",
)
@click.pass_context
def demo_command(ctx: click.Context, scenario: str, out: Path | None, quiet: bool) -> None:
    """Run the SMA-cross agent on a shipped scenario: trade, grade, verify, report.

    Locally it trades as the principal ``demo``, not as you: the scenario's bars it shows
    are shown to ``demo``, so your own runs on it still pass ``no-lookahead``. A grade that
    fails a check exits 1 once it is written, as ``kestrel run``: a second demo in one home
    fails ``no-lookahead`` (``demo`` was shown the whole tape by the first)."""
    console = Console(stderr=True)
    settings = settings_of(ctx)
    shown_to = (
        f"the principal of your token at {settings.remote}"
        if settings.remote
        else f"the principal {DEMO_PRINCIPAL!r} (not you: your own runs on {scenario} stay unseen)"
    )

    async def go() -> tuple[GradeResult, Path | None, Path, bool]:
        async with open_sdk(settings, DEMO_PRINCIPAL) as sdk:
            found = await sdk.scenario(scenario)  # an unknown id is refused before it is shown
            if not quiet:
                console.print(f"showing {scenario} to {shown_to}", highlight=False)
            symbol = found.instruments[0].symbol
            opened = await sdk.open_session(scenario)
            if opened.session is None:
                raise KestrelError(RefusalCode.PAYMENT_INVALID, "opening the session is gated")
            session = opened.session
            agent = SmaCrossAgent(symbol)
            with Progress(
                TextColumn("[bold]trading[/] " + scenario),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("bars · {task.fields[fills]}"),
                TimeElapsedColumn(),
                console=console,
                disable=quiet,
            ) as progress:
                bars = getattr(found.tape, "bars", None)  # a sealed tape has no length
                task = progress.add_task(
                    "run", total=None if bars is None else bars - 1, fills=counted(0, "fill")
                )
                fills = 0

                def step(response: SessionResponse) -> None:
                    nonlocal fills
                    fills += sum(1 for e in response.delivery.frame.events if e.type == "fill")
                    progress.update(
                        task,
                        completed=response.delivery.frame.clock.bar,
                        fills=counted(fills, "fill"),
                    )

                await agent.run(session, step)
            with _phase(console, quiet, f"closing {session.id}"):
                await session.close()
            with _phase(console, quiet, "grading (every fill and mark)"):
                grade = await sdk.grade_until_done(session.id)
            with _phase(console, quiet, f"verifying grade {grade.root[:19]}… by replay"):
                verified = (await sdk.verify(grade)).ok
            home = settings.home
            folder = out or home / "reports" / session.id
            if out is None:  # under the home: private, as everything there (0700/0600)
                (home / "reports").mkdir(mode=0o700, parents=True, exist_ok=True)
                folder.mkdir(mode=0o700, exist_ok=True)
            folder.mkdir(parents=True, exist_ok=True)
            grade_path = folder / "grade.json"
            grade_path.write_text(json.dumps(grade.to_json(), indent=2) + "\n", encoding="utf-8")
            if out is None:
                grade_path.chmod(0o600)
            try:
                with _phase(console, quiet, "writing the report"):
                    report = await write_report(sdk, grade, folder / "report.html")
            except KestrelError as exc:  # a sealed door's scenario: the grade stands alone
                if exc.code != RefusalCode.SCENARIO_SEALED:
                    raise
                return grade, None, grade_path.resolve(), verified
            if out is None:
                report.chmod(0o600)
            return grade, report, grade_path.resolve(), verified

    grade, report, grade_path, verified = anyio.run(go)
    if quiet:
        for failed in failed_checks(grade):  # named even when quiet, where errors go
            click.echo(f"kestrel: failed check {failed}", err=True)
        if report is None:
            click.echo(f"kestrel: report {_no_report(grade.scenario.id)}", err=True)
        click.echo(str(report or grade_path))
    else:
        Console().print(_summary(grade, verified))
        click.echo(_paths(grade, report or _no_report(grade.scenario.id), grade_path))
    if not verified:
        raise fail("CHECK_FAILED", f"grade {grade.root} did not verify")
    conclude_grade(grade)  # a failed check exits 1, as `kestrel run` (its grade written)
