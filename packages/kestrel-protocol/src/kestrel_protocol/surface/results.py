"""The MCP ``CallToolResult`` every face sends, and the one argument error.

A result carries the protocol object verbatim in ``structuredContent`` and, as the one
text content, its JSON text or the compact rendering its class declares for a model
(:mod:`.compact`); ``isError`` is always present (``false`` on success), on every
face. A typed refusal is ``isError: true`` with ``structuredContent: {refusal}``.
Arguments that do not fit a tool are not a result: they raise :class:`ArgumentError`
(``INVALID_ARGUMENT``), which MCP faces send as -32602 and ``/v1`` as HTTP 400.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from ..canonical import fast_compact_bytes, fast_compact_line, fast_compact_text
from ..errors import KestrelError, Refusal, RefusalCode
from ..quoting import clipped

__all__ = [
    "ArgumentError",
    "ToolResult",
    "frame_bytes",
    "json_bytes",
    "json_text",
    "refusal_result",
    "result_refusal",
    "tool_result",
]


_SCALARS: Final = (str, int, bool)
"""Member types of a result that hold no float."""

_MEMBERS: Final = ("content", "structuredContent", "isError")
"""A result's members as built, in order."""

_RESPONSE_MEMBERS: Final = ("jsonrpc", "id", "result")
"""A JSON-RPC response's members as the faces build it, in order."""

_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Built once: ``json.dumps`` with options builds a new encoder on every call."""


def json_text(value: Any) -> str:
    """The compact JSON text of a result, members in the object's own order.

    It parses to the identical value as ``structuredContent`` (so its canonical bytes
    and root are the object's); not re-sorted, because this runs on every call. The
    text is ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``.
    """
    # Scalars as the encoder writes them, without building one (a str needs none either).
    kind = type(value)
    if kind is str:  # a result's text block is its JSON again: kilobytes to escape
        fast = fast_compact_text(value)  # the same text (no float in a str)
        if fast is not None:
            return fast
    elif kind is int:
        return int.__repr__(value)
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    return _COMPACT.encode(value)


def frame_bytes(message: dict[str, Any], end: bytes = b"") -> bytes:
    """``message`` (a JSON-RPC message) as json's compact UTF-8 bytes, and ``end``.

    The bytes are always those of ``json.dumps(message, ensure_ascii=False,
    separators=(",", ":"))`` in UTF-8 (:func:`json_bytes`): what every JSON face (stdio's lines,
    the door's ``/mcp`` bodies) sends. A response of just a :class:`ToolResult` is spliced from the
    result's one text (:meth:`ToolResult.rpc_frame`), never encoding its object again;
    a result a face added members to is written by orjson in one call when it is
    float-free and the ``fast`` extra is installed, else spliced as text. A message
    orjson declines (a lone surrogate, an id beyond 64 bits) takes the other path.
    """
    result = message.get("result")
    if type(result) is ToolResult:
        if tuple(message) == _RESPONSE_MEMBERS and message["jsonrpc"] == "2.0":
            request_id = message["id"]
            if type(request_id) is int or type(request_id) is str:
                spliced = result.rpc_frame(request_id, end)  # one text, spliced
                if spliced is not None:
                    return spliced
        if result.float_free():  # the whole message in one orjson call: json's bytes
            whole = fast_compact_line(message) if end == b"\n" else fast_compact_bytes(message)
            if whole is not None:
                return whole if end == b"\n" else whole + end
        members = [
            json_text(key) + ":" + (result.encoded() if value is result else json_text(value))
            for key, value in message.items()
        ]
        text = "{" + ",".join(members) + "}"
    else:
        text = json_text(message)
    return json_bytes(text) + end


def json_bytes(text: str) -> bytes:
    """JSON ``text`` as UTF-8, a lone surrogate (which UTF-8 cannot hold: a request may
    hold one in its ``id`` or a name its refusal echoes) as its escape ``\\udxxx``, which
    is JSON of the same string: the bytes are valid UTF-8 whatever the text holds."""
    return text.encode("utf-8", "backslashreplace")


class ToolResult(dict[str, Any]):
    """A ``CallToolResult``; ``json_text`` is the JSON of ``structuredContent``.

    The structured object is encoded once: that text is the text content (unless a
    ``text`` is given: a compact rendering, a tape's CSV), and :meth:`encoded` and
    :meth:`rpc_frame` splice it in as ``structuredContent`` instead of encoding the same
    object a second time.
    """

    __slots__ = ("_content", "_float_free", "_structured", "_text", "_utf8", "json_text")

    def __init__(
        self,
        structured: Any,
        text: str | None = None,
        is_error: bool = False,
        *,
        encoded: str | None = None,
        utf8: bytes | None = None,
        float_free: bool = False,
    ) -> None:
        """``encoded``: ``json_text(structured)`` when the caller already has it, and
        ``utf8`` its UTF-8 bytes when it has those too (orjson writes bytes);
        ``float_free``: ``structured`` is known to hold no float (a protocol object's
        data)."""
        if encoded is None:
            encoded = json_text(structured)
        if text is None:
            text = encoded
        # members set one by one: cheaper than dict.__init__'s keywords, the same order
        self["content"] = content = [{"type": "text", "text": text}]
        self["structuredContent"] = structured
        self["isError"] = is_error
        self._text = text
        self._content = content
        self.json_text = encoded
        self._utf8 = utf8
        self._structured = structured
        self._float_free = float_free

    def float_free(self) -> bool:
        """Whether the result holds no float, so orjson writes json's bytes for it: its
        structured object was built float-free and is still the one it was built with,
        its content blocks hold strings alone, and every other member is a scalar (a
        face's additions, like ``resultType``, included)."""
        if not self._float_free:
            return False
        for key, value in self.items():
            if key == "structuredContent":
                if value is not self._structured:
                    return False
            elif key == "content":
                if type(value) is not list:
                    return False
                for block in value:
                    if type(block) is not dict:
                        return False
                    for member in block.values():
                        if type(member) is not str:
                            return False
            elif value is not None and type(value) not in _SCALARS:
                return False
        return True

    def rpc_frame(self, request_id: int | str, end: bytes = b"") -> bytes | None:
        """``{"jsonrpc": "2.0", "id": request_id, "result": self}`` as json's compact
        UTF-8 bytes (``ensure_ascii=False``) and ``end``, spliced from the one text of
        the structured object: it is not encoded again, only escaped once as the text
        block. ``None`` when the result is no longer the three members it was built as
        (a face added or replaced one), or where orjson would not escape as json does
        (a lone surrogate) or is not installed: the caller then encodes it whole."""
        if (
            tuple(self) != _MEMBERS
            or self["content"] is not self._content
            or self["structuredContent"] is not self._structured
            or not self._content_kept()
        ):
            return None
        error = self["isError"]
        if error is not True and error is not False:
            return None
        block = fast_compact_bytes(self._text)  # json's escapes, or None (a lone surrogate)
        if block is None:
            return None
        rendered: bytes | None
        if type(request_id) is int:
            rendered = b"%d" % request_id
        else:
            rendered = fast_compact_bytes(request_id) if type(request_id) is str else None
        if rendered is None:
            return None
        structured = self._utf8
        if structured is None:
            structured = json_bytes(self.json_text)
        return b"".join(
            (
                b'{"jsonrpc":"2.0","id":',
                rendered,
                b',"result":{"content":[{"type":"text","text":',
                block,
                b'}],"structuredContent":',
                structured,
                b',"isError":true}}' if error else b',"isError":false}}',
                end,
            )
        )

    def structured_bytes(self) -> bytes:
        """The JSON of ``structuredContent`` as json's compact UTF-8 bytes (what ``/v1``
        answers): the one text it was built with while it is still that object, never
        encoded again; a replaced one is encoded afresh."""
        structured = self.get("structuredContent")
        if structured is not self._structured:
            return json_bytes(json_text(structured))
        if self._utf8 is None:
            self._utf8 = json_bytes(self.json_text)
        return self._utf8

    def encoded(self) -> str:
        """``json_text(self)``, the same text, without encoding the structured object again.

        Members keep their order (a face may have added some, like ``resultType``); a
        ``structuredContent`` replaced since construction is encoded afresh.
        """
        members = []
        for key, value in self.items():
            if type(key) is not str:  # json.dumps would write it as a string: do the same
                return json_text(dict(self))
            if key == "structuredContent" and value is self._structured:
                members.append('"structuredContent":' + self.json_text)
            elif key == "content" and value is self._content and self._content_kept():
                members.append('"content":[{"type":"text","text":' + json_text(self._text) + "}]")
            else:
                members.append(json_text(key) + ":" + json_text(value))
        return "{" + ",".join(members) + "}"

    def _content_kept(self) -> bool:
        """Whether the content is still the one text block it was built with (its two
        members in their order, the text equal to the one it was built with)."""
        content = self._content
        if len(content) != 1:
            return False
        block = content[0]
        return (
            type(block) is dict
            and len(block) == 2
            and tuple(block) == ("type", "text")
            and block["type"] == "text"
            and block["text"] == self._text
        )


def tool_result(structured: Any, text: str | None = None) -> ToolResult:
    """A successful result; ``text`` replaces the JSON text (e.g. a tape's CSV)."""
    return ToolResult(structured, text)


def refusal_result(refusal: Refusal | KestrelError) -> ToolResult:
    """A typed refusal as a tool result (never a protocol error)."""
    body = refusal.refusal if isinstance(refusal, KestrelError) else refusal
    return ToolResult({"refusal": body.to_json()}, is_error=True, float_free=True)


def result_refusal(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``{code, message, detail}`` of an ``isError`` result, else ``None``."""
    if not result.get("isError"):
        return None
    data = result.get("structuredContent")
    refusal = data.get("refusal") if isinstance(data, Mapping) else None
    return refusal if isinstance(refusal, Mapping) else None


class ArgumentError(KestrelError):
    """An unknown tool, or arguments that do not fit it: ``INVALID_ARGUMENT``."""

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(RefusalCode.INVALID_ARGUMENT, message, detail)

    @classmethod
    def unknown_tool(cls, name: str) -> ArgumentError:
        return cls(f"Unknown tool: {clipped(name)}", {"tool": clipped(name)})

    @classmethod
    def of(cls, tool: str, exc: ValidationError) -> ArgumentError:
        """The error naming the first problem; ``detail.errors`` lists them all.

        Never echoes an input value (an argument may be a secret).
        """
        errors = [
            {
                "path": clipped(".".join(str(part) for part in err["loc"])) or "(arguments)",
                "message": err["msg"],
            }
            for err in exc.errors(include_url=False, include_input=False, include_context=False)
        ]
        first = errors[0]
        return cls(
            f"Invalid arguments for {tool}: {first['path']}: {first['message']}",
            {"tool": tool, "errors": errors},
        )
