"""The text a model reads from a session's results: a compact rendering, roots left out.

An LLM host shows a model a tool result's text content only, and every step of an
evaluation pays for it in tokens. So the results an agent reads on every step (a submit
response, a frame, its history) and at the end (the record its close returns, a grade or
the operation still grading it) carry, as their one text content, a few short lines
instead of their JSON: every number the agent trades on, no root (but a grade's own), no
member a model does not act on. The whole object,
roots included, stays in ``structuredContent`` (MCP 2025-06-18 on: a structured result
SHOULD also carry its serialized JSON as text, "for backwards compatibility"; docs/mcp.md
says why Kestrel does not for these results). ``/v1`` answers the object, as always.

:data:`COMPACT_TEXT` declares the rendering once per result class; the one dispatcher
(:func:`~.dispatch.run_tool`) uses it for every MCP face. Every other result's text is
its JSON. Renderers read the object's JSON data (wire names) and are plain string
formatting: cheaper than encoding the JSON they replace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..model import ProtocolModel
from ..objects.grade import GradeResult, OperationResumption
from ..objects.history import History
from ..objects.news import NewsPage
from ..objects.record import SessionRecord
from ..objects.session import Delivery, SessionResponse
from ..quoting import counted
from .wide import WIDE_SYMBOLS, wide_frame_text

__all__ = [
    "COMPACT_TEXT",
    "compact_text",
    "delivery_text",
    "frame_text",
    "grade_text",
    "history_text",
    "news_text",
    "operation_text",
    "record_text",
    "response_text",
]

Data = Mapping[str, Any]


def _order(o: Data) -> str:
    """An open order as its statement would read (``buy 10 ACME limit 30.00 tif gtc``)."""
    alias = "" if o.get("alias") is None else f" ({o['alias']})"
    stop = "" if o.get("stop") is None else f" stop {o['stop']}"
    limit = "" if o.get("limit") is None else f" limit {o['limit']}"
    filled = f", filled {o['filled']}" if o.get("filled") not in (None, 0, "0") else ""
    # the order forms' members, each only when the order has it (docs/spec.md §3)
    forms = "".join(
        f" {word} {o[key]}"
        for key, word in (("trail", "trail"), ("target", "to"), ("group", "oco"), ("parent", "of"))
        if o.get(key) is not None
    )
    return (
        f"{o['id']}{alias}: {o['side']} {o['qty']} {o['symbol']}{stop}{limit}{forms}"
        f" tif {o['tif']}{filled}, {o['status']}"
    )


def _event(e: Data) -> str:
    """``bar 1 fill o1 10 @ 39.80 fee 0.40``: what is set of bar, type, order, qty,
    price, fee and (reason)."""
    order, qty, price, fee, reason = (
        e.get("order"),
        e.get("qty"),
        e.get("price"),
        e.get("fee"),
        e.get("reason"),
    )
    return (
        f"bar {e['bar']} {e['type']}"
        + ("" if order is None else f" {order}")
        + ("" if qty is None else f" {qty}")
        + ("" if price is None else f" @ {price}")
        + ("" if fee is None else f" fee {fee}")
        + ("" if reason is None else f" ({reason})")
    )


def _position(p: Data) -> str:
    return f"{p['symbol']} {p['qty']} @ {p['avgPrice']} (unrealized {p['unrealized']})"


def _bar(symbol: str, b: Data) -> str:
    return f"{symbol} o {b['open']} h {b['high']} l {b['low']} c {b['close']} v {b['volume']}"


def frame_text(frame: Data) -> str:
    """A ``kestrel.frame`` in a few lines: clock and status, marks and bars, account,
    positions, open orders, and the events since the previous frame.

    Written out member by member: it runs on every step, for every MCP face. A frame of
    more than ``WIDE_SYMBOLS`` symbols is written as tables instead (``wide``)."""
    clock = frame["clock"]
    remaining = clock.get("remaining")
    left = "" if remaining is None else f", {counted(remaining, 'bar')} remaining"
    a = frame["account"]
    bars = frame.get("bars")
    positions, orders, events = frame["positions"], frame["orders"], frame["events"]
    news = frame.get("news")
    head = (
        f"frame {frame['seq']} of {frame['session']} on {frame['scenario']['id']}: "
        f"{frame['status']}, bar {clock['bar']} ({clock['time']}){left}"
    )
    account = (
        f"account: equity {a['equity']}, cash {a['cash']}, realized {a['realized']}, "
        f"unrealized {a['unrealized']}, fees {a['fees']}, peak {a['peak']}, "
        f"drawdown {a['drawdown']}"
    )
    if len(frame["marks"]) > WIDE_SYMBOLS:
        return wide_frame_text(frame, head, account, _order, _event) + _news_lines(news)
    return (
        f"{head}\n"
        f"marks: {', '.join([f'{s} {p}' for s, p in frame['marks'].items()])}\n"
        + (f"bars: {'; '.join([_bar(s, b) for s, b in bars.items()])}\n" if bars else "")
        + f"{account}\n"
        f"positions: {'; '.join([_position(p) for p in positions]) if positions else 'none'}\n"
        f"orders: {'; '.join([_order(o) for o in orders]) if orders else 'none'}\n"
        f"events: {'; '.join([_event(e) for e in events]) if events else 'none'}"
        + _news_lines(news)
    )


def _news_item(n: Data) -> str:
    """``n3 2024-01-03T00:00:00Z ACME: headline | body`` (``...`` when cut)."""
    symbol = n.get("symbol")
    cut = " ..." if n.get("truncated") else ""
    body = " ".join(n["body"].split())
    return f"{n['id']} {n['time']}{'' if symbol is None else ' ' + symbol}: {n['headline']}" + (
        f" | {body}{cut}" if body else ""
    )


def _news_lines(news: list[Data] | None) -> str:
    if news is None:
        return ""
    return "\nnews:" + ("".join(f"\n  {_news_item(n)}" for n in news) if news else " none")


def news_text(page: Data) -> str:
    """A ``kestrel.news`` page: one line of context, then its items oldest first."""
    clock = page["clock"]
    more = page.get("nextBefore")
    head = (
        f"news of {page['session']} on {page['scenario']['id']} to bar {clock['bar']} "
        f"({clock['time']}): {counted(len(page['items']), 'item')}"
        + ("" if more is None else f"; older ones with before={more}")
    )
    return "\n".join((head, *(_news_item(n) for n in page["items"])))


def delivery_text(delivery: Data) -> str:
    """A delivery (the frame tool's result): its frame."""
    return frame_text(delivery["frame"])


def response_text(response: Data) -> str:
    """A submit response: what became of the submission, then the frame it led to."""
    head = f"submission {response['pentad']['seq']} {response['disposition']}"
    stand_down = response.get("standDown")
    if stand_down is not None:
        head += f" ({stand_down['reason']}: {stand_down['detail']})"
    return head + "\n" + delivery_text(response["delivery"])


def history_text(history: Data) -> str:
    """A ``kestrel.history``: its bars as the tape's CSV rows, under one line of context."""
    clock = history["clock"]
    bars = history["bars"]
    rows = [
        f"{b['time']},{b['symbol']},{b['open']},{b['high']},{b['low']},{b['close']},{b['volume']}"
        for b in bars
    ]
    return "\n".join(
        (
            f"history of {history['session']} on {history['scenario']['id']} to bar "
            f"{clock['bar']} ({clock['time']}): {counted(len(bars), 'bar')}",
            "time,symbol,open,high,low,close,volume",
            *rows,
        )
    )


def record_text(record: Data) -> str:
    """A ``kestrel.session`` record (the close's result): what was closed and the reads
    the grade's ``no-lookahead`` check will weigh; not its roots (one a submission: a
    long session's record is hundreds of kilobytes of them)."""
    lookahead = record["lookahead"]
    reads = lookahead["reads"]
    seen = "; ".join(f"before submission {r['seq']} at bar {r['bar']}: {r['read']}" for r in reads)
    return "\n".join(
        (
            f"session {record['session']} (label {record['label']}) on {record['scenario']['id']}: "
            f"{record['status']} after {counted(len(record['pentads']), 'submission')}",
            f"sealed: {'yes' if lookahead['sealed'] else 'no'}; reads behind the clock: "
            + (seen or "none"),
        )
    )


def grade_text(grade: Data) -> str:
    """A ``kestrel.grade``: passed or not, every metric, every check (a failed one with
    its detail), and the grade's root (the handle of its proof)."""
    metrics = ", ".join(f"{k} {v}" for k, v in grade["metrics"].items() if v is not None)
    checks = "; ".join(
        f"{c['id']} pass" if c["passed"] else f"{c['id']} FAIL: {c['detail']}"
        for c in grade["conformance"]["checks"]
    )
    return "\n".join(
        (
            f"grade of {grade['session']} on {grade['scenario']['id']}: "
            + ("passed" if grade["passed"] else "FAILED"),
            f"metrics: {metrics}",
            f"checks: {checks}",
            f"grade root: {grade['root']}",
        )
    )


def operation_text(operation: Data) -> str:
    """A ``kestrel.operation`` still running: progress, and the token to resume it with."""
    progress = operation["progress"]
    return (
        f"operation {operation['operation']} running: {progress['done']} of "
        f"{progress['total']} done; call again with token {operation['token']} after "
        f"{operation['resumeAfterMs']} ms"
    )


COMPACT_TEXT: Final[Mapping[type[ProtocolModel], Callable[[Data], str]]] = {
    SessionResponse: response_text,
    Delivery: delivery_text,
    History: history_text,
    NewsPage: news_text,
    SessionRecord: record_text,
    GradeResult: grade_text,
    OperationResumption: operation_text,
}
"""The text content of each result class read on a session's every step, or at its end;
any other result's text is its JSON."""


def compact_text(result: ProtocolModel, data: Data) -> str | None:
    """The compact text of ``result`` (whose JSON data is ``data``), or ``None`` when its
    class has none (its text is then its JSON)."""
    render = COMPACT_TEXT.get(type(result))
    return None if render is None else render(data)
