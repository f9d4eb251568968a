"""``scenario.toml``: parse it, validate every member, and say on which line a fault is.

The line of each fault is found by :mod:`.terms_check`; the account's margin terms and
the instruments are parsed by :mod:`.account_terms` and :mod:`.instrument_terms`.
Every fault found is reported (not only the first), so one ``kestrel catalog --check``
run lists all of them.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .account_terms import MarginTerms, margin_terms
from .instrument_terms import InstrumentTerms, instrument_terms, tick_scale
from .terms_check import TermsChecker, TermsProblem

__all__ = [
    "BARS_PER_YEAR",
    "INTERVALS",
    "INTERVAL_SECONDS",
    "SCENARIO_FILE",
    "ScenarioTerms",
    "TermsProblem",
    "id_problem",
    "parse_terms",
]

SCENARIO_FILE = "scenario.toml"
"""The file of a scenario directory these terms are read from (beside its tape)."""
INTERVALS = ("1m", "5m", "1h", "1d")
INTERVAL_SECONDS = {"1m": 60, "5m": 300, "1h": 3600, "1d": 86400}
BARS_PER_YEAR = {"1m": 98280, "5m": 19656, "1h": 1638, "1d": 252}
"""The default ``bars_per_year`` of an interval: 252 trading days of 6.5 hours."""
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_ROOT = re.compile(r"sha256:[0-9a-f]{64}")
_TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)")

_TOP_KEYS = {
    "id",
    "title",
    "description",
    "tape",
    "interval",
    "bars_per_year",
    "account",
    "fees",
    "fill",
    "instruments",
    "sealed",
    "max_open_orders",
    "lineage",
    "forward",
    "news_in_frame",
    "news_aliases",
}
_TABLE_KEYS = {
    "account": (
        "cash",
        "shortable",
        "max_position",
        "max_drawdown",
        "kind",
        "leverage",
        "maintenance_margin",
        "borrow_rate",
        "cash_rate",
    ),
    "fees": ("bps", "minimum"),
    "fill": ("participation", "slippage_bps"),
}
MAX_NEWS_IN_FRAME = 50


@dataclass(frozen=True, slots=True)
class ScenarioTerms:
    """A validated scenario description, before its tape is known."""

    id: str
    title: str
    description: str
    tape: str
    interval: str
    bars_per_year: int
    cash: str
    shortable: bool
    max_position: int
    max_drawdown: str
    fee_bps: str
    fee_minimum: str
    participation: str
    slippage_bps: str
    instruments: tuple[InstrumentTerms, ...]
    id_line: int | None = None
    sealed: bool = False
    """No face serves the tape or a bar after a session's clock (not part of the root)."""
    max_open_orders: int | None = None
    """Lowers the runtime's bound on a session's open orders (not part of the root)."""
    lineage: str | None = None
    """A disguise's tag of its source's bars, shared by twins (not part of the root)."""
    forward: bool = False
    """A forward scenario: its tape (a prefix, possibly none) grows by appends while
    agents trade (its object carries ``forward``)."""
    news_in_frame: int | None = None
    """The newest news items a frame shows (default 5; the object's ``newsInFrame``)."""
    news_aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Names a symbol goes by in news text (a disguise renames them; not in the root)."""
    margin: MarginTerms | None = None
    """A margin account's terms (``[account] kind = "margin"``); ``None``: a cash account."""

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(instrument.symbol for instrument in self.instruments)

    @property
    def ticks(self) -> dict[str, str]:
        """Each instrument's tick, by symbol (what the tape readers check prices against)."""
        return {instrument.symbol: instrument.tick for instrument in self.instruments}

    @property
    def scale(self) -> int:
        """Decimal places of the tape's prices: the finest tick among the instruments."""
        return max(tick_scale(instrument.tick) for instrument in self.instruments)


_CENT = Decimal("0.01")


def id_problem(scenario_id: str) -> str | None:
    """What is wrong with ``scenario_id`` as a scenario's id, or ``None``."""
    if ID_PATTERN.fullmatch(scenario_id):
        return None
    return f"id {scenario_id!r} must match [a-z0-9][a-z0-9-]{{0,63}}"


def _cash_text(value: str) -> str:
    """Money to the cent, as the Scenario object carries it."""
    return f"{Decimal(value).quantize(_CENT, context=DEFAULT_DECIMAL_CONTEXT):f}"


def parse_terms(text: str) -> ScenarioTerms | list[TermsProblem]:
    """The validated terms, or every problem found (each with its line where known)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        position = _TOML_POSITION.search(message)
        line = int(position.group(1)) if position else None
        reason = _TOML_POSITION.sub("", message).strip()
        return [TermsProblem(line, f"not valid TOML: {reason}")]
    except RecursionError:
        return [TermsProblem(None, "not readable TOML: nested too deeply")]
    except ValueError:  # an integer of more digits than Python converts
        return [TermsProblem(None, "not readable TOML: a number too long")]

    check = TermsChecker(text, _TABLE_KEYS)
    for key in data:
        if key not in _TOP_KEYS:
            check.fault("", key, f"unknown key {key!r}")

    scenario_id = check.text(data, "", "id")
    problem = id_problem(scenario_id) if isinstance(data.get("id"), str) else None
    if problem is not None:
        check.fault("", "id", problem)
    title = check.text(data, "", "title")
    if "title" in data and isinstance(data["title"], str) and not title.strip():
        check.fault("", "title", "title must not be empty")
    description = check.text(data, "", "description", required=False)
    check.shown("", "title", title)
    check.shown("", "description", description, lines=True)
    forward = data.get("forward", False)
    if not isinstance(forward, bool):
        check.fault("", "forward", "forward must be true or false")
    # a forward scenario's tape is its prefix, and optional (absent: it starts empty)
    tape = check.text(data, "", "tape", required=forward is not True) or (
        "tape.csv" if forward is True and "tape" not in data else ""
    )
    if tape:
        parts = tape.replace("\\", "/").split("/")
        if tape.startswith(("/", "\\")) or ":" in tape or ".." in parts:
            check.fault("", "tape", f"tape {tape!r} must be a path inside the scenario directory")
        elif not tape.endswith((".csv", ".csv.gz")):
            check.fault("", "tape", f"tape {tape!r} must be a .csv or .csv.gz file")
    interval = check.text(data, "", "interval")
    if interval and interval not in INTERVALS:
        check.fault("", "interval", f"interval {interval!r} must be one of {', '.join(INTERVALS)}")
    bars_per_year = check.integer(data, "", "bars_per_year", low=1)

    account = check.table(data, "account")
    cash = check.decimal(account, "account", "cash", positive=True)
    if cash != "0" and Decimal(cash) != Decimal(cash).quantize(
        _CENT, context=DEFAULT_DECIMAL_CONTEXT
    ):
        check.fault("account", "cash", f"account.cash {cash} has more than 2 decimal places")
    shortable = account.get("shortable")
    if account and not isinstance(shortable, bool):
        if shortable is None:
            check.fault("account", None, "missing account.shortable")
        else:
            check.fault("account", "shortable", "account.shortable must be true or false")
    max_position = check.integer(account, "account", "max_position", low=1) if account else 1
    max_drawdown = (
        check.decimal(account, "account", "max_drawdown", positive=True, high=Decimal(1))
        if account
        else "1"
    )

    fees = check.table(data, "fees")
    fee_bps = check.decimal(fees, "fees", "bps") if fees else "0"
    fee_minimum = check.decimal(fees, "fees", "minimum") if fees else "0"

    margin = margin_terms(check, account)

    fill = check.table(data, "fill")
    participation = (
        check.decimal(fill, "fill", "participation", positive=True, high=Decimal(1))
        if fill
        else "1"
    )
    slippage_bps = check.decimal(fill, "fill", "slippage_bps") if fill else "0"

    instruments = instrument_terms(check, data.get("instruments"))
    sealed = data.get("sealed", False)
    if not isinstance(sealed, bool):
        check.fault("", "sealed", "sealed must be true or false")
    max_open = data.get("max_open_orders")
    if max_open is not None and (
        isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1
    ):
        check.fault("", "max_open_orders", "max_open_orders must be an integer of at least 1")

    lineage = data.get("lineage")
    if lineage is not None and (not isinstance(lineage, str) or not _ROOT.fullmatch(lineage)):
        check.fault("", "lineage", 'lineage must be a root such as "sha256:<64 hex digits>"')

    news_in_frame = data.get("news_in_frame")
    if news_in_frame is not None and (
        isinstance(news_in_frame, bool)
        or not isinstance(news_in_frame, int)
        or not 0 <= news_in_frame <= MAX_NEWS_IN_FRAME
    ):
        check.fault(
            "", "news_in_frame", f"news_in_frame must be an integer from 0 to {MAX_NEWS_IN_FRAME}"
        )
    aliases = _news_aliases(check, data.get("news_aliases"), {i.symbol for i in instruments})

    if check.problems:
        return check.problems
    return ScenarioTerms(
        id=scenario_id,
        title=title,
        description=description,
        tape=tape,
        interval=interval,
        bars_per_year=bars_per_year,
        cash=_cash_text(cash),
        shortable=bool(shortable),
        max_position=max_position,
        max_drawdown=max_drawdown,
        fee_bps=fee_bps,
        fee_minimum=fee_minimum,
        participation=participation,
        slippage_bps=slippage_bps,
        instruments=instruments,
        id_line=check.locate.line("", "id"),
        sealed=sealed is True,
        max_open_orders=max_open if isinstance(max_open, int) else None,
        lineage=lineage if isinstance(lineage, str) else None,
        forward=forward is True,
        news_in_frame=news_in_frame if isinstance(news_in_frame, int) else None,
        news_aliases=aliases,
        margin=margin,
    )


def _news_aliases(
    check: TermsChecker, value: Any, symbols: set[str]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``news_aliases = { ACME = ["Acme Corp", "Acme"] }``: each symbol's other names."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        check.fault("", "news_aliases", "news_aliases must be a table of symbol = [names]")
        return ()
    found: list[tuple[str, tuple[str, ...]]] = []
    for symbol, names in sorted(value.items()):
        if symbol not in symbols:
            check.fault("", "news_aliases", f"news_aliases names {symbol!r}, not an instrument")
        elif not isinstance(names, list) or not all(
            isinstance(name, str) and name.strip() for name in names
        ):
            check.fault("", "news_aliases", f"news_aliases.{symbol} must be a list of names")
        else:
            found.append((symbol, tuple(names)))
    return tuple(found)
