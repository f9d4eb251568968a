"""``kestrel-door board publish|unpublish|list``: the proofs the door's ``/board`` shows.

``publish`` takes proof files (a proof this door served, its signed statement in it) or
session ids (the door makes the session's proof and signs it, as ``/v1`` would, given
the door's ``--public-url`` and ``--seal`` as it serves: a session still open is
graded, which closes it); each proof is checked as the board
checks it, under the door's own keys (replayed, its statement holding, its grade passed
and its window traded whole) and refused, naming why, otherwise. ``--agent NAME`` names
the agent the row is credited to (else the principal the statement names). The door
serving the store rebuilds its page on its next request. The runtime is reached through
callables the composition root (:mod:`kestrel_door.cli`) injects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from kestrel_protocol import canonical_json
from kestrel_protocol.documents import Unreadable, read_json
from kestrel_protocol.exits import cli_error_line, exit_code_for

from .admin_cli import door_settings, door_store
from .board_page import BoardBuilderFor, DocumentOf
from .board_records import SqlBoardRecords
from .keys import DoorKeys

__all__ = ["SessionProof", "make_board_group"]

SessionProof = Callable[[click.Context, str, str, tuple[str, ...]], dict[str, Any]]
"""``(ctx, session id, the door's public URL, the scenarios it seals) → the session's
signed proof``."""


def _fail(message: str, code: str = "CHECK_FAILED") -> click.exceptions.Exit:
    click.echo(cli_error_line(code, message), err=True)
    return click.exceptions.Exit(int(exit_code_for(code)))


def _records(ctx: click.Context) -> SqlBoardRecords:
    store = door_store(ctx)
    if not isinstance(store, SqlBoardRecords):  # pragma: no cover - every adapter is one
        raise _fail(f"the store {store.location} keeps no board", "BACKEND_UNAVAILABLE")
    return store


def _read_proof(item: str) -> dict[str, Any]:
    try:
        data = read_json(Path(item))
    except Unreadable as exc:
        raise _fail(f"{item}: not a readable proof file: {exc}", "INVALID_INPUT") from None
    if not isinstance(data, dict) or data.get("kind") != "kestrel.proof":
        raise _fail(f"{item}: not a Kestrel proof", "INVALID_INPUT")
    return data


def make_board_group(
    build: BoardBuilderFor, document: DocumentOf, session_proof: SessionProof
) -> click.Group:
    """The ``board`` verbs, checking proofs with ``build`` (the board's own checker, for
    the door's catalog)."""

    @click.group("board")
    def board_group() -> None:
        """The public board (/board): the attested proofs the operator publishes."""

    @board_group.command("publish")
    @click.argument("items", nargs=-1, required=True, metavar="PROOF_OR_SESSION...")
    @click.option("--agent", default=None, help="The agent the rows are credited to.")
    @click.option(
        "--public-url",
        default="http://127.0.0.1:8787",
        show_default=True,
        help="The door's URL as it serves (its statements' issuer), for session ids.",
    )
    @click.option(
        "--seal",
        multiple=True,
        metavar="ID[=SERVED_ID]",
        help="For session ids: a scenario the door seals (as serve's --seal; repeatable).",
    )
    @click.pass_context
    def publish(
        ctx: click.Context,
        items: tuple[str, ...],
        agent: str | None,
        public_url: str,
        seal: tuple[str, ...],
    ) -> None:
        """Publish proofs (files) or sessions (ks_… ids) on the door's board."""
        records = _records(ctx)
        jwks = DoorKeys(door_store(ctx)).jwks()
        builder = build(door_settings(ctx))
        for item in items:
            is_file = Path(item).exists() or not item.startswith("ks_")
            proof = _read_proof(item) if is_file else session_proof(ctx, item, public_url, seal)
            [row] = json.loads(builder(document([(agent, proof)], ()), jwks).json)["rows"]
            if row["badge"] == "failed":
                raise _fail(f"{item}: not published: {row['reason']}")
            if not str(row.get("attestation") or "").startswith("attested by"):
                raise _fail(f"{item}: not published: its grade is not signed by this door")
            records.publish(proof["root"], agent, canonical_json(proof).decode("utf-8"))
            click.echo(f"published {proof['root']} ({row['scenario']}, agent {row['agent']})")

    @board_group.command("unpublish")
    @click.argument("items", nargs=-1, required=True, metavar="ROOT_OR_PROOF...")
    @click.pass_context
    def unpublish(ctx: click.Context, items: tuple[str, ...]) -> None:
        """Take proofs off the board (by proof root, or the proof file)."""
        records = _records(ctx)
        for item in items:
            root = item if item.startswith("sha256:") else str(_read_proof(item)["root"])
            if not records.unpublish(root):
                raise _fail(f"{root} is not on the board", "INVALID_INPUT")
            click.echo(f"unpublished {root}")

    @board_group.command("list")
    @click.pass_context
    def listed(ctx: click.Context) -> None:
        """The published proofs: root, agent, scenario."""
        for found in _records(ctx).published():
            scenario = json.loads(found.proof).get("scenario", {}).get("id")
            click.echo(f"{found.root}  {found.agent or '-'}  {scenario}")

    return board_group
