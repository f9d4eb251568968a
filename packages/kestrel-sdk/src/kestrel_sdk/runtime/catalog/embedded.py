"""A scenario carried inside a proof: its terms and tape, validated like a user's files.

The terms are written back as ``scenario.toml`` text and parsed by the same rules as a
file on ``KESTREL_CATALOG_PATH``; the tape goes through the same CSV validation. So an
embedded scenario can never be one the catalog would refuse, and the object rebuilt
from it (:func:`~.objects.scenario_object`) is the one the catalog would publish.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kestrel_protocol import root_of_bytes

from .account_terms import margin_keys
from .builder import terms_toml
from .model import LoadedScenario, Tape
from .news import News, parse_news
from .objects import scenario_object
from .shared_tapes import shared_tape
from .tapes import TapeShape, parse_tape, render_tape
from .terms import ScenarioTerms, parse_terms

__all__ = ["load_embedded"]


def _get(data: Mapping[str, Any], path: str, kind: type | tuple[type, ...]) -> Any:
    value: Any = data
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"scenario.{path} is missing or not of the right type")
    return value


def load_embedded(
    scenario: Mapping[str, Any], tape: str, news: str | None = None
) -> LoadedScenario:
    """The scenario described by ``scenario`` (a ``kestrel.scenario`` object as JSON
    data) over the tape ``tape`` (CSV text), with the news ``news`` (JSONL text) if
    any. Its ``root`` members are not trusted: the returned scenario's object is rebuilt
    (``newsRoot`` from the news given), so the caller compares it with what it was
    shown. Raises ``ValueError`` naming the first problem."""
    instruments = _get(scenario, "instruments", list)
    items: list[dict[str, str | int]] = []
    for index, item in enumerate(instruments):
        if not isinstance(item, Mapping):
            raise ValueError(f"scenario.instruments[{index}] is not an object")
        items.append(
            {
                "symbol": _get(item, "symbol", str),
                "tick": _get(item, "tick", str),
                "lot": _get(item, "lot", (int, str)),
            }
        )
    toml = terms_toml(
        scenario_id=_get(scenario, "id", str),
        title=_get(scenario, "title", str),
        description=_get(scenario, "description", str),
        interval=_get(scenario, "tape.interval", str),
        bars_per_year=_get(scenario, "tape.barsPerYear", int),
        cash=_get(scenario, "account.cash", str),
        shortable=_get(scenario, "account.shortable", bool),
        max_position=_get(scenario, "account.maxPosition", int),
        max_drawdown=_get(scenario, "account.maxDrawdown", str),
        fee_bps=_get(scenario, "fees.bps", str),
        fee_minimum=_get(scenario, "fees.minimum", str),
        participation=_get(scenario, "fill.participation", str),
        slippage_bps=_get(scenario, "fill.slippageBps", str),
        instruments=items,
        margin=margin_keys(_get(scenario, "account", Mapping)),
        forward="forward" in scenario,
    )
    in_frame = scenario.get("newsInFrame")
    if in_frame is not None:
        toml = f"news_in_frame = {_get(scenario, 'newsInFrame', int)}\n" + toml
    terms = parse_terms(toml)
    if isinstance(terms, list):
        raise ValueError(f"the embedded scenario's terms: {terms[0].reason}")
    parsed = parse_tape(tape.encode("utf-8"), terms.ticks, terms.scale)
    if isinstance(parsed, list):
        problem = parsed[0]
        where = f"line {problem.line}: " if problem.line is not None else ""
        raise ValueError(f"the embedded tape: {where}{problem.reason}")
    loaded_tape = shared_tape(parsed)
    if terms.forward:
        return _forward(scenario, terms, loaded_tape)
    shape = TapeShape(
        bars=len(parsed), start=parsed.times[0], end=parsed.times[-1], root=parsed.root
    )
    checked: News | None = None
    if news is not None:
        found = parse_news(news.encode("utf-8"), terms.symbols, last_time=shape.end)
        if isinstance(found, list):
            raise ValueError(f"the embedded news: {found[0]}")
        checked = found
    news_root = None if checked is None else checked.root
    return LoadedScenario(
        scenario_object(terms, shape, news_root), None, lambda: loaded_tape, news=checked
    )


def _forward(scenario: Mapping[str, Any], terms: ScenarioTerms, tape: Tape) -> LoadedScenario:
    """A frozen forward scenario: its object rebuilt from the tape's first
    ``forward.bars`` bars (its declared prefix), over the whole tape (the bars after it
    are bound by the frames of the sessions that were shown them)."""
    bars = _get(scenario, "forward.bars", int)
    if not 0 <= bars <= len(tape):
        raise ValueError(f"scenario.forward.bars {bars} is not within the tape's {len(tape)}")
    text = render_tape(tape)
    rows = text.splitlines(keepends=True)
    prefix = "".join(rows[: 1 + bars * len(tape.symbols)])
    times = tape.times[:bars]
    shape = TapeShape(
        bars=bars,
        start=times[0] if times else "",
        end=times[-1] if times else "",
        root=root_of_bytes(prefix.encode("utf-8")),
    )
    return LoadedScenario(scenario_object(terms, shape), None, lambda: tape, forward=True)
