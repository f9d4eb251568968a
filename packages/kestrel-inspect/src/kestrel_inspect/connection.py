"""Where an evaluation's agent trades: ``kestrel-mcp`` over stdio on this machine, or a
Kestrel door's remote MCP (``/mcp``) with a bearer token.

One :class:`KestrelConnection` gives both clients an evaluation needs over the same face:
the Inspect ``MCPServer`` whose tools the model calls, and a plain MCP client for what the
harness itself asks (the scenario brief, the session's proof), so the harness sees
exactly what the agent's credentials can see, and nothing more. Given a sample's
:class:`~.trials.Trial`, both act as that trial's principal (:mod:`.trials`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from inspect_ai.solver import TaskState
from inspect_ai.tool import MCPServer, mcp_server_http, mcp_server_stdio
from kestrel_protocol.surface import trial_principal
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .trials import (
    LOCAL_PARENT,
    Trial,
    TrialUnavailable,
    mint_trial,
    revoke_trial,
    trial_name,
)

__all__ = ["TOKEN_ENV", "KestrelConnection"]

logger = logging.getLogger(__name__)

TOKEN_ENV = "KESTREL_API_TOKEN"
"""The environment variable a door's bearer token is read from when none is given."""


@dataclass(frozen=True, slots=True)
class KestrelConnection:
    """The Kestrel an evaluation trades on.

    ``door`` is a door's base URL (its MCP endpoint is ``door + "/mcp"``); its bearer
    token is read when a request is made, from the file ``token_file`` or else from
    ``$KESTREL_API_TOKEN``, and is never held here, so nothing Inspect logs of a task,
    solver or scorer (their arguments) carries it. Without ``door``, ``kestrel-mcp``
    runs over stdio in this Python environment on ``home`` (default ``$KESTREL_HOME``
    or ``~/.kestrel``) with ``catalog_paths`` added to its catalog.
    """

    door: str | None = None
    token_file: str | None = None
    home: str | None = None
    catalog_paths: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    _trials: dict[str, Trial] = field(default_factory=dict, init=False, repr=False, compare=False)
    _attempts: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.door is not None:
            if not self.door.startswith(("http://", "https://")):
                raise ValueError(f"door must be an http(s) URL, got {self.door!r}")
            if self.home is not None or self.catalog_paths:
                raise ValueError("home and catalog_paths are for kestrel-mcp, not a door")
        elif self.token_file is not None:
            raise ValueError("token_file is for a door: name its URL with door=…")

    @property
    def where(self) -> str:
        """What the connection names in logs and scores: the door's URL or ``kestrel-mcp``."""
        return self.door if self.door is not None else "kestrel-mcp"

    def _bearer(self) -> str:
        if self.token_file is not None:
            path = Path(self.token_file).expanduser()
            try:
                token = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"token_file {str(path)!r} cannot be read: {exc}") from None
            if not token:
                raise ValueError(f"token_file {str(path)!r} is empty")
            return token
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            raise ValueError(
                f"a door needs a bearer token: set {TOKEN_ENV} or pass token_file=PATH "
                "(`kestrel-door token issue` makes one)"
            )
        return token

    def _mcp_url(self) -> str:
        assert self.door is not None
        return self.door.rstrip("/") + "/mcp"

    async def trial(self, state: TaskState, *, fresh: bool = False) -> Trial:
        """The trial the sample ``state`` trades as, the same for its agent and its scorer.

        ``fresh`` (the agent, as it starts) makes a new one, so that a retried sample
        trades as a principal its failed attempt never was; otherwise the one made last
        (or a new one when none was). Through a door the trial is minted with the
        evaluator's token: raises :class:`~.trials.TrialUnavailable` on an outage. It sees
        and trades only the sample's scenario (``metadata["scenario"]``).
        """
        key = state.uuid
        found = self._trials.get(key)
        if found is not None and not fresh:
            return found
        if found is not None:  # a retry: the failed attempt's trial ends (best effort)
            try:
                await self.end_trial(state)
            except TrialUnavailable as exc:
                logger.warning("the trial %s of a retried sample stays live: %s", found.name, exc)
        attempt = self._attempts[key] = self._attempts.get(key, 0) + 1
        name = trial_name(state, attempt)
        scenario = state.metadata.get("scenario")
        only = (str(scenario),) if scenario is not None else ()
        if self.door is None:
            made = Trial(name, trial_principal(LOCAL_PARENT, name), scenarios=only)
        else:
            made = await mint_trial(self.door, self._bearer(), name, only)
        self._trials[key] = made
        return made

    async def end_trial(self, state: TaskState) -> None:
        """The sample is scored: forget its trial and, through a door, revoke its token
        (Inspect's task ``cleanup``)."""
        found = self._trials.pop(state.uuid, None)
        if found is not None and self.door is not None and found.token_id is not None:
            await revoke_trial(self.door, self._bearer(), found)

    def stdio_parameters(self, trial: Trial | None = None) -> StdioServerParameters:
        """``kestrel-mcp`` in this interpreter's environment, the caller's variables kept
        (``KESTREL_*`` included), answering without a spin between requests (a model
        thinks between its tool calls), acting as ``trial``'s principal when given, on
        its scenarios only."""
        args = ["-m", "kestrel_mcp", "--spin-us", "0"]
        if trial is not None:
            args += ["--principal", trial.principal]
            for scenario in trial.scenarios:
                args += ["--scenario", scenario]
        if self.home is not None:
            args += ["--home", str(Path(self.home))]
        for path in self.catalog_paths:
            args += ["--catalog-path", str(path)]
        return StdioServerParameters(
            command=sys.executable, args=args, env={**os.environ, **self.env}
        )

    def _bearer_of(self, trial: Trial | None) -> str:
        return trial.bearer if trial is not None and trial.bearer else self._bearer()

    def inspect_server(self, trial: Trial | None = None) -> MCPServer:
        """The Inspect MCP server whose tools the model calls (as ``trial``, when given)."""
        if self.door is None:
            params = self.stdio_parameters(trial)
            return mcp_server_stdio(
                name="kestrel", command=params.command, args=params.args, env=params.env
            )
        return mcp_server_http(
            name="kestrel", url=self._mcp_url(), authorization=self._bearer_of(trial)
        )

    @asynccontextmanager
    async def client(self, trial: Trial | None = None) -> AsyncIterator[Client]:
        """A plain MCP client of the same face, for the harness's own requests (as
        ``trial``, when given)."""
        if self.door is None:
            async with Client(self.stdio_parameters(trial), mode="legacy") as client:
                yield client
            return
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self._bearer_of(trial)}"},
            timeout=httpx2.Timeout(30.0, read=300.0),
        )
        async with http, Client(streamable_http_client(self._mcp_url(), http_client=http)) as c:
            yield c
