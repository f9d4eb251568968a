"""The CLI's global state (``--home``, ``--remote``) and the SDK it builds from it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import click
from kestrel_protocol import KestrelError, RefusalCode

from ..client import KestrelSdk, create_sdk
from ..transports import local_transport

__all__ = ["CliState", "state_of"]


@dataclass(frozen=True, slots=True)
class CliState:
    """Where the CLI's commands run: the local runtime in ``home``, or a remote door."""

    home: Path | None
    remote: str | None

    def sdk(self) -> KestrelSdk:
        """The SDK over the chosen transport (the caller closes it)."""
        if self.remote:
            transports = importlib.import_module("kestrel_sdk.transports")
            remote_transport = getattr(transports, "remote_transport", None)
            if remote_transport is None:
                raise KestrelError(
                    RefusalCode.BACKEND_UNAVAILABLE,
                    f"--remote {self.remote}: this build has no remote transport yet; "
                    "run without --remote to use the local runtime",
                    {"remote": self.remote},
                )
            return create_sdk(remote_transport(base_url=self.remote))
        return create_sdk(local_transport(home=self.home))


def state_of(ctx: click.Context) -> CliState:
    """The state the root group stored."""
    state = ctx.find_object(CliState)
    if state is None:  # a command invoked without the root group (tests)
        state = CliState(home=None, remote=None)
    return state
