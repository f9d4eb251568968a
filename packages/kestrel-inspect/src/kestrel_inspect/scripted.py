"""Offline agents: ``--model kestrel/momentum``, ``kestrel/hold`` and ``kestrel/news``.

Model APIs registered with Inspect that need no network and no key: they read the
conversation as a model would (the trading brief, then each tool result) and answer
with the next Kestrel tool call, so an evaluation runs end to end on any machine, in
CI or before paying for a model. They call the same MCP tools a model is given, through
the same task, solver and scorer; their scores are real grades of real sessions.

- ``kestrel/momentum``: every ``step`` bars (default 20; ``-M step=N``), buys about half
  the account's equity of the scenario's first symbol when its close rose over the last
  step and it holds none, and sells what it holds when the close fell.
- ``kestrel/hold``: buys about half the equity at the first bar and holds it to the end
  (a buy-and-hold baseline on the same tapes).
- ``kestrel/news``: every ``step`` bars (default 1), reads the news lines of the frame
  and rebalances by target weight: a stock whose earnings beat is held for 15 bars, a
  miss dropped, the rest in ``INDEX`` (:mod:`.news`; made for ``basket-20``).

Both read the tool results' text, as a model does (a frame's is a few compact lines,
``kestrel_protocol.surface.compact``, read by :func:`read_frame`). They read bar 0's frame
after opening, then advance until the session stands down at the end of its tape, then
stop calling tools; the task's scorer grades the session. A
refusal stops the agent and is said in its last message, but for ``BAR_NOT_PUBLISHED``
(a forward tape not grown that far yet: the harness's submit tool has already waited
for it, :mod:`.forward`): the agent submits the same again, up to
:data:`PATIENCE` times in a row, then stops where its session stands. Usage is counted as a quarter
of the characters read and written, so Inspect downloads no tokenizer.
"""

from __future__ import annotations

import functools
import json
import re
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .calls import tool_name
from .forward import NOT_PUBLISHED, refusal_code
from .news import NewsBook, news_lines, rebalance

__all__ = ["PATIENCE", "STRATEGIES", "ScriptedAgent", "next_call", "read_frame"]

STRATEGIES = ("momentum", "hold", "news")
"""The offline agents' model names: ``kestrel/momentum``, ``kestrel/hold``, ``kestrel/news``."""
STEPS = {"momentum": 20, "hold": 20, "news": 1}
"""Each agent's default ``step`` (bars advanced a call)."""

OPEN_TOOL = tool_name("open_session")
SUBMIT_TOOL = tool_name("submit")
FRAME_TOOL = tool_name("frame")
SCENARIO = re.compile(r"Kestrel scenario (\S+)")
LOT = re.compile(r"^- ([A-Za-z0-9._, -]+): tick [0-9.]+, lot ([0-9.]+)", re.MULTILINE)
MAX_POSITION = re.compile(r"max position (\d+)")
FRACTION = Decimal("0.5")
FRAME = re.compile(r"^frame \d+ of \S+ on \S+: ([a-z-]+), bar (\d+) ", re.MULTILINE)
MARKS = re.compile(r"^marks: (.+)$", re.MULTILINE)
EQUITY = re.compile(r"^account: equity (\S+),", re.MULTILINE)
POSITIONS = re.compile(r"^positions: (.+)$", re.MULTILINE)
PATIENCE = 3
"""How many ``BAR_NOT_PUBLISHED`` in a row the agents submit again after."""


def _rows(text: str, title: str) -> list[list[str]]:
    """The rows under a wide frame's ``title (...):`` line (``surface.wide``)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{title} (")), None)
    if start is None or not lines[start].endswith(":"):
        return []
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        words = line.split()
        if not words or words[0].endswith(":") or line.startswith(("account:", "orders")):
            break
        rows.append(words)
    return rows


@functools.lru_cache(maxsize=8192)
def _read_frame(text: str) -> dict[str, Any] | None:
    head, equity = FRAME.search(text), EQUITY.search(text)
    if head is None or equity is None:
        return None
    marks, held = MARKS.search(text), POSITIONS.search(text)
    if marks is not None and held is not None:  # a frame of a few symbols: one line each
        prices = dict(m.split() for m in marks.group(1).split(", "))
        rows = [p.split()[:2] for p in held.group(1).split("; ") if p != "none"]
    elif "\nbars (" in text:  # a wide frame: a row a symbol, a row a position
        prices = {row[0]: row[4] for row in _rows(text, "bars")}
        rows = [row[:2] for row in _rows(text, "positions")]
    else:
        return None
    return {
        "status": head.group(1),
        "bar": int(head.group(2)),
        "marks": prices,
        "account": {"equity": equity.group(1)},
        "positions": [{"symbol": symbol, "qty": qty} for symbol, qty in rows],
        "news": news_lines(text),
    }


def read_frame(text: str) -> dict[str, Any] | None:
    """What the agents act on in a frame's text, as a model reads it (the compact lines
    of a frame or submit result, kestrel_protocol.surface.compact, a wide frame's rows
    too): its status, clock bar, marks, equity, positions and news; ``None`` when
    ``text`` shows no frame."""
    return _read_frame(text)


def _result(message: ChatMessageTool) -> dict[str, Any]:
    if message.error is not None:
        said = message.error.message or message.text
        return {"refused": said, "code": refusal_code(said)}
    frame = read_frame(message.text)
    if frame is not None:
        return {"frame": frame}
    try:
        data = json.loads(message.text)  # the open's result: its JSON
    except ValueError:
        return {"refused": message.text}
    return data if isinstance(data, dict) else {"refused": message.text}


def _last_call(messages: list[ChatMessage]) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments of the conversation's last tool call."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant) and message.tool_calls:
            call = message.tool_calls[-1]
            return call.function, dict(call.arguments)
    return None


def _quantity(frame: dict[str, Any], symbol: str, lot: Decimal, cap: int) -> int:
    close = Decimal(frame["marks"][symbol])
    equity = Decimal(frame["account"]["equity"])
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        lots = (equity * FRACTION / close / lot).to_integral_value(rounding=ROUND_FLOOR)
        return min(int(lots * lot), cap)


def _held(frame: dict[str, Any], symbol: str) -> int:
    return sum(int(p["qty"]) for p in frame["positions"] if p["symbol"] == symbol)


def next_call(strategy: str, messages: list[ChatMessage], step: int) -> ModelOutput:
    """The next tool call of ``strategy`` given the conversation so far (or the closing
    message once the session has stood down or a call was refused)."""
    model = f"kestrel/{strategy}"
    brief = messages[0].text if messages else ""
    found = SCENARIO.search(brief)
    if found is None:
        return ModelOutput.from_content(model, "No Kestrel scenario is named in the brief.")
    scenario = found.group(1).rstrip(".,:")
    results = [_result(m) for m in messages if isinstance(m, ChatMessageTool)]
    if not results:
        return ModelOutput.for_tool_call(model, OPEN_TOOL, {"scenario": scenario})
    last = results[-1]
    waited = 0
    while waited < len(results) and results[-1 - waited].get("code") == NOT_PUBLISHED:
        waited += 1
    if 0 < waited <= PATIENCE:  # the forward tape has not grown that far yet: again
        again = _last_call(messages)
        if again is not None:
            return ModelOutput.for_tool_call(model, again[0], again[1])
    if "refused" in last:
        return ModelOutput.from_content(model, f"Kestrel refused my last call: {last['refused']}")
    session = str(results[0].get("sessionId"))
    if len(results) == 1:  # read bar 0's frame before the first decision
        return ModelOutput.for_tool_call(model, FRAME_TOOL, {"sessionId": session})
    frames = [r["frame"] for r in results[1:] if "frame" in r]
    if not frames:
        return ModelOutput.from_content(model, f"No frame of session {session} to read.")
    frame = frames[-1]
    if frame["status"] != "open":
        return ModelOutput.from_content(model, f"Session {session} ended: {frame['status']}.")
    source = f"advance {step}"
    symbol = sorted(frame["marks"])[0]
    lots = {
        symbol: Decimal(m.group(2))
        for m in LOT.finditer(brief)
        for symbol in m.group(1).split(", ")
    }
    cap = MAX_POSITION.search(brief)
    qty = _quantity(
        frame, symbol, lots.get(symbol, Decimal(1)), int(cap.group(1)) if cap else 10**9
    )
    held = _held(frame, symbol)
    if strategy == "news":
        book = NewsBook()
        for seen in frames:
            book.read(seen["news"], seen["bar"])
        weights = book.weights(frame["bar"], frame["marks"])
        statements = rebalance(
            frame["marks"], frame["positions"], frame["account"]["equity"], weights
        )
        source = "\n".join([*statements, source])
    elif strategy == "hold":
        if held == 0 and len(frames) == 1 and qty > 0:
            source = f"buy {qty} {symbol}\n{source}"
    elif len(frames) > 1:
        rose = Decimal(frame["marks"][symbol]) > Decimal(frames[-2]["marks"][symbol])
        if rose and held == 0 and qty > 0:
            source = f"buy {qty} {symbol}\n{source}"
        elif not rose and held > 0:
            source = f"sell {held} {symbol}\n{source}"
    return ModelOutput.for_tool_call(model, SUBMIT_TOOL, {"sessionId": session, "source": source})


@modelapi(name="kestrel")
class ScriptedAgent(ModelAPI):
    """Inspect's model API for the offline agents (``kestrel/momentum``, ``kestrel/hold``,
    ``kestrel/news``)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        step: int | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in STRATEGIES:
            raise ValueError(
                f"kestrel/{model_name} is not an offline agent: use one of "
                + ", ".join(f"kestrel/{s}" for s in STRATEGIES)
            )
        if model_args:
            raise ValueError(f"kestrel/{model_name} takes only step, not {', '.join(model_args)}")
        step = STEPS[model_name] if step is None else int(step)
        if step < 1:
            raise ValueError(f"kestrel/{model_name}: step must be at least 1, got {step}")
        self.step = step

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        output = next_call(self.model_name, input, self.step)
        read = sum(len(m.text) for m in input) // 4
        written = len(output.message.text) // 4 + sum(
            len(json.dumps(call.arguments)) // 4 for call in output.message.tool_calls or []
        )
        output.usage = ModelUsage(
            input_tokens=read, output_tokens=written, total_tokens=read + written
        )
        return output
