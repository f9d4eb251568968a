"""``create_door_app``: the ASGI app of the door, built from injected ports."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from kestrel_protocol.ports import GrantVerifier, TurnCredentialPort
from kestrel_protocol.surface import ALL_SCOPES, SURFACE, Surface
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from .approval import ApprovalPolicy
from .arrivals import door_time
from .attest import JWKS_PATH, Attestor, attesting
from .audit import AuditLog
from .board_page import BoardPage
from .config import DoorConfig
from .door import Door, TransportFactory, json_response
from .feed_routes import feed_routes
from .feeds import FeedRuntime
from .guard import GuardMiddleware
from .mcp_http import mcp_routes
from .tokens import IssuedTokens
from .trials import trial_routes
from .unrouted import unrouted_handlers
from .v1 import v1_routes

__all__ = ["create_door_app", "protected_resource_metadata"]


def protected_resource_metadata(
    config: DoorConfig, suffix: str = "", *, attested: bool = False
) -> dict[str, Any]:
    """The RFC 9728 document: the one thing the door serves without a credential.

    Fetched at the path-suffixed well-known URI (``…/oauth-protected-resource/mcp``),
    ``resource`` names that path (RFC 9728 §3.3: identical to the identifier the suffix
    came from); both are audiences the door accepts (a suffix naming no audience,
    ``…/oauth-protected-resource/v1``, is 404: a client would otherwise ask its
    authorization server for tokens the door refuses). ``kestrel_grade_keys_uri``, when the
    door signs grades (``attested``), is the JWKS of its signing keys.
    """
    resource = config.resource + (f"/{suffix}" if suffix else "")
    metadata: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(config.authorization_servers),
        "scopes_supported": list(ALL_SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": config.resource_name,
    }
    if attested:
        metadata["kestrel_grade_keys_uri"] = config.resource + JWKS_PATH
    return metadata


def create_door_app(
    config: DoorConfig,
    *,
    transport_for: TransportFactory,
    turn_credentials: TurnCredentialPort | None = None,
    grant_verifiers: Sequence[GrantVerifier] = (),
    audit: AuditLog | None = None,
    approval: ApprovalPolicy | None = None,
    on_close: Callable[[], Awaitable[None]] | None = None,
    surface: Surface = SURFACE,
    attestor: Attestor | None = None,
    board: BoardPage | None = None,
    trials: IssuedTokens | None = None,
    feeds: FeedRuntime | None = None,
) -> ASGIApp:
    """The door: ``/v1``, ``/mcp`` and the protected-resource metadata, behind the guard.

    ``transport_for(principal)`` must return a transport bound to that principal (its
    sessions are invisible to every other principal; a session gate, if any, is the
    runtime's); it never sees a bearer token. Both faces are generated from ``surface``.
    ``on_close`` runs at lifespan shutdown, after the per-principal transports are
    closed (e.g. the shared runtime). With ``attestor`` every proof the door serves
    carries its signed statement about the grade, its keys are published, and
    ``transport_for`` is given each principal's pseudonym (:mod:`.pseudonyms`), never
    its name. With ``board``, the proofs the operator published are served at
    ``/board``. With ``trials`` (the door's issued tokens) a token holding
    ``kestrel:trials`` mints trial principals at ``/v1/trials`` (:mod:`.trials`).
    With ``feeds`` (the runtime's forward tapes), a token holding ``kestrel:feed``
    appends bars and freezes them, and an unsealed tape is served to anyone
    (:mod:`.feed_routes`).
    """
    door = Door(
        config,
        transport_for=transport_for if attestor is None else attesting(transport_for, attestor),
        turn_credentials=turn_credentials,
        grant_verifiers=grant_verifiers,
        audit=audit,
        approval=approval,
        surface=surface,
    )

    async def metadata(request: Request) -> Response:
        suffix = str(request.path_params.get("rest", "")).strip("/")
        if suffix and f"{config.resource}/{suffix}" not in config.audiences:
            raise HTTPException(404)  # no resource the door accepts a token for is there
        return json_response(
            protected_resource_metadata(config, suffix, attested=attestor is not None)
        )

    async def grade_keys(request: Request) -> Response:
        assert attestor is not None
        keys = await anyio.to_thread.run_sync(attestor.keys.jwks)
        return json_response(keys, headers={"Cache-Control": "max-age=300"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if attestor is not None:  # the pseudonym secret, read before the first request
            await anyio.to_thread.run_sync(attestor.pseudonyms.load)
        try:
            yield
        finally:
            await door.aclose()
            if on_close is not None:
                await on_close()

    # the door's clock: its store's, which every replica reads (one host's without one)
    clock = door_time if attestor is None else attestor.keys.records.now
    routes = [
        *mcp_routes(door),  # first: every request of an agent's loop is matched against it
        Route("/.well-known/oauth-protected-resource", metadata, methods=["GET"]),
        Route("/.well-known/oauth-protected-resource/{rest:path}", metadata, methods=["GET"]),
        *([Route(JWKS_PATH, grade_keys, methods=["GET"])] if attestor is not None else []),
        *v1_routes(door),
        *(trial_routes(door, trials, attestor) if trials is not None else []),
        *(feed_routes(door, feeds, clock) if feeds is not None else []),
        *(board.routes() if board is not None else []),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=unrouted_handlers(routes))
    app.router.redirect_slashes = False  # a trailing '/' is refused saying so (.unrouted)
    app.state.door = door
    return GuardMiddleware(
        app,
        allowed_hosts=config.allowed_hosts,
        allowed_origins=config.allowed_origins,
        max_body_bytes=config.max_body_bytes,
        body_timeout_s=config.request_timeout_s
        if config.body_timeout_s is None
        else config.body_timeout_s,
    )
