"""The Kestrel tools as the door runs them: tool name + arguments -> a Transport call.

Results have the MCP face's shape (spec §8): the SDK object verbatim in
``structuredContent`` and its JSON text as the one text content; a typed refusal is
``isError: true`` with ``structuredContent: {refusal}``. The HTTP face unwraps the same
results, so both faces of the door share one path and one set of checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from kestrel_protocol import GradeResult, KestrelError, Payment, Refusal
from kestrel_protocol.ports import Transport

__all__ = [
    "DOOR_TOOL_NAMES",
    "SECRET_TOOL_PREFIX",
    "ToolArgumentError",
    "canonical_tool_name",
    "is_secret_tool",
    "refusal_result",
    "result_refusal",
    "run_transport_tool",
    "tool_result",
]

SECRET_TOOL_PREFIX: Final = "kestrel_secrets"

DOOR_TOOL_NAMES: Final = (
    "kestrel_catalog",
    "kestrel_validate",
    "kestrel_session_open",
    "kestrel_session_submit",
    "kestrel_session_frame",
    "kestrel_session_blotter",
    "kestrel_session_close",
    "kestrel_grade",
    "kestrel_operation_resume",
)
"""The tools an MCP client sees through the door (the secrets tools are local-only)."""


class ToolArgumentError(ValueError):
    """An unknown tool, or arguments that do not fit it (MCP -32602, HTTP 400)."""


def canonical_tool_name(name: str) -> str:
    """Accept the seed's dotted spelling (``kestrel.session.open``) as an alias."""
    return name.replace(".", "_")


def is_secret_tool(name: str) -> bool:
    return canonical_tool_name(name).startswith(SECRET_TOOL_PREFIX)


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def tool_result(data: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """A successful ``CallToolResult``."""
    return {
        "content": [{"type": "text", "text": _text(data) if text is None else text}],
        "structuredContent": data,
        "isError": False,
    }


def refusal_result(refusal: Refusal | KestrelError) -> dict[str, Any]:
    """A typed refusal as a tool result (never a JSON-RPC error)."""
    body = refusal.refusal if isinstance(refusal, KestrelError) else refusal
    return {**tool_result({"refusal": body.to_json()}), "isError": True}


def result_refusal(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``{code, message, detail}`` of an ``isError`` result, else ``None``.

    Both faces (and the audit) read refusals back out of results; one reader keeps
    them agreeing on what counts as one.
    """
    if not result.get("isError"):
        return None
    data = result.get("structuredContent")
    refusal = data.get("refusal") if isinstance(data, Mapping) else None
    return refusal if isinstance(refusal, Mapping) else None


def _str(args: Mapping[str, Any], key: str, *, optional: bool = False) -> str | None:
    value = args.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        want = "an optional string" if optional else "a string"
        raise ToolArgumentError(f"argument {key!r} must be {want}")
    return value


def _req(args: Mapping[str, Any], key: str) -> str:
    value = _str(args, key)
    assert value is not None
    return value


def parse_payment(value: Any) -> Payment | None:
    if value is None:
        return None
    if (
        not isinstance(value, Mapping)
        or not isinstance(value.get("offerId"), str)
        or not isinstance(value.get("voucher"), str)
    ):
        raise ToolArgumentError("argument 'payment' must be {offerId: string, voucher: string}")
    return Payment(offer_id=value["offerId"], voucher=value["voucher"])


async def run_transport_tool(
    transport: Transport, name: str, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """Run one tool on ``transport``; typed refusals become ``isError`` results.

    Raises :class:`ToolArgumentError` for an unknown tool or bad arguments; any other
    exception is an unexpected fault and propagates.
    """
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError("arguments must be an object")
    args = arguments
    try:
        match canonical_tool_name(name):
            case "kestrel_catalog":
                return tool_result((await transport.catalog()).to_json())
            case "kestrel_scenario":
                return tool_result((await transport.scenario(_req(args, "scenario"))).to_json())
            case "kestrel_tape":
                scenario = _req(args, "scenario")
                text = await transport.tape(scenario)
                data = {"scenario": scenario, "mediaType": "text/csv", "text": text}
                return tool_result(data, text)
            case "kestrel_validate":
                report = await transport.validate(
                    _req(args, "source"), _str(args, "scenario", optional=True)
                )
                return tool_result(report.to_json())
            case "kestrel_session_open":
                opened = await transport.open_session(
                    _req(args, "scenario"),
                    _str(args, "label", optional=True),
                    parse_payment(args.get("payment")),
                )
                return tool_result(opened.to_json())
            case "kestrel_session_submit":
                resp = await transport.submit(_req(args, "sessionId"), _req(args, "source"))
                return tool_result(resp.to_json())
            case "kestrel_session_frame":
                return tool_result((await transport.frame(_req(args, "sessionId"))).to_json())
            case "kestrel_session_blotter":
                return tool_result((await transport.blotter(_req(args, "sessionId"))).to_json())
            case "kestrel_session_close":
                return tool_result((await transport.close(_req(args, "sessionId"))).to_json())
            case "kestrel_grade":
                return tool_result((await transport.grade(_req(args, "sessionId"))).to_json())
            case "kestrel_operation_resume":
                return tool_result((await transport.resume(_req(args, "token"))).to_json())
            case "kestrel_artifact":
                return tool_result(await transport.artifact(_req(args, "root")))
            case "kestrel_verify":
                grade = args.get("grade")
                try:
                    parsed = GradeResult.parse(grade)
                except Exception as exc:
                    raise ToolArgumentError(f"argument 'grade' is not a grade: {exc}") from None
                return tool_result((await transport.verify(parsed)).to_json())
            case other:
                raise ToolArgumentError(f"unknown tool {other!r}")
    except KestrelError as exc:
        return refusal_result(exc)
