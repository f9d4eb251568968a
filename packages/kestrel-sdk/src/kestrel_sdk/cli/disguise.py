"""``kestrel scenario disguise SRC --as ID`` and ``kestrel scenario reveal ID``.

The secret is made here (``os.urandom``; the runtime has no randomness) or read from
``--secret-file``. The reveal (source, transform, secret) is kept private under the
Kestrel home, ``reveals/<commitment>.json``, until ``kestrel scenario reveal`` publishes
it; the disguised scenario carries only the commitment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from ..cli_convention import fail
from .bootstrap import settings_of
from .scenario import (
    catalog_dirs,
    command_home,
    scenario,
    taken_by,
    where_to_put,
    write_scenario,
    wrote,
)
from .show import json_text

__all__ = ["catalog_scenario", "disguise", "read_secret", "reveal", "reveals_dir"]

REVEALS = "reveals"


def reveals_dir() -> Path:
    """Where this machine keeps the reveals of the disguises it made."""
    return settings_of(click.get_current_context()).home / REVEALS


def read_secret(path: Path) -> bytes:
    """A secret file: hex digits (as ``kestrel scenario disguise`` writes), or raw bytes."""
    data = path.read_bytes()
    try:
        return bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        return data


def _keep(reveal: dict[str, Any]) -> tuple[Path, bool]:
    """The reveal kept under the Kestrel home, and whether this call made the file (one
    there already is this reveal: its name is its commitment, a root of its members)."""
    directory = reveals_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{str(reveal['commitment']).removeprefix('sha256:')}.json"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path, False
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps(reveal, indent=2) + "\n")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, True


def catalog_scenario(source_id: str) -> Any:
    """The catalog's scenario ``source_id``; the CLI's ``UNKNOWN_SCENARIO`` when none."""
    from ..runtime.catalog import load_catalog  # noqa: PLC0415 - the CLI starts without it

    loaded = load_catalog(catalog_dirs(), home=command_home()).get(source_id)
    if loaded is None:
        named = settings_of(click.get_current_context()).catalog_dirs is not None
        where = "--catalog-path" if named else "KESTREL_CATALOG_PATH"
        raise fail(
            "UNKNOWN_SCENARIO", f"no scenario {source_id!r} in the catalog (shipped, or on {where})"
        )
    return loaded


@scenario.command("disguise")
@click.argument("source_id", metavar="SRC")
@click.option("--as", "scenario_id", required=True, metavar="ID", help="The new scenario's id.")
@click.option(
    "--secret-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The secret (hex, at least 16 bytes); default: 32 random bytes.",
)
@click.option("--sealed", is_flag=True, help="Seal it (no face serves its tape).")
@click.option("--title", help="Default: its fictitious symbols and interval.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),  # a file there is refused as the SDK words it
    metavar="DIRECTORY",
    help="Scenario directory (default: ID under the first --catalog-path, else the first "
    "KESTREL_CATALOG_PATH entry, else ./ID).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the catalog entry as JSON.")
def disguise(  # noqa: PLR0917 - one parameter per click option
    source_id: str,
    scenario_id: str,
    secret_file: Path | None,
    sealed: bool,
    title: str | None,
    out: Path | None,
    as_json: bool,
) -> None:
    """Make a disguised twin of scenario SRC: fictitious symbols, bars laid past 2200 on
    a calendar of its own (no holiday gaps), prices rescaled by a secret factor, returns
    kept. It carries
    only a commitment; `kestrel scenario reveal ID` publishes the reveal later."""
    from ..scenarios import (  # noqa: PLC0415 - the CLI starts without it
        check_target,
        disguise_scenario,
    )

    source = catalog_scenario(source_id)
    secret = read_secret(secret_file) if secret_file is not None else os.urandom(32)
    taken = taken_by(scenario_id)
    if taken is not None:
        raise fail(
            "INVALID_ARGUMENT", f"id {scenario_id!r} is already taken by {taken}; choose another"
        )
    try:
        made = disguise_scenario(source, scenario_id, secret, title=title, sealed=sealed)
    except ValueError as error:
        raise fail("INVALID_ARGUMENT", f"{error}; nothing written") from None
    dirs = catalog_dirs()
    target = out if out is not None else (dirs[0] if dirs else Path()) / scenario_id
    write_scenario(target, check_target)  # a refused target leaves no reveal behind
    try:  # the reveal first: a disguise written without it could never be revealed
        kept, made_here = _keep(made.reveal)
    except OSError as error:
        raise fail(
            "INVALID_ARGUMENT", f"cannot keep the reveal: {error}; nothing written"
        ) from None
    try:
        written = write_scenario(target, made.write)
    except BaseException:  # no reveal of a disguise that was not written (one kept before stays)
        if made_here:
            kept.unlink(missing_ok=True)
        raise
    if as_json:
        click.echo(json_text(made.entry()))
        return
    for line in wrote(written, None if made.news is None else len(made.news)):
        click.echo(line)
    click.echo(f"commitment {made.commitment}")
    click.echo(f"the reveal is kept (private) in {kept}; publish it after the evaluation with:")
    click.echo(f"  kestrel scenario reveal {scenario_id} -o reveal.json")
    for line in where_to_put(written):
        click.echo(line)


@scenario.command("reveal")
@click.argument("scenario_id", metavar="ID")
@click.option(
    "-o", "--out", type=click.Path(dir_okay=False, path_type=Path), help="Default: print it."
)
@click.option(
    "--secret-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Rebuild the reveal from this secret (with --source) rather than the kept one.",
)
@click.option("--source", "source_id", metavar="SRC", help="The source, with --secret-file.")
def reveal(
    scenario_id: str, out: Path | None, secret_file: Path | None, source_id: str | None
) -> None:
    """Publish the reveal of disguised scenario ID: its source, transform and secret,
    checked against the scenario before it is written."""
    from ..runtime.catalog.reveal import (  # noqa: PLC0415
        RevealMismatch,
        check_reveal,
        rebuilt_transform,
        reveal_object,
        scenario_commitment,
    )

    disguised = catalog_scenario(scenario_id)
    commitment = scenario_commitment(disguised.scenario)
    if commitment is None:
        raise fail("INVALID_ARGUMENT", f"scenario {scenario_id} is not a disguise")
    if secret_file is not None:
        if source_id is None:
            raise fail("USAGE", "--secret-file needs --source SRC (the disguise's source)")
        source = catalog_scenario(source_id)
        secret = read_secret(secret_file)
        transform = rebuilt_transform(disguised, source, secret)
        made = reveal_object(scenario_id, source.scenario, transform, secret)
    else:
        kept = reveals_dir() / f"{commitment.removeprefix('sha256:')}.json"
        if not kept.is_file():
            raise fail(
                "INVALID_ARGUMENT",
                f"no kept reveal for {scenario_id} ({kept} is missing); rebuild it with "
                "--secret-file F --source SRC",
            )
        made = json.loads(kept.read_text(encoding="utf-8"))
        source = catalog_scenario(str(made.get("source", {}).get("id")))
    try:
        check_reveal(disguised, made, source)
    except RevealMismatch as error:
        raise fail("CHECK_FAILED", f"the reveal does not open {scenario_id}: {error}") from None
    text = json.dumps(made, indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as error:  # as every --out is refused (never INTERNAL)
        raise fail("INVALID_INPUT", f"--out {out}: cannot write ({error.strerror})") from None
    click.echo(f"wrote {out}: {scenario_id} is a disguise of {made['source']['id']}")
