"""``kestrel scenario new ID --from FILE``: bring your own bars as a catalog scenario.

Local files only (``--remote`` does not apply). Bad input prints one line per problem
(the first 100 by row, then a line counting the rest and all by kind), each with its row,
on stderr and exits 1 with nothing written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click
from kestrel_protocol.quoting import counted

from ..cli_convention import fail
from .bootstrap import settings_of
from .show import json_text

__all__ = ["catalog_dirs", "scenario", "taken_by", "where_to_put", "write_scenario", "wrote"]

_MARGIN_DEFAULTS = {
    "leverage": "2",
    "maintenance_margin": "0.25",
    "borrow_rate": "0",
    "cash_rate": "0",
}
"""A margin account's terms where ``--account margin`` names none."""


@click.group("scenario")
def scenario() -> None:
    """Make user scenarios (see `kestrel catalog`)."""


def catalog_dirs() -> list[Path]:
    """The user catalog directories of the command running: ``kestrel --catalog-path``'s,
    else ``KESTREL_CATALOG_PATH``'s."""
    from ..runtime.catalog import catalog_entries  # noqa: PLC0415 - the CLI starts without it

    return catalog_entries(settings_of(click.get_current_context()).catalog_dirs)


def command_home() -> Path:
    """The Kestrel home of the command running (``kestrel --home``, else
    ``KESTREL_HOME``, else ``~/.kestrel``): the catalog remembers its tapes' shapes there."""
    return settings_of(click.get_current_context()).home


def taken_by(scenario_id: str) -> str | None:
    """Who already has ``scenario_id`` in the command's catalog, if anyone."""
    from ..runtime.catalog import load_catalog  # noqa: PLC0415 - the CLI starts without it

    existing = load_catalog(catalog_dirs(), home=command_home()).get(scenario_id)
    if existing is None:
        return None
    return "a shipped scenario" if existing.origin is None else str(existing.origin)


def write_scenario(target: Path, write: Callable[[Path], Path]) -> Path:
    """``write(target)`` (a scenario directory, written through
    :func:`~kestrel_sdk.scenarios.write_staged`), or the command failed as every command
    that writes a scenario fails: the target refused as the SDK words it, or the system's
    reason it cannot be written; nothing written either way."""
    from ..scenarios import ScenarioTargetError  # noqa: PLC0415 - the CLI starts without it

    try:
        return write(target)
    except ScenarioTargetError as error:
        raise fail("INVALID_ARGUMENT", f"{error}; nothing written") from None
    except OSError as error:  # as every other command's output that cannot be written
        reason = error.strerror or str(error)
        raise fail("INVALID_INPUT", f"cannot write {target}: {reason}; nothing written") from None


def wrote(written: Path, news_items: int | None) -> list[str]:
    """What a scenario directory written here holds (its news too, when it has any)."""
    lines = [f"wrote {written / 'scenario.toml'} and {written / 'tape.csv'}"]
    if news_items is not None:
        lines.append(f"wrote {counted(news_items, 'news item')} to {written / 'news.jsonl'}")
    return lines


def where_to_put(target: Path) -> list[str]:
    from ..runtime.catalog import CATALOG_PATH_ENV  # noqa: PLC0415 - the CLI starts without it

    parent = target.resolve().parent
    dirs = [entry.resolve() for entry in catalog_dirs() if entry.is_dir()]
    named = settings_of(click.get_current_context()).catalog_dirs is not None
    if parent in dirs or target.resolve() in dirs:
        where = "--catalog-path names" if named else f"{CATALOG_PATH_ENV} includes"
        return [f"{where} {parent}: the scenario is in the catalog now."]
    joined = f"{parent}${{{CATALOG_PATH_ENV}:+{os.pathsep}${CATALOG_PATH_ENV}}}"
    return [
        f"To use it, put {parent} on {CATALOG_PATH_ENV} (or move {target.name}/ into a "
        "directory that is on it):",
        f"  export {CATALOG_PATH_ENV}={joined}",
        "  kestrel catalog --check",
    ]


@scenario.command("new")
@click.argument("scenario_id", metavar="ID")
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Bars: CSV (Yahoo, backtesting.py, Alpaca/Polygon, long format) or Parquet.",
)
@click.option(
    "--symbol", help="Name the symbol (default: the file name), or pick from a long file."
)
@click.option("--interval", type=click.Choice(["1m", "5m", "1h", "1d"]), help="Default: detected.")
@click.option("--tick", help="Price grid, e.g. 0.01 (default: the finest decimal the file uses).")
@click.option("--cash", default="100000.00", show_default=True, help="Starting cash.")
@click.option("--fees-bps", default="10", show_default=True, help="Fee per fill, bps of notional.")
@click.option("--shortable", is_flag=True, help="Allow short positions.")
@click.option("--lot", default="1", show_default=True, help="Lot: 1, 100, or 0.01 (fractional).")
@click.option(
    "--account",
    "account_kind",
    type=click.Choice(["cash", "margin"]),
    default="cash",
    show_default=True,
    help="A cash account, or a margin account (the four terms below).",
)
@click.option("--leverage", help="Margin: gross / equity cap.  [default: 2]")
@click.option("--maintenance-margin", help="Margin: equity / gross floor.  [default: 0.25]")
@click.option("--borrow-rate", help="Margin: per year on shorts.  [default: 0]")
@click.option("--cash-rate", help="Margin: per year on cash.  [default: 0]")
@click.option("--sealed", is_flag=True, help="Seal it: no face serves its tape (neutral title).")
@click.option("--title", help="Default: symbols and interval (no dates).")
@click.option("--bars-per-year", type=int, help="Default by interval (252 for 1d).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),  # a file there is refused as the SDK words it
    metavar="DIRECTORY",
    help="Scenario directory (default: ID under the first --catalog-path, else the first "
    "KESTREL_CATALOG_PATH entry, else ./ID).",
)
@click.option(
    "--news",
    "news_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Timestamped text beside the bars: JSONL, or CSV (time,symbol,headline,body).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the catalog entry as JSON.")
def new(  # noqa: PLR0917 - one parameter per click option
    scenario_id: str,
    source: Path,
    symbol: str | None,
    interval: str | None,
    tick: str | None,
    cash: str,
    fees_bps: str,
    shortable: bool,
    lot: str,
    account_kind: str,
    leverage: str | None,
    maintenance_margin: str | None,
    borrow_rate: str | None,
    cash_rate: str | None,
    sealed: bool,
    title: str | None,
    bars_per_year: int | None,
    out: Path | None,
    news_file: Path | None,
    as_json: bool,
) -> None:
    """Convert a bar file into a scenario directory (scenario.toml + canonical tape.csv)."""
    from ..runtime.catalog.terms import id_problem  # noqa: PLC0415
    from ..scenarios import (  # noqa: PLC0415 - the CLI starts without the importer
        ScenarioImportError,
        ScenarioTermsInput,
        scenario_from_file,
    )

    problem = id_problem(scenario_id)  # the argument's, not the file's
    if problem is not None:
        raise fail("INVALID_ARGUMENT", f"{problem}; nothing written")
    failed = source  # the file a problem is in
    given = {
        "leverage": leverage,
        "maintenance_margin": maintenance_margin,
        "borrow_rate": borrow_rate,
        "cash_rate": cash_rate,
    }
    if account_kind == "cash" and any(value is not None for value in given.values()):
        named = ", ".join(f"--{key.replace('_', '-')}" for key, v in given.items() if v is not None)
        raise fail(
            "INVALID_ARGUMENT",
            f"{named}: a margin account's terms; add --account margin (a cash account has"
            " none); nothing written",
        )
    margin = {key: value or _MARGIN_DEFAULTS[key] for key, value in given.items()}
    terms = ScenarioTermsInput(
        title=title,
        cash=cash,
        fee_bps=fees_bps,
        shortable=shortable,
        lot=lot,
        margin=None if account_kind == "cash" else margin,
        bars_per_year=bars_per_year,
        sealed=sealed,
    )
    try:
        imported = scenario_from_file(
            source, scenario_id, symbol=symbol, interval=interval, tick=tick, terms=terms
        )
        if news_file is not None:
            failed = news_file
            imported.add_news(
                news_file.read_bytes(),
                news_file.name,
                csv_form=news_file.suffix.lower() == ".csv",
            )
    except ScenarioImportError as error:
        for line in [*error.lines, *([error.more] if error.more else [])]:
            click.echo(line, err=True)
        count = error.total
        raise fail(
            "INVALID_ARGUMENT",
            f"{counted(count, 'problem')} in {failed}; nothing written",
        ) from None
    taken = taken_by(imported.id)
    if taken is not None:
        raise fail(
            "INVALID_ARGUMENT", f"id {imported.id!r} is already taken by {taken}; choose another"
        )
    dirs = catalog_dirs()
    target = out if out is not None else (dirs[0] if dirs else Path()) / imported.id
    written = write_scenario(target, lambda at: imported.write(at, home=command_home()))
    entry = imported.entry()
    if as_json:
        click.echo(json_text(entry))
        return
    tape = imported.scenario.tape
    symbols = ", ".join(entry["symbols"])
    click.echo(
        f"{source.name}: {imported.layout} layout; {counted(tape.bars, 'bar')} of {symbols}, "
        f"{tape.interval}, {tape.start} to {tape.end}, tick {imported.scenario.instruments[0].tick}"
    )
    for note in imported.notes:
        click.echo(f"  note: {note}")
    for line in wrote(written, None if imported.news is None else len(imported.news)):
        click.echo(line)
    click.echo("catalog entry:")
    click.echo(f"  {json_text(entry)}")
    for line in where_to_put(written):
        click.echo(line)
