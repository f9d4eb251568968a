"""``kestrel scenario sealed-copy SRC --as ID``: the scenario a runtime sealing ``SRC=ID``
serves (``kestrel-door serve --seal SRC=ID``), written as a catalog directory.

A proof of a session on the copy names only ``ID``; once the evaluation is over, the
operator publishes this directory so a verifier can add it to ``KESTREL_CATALOG_PATH``
and replay the proof (its root is the served one: same id, title, description, terms
and tape). It is written unsealed: it is published after the evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import click

from ..cli_convention import fail
from .disguise import catalog_scenario
from .scenario import catalog_dirs, scenario, taken_by, where_to_put, write_scenario, wrote
from .show import json_text

__all__ = ["sealed_copy"]


@scenario.command("sealed-copy")
@click.argument("source_id", metavar="SRC")
@click.option("--as", "served_id", required=True, metavar="ID", help="The id it is served as.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),  # a file there is refused as the SDK words it
    metavar="DIRECTORY",
    help="Scenario directory (default: ID under the first --catalog-path, else the first "
    "KESTREL_CATALOG_PATH entry, else ./ID).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the copy's id and roots.")
def sealed_copy(source_id: str, served_id: str, out: Path | None, as_json: bool) -> None:
    """Write the renamed copy a door serves for `--seal SRC=ID`: publish it after the
    evaluation so proofs of its sessions verify (`kestrel verify PROOF`)."""
    from ..runtime.catalog import tape_csv  # noqa: PLC0415 - the CLI starts without it
    from ..runtime.catalog.renamed import renamed_copy, seal_spec  # noqa: PLC0415
    from ..scenarios import write_staged  # noqa: PLC0415

    try:
        seal_spec(f"{source_id}={served_id}")
    except ValueError as error:
        raise fail("INVALID_ARGUMENT", f"{error}; nothing written") from None
    source = catalog_scenario(source_id)
    taken = taken_by(served_id)
    if taken is not None:
        raise fail(
            "INVALID_ARGUMENT", f"id {served_id!r} is already taken by {taken}; choose another"
        )
    copy = renamed_copy(source, served_id)
    dirs = catalog_dirs()
    target = (out if out is not None else (dirs[0] if dirs else Path()) / served_id).expanduser()
    text = tape_csv(source).encode("utf-8")

    def tape(out: IO[bytes]) -> None:
        out.write(text)

    written = write_scenario(
        target, lambda where: write_staged(where, tape, copy.toml, source.news)
    )
    scenario_object = copy.loaded.scenario
    if as_json:
        click.echo(
            json_text(
                {
                    "id": scenario_object.id,
                    "root": scenario_object.root,
                    "tapeRoot": scenario_object.tape.root,
                }
            )
        )
        return
    for line in wrote(written, None if source.news is None else len(source.news)):
        click.echo(line)
    click.echo(f"scenario {served_id} {scenario_object.root}")
    for line in where_to_put(written):
        click.echo(line)
