"""``kestrel board``: a plugin verb of the ``kestrel`` CLI."""

from __future__ import annotations

import json
from pathlib import Path

import click

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
@click.option("--json", "as_json", is_flag=True, help="Print the board's table as JSON.")
def board_command(proofs: tuple[Path, ...], out: Path | None, metric: str, as_json: bool) -> None:
    """Verify every proof in PROOFS (proof files, directories of them, Inspect logs),
    rank them per scenario and overall, and write one self-contained HTML page.

    Each proof is replayed on this machine; one that fails is listed as failed with the
    reason and never ranked, and so is one that embeds a forgery of a catalog scenario.
    """
    board = build_board(list(proofs), metric)
    target = out if out is not None or as_json else Path("board.html")
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_board(board), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(board.to_json(), indent=2))
        return
    counts = ", ".join(
        f"{board.count(b)} {b}" for b in ("attested-and-sealed", "replayed-only", "failed")
    )
    assert target is not None
    click.echo(f"{target.resolve()}: {len(board.rows)} proofs ({counts})")
