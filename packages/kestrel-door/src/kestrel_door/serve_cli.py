"""``kestrel-door serve``: the door's HTTP face (``/v1``, ``/mcp``, the OAuth metadata,
``/board``) over the runtime, with uvicorn.

The runtime is reached through callables the composition root (:mod:`kestrel_door.cli`)
injects: its in-process transport, the reading of ``--seal``, and the board's checker.
Any number of replicas may serve one PostgreSQL store; the socket is bound before the
address is printed.
"""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import click
import uvicorn
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.store import store_location

from .admin_cli import door_settings, door_store
from .app import create_door_app
from .approval import ApprovalPolicy, RequireApproval
from .attest import Attestor
from .audit import AuditLog
from .board_page import BoardBuilderFor, BoardPage, DocumentOf
from .board_records import SqlBoardRecords
from .config import DEFAULT_MAX_BODY, DoorConfig
from .connections import ConnectionLimits, limit_connections
from .feeds import RuntimeFeeds
from .keys import DoorKeys
from .oauth import JwtGrantVerifier
from .sealing import catalog_line, keep_seals, kept_seals, seal_line
from .tokens import IssuedTokens
from .vouchers import VoucherGate, VoucherSigner, load_voucher_key

__all__ = ["LocalTransport", "SealSpecs", "make_serve_command"]

LocalTransport = Callable[..., Any]
"""The runtime in-process (``kestrel_sdk.local_transport``, called with its keywords): the
door's own, and one per principal sharing its runtime."""

SealSpecs = Callable[[Iterable[str]], list[tuple[str, str | None]]]
"""Each ``--seal`` entry as (scenario, served id or None); ``ValueError`` for a malformed one."""

_LIMITS = ConnectionLimits()  # the defaults of serve's connection options
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def make_serve_command(
    local_transport: LocalTransport,
    seal_specs: SealSpecs,
    build: BoardBuilderFor,
    document: DocumentOf,
) -> click.Command:
    """The ``serve`` command over the runtime ``local_transport`` makes, its ``/board``
    built with ``build`` (for the catalog it serves) and ``document`` (the board's own
    checker)."""

    @click.command("serve")
    @click.option("--host", default="127.0.0.1", show_default=True)
    @click.option("--port", default=8787, show_default=True, type=int)
    @click.option(
        "--public-url",
        default=None,
        help="Canonical URL (OAuth audience); default http://HOST:PORT.",
    )
    @click.option(
        "--allow-host", multiple=True, help="Extra allowed Host header values (host:port, host:*)."
    )
    @click.option("--allow-origin", multiple=True, help="Extra allowed Origin values.")
    @click.option(
        "--oauth-issuer", default=None, help="Issuer whose JWT access tokens are accepted."
    )
    @click.option("--oauth-jwks", default=None, help="The issuer's JWKS URL.")
    @click.option(
        "--require-approval",
        multiple=True,
        help="A tool that needs an operator's approval (repeatable); so does every tool with "
        "its effects (the grade tool's: the proof tool, which grades too).",
    )
    @click.option(
        "--approve-by-elicitation",
        is_flag=True,
        help="Let an MCP client that can elicit (2026-07-28) answer --require-approval itself: "
        "its host's user approves, not the operator. Off by default: an agent's own client "
        "could say yes.",
    )
    @click.option(
        "--daily-quota", type=int, default=None, help="Free session opens per principal per day."
    )
    @click.option("--max-body", type=int, default=DEFAULT_MAX_BODY, show_default=True)
    @click.option(
        "--timeout", type=float, default=60.0, show_default=True, help="Per-call timeout (s)."
    )
    @click.option(
        "--header-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=_LIMITS.header_timeout_s,
        show_default=True,
        help="Seconds a connection has to complete a request's headers, from its opening or its "
        "previous response; then it is closed (408 if part of a request came).",
    )
    @click.option(
        "--body-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=30.0,
        show_default=True,
        help="Seconds a request's body has to arrive after its headers; then 408, closed.",
    )
    @click.option(
        "--max-connections",
        type=click.IntRange(min=1),
        default=_LIMITS.max_connections,
        show_default=True,
        help="Open connections in all (keep it under the open-file limit); more are refused "
        "at once with 503.",
    )
    @click.option(
        "--max-connections-per-client",
        type=click.IntRange(min=1),
        default=_LIMITS.max_connections_per_client,
        show_default=True,
        help="Open connections one client address may hold; more are refused at once with 503.",
    )
    @click.option(
        "--seal",
        "seal",
        multiple=True,
        metavar="ID[=SERVED_ID]",
        help="Seal a catalog scenario (repeatable): no face serves its tape or a bar after a "
        "session's clock. ID=SERVED_ID serves it only as a renamed copy under SERVED_ID, "
        "titled 'Sealed scenario' (an id like acme-crash tells an agent what comes). An id "
        "not in the catalog is a usage error; the door says at start which scenarios it "
        "seals (these and any whose scenario.toml does) and its catalog.",
    )
    @click.option(
        "--max-live-sessions",
        type=click.IntRange(min=1),
        default=None,
        help="Session engines kept in memory (least recently used evicted; an evicted session "
        "replays its journal on next use). Default: 1000 per 4 GiB of RAM.",
    )
    @click.option(
        "--max-open-orders",
        type=click.IntRange(min=1),
        default=None,
        help="Open orders one session may hold (a scenario's max_open_orders lowers it); a "
        "submission that would exceed it is refused LIMIT_EXCEEDED. Default: 1000.",
    )
    @click.pass_context
    def serve(  # noqa: PLR0917 - one parameter per click option
        ctx: click.Context,
        host: str,
        port: int,
        public_url: str | None,
        allow_host: tuple[str, ...],
        allow_origin: tuple[str, ...],
        oauth_issuer: str | None,
        oauth_jwks: str | None,
        require_approval: tuple[str, ...],
        approve_by_elicitation: bool,
        daily_quota: int | None,
        max_body: int,
        timeout: float,
        header_timeout: float,
        body_timeout: float,
        max_connections: int,
        max_connections_per_client: int,
        seal: tuple[str, ...],
        max_live_sessions: int | None,
        max_open_orders: int | None,
    ) -> None:
        """Serve /v1, /mcp and the OAuth metadata with uvicorn.

        Any number of replicas may serve one PostgreSQL store (``--store postgresql://…``):
        any replica serves any session. Turn credentials stay in the process that made them.
        """

        specs = _seal_specs(seal_specs, seal)
        store = door_store(ctx)
        kept = kept_seals(store, specs)  # every door on the store seals what --seal did
        every = _seal_specs(seal_specs, (*seal, *kept))  # a served id named twice: refused
        kept_ids = [served or source for source, served in every[len(specs) :]]
        home = door_settings(ctx).home
        shown_host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        base_url = public_url or f"http://{shown_host}:{port}"
        hosts: tuple[str, ...] = ("127.0.0.1:*", "localhost:*", "[::1]:*")
        if host not in _LOOPBACK:
            hosts = (*hosts, f"{shown_host}:{port}")
        config = DoorConfig(
            base_url=base_url,
            allowed_hosts=(*hosts, *allow_host),
            allowed_origins=(*DoorConfig().allowed_origins, *allow_origin),
            authorization_servers=(oauth_issuer,) if oauth_issuer else (),
            max_body_bytes=max_body,
            request_timeout_s=timeout,
            body_timeout_s=body_timeout,
            approve_by_elicitation=approve_by_elicitation,
        )
        # The runtime knows each principal by its pseudonym only (see create_door_app).
        attestor = Attestor(DoorKeys(store), config.resource)
        gate = None
        if daily_quota is not None:
            gate = VoucherGate(
                store,
                VoucherSigner(load_voucher_key(home)),
                daily_quota=daily_quota,
                pseudonym=attestor.pseudonyms.of,
            )
        # The gate is the runtime's: it resumes an open label before it asks the gate.
        owner = local_transport(
            home=home,
            gate=gate,
            sealed=(*seal, *kept),
            store=door_settings(ctx).store,
            catalog_paths=door_settings(ctx).catalog_dirs,
            max_live_sessions=max_live_sessions,
            max_open_orders=max_open_orders,
            longest_wait_s=config.longest_wait_s,
        )
        runtime = getattr(owner, "runtime", None)
        if seal and runtime is not None:
            _check_seals(runtime, specs)
            keep_seals(store, specs)
        if runtime is not None and _serves_forward(runtime):
            attestor.feeds = RuntimeFeeds(runtime)  # a forward session's order of events

        # Each principal reads only its own sessions' artifacts (a proof is how one is shared),
        # a store that fails is "store unavailable" to it (where and why go to the log), and
        # its store writes run off the event loop every client shares (one waiting on the
        # store's write lock, held by the CLI or another replica, stalls no other client).
        remote: dict[str, Any] = {
            "own_artifacts": True,
            "store_detail": False,
            "many_clients": True,
        }

        def transport_for(principal: str) -> Any:
            if runtime is None:  # pragma: no cover - a transport without a shareable runtime
                return local_transport(home=home, principal=principal, **remote)
            return local_transport(principal=principal, runtime=runtime, **remote)

        issued = IssuedTokens(store)
        verifiers: list[Any] = [issued]
        if oauth_issuer or oauth_jwks:
            if not (oauth_issuer and oauth_jwks):
                raise click.UsageError("--oauth-issuer and --oauth-jwks go together")
            verifiers.append(
                JwtGrantVerifier(
                    issuer=oauth_issuer, jwks_url=oauth_jwks, audiences=config.audiences
                )
            )
        approval: ApprovalPolicy | None = None
        if require_approval:
            try:
                approval = RequireApproval(store, frozenset(require_approval))
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--require-approval") from None
        board = None
        if isinstance(store, SqlBoardRecords):
            builder = build(door_settings(ctx))
            board = BoardPage(
                store,
                attestor.keys,
                builder,
                document,
                partial(_sealed, runtime, specs),  # read with the roots: a feed unsealed
                count=attestor.trials_minted,  # each published trial's parent, signed
            )
        app, http = limit_connections(
            create_door_app(
                config,
                transport_for=transport_for,
                grant_verifiers=verifiers,
                audit=AuditLog(store),
                approval=approval,
                attestor=attestor,
                board=board,
                trials=issued,
                feeds=runtime,
                # The shared runtime belongs to this process: closed at lifespan shutdown (uvicorn
                # re-raises SIGTERM after a graceful shutdown, so code after run() never runs).
                on_close=owner.aclose,
            ),
            ConnectionLimits(header_timeout, max_connections, max_connections_per_client),
        )
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                http=http,
                host=host,
                port=port,
                log_level="warning",
                access_log=False,
                timeout_keep_alive=5,
                lifespan="on",
            )
        )
        listening = _listen(host, port)  # bound before the address is printed
        sessions = store_location(door_settings(ctx).store, home)
        where = f"{sessions}, door records {store.location}" if sessions.kind == "sqlite" else ""
        click.echo(
            f"kestrel-door: serving {base_url} (/v1, /mcp); home {home}; "
            f"store {where or store.location}",
            err=True,
        )
        if runtime is not None:  # the catalog it serves and what it seals, said at start
            click.echo(catalog_line(runtime), err=True)
            flagged = [served or source for source, served in specs]
            click.echo(seal_line(runtime, flagged, kept_ids), err=True)
        # What start-up built (modules, the surface, the runtime and its catalog) lives as long
        # as the process: out of the collector's sight, a full collection walks only what
        # serving made. In sight, each full collection held the event loop 35-160 ms, every
        # request in flight waiting (the door's p99 at 32 clients).
        gc.freeze()
        server.run(sockets=[listening])

    return serve


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ``BACKEND_UNAVAILABLE`` naming why not."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        listening = socket.socket(family, kind, proto)
    except OSError as exc:
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE, f"cannot listen on {host}:{port}: {exc}"
        ) from None
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(2048)
    except OSError as exc:
        listening.close()
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
        ) from None
    listening.set_inheritable(True)
    return listening


def _serves_forward(runtime: Any) -> bool:
    """Whether the runtime's catalog holds a forward scenario (the door then notes each
    submission's arrival; a door without one reads no clock for it)."""
    return any((s.model_extra or {}).get("forward") for s in runtime.catalog().scenarios)


def _sealed(runtime: Any, specs: list[tuple[str, str | None]]) -> tuple[str, ...]:
    """The ids of the scenarios the door seals (by ``--seal`` or their scenario.toml)."""
    if runtime is None:  # pragma: no cover - a transport without a shareable runtime
        return tuple(served or source for source, served in specs)
    return tuple(i for i in runtime.index.ids() if runtime.sealed(i))


def _seal_specs(parse: SealSpecs, seal: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """Each ``--seal`` as (scenario, served id or None); a malformed one is a usage error."""
    try:
        return parse(seal)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--seal") from None


def _check_seals(runtime: Any, specs: list[tuple[str, str | None]]) -> None:
    """Refuse a ``--seal`` of a scenario the catalog lacks (or a served id it has), and
    say which sealed scenarios keep their own id (it may tell what comes)."""
    try:
        ids = set(runtime.index.ids())
    except KestrelError as exc:
        raise click.BadParameter(exc.message, param_hint="--seal") from None
    unknown = sorted(source for source, served in specs if served is None and source not in ids)
    if unknown:
        raise click.BadParameter(
            f"no scenario {', '.join(map(repr, unknown))} in the catalog", param_hint="--seal"
        )
    for source, served in specs:
        if served is None:
            click.echo(
                f"note: --seal {source} serves it under its own id, which may tell an agent "
                f"what comes, and its root binds its own description, which unless no agent "
                f"can guess it lets one search out the tape's length; --seal "
                f"{source}=NEUTRAL_ID serves it under a neutral id and a salted description",
                err=True,
            )
