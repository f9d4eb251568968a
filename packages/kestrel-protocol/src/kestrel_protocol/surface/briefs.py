"""Kestrel's prompts: what a host shows as slash commands, declared once for every face.

Each prompt's text is built from facts fetched through the face's own tool caller (the
catalog, a scenario's terms, a grade and its blotter), so a remote agent and a local one
are briefed alike and a caller reads nothing its tools could not. A scenario brief
holds catalog metadata and terms only, never a bar of the tape after bar 0, nor its
description or length (which may tell of later bars), whether the scenario is sealed
or not.
The prompts are built from the tools they are served with (:func:`prompts`), so a brief
names each tool as its surface does (:class:`.tool_names.ToolNames`), and this module
imports no registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Final

from .declare import Tool
from .prompt import Fetch, Prompt, PromptArgument
from .results import ArgumentError
from .tool_names import ToolNames

__all__ = ["STYLES", "news_lesson", "prompts"]

STYLES: Final[Mapping[str, str]] = {
    "cautious": (
        "Trade small: a position of at most a quarter of max_position, a stop for every "
        "entry, and stand down at the first sign the plan is not working."
    ),
    "balanced": (
        "Size positions to the account and the fees, use limit orders where the spread of "
        "a bar allows, and review the frame after every advance."
    ),
    "aggressive": (
        "Take the signals you see with full-size positions within max_position and "
        "max_drawdown; still never submit a statement you have not validated."
    ),
}
_MAX_FILLS: Final = 50


def _workflow(_tool: ToolNames) -> str:
    return (
        "Workflow (each step is one tool call):\n"
        f"1. {_tool('validate')} {{source, scenario}} checks statements without applying them.\n"
        f"2. {_tool('open_session')} {{scenario}} opens a session; bar 0 is complete. "
        "Keep its sessionId.\n"
        f"3. {_tool('submit')} {{sessionId, source}} applies statements atomically and returns "
        "the new frame (clock, marks, account, positions, open orders, events). Repeat until "
        "the tape ends.\n"
        f"4. {_tool('close')} {{sessionId}}, then {_tool('grade')} {{sessionId}}: metrics and "
        "conformance, verifiable from the artifacts. A kestrel.operation result means the "
        f"grade is still running: call {_tool('resume')} with its token."
    )


def news_lesson(news_tool: str, newest: object) -> str:
    """How an agent reads a scenario's news: what an item is, when it is visible, where
    the frame shows it (``newest`` items) and how ``news_tool`` pages the rest."""
    return (
        "News: a scenario with news carries timestamped items (time, symbol or none for the "
        "market, headline, body). An item is visible once its time is at or before the "
        f"clock bar's time, never before. Each frame's news holds the newest {newest} "
        f"visible items, long bodies cut; {news_tool} {{sessionId, limit, before, "
        "symbol} gives older items and whole bodies."
    )


def _news(_tool: ToolNames, scenario: Mapping[str, Any]) -> str:
    """What a scenario with news gives to read (nothing for one without)."""
    if scenario.get("newsRoot") is None:
        return ""
    return f"\n{news_lesson(_tool('news'), scenario.get('newsInFrame', 5))}\n"


def _kinds(kinds: Iterable[Any]) -> list[str]:
    """A bullet per statement kind, then one per form of it (the order forms) under it,
    each with its syntax, an example and what it does, as the catalog teaches them."""
    lines: list[str] = []
    for k in kinds:
        if isinstance(k, Mapping):
            lines.append(
                f"- {k.get('kind')}: {k.get('syntax')}  (e.g. {k.get('example')}) - "
                f"{k.get('summary')}"
            )
            lines.extend(
                f"  - {f.get('form')}: {f.get('syntax')}  (e.g. {f.get('example')}) - "
                f"{f.get('summary')}"
                for f in k.get("forms") or ()
                if isinstance(f, Mapping)
            )
    return lines


def _margin(account: Mapping[str, Any]) -> str:
    """A margin account's terms, said after the account's line (nothing on a cash one)."""
    if account.get("kind") != "margin":
        return ""
    return (
        f"; a margin account: gross exposure at most equity x {account.get('leverage')},"
        f" a close with equity below {account.get('maintenanceMargin')} x gross is a margin"
        " call (every position closed at the next open), borrow"
        f" {account.get('borrowRate')} a year on shorts, interest {account.get('cashRate')}"
        " a year on cash"
    )


def _lines(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _instruments(items: Iterable[Any]) -> list[str]:
    """One line per tick and lot: ``ACRN, ARBR, ...: tick 0.01, lot 1`` (a basket of
    twenty stocks on the same terms is one line, not twenty)."""
    symbols: dict[str, list[str]] = {}
    for i in items:
        if isinstance(i, Mapping):
            terms = f"tick {i.get('tick')}, lot {i.get('lot')}"
            if isinstance(i.get("lot"), str):  # a fractional lot: quantities are decimals
                terms += " (quantities are multiples of it, e.g. buy 0.01)"
            symbols.setdefault(terms, []).append(str(i.get("symbol")))
    return [f"{', '.join(names)}: {terms}" for terms, names in symbols.items()]


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": {"type": "text", "text": text}}]


async def _trade_scenario(
    _tool: ToolNames, fetch: Fetch, args: Mapping[str, str]
) -> list[dict[str, Any]]:
    style = args.get("style", "balanced")
    if style not in STYLES:
        names = ", ".join(STYLES)
        raise ArgumentError(
            f"Invalid arguments for prompt kestrel_trade_scenario: style: {style!r} is not "
            f"one of {names}",
            {"prompt": "kestrel_trade_scenario", "errors": [{"path": "style"}]},
        )
    scenario = await fetch(_tool("scenario"), {"scenario": args["scenario"]})
    catalog = await fetch(_tool("catalog"), {})
    kinds = "\n".join(_kinds(catalog.get("statementKinds") or ()))
    tape = scenario.get("tape") or {}
    account = scenario.get("account") or {}
    fees = scenario.get("fees") or {}
    fill = scenario.get("fill") or {}
    instruments = _instruments(scenario.get("instruments") or ())
    text = f"""\
You are trading the Kestrel scenario {scenario.get("id")} ("{scenario.get("title")}"): \
paper trading on a fixed tape of price bars, deterministic, no real money.

This brief names no bar after bar 0, nor how many bars the tape has (sealed or \
not): you see each bar through the session's frames and history as your clock \
reaches it.

Facts (from the catalog; scenario root {scenario.get("root")}):
- tape: bars of {tape.get("interval")} from {tape.get("start")}
- instruments:
{_lines(instruments)}
- account: cash {account.get("cash")}, shortable {account.get("shortable")}, \
max position {account.get("maxPosition")}, max drawdown {account.get("maxDrawdown")}\
{_margin(account)}
- fees per fill: max({fees.get("minimum")}, notional x {fees.get("bps")} bps)
- fills: at most {fill.get("participation")} of a bar's volume per order, slippage \
{fill.get("slippageBps")} bps

The Kestrel language: one statement per line, exactly four kinds.
{kinds}
Orders fill from the next bar; a submit is atomic (one error refuses it all).
{_news(_tool, scenario)}
{_workflow(_tool)}

Style ({style}): {STYLES[style]}
Start by opening a session on {scenario.get("id")} and reading bar 0's frame."""
    return _user(text)


def _metrics(metrics: Mapping[str, Any]) -> list[str]:
    return [f"{name}: {value}" for name, value in metrics.items()]


async def _review_grade(
    _tool: ToolNames, fetch: Fetch, args: Mapping[str, str]
) -> list[dict[str, Any]]:
    root = args["gradeRoot"]
    grade = await fetch(_tool("artifact"), {"root": root})
    if grade.get("kind") != "kestrel.grade":
        raise ArgumentError(
            f"Invalid arguments for prompt kestrel_review_grade: gradeRoot: {root} is a "
            f"{grade.get('kind')}, not a kestrel.grade",
            {"prompt": "kestrel_review_grade", "errors": [{"path": "gradeRoot"}]},
        )
    record = await fetch(_tool("artifact"), {"root": str(grade.get("record"))})
    blotter = await fetch(_tool("artifact"), {"root": str(record.get("blotterRoot"))})
    fills = [f for f in blotter.get("fills") or () if isinstance(f, Mapping)]
    shown = [
        f"{f.get('id')} bar {f.get('bar')} ({f.get('time')}): order {f.get('order')} "
        f"{f.get('qty')} @ {f.get('price')}, fee {f.get('fee')}"
        for f in fills[:_MAX_FILLS]
    ]
    if len(fills) > len(shown):
        more = len(fills) - len(shown)
        shown.append(f"... and {more} more ({_tool('artifact')} {blotter.get('root')})")
    orders = {o.get("id"): o for o in blotter.get("orders") or () if isinstance(o, Mapping)}
    sides = [
        f"{o.get('id')}: {o.get('side')} {o.get('qty')} {o.get('symbol')} {o.get('type')} "
        f"-> {o.get('status')}, filled {o.get('filled')}"
        for o in list(orders.values())[:_MAX_FILLS]
    ]
    checks = [
        f"{'PASS' if c.get('passed') else 'FAIL'} {c.get('id')}: {c.get('detail')}"
        for c in (grade.get("conformance") or {}).get("checks") or ()
        if isinstance(c, Mapping)
    ]
    scenario = grade.get("scenario") or {}
    text = f"""\
Explain this Kestrel grade to me: what the numbers say about how the session traded, \
which fills drove the result, whether every conformance rule held, and what to do \
differently next time. Cite the facts below; do not invent any.

Grade {grade.get("root")} of session {grade.get("session")} on scenario \
{scenario.get("id")} ({"passed" if grade.get("passed") else "did not pass"}).
Record {grade.get("record")}; anyone can re-verify it with {_tool("verify")}.

Metrics:
{_lines(_metrics(grade.get("metrics") or {}))}

Conformance:
{_lines(checks) or "- (no checks)"}

Orders ({len(orders)}):
{_lines(sides) or "- (none)"}

Fills ({len(fills)}):
{_lines(shown) or "- (none)"}"""
    return _user(text)


def prompts(tools: Iterable[Tool]) -> tuple[Prompt, ...]:
    """Kestrel's prompts, in ``prompts/list`` order, naming ``tools`` (the surface's)."""
    names = ToolNames(tools)
    return (
        Prompt(
            name="kestrel_trade_scenario",
            title="Trade a Kestrel scenario",
            description=(
                "Brief an agent to trade one scenario: its instruments, account, fees and fill "
                "terms from the catalog, the four statement kinds and the order's forms, and the "
                "tool workflow."
            ),
            arguments=(
                PromptArgument(
                    "scenario",
                    "A scenario id from the catalog, e.g. acme-trend.",
                    complete="scenario",
                ),
                PromptArgument(
                    "style",
                    f"How to trade: {', '.join(STYLES)} (default balanced).",
                    required=False,
                    complete=tuple(STYLES),
                ),
            ),
            render=partial(_trade_scenario, names),
        ),
        Prompt(
            name="kestrel_review_grade",
            title="Review a Kestrel grade",
            description=(
                "Ask the model to explain a grade: its metrics, the orders and fills behind "
                "them, and each conformance check."
            ),
            arguments=(
                PromptArgument(
                    "gradeRoot", "The root of one of your grades, sha256:<hex>.", complete="grade"
                ),
            ),
            render=partial(_review_grade, names),
        ),
    )
