"""The CLI's global state (``--home``, ``--remote``) and the SDK it builds from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from ..client import KestrelSdk, create_sdk
from ..transports import local_transport, remote_transport

__all__ = ["CliState", "state_of"]


@dataclass(frozen=True, slots=True)
class CliState:
    """Where the CLI's commands run: the local runtime in ``home``, or a remote door."""

    home: Path | None
    remote: str | None

    def sdk(self) -> KestrelSdk:
        """The SDK over the chosen transport (the caller closes it)."""
        if self.remote:
            # the token comes from $KESTREL_API_TOKEN (remote_transport's default)
            return create_sdk(remote_transport(base_url=self.remote))
        return create_sdk(local_transport(home=self.home))


def state_of(ctx: click.Context) -> CliState:
    """The state the root group stored."""
    state = ctx.find_object(CliState)
    if state is None:  # a command invoked without the root group (tests)
        state = CliState(home=None, remote=None)
    return state
