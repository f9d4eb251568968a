"""The door's settings: where it is reachable from, and its request limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kestrel_protocol.surface import Tool

__all__ = ["DEFAULT_MAX_BODY", "DoorConfig"]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DoorConfig:
    """Where the door is and what it accepts.

    ``base_url`` is this server's canonical URL: the OAuth audience (RFC 8707) and the
    ``resource`` of the RFC 9728 metadata. ``allowed_hosts``/``allowed_origins`` defend
    against DNS rebinding; entries may end in ``:*`` for any port. A request body must
    arrive within ``body_timeout_s`` of its head (else 408), ``request_timeout_s`` if None.
    """

    base_url: str = "http://127.0.0.1:8787"
    allowed_hosts: tuple[str, ...] = ("127.0.0.1:*", "localhost:*", "[::1]:*")
    allowed_origins: tuple[str, ...] = (
        "http://127.0.0.1:*",
        "http://localhost:*",
        "http://[::1]:*",
    )
    authorization_servers: tuple[str, ...] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY
    request_timeout_s: float = 60.0
    body_timeout_s: float | None = None  # None: request_timeout_s
    resource_name: str = "Kestrel door"
    extra_audiences: tuple[str, ...] = field(default_factory=tuple)
    approve_by_elicitation: bool = False
    """Let a 2026-07-28 ``/mcp`` client that can elicit answer an approval itself (its
    host's user approves, not the operator): off unless the operator trusts every
    client's user to approve, since an agent's own client could otherwise say yes."""

    @property
    def longest_wait_s(self) -> float:
        """The longest a call may wait for a forward tape's bar (``advance 1 wait 5m``):
        a second before its timeout (half the timeout, if shorter), so that the wait
        ends in a refusal, nothing applied, rather than the call timing out while the
        submission would still apply once the bar came."""
        return max(self.request_timeout_s - 1.0, self.request_timeout_s / 2)

    def call_timeout_s(self, tool: Tool | None) -> float | None:
        """How long a call of ``tool`` may take before the door answers that it timed
        out: ``request_timeout_s``, but no limit for a call that steps a session (a
        submit: ``Binding.steps``). Once the runtime has a submission it applies or is
        refused, and the door answers that when it commits (its wait for a bar ends by
        :attr:`longest_wait_s`): a timeout could only tell the client it failed while the
        journal holds it."""
        if tool is not None and tool.runs is not None and tool.runs.steps:
            return None
        return self.request_timeout_s

    @property
    def resource(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def audiences(self) -> tuple[str, ...]:
        """Audiences an access token may name: this server, its /mcp endpoint, extras."""
        base = self.resource
        return (base, base + "/", base + "/mcp", *self.extra_audiences)

    @property
    def metadata_url(self) -> str:
        return self.resource + "/.well-known/oauth-protected-resource"
