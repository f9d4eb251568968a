"""``kestrel-door``'s administration verbs: tokens, signing keys, audit, vouchers, approvals.

Each verb works on the door's records in the store the settings name (or, for a voucher,
the home's voucher key) and never on the runtime, so none of them needs ``kestrel_sdk``:
the composition root (:mod:`kestrel_door.cli`) adds them to its group. Secrets (tokens,
vouchers) are printed once, alone on the last line of stdout.
"""

from __future__ import annotations

import json

import click
from kestrel_protocol.exits import cli_error_line, exit_code_for
from kestrel_protocol.quoting import counted
from kestrel_protocol.settings import KestrelSettings
from kestrel_protocol.store import DoorRecords
from kestrel_protocol.surface import ALL_SCOPES, SURFACE

from .approval import RequireApproval
from .audit import AuditLog
from .expiry import DEFAULT_TOKEN_LIFETIME, NEVER, lifetime_seconds, time_of
from .keys import DoorKeys, KeyNotLive
from .stores import open_door_store
from .tokens import IssuedTokens
from .vouchers import VoucherSigner, load_voucher_key

__all__ = [
    "DoorProcess",
    "approval_group",
    "audit",
    "door_settings",
    "door_store",
    "keys_group",
    "token_group",
    "voucher_group",
]


def door_settings(ctx: click.Context) -> KestrelSettings:
    settings: KestrelSettings = ctx.ensure_object(DoorProcess).settings
    return settings


def door_store(ctx: click.Context) -> DoorRecords:
    """The door's records in the store the settings name (opened once per process)."""
    process = ctx.ensure_object(DoorProcess)
    if process.store is None:
        process.store = open_door_store(process.settings.store, process.settings.home)
        ctx.call_on_close(process.store.close)
    return process.store


class DoorProcess:
    """What the ``kestrel-door`` process is built from: its settings, and the door store
    opened on first use (every verb but ``serve`` needs only the store)."""

    def __init__(self, settings: KestrelSettings | None = None) -> None:
        self.settings = settings if settings is not None else KestrelSettings.resolve()
        self.store: DoorRecords | None = None


@click.group("token")
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
@click.option(
    "--expires-in",
    "expires_in",
    default=None,
    metavar="DURATION",
    help=f"Lifetime: N s|m|h|d|w (12h, 30d), or {NEVER!r}. Default {DEFAULT_TOKEN_LIFETIME}.",
)
@click.option(
    "--expires-at",
    "expires_at",
    default=None,
    metavar="TIME",
    help="Expiry as an RFC 3339 time with its offset (2027-01-31T00:00:00Z).",
)
@click.argument("more_scopes", nargs=-1)
@click.pass_context
def token_issue(  # noqa: PLR0917 - one parameter per click option
    ctx: click.Context,
    principal: str,
    scopes: tuple[str, ...],
    label: str | None,
    expires_in: str | None,
    expires_at: str | None,
    more_scopes: tuple[str, ...],
) -> None:
    """Mint a token; it is printed once, alone on the last line. It expires after
    --expires-in (default 90d) or at --expires-at; never only with --expires-in never.

    ``--scope kestrel:read kestrel:trade`` works too: the scopes after the first are
    taken as further arguments.
    """
    flat = [s for item in (*scopes, *more_scopes) for s in item.split()]
    if expires_in is not None and expires_at is not None:
        raise click.UsageError("give --expires-in or --expires-at, not both")
    try:
        lifetime = lifetime_seconds(expires_in or DEFAULT_TOKEN_LIFETIME)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires-in") from None
    try:
        until = None if expires_at is None else time_of(expires_at)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires-at") from None
    try:
        row, token = IssuedTokens(door_store(ctx)).issue(
            principal, flat, label, lifetime_s=lifetime, expires_at=until
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    expiry = f"expires {row.expires_at}" if row.expires_at else "never expires"
    click.echo(
        f"issued {row.id} for {row.principal} ({' '.join(row.scopes)}), {expiry}; shown once:"
    )
    click.echo(token)


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
@click.pass_context
def token_list(ctx: click.Context, as_json: bool) -> None:
    """The issued tokens (id, principal, scopes, created, live, expired or revoked, when it
    expires, and a trial's parent: the token that minted it); never a token."""
    tokens = IssuedTokens(door_store(ctx))
    rows = tokens.list()
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "live"
        if not r.revoked_at and tokens.expiry_unreadable(r):
            state = "refused (its expiry is not a time)"
        elif not r.revoked_at and tokens.expired(r):
            state = "expired"
        expiry = f"expires {r.expires_at}" if r.expires_at else "never expires"
        parent = f"  parent {r.parent}" if r.parent else ""
        click.echo(
            f"{r.id}  {r.principal}  {' '.join(r.scopes)}  {r.created_at}  {state}  {expiry}"
            f"{parent}"
        )


@token_group.command("revoke")
@click.argument("token_id")
@click.pass_context
def token_revoke(ctx: click.Context, token_id: str) -> None:
    """Revoke the token TOKEN_ID (tk_…, from `token list`) and every live trial it minted,
    at once: every replica refuses them from its next request."""
    trials = IssuedTokens(door_store(ctx)).revoke(token_id)
    if trials is None:
        click.echo(cli_error_line("INVALID_INPUT", f"no live token {token_id}"), err=True)
        ctx.exit(int(exit_code_for("INVALID_INPUT")))
    click.echo(f"revoked {token_id} and {counted(trials, 'trial')} it minted")


@click.group("keys")
def keys_group() -> None:
    """The Ed25519 keys the door signs grades with (published as a JWKS)."""


@keys_group.command("list")
@click.pass_context
def keys_list(ctx: click.Context) -> None:
    """Print the published JWKS (every live key, oldest first; the newest signs; revoked
    keys under "revoked")."""
    click.echo(json.dumps(DoorKeys(door_store(ctx)).jwks(), indent=2))


@keys_group.command("rotate")
@click.pass_context
def keys_rotate(ctx: click.Context) -> None:
    """Add a key that signs from now on; older keys stay published for verification."""
    keys = DoorKeys(door_store(ctx))
    keys.jwks()  # the first key exists before the new one (made on first use)
    click.echo(f"signing with {keys.rotate()}; older keys stay published")


@keys_group.command("revoke", context_settings={"ignore_unknown_options": True})
@click.argument("kid")  # a thumbprint may begin with "-": never read as an option
@click.pass_context
def keys_revoke(ctx: click.Context, kid: str) -> None:
    """Revoke the key KID (from `keys list`; one beginning with -h goes after --): it
    never signs again, and the JWKS lists it as revoked, so every proof it signed fails
    `kestrel verify --trust` naming the revocation. Revoking the signing key makes a new
    key that signs from now on."""
    keys = DoorKeys(door_store(ctx))
    try:
        replaced_by = keys.revoke(kid)
    except KeyNotLive:
        click.echo(cli_error_line("INVALID_INPUT", f"no live signing key {kid}"), err=True)
        ctx.exit(int(exit_code_for("INVALID_INPUT")))
    click.echo(f"revoked {kid}")
    if replaced_by is not None:
        click.echo(f"signing with {replaced_by} (a new key)")


@click.command("audit")
@click.option("--principal", default=None)
@click.option("--limit", default=50, show_default=True, type=int)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def audit(ctx: click.Context, principal: str | None, limit: int, as_json: bool) -> None:
    """The newest audit rows (time, principal, venue, tool, argument digest, outcome)."""
    rows = AuditLog(door_store(ctx)).rows(principal, limit)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return
    for r in rows:
        click.echo(f"{r.time}  {r.principal}  {r.venue}  {r.tool}  {r.digest[:19]}  {r.outcome}")


@click.group("voucher")
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
    voucher = VoucherSigner(load_voucher_key(door_settings(ctx).home)).issue(
        ttl_s=ttl, principal=principal
    )
    click.echo(f"voucher valid for {ttl}s{f' for {principal}' if principal else ''}; shown once:")
    click.echo(voucher)


@click.group("approval")
def approval_group() -> None:
    """Resolve APPROVAL_REQUIRED refusals."""


@approval_group.command("grant")
@click.option("--principal", required=True)
@click.option("--tool", required=True)
@click.pass_context
def approval_grant(ctx: click.Context, principal: str, tool: str) -> None:
    """Allow the principal's next call of the tool (one shot): the refusal's detail.tool."""
    found = SURFACE.find(tool)
    if found is None:
        raise click.BadParameter(f"no tool {tool!r}", param_hint="--tool")
    name = found.name
    RequireApproval(door_store(ctx), frozenset({name})).grant(principal, name)
    click.echo(f"approved the next {name} by {principal}")
