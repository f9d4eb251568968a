"""``kestrel-door``: the composition root that wires the runtime in.

This is the one module of the package allowed to import ``kestrel_sdk`` (through its
barrel only, import-linter contract 4). The verbs:
``serve``, ``token issue|list|revoke``, ``audit``, ``voucher issue``, ``approval grant``.
Secrets (tokens, vouchers) are printed once, alone on the last line of stdout, so a
script can take them with ``tail -n1``; nothing else ever prints them.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from typing import Any

import click
import kestrel_sdk
import uvicorn
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.exits import cli_error_line, exit_code_for
from kestrel_protocol.settings import KestrelSettings
from kestrel_protocol.store import DoorRecords
from kestrel_protocol.surface import ALL_SCOPES

from .app import create_door_app
from .approval import ApprovalPolicy, RequireApproval
from .attest import Attestor
from .audit import AuditLog
from .config import DEFAULT_MAX_BODY, DoorConfig
from .keys import DoorKeys
from .oauth import JwtGrantVerifier
from .stores import open_door_store
from .tokens import IssuedTokens
from .vouchers import VoucherGate, VoucherSigner, load_voucher_key

__all__ = ["door_group", "main"]

logger = logging.getLogger("kestrel_door")

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _settings(ctx: click.Context) -> KestrelSettings:
    settings: KestrelSettings = ctx.ensure_object(_Process).settings
    return settings


def _store(ctx: click.Context) -> DoorRecords:
    """The door's records in the store the settings name (opened once per process)."""
    process = ctx.ensure_object(_Process)
    if process.store is None:
        process.store = open_door_store(process.settings.store, process.settings.home)
        ctx.call_on_close(process.store.close)
    return process.store


class _Process:
    """What the ``kestrel-door`` process is built from: its settings, and the door store
    opened on first use (every verb but ``serve`` needs only the store)."""

    def __init__(self, settings: KestrelSettings | None = None) -> None:
        self.settings = settings if settings is not None else KestrelSettings.resolve()
        self.store: DoorRecords | None = None


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
    ctx.obj = _Process(settings)


@door_group.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8787, show_default=True, type=int)
@click.option(
    "--public-url", default=None, help="Canonical URL (OAuth audience); default http://HOST:PORT."
)
@click.option(
    "--allow-host", multiple=True, help="Extra allowed Host header values (host:port, host:*)."
)
@click.option("--allow-origin", multiple=True, help="Extra allowed Origin values.")
@click.option("--oauth-issuer", default=None, help="Issuer whose JWT access tokens are accepted.")
@click.option("--oauth-jwks", default=None, help="The issuer's JWKS URL.")
@click.option("--require-approval", multiple=True, help="Tools that need an operator's approval.")
@click.option(
    "--daily-quota", type=int, default=None, help="Free session opens per principal per day."
)
@click.option("--max-body", type=int, default=DEFAULT_MAX_BODY, show_default=True)
@click.option(
    "--timeout", type=float, default=60.0, show_default=True, help="Per-call timeout (s)."
)
@click.option(
    "--seal",
    "seal",
    multiple=True,
    metavar="ID",
    help="Seal a catalog scenario (repeatable): no face serves its tape or a bar after a "
    "session's clock.",
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
    daily_quota: int | None,
    max_body: int,
    timeout: float,
    seal: tuple[str, ...],
    max_live_sessions: int | None,
    max_open_orders: int | None,
) -> None:
    """Serve /v1, /mcp and the OAuth metadata with uvicorn.

    Any number of replicas may serve one PostgreSQL store (``--store postgresql://…``):
    any replica serves any session. Turn credentials stay in the process that made them.
    """

    store = _store(ctx)
    home = _settings(ctx).home
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
    )
    gate = None
    if daily_quota is not None:
        gate = VoucherGate(store, VoucherSigner(load_voucher_key(home)), daily_quota=daily_quota)
    # The gate is the runtime's: it resumes an open label before it asks the gate.
    owner = kestrel_sdk.local_transport(
        home=home,
        gate=gate,
        sealed=seal,
        store=_settings(ctx).store,
        max_live_sessions=max_live_sessions,
        max_open_orders=max_open_orders,
    )
    runtime = getattr(owner, "runtime", None)
    if seal and runtime is not None:
        unknown = sorted(set(seal) - set(runtime.index.ids()))
        if unknown:
            raise click.BadParameter(
                f"no scenario {', '.join(map(repr, unknown))} in the catalog", param_hint="--seal"
            )

    # Each principal reads only its own sessions' artifacts (a proof is how one is shared).
    def transport_for(principal: str) -> Any:
        if runtime is None:  # pragma: no cover - a transport without a shareable runtime
            return kestrel_sdk.local_transport(home=home, principal=principal, own_artifacts=True)
        return kestrel_sdk.local_transport(principal=principal, runtime=runtime, own_artifacts=True)

    verifiers: list[Any] = [IssuedTokens(store)]
    if oauth_issuer or oauth_jwks:
        if not (oauth_issuer and oauth_jwks):
            raise click.UsageError("--oauth-issuer and --oauth-jwks go together")
        verifiers.append(
            JwtGrantVerifier(issuer=oauth_issuer, jwks_url=oauth_jwks, audiences=config.audiences)
        )
    approval: ApprovalPolicy | None = None
    if require_approval:
        approval = RequireApproval(store, frozenset(require_approval))
    app = create_door_app(
        config,
        transport_for=transport_for,
        grant_verifiers=verifiers,
        audit=AuditLog(store),
        approval=approval,
        attestor=Attestor(DoorKeys(store), config.resource),
        # The shared runtime belongs to this process: closed at lifespan shutdown (uvicorn
        # re-raises SIGTERM after a graceful shutdown, so code after run() never runs).
        on_close=owner.aclose,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            timeout_keep_alive=5,
            lifespan="on",
        )
    )
    listening = _listen(host, port)  # bound before the address is printed
    click.echo(
        f"kestrel-door: serving {base_url} (/v1, /mcp); home {home}; store {store.location}",
        err=True,
    )
    server.run(sockets=[listening])


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


@door_group.group("token")
def token_group() -> None:
    """Issued API tokens (only their hash is stored)."""


@token_group.command("issue")
@click.option("--principal", required=True)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    required=True,
    help=f"Repeatable; one of {', '.join(ALL_SCOPES)} (or several, space-separated).",
)
@click.option("--label", default=None)
@click.argument("more_scopes", nargs=-1)
@click.pass_context
def token_issue(
    ctx: click.Context,
    principal: str,
    scopes: tuple[str, ...],
    label: str | None,
    more_scopes: tuple[str, ...],
) -> None:
    """Mint a token; it is printed once, alone on the last line.

    ``--scope kestrel:read kestrel:trade`` works too: the scopes after the first are
    taken as further arguments.
    """
    flat = [s for item in (*scopes, *more_scopes) for s in item.split()]
    try:
        row, token = IssuedTokens(_store(ctx)).issue(principal, flat, label)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"issued {row.id} for {row.principal} ({' '.join(row.scopes)}); shown once:")
    click.echo(token)


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
@click.pass_context
def token_list(ctx: click.Context, as_json: bool) -> None:
    """The issued tokens (id, principal, scopes, label, live or revoked); never a token."""
    rows = IssuedTokens(_store(ctx)).list()
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "live"
        click.echo(f"{r.id}  {r.principal}  {' '.join(r.scopes)}  {r.created_at}  {state}")


@token_group.command("revoke")
@click.argument("token_id")
@click.pass_context
def token_revoke(ctx: click.Context, token_id: str) -> None:
    """Revoke the token TOKEN_ID (tk_…, from `token list`): every replica refuses it from
    its next request."""
    if not IssuedTokens(_store(ctx)).revoke(token_id):
        click.echo(cli_error_line("INVALID_INPUT", f"no live token {token_id}"), err=True)
        ctx.exit(int(exit_code_for("INVALID_INPUT")))
    click.echo(f"revoked {token_id}")


@door_group.group("keys")
def keys_group() -> None:
    """The Ed25519 keys the door signs grades with (published as a JWKS)."""


@keys_group.command("list")
@click.pass_context
def keys_list(ctx: click.Context) -> None:
    """Print the published JWKS (every key, oldest first; the newest signs)."""
    click.echo(json.dumps(DoorKeys(_store(ctx)).jwks(), indent=2))


@keys_group.command("rotate")
@click.pass_context
def keys_rotate(ctx: click.Context) -> None:
    """Add a key that signs from now on; older keys stay published for verification."""
    keys = DoorKeys(_store(ctx))
    keys.jwks()  # the first key exists before the new one (made on first use)
    click.echo(f"signing with {keys.rotate()}; older keys stay published")


@door_group.command("audit")
@click.option("--principal", default=None)
@click.option("--limit", default=50, show_default=True, type=int)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def audit(ctx: click.Context, principal: str | None, limit: int, as_json: bool) -> None:
    """The newest audit rows (time, principal, venue, tool, argument digest, outcome)."""
    rows = AuditLog(_store(ctx)).rows(principal, limit)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return
    for r in rows:
        click.echo(f"{r.time}  {r.principal}  {r.venue}  {r.tool}  {r.digest[:19]}  {r.outcome}")


@door_group.group("voucher")
def voucher_group() -> None:
    """Operator-signed vouchers that pay for a gated open."""


@voucher_group.command("issue")
@click.option(
    "--ttl", default=86_400, show_default=True, type=int, help="Seconds until it expires."
)
@click.option("--principal", default=None, help="Bind the voucher to one principal.")
@click.pass_context
def voucher_issue(ctx: click.Context, ttl: int, principal: str | None) -> None:
    """Print a single-use voucher, alone on the last line."""
    voucher = VoucherSigner(load_voucher_key(_settings(ctx).home)).issue(
        ttl_s=ttl, principal=principal
    )
    click.echo(f"voucher valid for {ttl}s{f' for {principal}' if principal else ''}; shown once:")
    click.echo(voucher)


@door_group.group("approval")
def approval_group() -> None:
    """Resolve APPROVAL_REQUIRED refusals."""


@approval_group.command("grant")
@click.option("--principal", required=True)
@click.option("--tool", required=True)
@click.pass_context
def approval_grant(ctx: click.Context, principal: str, tool: str) -> None:
    """Allow the principal's next call of the tool (one shot)."""
    RequireApproval(_store(ctx), frozenset({tool})).grant(principal, tool)
    click.echo(f"approved the next {tool} by {principal}")


def main(argv: list[str] | None = None) -> None:
    """The ``kestrel-door`` console script."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    door_group.main(args=argv, prog_name="kestrel-door")
