"""Approvals asked through MCP elicitation, where the client says it can answer one.

A call that needs approval is refused ``APPROVAL_REQUIRED`` in-band (see
:mod:`.approval`). On ``/mcp`` in the 2026-07-28 era a request carries its client's
capabilities; when they include ``elicitation``, the door answers such a call instead
with an ``input_required`` result asking the client (``elicitation/create``) whether
to let it run. The client retries the call with the answer and the ``requestState``
the door gave: ``accept`` lets that one call through (a one-shot grant, as an
operator's ``approval grant`` is), ``decline`` or ``cancel`` gets the in-band refusal.
The state is an HMAC of the principal, the tool and its arguments under a key of this
process, so an answer is only taken for the call it was asked about, by the process
that asked (another replica, or after a restart, the retry is refused in-band). A
handshake-era client declares its capabilities once, in a handshake the stateless door
does not keep: it always gets the in-band refusal.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any, Final, Protocol

from kestrel_protocol import canonical_json
from kestrel_protocol.mcp import CLIENT_CAPABILITIES_KEY, declares_modern, meta_of

__all__ = ["ApprovalElicitation", "Grants"]

_KEY: Final = "approval"
"""The key of the one input request the door sends."""


class Grants(Protocol):
    """What the elicitation needs of the approval policy: a one-shot grant."""

    def grant(self, principal: str, tool: str) -> None: ...


class ApprovalElicitation:
    """Asks an elicitation-capable client for approval instead of refusing in-band."""

    def __init__(self, grants: Grants, key: bytes | None = None) -> None:
        self._grants = grants
        self._key = key if key is not None else secrets.token_bytes(32)

    def _state(self, principal: str, tool: str, arguments: Any) -> str:
        body = canonical_json({"principal": principal, "tool": tool, "arguments": arguments})
        return hmac.new(self._key, body, hashlib.sha256).hexdigest()

    def accept(self, principal: str, params: Any) -> None:
        """Before a retried ``tools/call``: grant it once when it carries an ``accept``
        of the approval this process asked for about this very call."""
        answer = _answer(params)
        if answer is None or answer.get("action") != "accept":
            return
        name, arguments = params.get("name"), params.get("arguments") or {}
        state = params.get("requestState")
        if not isinstance(name, str) or not isinstance(state, str):
            return
        if hmac.compare_digest(state, self._state(principal, name, arguments)):
            self._grants.grant(principal, name)

    def ask(self, principal: str, params: Any, result: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``input_required`` result to send instead of ``result`` (an approval
        refusal of a modern request whose client can elicit, not already answered)."""
        if not _can_elicit(params) or _answer(params) is not None:
            return None
        structured = result.get("structuredContent") if result.get("isError") else None
        refusal = structured.get("refusal") if isinstance(structured, Mapping) else None
        if not isinstance(refusal, Mapping) or refusal.get("code") != "APPROVAL_REQUIRED":
            return None
        name = str(params.get("name"))
        detail = refusal.get("detail")
        tool = detail.get("tool", name) if isinstance(detail, Mapping) else name
        message = f"Kestrel: let {tool} run once? It needs an approval before it runs."
        request = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": message,
                "requestedSchema": {"type": "object", "properties": {}},
            },
        }
        state = self._state(principal, name, params.get("arguments") or {})
        return {
            "resultType": "input_required",
            "inputRequests": {_KEY: request},
            "requestState": state,
        }


def _can_elicit(params: Any) -> bool:
    meta = meta_of(params)
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if meta is not None else None
    return (
        declares_modern(params)
        and isinstance(capabilities, Mapping)
        and ("elicitation" in capabilities)
    )


def _answer(params: Any) -> Mapping[str, Any] | None:
    responses = params.get("inputResponses") if isinstance(params, Mapping) else None
    found = responses.get(_KEY) if isinstance(responses, Mapping) else None
    return found if isinstance(found, Mapping) else None
