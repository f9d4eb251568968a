"""``kestrel board``: a plugin verb of the ``kestrel`` CLI."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..cli_convention import fail
from .build import build_board
from .html import render_board
from .rows import METRICS

__all__ = ["board_command"]


@click.command("board")
@click.argument(
    "proofs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PROOFS..."
)
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
    metavar="URL|JWKS",
    default=None,
    help="Check doors' signed statements with these keys: a door's URL, a JWKS URL or file.",
)
@click.option(
    "--require-catalog",
    is_flag=True,
    help="Fail a proof whose scenario is embedded and not in this machine's catalog.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the board's table as JSON.")
def board_command(  # noqa: PLR0917 - one parameter per click option
    proofs: tuple[Path, ...],
    out: Path | None,
    metric: str,
    trust: str | None,
    require_catalog: bool,
    as_json: bool,
) -> None:
    """Verify every proof in PROOFS (proof files, directories of them, Inspect logs),
    rank them per scenario and overall, and write one self-contained HTML page.

    Each proof is replayed on this machine; one that fails is listed as failed with the
    reason and never ranked, and so is one that embeds a forgery of a catalog scenario.
    With --trust, a proof whose door signed its grade is attested-and-sealed when the
    statement holds and says the scenario was sealed, and failed when it does not hold;
    only attested proofs are ranked, credited to the principal the statement names.
    A grade, session or proof given twice is ranked once; only catalog scenarios count
    overall; a file that is not a proof (over 64 MiB, nested deeper than 64, not UTF-8,
    not JSON) is a failed row.
    """
    from ..trust import load_trusted_keys  # noqa: PLC0415 - the cryptography loads only here

    try:
        keys = load_trusted_keys(trust) if trust is not None else None
    except ValueError as exc:
        raise fail("INVALID_INPUT", str(exc)) from None
    board = build_board(list(proofs), metric, trusted_keys=keys, require_catalog=require_catalog)
    target = out if out is not None or as_json else Path("board.html")
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        # a lone surrogate a proof's JSON spelled (\ud800) is shown escaped, not a crash
        target.write_text(render_board(board), encoding="utf-8", errors="backslashreplace")
    if as_json:
        click.echo(json.dumps(board.to_json(), indent=2))
        return
    counts = ", ".join(
        f"{board.count(b)} {b}" for b in ("attested-and-sealed", "replayed-only", "failed")
    )
    assert target is not None
    click.echo(f"{target.resolve()}: {len(board.rows)} proofs ({counts})")
