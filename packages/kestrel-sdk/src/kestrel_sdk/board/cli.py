"""``kestrel board``: a plugin verb of the ``kestrel`` CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import httpx
from kestrel_protocol.quoting import counted

from ..cli.bootstrap import settings_of
from ..cli_convention import TRUSTED_KEYS, fail
from .build import build_board
from .html import render_board
from .rows import BADGES, METRICS
from .sources import NoProofs

__all__ = ["board_command"]


@click.command("board")
@click.argument("proofs", nargs=-1, type=click.Path(path_type=Path), metavar="PROOFS...")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the HTML page here (default board.html; with --json, only when given).",
)
@click.option(
    "--metric",
    type=click.Choice(list(METRICS)),
    default="sharpe",
    show_default=True,
    help="The grade metric that ranks proofs (max-drawdown: lower is better).",
)
@click.option(
    "--trust",
    metavar=TRUSTED_KEYS,
    default=None,
    help="Check doors' signed statements with these keys: a door's URL, a JWKS URL or file.",
)
@click.option(
    "--require-catalog",
    is_flag=True,
    help="Fail a proof whose scenario is embedded and not in this machine's catalog.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the board's table as JSON.")
@click.option(
    "--allow-failed",
    is_flag=True,
    help="Exit 0 even when a row failed (by default a failed row exits 1, naming it).",
)
@click.option(
    "--from",
    "from_url",
    metavar="URL",
    default=None,
    help="Rebuild the board a door publishes (its /board), from its /board/proofs.json; "
    "needs --trust (the door's URL): the page is the door's, byte for byte.",
)
@click.option(
    "--reveal",
    "reveals",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="A disguise's reveal (repeatable): confirms a labelled/disguised pair, whose "
    "memorisation gap the board then shows per agent.",
)
@click.pass_context
def board_command(  # noqa: PLR0917 - one parameter per click option
    ctx: click.Context,
    proofs: tuple[Path, ...],
    out: Path | None,
    metric: str,
    trust: str | None,
    require_catalog: bool,
    as_json: bool,
    allow_failed: bool,
    from_url: str | None,
    reveals: tuple[Path, ...],
) -> None:
    """Verify every proof in PROOFS (proof files, directories of them, Inspect logs),
    rank them per scenario and overall, and write one self-contained HTML page.

    Each proof is replayed on this machine; one that fails is listed as failed with the
    reason and never ranked, and so is one that embeds a forgery of a catalog scenario.
    With --trust, a proof whose door signed its grade is attested-and-sealed when the
    statement holds and says the scenario was sealed, replayed-only when it holds and
    says not, and failed when it does not hold; only attested proofs (sealed or not) are
    ranked, credited to the principal the statement names. A row is credited to the
    agent a run was named for (-T agent=NAME), else to the attested principal, else to
    its folder. A grade, session or proof given twice is ranked once; only catalog
    scenarios count overall; a file that is not a proof (over 64 MiB, nested deeper than
    64, not UTF-8, not JSON, a key repeated in one object) is a failed row, and so is a
    proof whose grade did not pass or whose session stopped before its window ended.
    A directory that holds no proof file is refused (exit 1), and nothing is written.

    Each agent's runs of a scenario are one cell: N, the mean and a 95% t-interval;
    cells whose intervals overlap share a rank; beside them, the board's own
    buy-and-hold session on the same tape, a baseline never ranked. A board with a
    failed row exits 1 naming it (--allow-failed: exit 0).

    The memorisation gap: per agent, return and Sharpe on labelled tapes minus on their
    disguised twins (mean over pairs, N, a 95% t-interval). A pair counts only when a
    reveal given with --reveal FILE confirms it; a pair an Inspect log claims
    (-T pairs=…) without one is listed as unconfirmed and never counted.
    """
    from ..trust import load_trusted_keys  # noqa: PLC0415 - the cryptography loads only here

    if from_url is not None and (proofs or trust is None):
        raise click.UsageError("--from URL takes no PROOFS and needs --trust (the door's URL)")
    if from_url is not None and (metric != "sharpe" or require_catalog or reveals):
        raise click.UsageError(
            "--from rebuilds the door's board as it serves it (by sharpe): "
            "no --metric, --require-catalog or --reveal"
        )
    if from_url is None and not proofs:
        raise click.UsageError("Missing argument 'PROOFS...' (or --from URL --trust URL)")
    try:
        keys = load_trusted_keys(trust) if trust is not None else None
    except ValueError as exc:
        raise fail("INVALID_INPUT", str(exc)) from None
    if from_url is not None:
        assert keys is not None
        page, table, failed, badges = _published(from_url, keys)
    else:
        try:
            board = build_board(
                list(proofs),
                metric,
                trusted_keys=keys,
                require_catalog=require_catalog,
                reveals=[(str(path), _reveal(path)) for path in reveals],
                catalog_paths=settings_of(ctx).catalog_dirs,
                home=settings_of(ctx).home,
            )
        except NoProofs as exc:
            raise fail("INVALID_INPUT", f"{exc}; no board written") from None
        page, table = render_board(board), json.dumps(board.to_json(), indent=2) + "\n"
        failed = [(r.source, r.reason) for r in board.failed]
        badges = [r.badge for r in board.rows]
    target = out if out is not None or as_json else Path("board.html")
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        # a lone surrogate a proof's JSON spelled (\ud800) is shown escaped, not a crash
        target.write_bytes(page.encode("utf-8", errors="backslashreplace"))
    if as_json:
        click.echo(table, nl=False)
    else:
        assert target is not None
        counts = ", ".join(f"{badges.count(b)} {b}" for b in BADGES)
        click.echo(f"{target.resolve()}: {counted(len(badges), 'proof')} ({counts})")
        for t in json.loads(table)["trials"]:  # each evaluator's trials, not only on the page
            of = f"trials of {t['trialOf']} at {t['issuer']} ({', '.join(t['agents'])})"
            click.echo(f"{of}: {t['said']} (ask the door again at {t['countUrl']})")
    if failed and not allow_failed:
        source, reason = failed[0]
        raise fail(
            "CHECK_FAILED",
            f"{len(failed)} of {counted(len(badges), 'row')} failed (first: {source}: {reason}); "
            "the board is written: --allow-failed exits 0 with failed rows",
        )


def _reveal(path: Path) -> dict[str, Any]:
    """A reveal file's data (``INVALID_INPUT`` naming the file when it is not one)."""
    from kestrel_protocol.documents import Unreadable, read_json  # noqa: PLC0415

    from ..runtime.catalog.reveal import REVEAL_KIND  # noqa: PLC0415 - the engine loads here

    try:
        data = read_json(path)
    except Unreadable as exc:
        raise fail("INVALID_INPUT", f"--reveal {path}: {exc}") from None
    source = data.get("source") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("kind") != REVEAL_KIND
        or not isinstance(data.get("scenario"), str)
        or not isinstance(source, dict)
        or not all(isinstance(source.get(k), str) for k in ("id", "root"))
    ):
        raise fail(
            "INVALID_INPUT",
            f"--reveal {path}: not a reveal (a {REVEAL_KIND} naming its scenario and its "
            "source's id and root: kestrel scenario reveal ID -o FILE writes one)",
        )
    return data


def _published(
    url: str, keys: Mapping[str, Any]
) -> tuple[str, str, list[tuple[str, str]], list[str]]:
    """The page and table of the board the door at ``url`` publishes, its failed rows
    (source, reason) and every row's badge."""
    from kestrel_protocol.documents import parse_json  # noqa: PLC0415

    from .published import PUBLISHED_PATH, published_board  # noqa: PLC0415

    try:
        response = httpx.get(url.rstrip("/") + PUBLISHED_PATH, timeout=30.0)
        response.raise_for_status()
        document = parse_json(response.content)
        built = published_board(document, keys)
    except (httpx.HTTPError, ValueError) as exc:
        raise fail("INVALID_INPUT", f"cannot read the board {url} publishes: {exc}") from None
    data = json.loads(built.json)
    failed = [(r["source"], r["reason"]) for r in data["rows"] if r["badge"] == "failed"]
    return built.html, built.json, failed, [r["badge"] for r in data["rows"]]
