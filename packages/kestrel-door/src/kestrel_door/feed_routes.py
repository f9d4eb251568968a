"""The operator's feed on ``/v1``: append bars to a forward tape, freeze it, see it; and
the tape, once published, for anyone.

``POST`` at :data:`~kestrel_protocol.surface.FEED_BARS_PATH` (a ``text/csv`` body: the
tape's header and the new bars' rows) appends; ``POST`` at ``FEED_FREEZE_PATH`` ends the
window; ``GET`` at ``FEED_PATH`` says how far the tape has grown. Each needs
:data:`~kestrel_protocol.surface.SCOPE_FEED` (an operator's issued token:
``kestrel-door token issue --scope kestrel:feed``), which no agent's token carries;
without it the answer is 403 ``FORBIDDEN`` naming the scope, and nothing about the
feed. The runtime validates an append (a malformed line, a conflicting bar: refused
naming it, nothing written), writes it in one transaction and only then is it
acknowledged (200). The door lends it its own clock, which the store reads as the last
thing before that commit and as the first after it (``published_at``, ``visible_by``:
so a submission that arrived while the append was checked and written is on time, one
made once the bar could be seen late, and one arriving in between, during the commit,
unconfirmed; docs/runtime.md). Every call leaves an audit row (the body's digest, not
the body).

Once the operator has unsealed a feed, ``GET`` at ``FEED_TAPE_PATH`` answers its tape
(canonical ``text/csv``) to anyone, with no credential and no audit row, as the door's
signing keys are served: ``kestrel verify --trust`` fetches it to check a proof that
does not embed its tape against the tape root the door signed. Before, it is refused
``SCENARIO_SEALED``, saying nothing of the bars.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import (
    FEED_BARS_PATH,
    FEED_FREEZE_PATH,
    FEED_PATH,
    FEED_TAPE_PATH,
    SCOPE_FEED,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .arrivals import door_time
from .door import Caller, Door, json_response, outage_response
from .feeds import FeedRuntime, feed_json
from .http_status import status_for

__all__ = ["feed_routes"]


def _refusal(code: str, message: str, status: int, **detail: Any) -> Response:
    return json_response({"refusal": {"code": code, "message": message, "detail": detail}}, status)


async def _operator(door: Door, request: Request) -> Caller | Response:
    """The caller, when its grant carries ``kestrel:feed``."""
    caller = await door.authenticate(request, "http")
    if isinstance(caller, Response):
        return caller
    if not caller.guarded or SCOPE_FEED not in caller.turn.ctx.scopes:
        body = {
            "refusal": {
                "code": RefusalCode.FORBIDDEN,
                "message": f"this credential lacks the scope {SCOPE_FEED}",
                "detail": {"requiredScope": SCOPE_FEED, "error": "insufficient_scope"},
            }
        }
        headers = {"WWW-Authenticate": door.insufficient_scope_header(SCOPE_FEED)}
        return json_response(body, 403, headers)
    return caller


def feed_routes(
    door: Door, feeds: FeedRuntime, clock: Callable[[], str] = door_time
) -> list[Route]:
    """The feed routes over the runtime's ``feeds``; ``clock`` stamps each append (the
    door store's, which every replica reads: ``DoorRecords.now``)."""

    async def run(
        request: Request, tool: str, call: Callable[[str], Any], arguments: dict[str, Any]
    ) -> Response:
        caller = await _operator(door, request)
        if isinstance(caller, Response):
            return caller
        scenario = str(request.path_params["id"])

        def audited() -> Any:
            outcome = "ok"
            try:
                return call(scenario)
            except KestrelError as exc:
                outcome = str(exc.code)
                raise
            finally:
                if door.audit is not None:
                    door.audit.append(
                        principal=caller.turn.ctx.principal,
                        venue="http",
                        tool=tool,
                        arguments={"scenario": scenario, **arguments},
                        outcome=outcome,
                    )

        try:
            made = await anyio.to_thread.run_sync(audited)
        except KestrelError as exc:
            if exc.code == RefusalCode.BACKEND_UNAVAILABLE:
                return outage_response(exc)
            return json_response({"refusal": exc.refusal.to_json()}, status_for(str(exc.code)))
        return json_response(feed_json(made))

    async def append(request: Request) -> Response:
        if not request.headers.get("content-type", "").startswith("text/csv"):
            return _refusal(
                RefusalCode.INVALID_ARGUMENT,
                "the body must be text/csv: the tape's header line, then the new bars' rows",
                400,
                where="request",
            )
        data = await request.body()

        def append_bars(scenario: str) -> Any:
            return feeds.append_bars(scenario, data, clock=clock)

        return await run(request, "feed.append", append_bars, {"bars": data.decode("latin-1")})

    async def freeze(request: Request) -> Response:
        def freeze_feed(scenario: str) -> Any:
            return feeds.freeze_feed(scenario)

        return await run(request, "feed.freeze", freeze_feed, {})

    async def status(request: Request) -> Response:
        return await run(request, "feed.status", feeds.feed_status, {})

    async def tape(request: Request) -> Response:  # no credential: the published tape
        scenario = str(request.path_params["id"])
        try:
            text = await anyio.to_thread.run_sync(feeds.published_tape, scenario)
        except KestrelError as exc:
            if exc.code == RefusalCode.BACKEND_UNAVAILABLE:
                return outage_response(exc)
            return json_response({"refusal": exc.refusal.to_json()}, status_for(str(exc.code)))
        return Response(text, media_type="text/csv; charset=utf-8")

    return [
        Route(FEED_BARS_PATH, append, methods=["POST"]),
        Route(FEED_FREEZE_PATH, freeze, methods=["POST"]),
        Route(FEED_PATH, status, methods=["GET"]),
        Route(FEED_TAPE_PATH, tape, methods=["GET"]),
    ]
