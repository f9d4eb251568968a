"""``kestrel secrets …`` (a ``kestrel.cli`` plugin) and the ``kestrel-secrets`` script.

A value is taken only from a hidden prompt or from stdin, never from argv, where it
would land in shell history and in every process listing. Failures follow the one CLI
convention (``kestrel_protocol.exits``): ``kestrel: CODE: message`` on stderr, exit 1 for
``SECRET_KEY_INVALID``, 2 for usage, 3 for other refusals, and nothing is written.
Under ``kestrel`` the group takes its home from the ``KestrelSettings`` the root
resolved (its own ``--home`` wins).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import click
from kestrel_protocol.exits import cli_error_line, exit_code_for
from kestrel_protocol.settings import KestrelSettings

from .errors import SecretStoreError
from .keys import check_operator_secret_key, check_secret_key_name
from .selection import select_secret_store
from .tools import secret_tool_list, secret_tool_set, secret_tool_unset

__all__ = ["main", "secrets_group"]

log = logging.getLogger("kestrel_secrets")

_HOME_META = "kestrel_secrets.home"
_ARGV_VALUE_ERROR = (
    "refusing to take a secret value from the command line: it would be kept in shell "
    "history and shown in process listings. Run `set KEY` and type it at the hidden "
    "prompt, or pipe it in with `set KEY --stdin`."
)


def _refuse(exc: SecretStoreError) -> NoReturn:
    click.echo(cli_error_line(exc.code, exc.message), err=True)
    raise SystemExit(int(exit_code_for(exc.code)))


class _SecretsGroup(click.Group):
    """Turns a store refusal raised by any verb into the one ``CODE: message`` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SecretStoreError as exc:
            _refuse(exc)


def _usage(message: str) -> NoReturn:
    click.echo(cli_error_line("USAGE", message), err=True)
    raise SystemExit(int(exit_code_for("USAGE")))


def _inherited_home(ctx: click.Context) -> Path | None:
    """The home of the ``kestrel`` CLI this group is mounted under (its settings), if any."""
    settings = ctx.find_object(KestrelSettings)
    return settings.home if settings is not None else None


def _home(ctx: click.Context) -> Path | None:
    value = ctx.find_root().meta.get(_HOME_META)
    return value if isinstance(value, Path) else None


def _emit(as_json: bool, data: Mapping[str, Any], text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True))
    elif text:
        click.echo(text)


def _stdin_is_tty() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _read_value(key: str, from_stdin: bool) -> str:
    if from_stdin:
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            _usage("the value on stdin is not UTF-8 text")
        # One trailing newline is what `echo` and a here-string add; it is not the secret's.
        value = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
        if not value:
            # Usually a failed command upstream of the pipe; storing "" would silently
            # replace a good value.
            _usage("the value on stdin is empty; nothing was stored (use `unset KEY` to remove)")
        return value
    if not _stdin_is_tty():
        _usage("no terminal for the hidden prompt; pipe the value in and pass --stdin")
    value = click.prompt(
        f"Value for {key}", hide_input=True, confirmation_prompt=True, show_default=False
    )
    return str(value)


@click.group(
    name="secrets", cls=_SecretsGroup, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Kestrel home directory (default: $KESTREL_HOME, else ~/.kestrel).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log what the store does (never values).")
@click.version_option(package_name="kestrel-secrets", prog_name="kestrel-secrets")
@click.pass_context
def secrets_group(ctx: click.Context, home: Path | None, verbose: bool) -> None:
    """Manage the operator's paper-only secrets (names only; values are never shown)."""
    ctx.find_root().meta[_HOME_META] = home if home is not None else _inherited_home(ctx)
    if verbose:
        log.setLevel(logging.DEBUG)
        if not logging.getLogger().handlers and not log.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            log.addHandler(handler)


@secrets_group.command("set")
@click.argument("key")
@click.argument("extra", nargs=-1, metavar="")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the value from stdin.")
@click.option("--json", "as_json", is_flag=True, help="Print {key, path} as JSON.")
@click.pass_context
def set_command(
    ctx: click.Context, key: str, extra: tuple[str, ...], from_stdin: bool, as_json: bool
) -> None:
    """Store KEY; the value comes from a hidden prompt or, with --stdin, from stdin."""
    if extra or "=" in key:
        _usage(_ARGV_VALUE_ERROR)
    check_operator_secret_key(key)
    store = select_secret_store(_home(ctx)).store
    value = _read_value(key, from_stdin)
    result = secret_tool_set(store, key, value)
    _emit(as_json, result, f"set {result['key']} in {result['path']}")


@secrets_group.command("unset")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print {key, path, removed} as JSON.")
@click.pass_context
def unset_command(ctx: click.Context, key: str, as_json: bool) -> None:
    """Remove KEY from the store (no error when it was not there)."""
    check_secret_key_name(key)
    result = secret_tool_unset(select_secret_store(_home(ctx)).store, key)
    if result["removed"]:
        text = f"removed {result['key']} from {result['path']}"
    else:
        text = f"{result['key']} was not set in {result['path']}"
    _emit(as_json, result, text)


@secrets_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print {keys, path} as JSON.")
@click.pass_context
def list_command(ctx: click.Context, as_json: bool) -> None:
    """Print the stored key names, one per line (never a value)."""
    result = secret_tool_list(select_secret_store(_home(ctx)).store)
    _emit(as_json, result, "\n".join(result["keys"]))


@secrets_group.command("path")
@click.option("--json", "as_json", is_flag=True, help="Print {store, path, mode, reason}.")
@click.pass_context
def path_command(ctx: click.Context, as_json: bool) -> None:
    """Print where secrets are kept; stderr says which store and why."""
    choice = select_secret_store(_home(ctx))
    if as_json:
        _emit(True, choice.to_json(), "")
        return
    click.echo(choice.store.location)
    click.echo(f"store: {choice.kind} ({choice.reason})", err=True)


def main(argv: list[str] | None = None) -> None:
    """The ``kestrel-secrets`` console script."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        done = secrets_group.main(args=argv, prog_name="kestrel-secrets", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # no command: name them, not the help
        names = ", ".join(secrets_group.list_commands(exc.ctx or click.Context(secrets_group)))
        _usage(
            f"missing command: kestrel-secrets takes one of {names} (see 'kestrel-secrets --help')"
        )
    except click.UsageError as exc:  # the one line every Kestrel command line fails with
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        _usage(exc.format_message() + hint)
    except click.exceptions.Abort:
        click.echo(cli_error_line("INTERRUPTED", "interrupted"), err=True)
        raise SystemExit(int(exit_code_for("INTERRUPTED"))) from None
    raise SystemExit(done if isinstance(done, int) else 0)


if __name__ == "__main__":
    main()
