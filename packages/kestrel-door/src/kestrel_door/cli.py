"""``kestrel-door``: the composition root that wires the runtime in.

This is the one module of the package allowed to import ``kestrel_sdk`` (through its
barrel only, import-linter contract 4): it injects the runtime into the verbs that need
it. The verbs: from :mod:`kestrel_door.serve_cli` ``serve``, from
:mod:`kestrel_door.admin_cli` ``token issue|list|revoke``, ``keys list|rotate``,
``audit``, ``voucher issue``, ``approval grant``, from :mod:`kestrel_door.board_cli`
``board publish|unpublish|list`` (the public ``/board``), and from
:mod:`kestrel_door.feed_cli` ``feed …``. Secrets (tokens, vouchers) are printed
once, alone on the last line of stdout, so a script can take them with ``tail -n1``;
nothing else ever prints them.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import click
import kestrel_sdk
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.settings import KestrelSettings

from .admin_cli import (
    DoorProcess,
    approval_group,
    audit,
    door_settings,
    door_store,
    keys_group,
    token_group,
    voucher_group,
)
from .attest import Attestor
from .board_cli import make_board_group
from .board_page import BoardBuilder
from .feed_cli import make_feed_group
from .feeds import RuntimeFeeds
from .keys import DoorKeys
from .sealing import kept_seals, unseal
from .serve_cli import make_serve_command

__all__ = ["door_group", "main"]

logger = logging.getLogger("kestrel_door")


@click.group(
    name="door",
    cls=kestrel_sdk.KestrelCliGroup,
    help="The Kestrel door: HTTP face and remote MCP, with auth.",
)
@click.option("--home", default=None, help="Kestrel home directory (default $KESTREL_HOME).")
@click.option(
    "--store",
    default=None,
    metavar="URL",
    help="sqlite:///PATH (door.db beside it) or postgresql://… shared by every replica "
    "(default $KESTREL_STORE, else the home's kestrel.db).",
)
@click.version_option(package_name="kestrel-door", prog_name="kestrel-door")
@click.pass_context
def door_group(ctx: click.Context, home: str | None, store: str | None) -> None:
    # Under ``kestrel door …`` the ``kestrel`` group's settings apply; flags here win.
    inherited = ctx.find_object(KestrelSettings)
    if inherited is None:
        settings = KestrelSettings.resolve(home=home, store=store)
    else:
        settings = inherited.with_flags(home=home, store=store)
    ctx.obj = DoorProcess(settings)


def _session_proof(
    ctx: click.Context, session_id: str, issuer: str, sealed: tuple[str, ...]
) -> dict[str, Any]:
    """The proof of ``session_id`` (graded if need be) as the door at ``issuer``, sealing
    ``sealed`` and what its store keeps sealed, serves it: made by the runtime as the
    session's principal, signed with the door's keys."""
    settings = door_settings(ctx)
    named = kestrel_sdk.seal_specs(sealed)
    owner = kestrel_sdk.local_transport(
        home=settings.home,
        store=settings.store,
        sealed=(*sealed, *kept_seals(door_store(ctx), named)),  # and the store's, as serve
        catalog_paths=settings.catalog_dirs,
    )
    runtime: Any = getattr(owner, "runtime", None)

    async def made() -> dict[str, Any]:
        try:
            row = runtime.store.session(session_id) if runtime is not None else None
            if row is None:
                raise KestrelError(RefusalCode.UNKNOWN_SESSION, f"no session {session_id}")
            mine = kestrel_sdk.local_transport(principal=row.principal, runtime=runtime)
            async with kestrel_sdk.create_sdk(mine) as sdk:
                proof = await sdk.proof(session_id)
            attestor = Attestor(DoorKeys(door_store(ctx)), issuer, feeds=RuntimeFeeds(runtime))
            signed = attestor.attest_session(proof, row.principal)  # under its pseudonym
            data: dict[str, Any] = signed.to_json()
            return data
        finally:
            await owner.aclose()

    return anyio.run(made)


def _board_builder(settings: KestrelSettings) -> BoardBuilder:
    """The door's board checked against its catalog (``settings.catalog_dirs``; the
    tapes' shapes remembered in ``settings.home``)."""
    return functools.partial(
        kestrel_sdk.published_board, catalog_paths=settings.catalog_dirs, home=settings.home
    )


board_group = make_board_group(_board_builder, kestrel_sdk.published_document, _session_proof)


@contextmanager
def _feed_runtime(ctx: click.Context) -> Iterator[Any]:
    """The runtime on the door's store and catalog, for one ``feed`` verb."""
    settings = door_settings(ctx)
    owner = kestrel_sdk.local_transport(
        home=settings.home, store=settings.store, catalog_paths=settings.catalog_dirs
    )
    try:
        runtime: Any = getattr(owner, "runtime", None)
        yield runtime
    finally:
        anyio.run(owner.aclose)


feed_group = make_feed_group(_feed_runtime)

serve = make_serve_command(
    kestrel_sdk.local_transport,
    kestrel_sdk.seal_specs,
    _board_builder,
    kestrel_sdk.published_document,
)

for _command in (
    serve,
    token_group,
    keys_group,
    audit,
    voucher_group,
    approval_group,
    board_group,
    feed_group,
    unseal,
):
    door_group.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """The ``kestrel-door`` console script."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    door_group.main(args=argv, prog_name="kestrel-door")
