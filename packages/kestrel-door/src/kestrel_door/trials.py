"""Trial principals: a principal per run of an agent, minted for an evaluator's harness.

The horizon (one per principal and scenario) stops an agent that scouts a tape under
one identity and trades it under another it controls; so each honest run of an agent
(an Inspect sample and epoch) needs an identity of its own, and the agent must not be
able to make one. A token with :data:`~kestrel_protocol.surface.SCOPE_TRIALS` (the
evaluator's, never given to the agent) asks ``POST /v1/trials`` with ``{"trial": NAME}``
and gets a new issued token for the principal ``PARENT/trial-NAME``, whose scopes are the
parent's tool scopes (never ``kestrel:trials``: a trial cannot mint). Its sessions run
under their own pseudonym, so the horizon of one trial is not another's; the audit row
of the mint names the parent and the digest of the trial, and the trial's name carries
its parent. The door numbers a parent's trials 1, 2, 3 ... in mint order (``trialNumber``
in the answer, beside ``trialsMinted``, the parent's count with it; a name minted again
keeps its number), and signs the number in the
statement of each of the trial's sessions, so a board sees which trials were not
published. With ``"scenarios": [ID, ...]`` (ids of the door's catalog) the trial sees and
trades only those (the token keeps them; :class:`~kestrel_protocol.confined.ConfinedTransport`
serves them), so a pair's disguised sample cannot open its labelled twin.
A trial never outlives the issued token that minted it: it expires when that one does,
or sooner with ``"expiresIn": SECONDS`` (a longer one is capped; the response's
``expiresAt`` is the real expiry, ``null`` when neither bounds it: a parent that never
expires). A trial an OAuth grant mints ends within
:data:`~.expiry.OAUTH_TRIAL_LIFETIME` (the door never learns that the grant was revoked).
``GET`` at :data:`~kestrel_protocol.surface.TRIALS_MINTED_PATH` (no credential, no audit
row, as the door's keys and a published tape are served) answers how many trials the
principal whose pseudonym is ``trialOf`` has minted by now, with the door's signed
statement of it (:meth:`.attest.Attestor.trials_minted`): a board reads it to see the
trials minted after the last statement it was shown; a pseudonym that minted none and one
the door never knew are answered alike, ``0``. ``DELETE /v1/trials/{tokenId}`` revokes a
trial's token once its run is scored (only the parent's own trials). The trial's token
keeps the id of the issued token that minted it: revoking that one (``kestrel-door token
revoke``) revokes its live trials in the same transaction. A trial an OAuth token minted
has no such parent: it ends by its own revoke. The token is in the response body only,
once, as ``token issue`` prints it; it is never logged.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import (
    SCOPE_TRIALS,
    TOOL_SCOPES,
    TRIAL_MARK,
    TRIALS_MINTED_PATH,
    TRIALS_PATH,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .attest import Attestor
from .door import Caller, Door, json_response, outage_response
from .expiry import OAUTH_TRIAL_LIFETIME, lifetime_seconds
from .pseudonyms import PSEUDONYM
from .tokens import IssuedTokens

__all__ = ["trial_routes"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")
_MINT = "trials.mint"
_REVOKE = "trials.revoke"
_MAX_SCENARIOS = 64
_MAX_LIFETIME_S = 10 * 366 * 86_400
_OAUTH_TRIAL_S = lifetime_seconds(OAUTH_TRIAL_LIFETIME) or _MAX_LIFETIME_S


def _refusal(code: str, message: str, status: int, **detail: Any) -> Response:
    return json_response({"refusal": {"code": code, "message": message, "detail": detail}}, status)


def _forbidden(door: Door, message: str) -> Response:
    body = {
        "refusal": {
            "code": RefusalCode.FORBIDDEN,
            "message": message,
            "detail": {"requiredScope": SCOPE_TRIALS, "error": "insufficient_scope"},
        }
    }
    headers = {"WWW-Authenticate": door.insufficient_scope_header(SCOPE_TRIALS)}
    return json_response(body, 403, headers)


async def _parent(door: Door, request: Request) -> Caller | Response:
    """The caller, when its grant carries ``kestrel:trials`` and it is no trial itself."""
    caller = await door.authenticate(request, "http")
    if isinstance(caller, Response):
        return caller
    ctx = caller.turn.ctx
    if not caller.guarded or SCOPE_TRIALS not in ctx.scopes:
        return _forbidden(door, f"this credential lacks the scope {SCOPE_TRIALS}")
    if TRIAL_MARK in ctx.principal:
        return _forbidden(door, "a trial principal cannot mint trials")
    return caller


def _audit(door: Door, caller: Caller, tool: str, arguments: dict[str, Any], outcome: str) -> None:
    if door.audit is not None:
        door.audit.append(
            principal=caller.turn.ctx.principal,
            venue="http",
            tool=tool,
            arguments=arguments,
            outcome=outcome,
        )


async def _scenarios(door: Door, parent: str, body: Any) -> list[str] | Response | None:
    """The body's ``scenarios`` (``None`` when absent: the whole catalog), each an id of
    the door's catalog as ``parent`` sees it; else the refusal naming what is wrong."""
    asked = body.get("scenarios") if isinstance(body, dict) else None
    if asked is None:
        return None
    if (
        not isinstance(asked, list)
        or not asked
        or len(asked) > _MAX_SCENARIOS
        or not all(isinstance(s, str) and s for s in asked)
    ):
        return _refusal(
            RefusalCode.INVALID_ARGUMENT,
            f'"scenarios" must be a list of 1-{_MAX_SCENARIOS} scenario ids of the catalog '
            "(the only scenarios the trial sees and trades), or absent for all of them",
            400,
            where="scenarios",
        )
    try:
        tool = door.surface.projecting("catalog")  # by its runtime method (one name, one file)
        catalog = await door.transport(parent).invoke(tool, tool.parse({}))
    except KestrelError as exc:
        return _store_failed(exc)
    known = {str(s["id"]) for s in catalog.to_json()["scenarios"]}
    for scenario in asked:
        if scenario not in known:
            return _refusal(
                RefusalCode.UNKNOWN_SCENARIO,
                f"no scenario {scenario!r} in the door's catalog: a trial sees only "
                "scenarios of the catalog",
                404,
                where="scenarios",
                scenario=scenario,
            )
    return list(asked)


def _lifetime(body: Any) -> int | Response | None:
    """The body's ``expiresIn`` (seconds; ``None`` when absent: as long as the parent),
    else the refusal naming what is wrong."""
    asked = body.get("expiresIn") if isinstance(body, dict) else None
    if asked is None:
        return None
    if not isinstance(asked, int) or isinstance(asked, bool) or not 0 < asked <= _MAX_LIFETIME_S:
        return _refusal(
            RefusalCode.INVALID_ARGUMENT,
            f'"expiresIn" must be a whole number of seconds, 1-{_MAX_LIFETIME_S} (the trial '
            "expires then, or with the token minting it if sooner), or absent",
            400,
            where="expiresIn",
        )
    return asked


def trial_routes(door: Door, tokens: IssuedTokens, attestor: Attestor | None = None) -> list[Route]:
    """``POST /v1/trials`` (mint) and ``DELETE /v1/trials/{tokenId}`` (revoke); with the
    door's ``attestor``, ``GET`` at ``TRIALS_MINTED_PATH`` (a parent's count, signed)."""

    async def mint(request: Request) -> Response:
        caller = await _parent(door, request)
        if isinstance(caller, Response):
            return caller
        try:
            body = await request.json()
        except ValueError:
            body = None
        name = body.get("trial") if isinstance(body, dict) else None
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            return _refusal(
                RefusalCode.INVALID_ARGUMENT,
                'the body must be {"trial": NAME}, NAME 1-120 letters, digits, ".", "_" or '
                '"-", beginning with a letter or digit',
                400,
                where="trial",
            )
        ctx = caller.turn.ctx
        scopes: list[str] = [s for s in TOOL_SCOPES if s in ctx.scopes]
        if not scopes:
            return _forbidden(door, "this credential has no tool scope to give a trial")
        lifetime = _lifetime(body)
        if isinstance(lifetime, Response):
            return lifetime
        if caller.token_id is None:  # an OAuth grant's: no issued parent to end with
            lifetime = min(lifetime or _OAUTH_TRIAL_S, _OAUTH_TRIAL_S)
        only = await _scenarios(door, ctx.principal, body)
        if isinstance(only, Response):
            return only
        try:
            row, token, (number, count) = await anyio.to_thread.run_sync(
                lambda: tokens.issue_trial(
                    ctx.principal,
                    name,
                    scopes,
                    scenarios=only,
                    parent=caller.token_id,
                    lifetime_s=lifetime,
                    not_after=caller.expires_at,
                )
            )
            minted = {"principal": row.principal, "tokenId": row.id}
            await anyio.to_thread.run_sync(_audit, door, caller, _MINT, minted, "ok")
        except Exception as exc:
            return _store_failed(exc)
        answer: dict[str, Any] = {
            "principal": row.principal,
            "trialNumber": number,
            "trialsMinted": count,
            "tokenId": row.id,
            "scopes": list(row.scopes),
            "expiresAt": row.expires_at,
        }
        if row.scenarios is not None:
            answer["scenarios"] = list(row.scenarios)
        # the bearer token in the body: no cache may keep it (RFC 6749 5.1)
        return json_response({**answer, "token": token}, 201, {"Cache-Control": "no-store"})

    async def revoke(request: Request) -> Response:
        caller = await _parent(door, request)
        if isinstance(caller, Response):
            return caller
        token_id = str(request.path_params["token_id"])
        prefix = caller.turn.ctx.principal + TRIAL_MARK

        def revoke_own() -> bool:
            own = any(
                r.id == token_id and r.principal.startswith(prefix) and r.revoked_at is None
                for r in tokens.list()
            )
            done = own and tokens.revoke(token_id) is not None
            _audit(door, caller, _REVOKE, {"tokenId": token_id}, "ok" if done else "unknown")
            return done

        try:
            done = await anyio.to_thread.run_sync(revoke_own)
        except Exception as exc:
            return _store_failed(exc)
        if not done:
            return _refusal(
                RefusalCode.INVALID_ARGUMENT,
                f"no live trial token {token_id} of this principal",
                404,
                where="tokenId",
            )
        return json_response({"revoked": token_id})

    async def minted(request: Request) -> Response:  # no credential: a signed count
        assert attestor is not None
        trial_of = str(request.path_params["trial_of"])
        if PSEUDONYM.fullmatch(trial_of) is None:
            return _refusal(
                RefusalCode.INVALID_ARGUMENT,
                f"{trial_of[:80]!r} is no pseudonym: a trial statement's trialOf, p_ and 32 "
                "lowercase hex digits",
                400,
                where="trialOf",
            )
        try:
            answer = await anyio.to_thread.run_sync(attestor.trials_minted, trial_of)
        except Exception as exc:
            return _store_failed(exc)
        return json_response(answer, headers={"Cache-Control": "no-store"})

    counted = [Route(TRIALS_MINTED_PATH, minted, methods=["GET"])] if attestor is not None else []
    return [
        Route(TRIALS_PATH, mint, methods=["POST"]),
        Route(TRIALS_PATH + "/{token_id}", revoke, methods=["DELETE"]),
        *counted,
    ]


def _store_failed(exc: Exception) -> Response:
    """The store did not answer: 503, nothing minted or revoked for sure."""
    if isinstance(exc, KestrelError) and exc.code == RefusalCode.BACKEND_UNAVAILABLE:
        return outage_response(exc)
    return _refusal(RefusalCode.BACKEND_UNAVAILABLE, "the door's store did not answer", 503)
