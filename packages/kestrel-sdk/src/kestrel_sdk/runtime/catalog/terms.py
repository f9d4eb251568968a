"""``scenario.toml``: parse it, validate every member, and say on which line a fault is.

``tomllib`` gives no positions for values, so a small scan of the text finds the line of
a key inside its table; a user fixing a scenario wants ``scenario.toml:12``, not a dump.
Every fault found is reported (not only the first), so one ``kestrel catalog --check``
run lists all of them.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = [
    "BARS_PER_YEAR",
    "INTERVALS",
    "INTERVAL_SECONDS",
    "InstrumentTerms",
    "MarginTerms",
    "ScenarioTerms",
    "TermsProblem",
    "lot_member",
    "margin_keys",
    "parse_terms",
    "tick_scale",
]

INTERVALS = ("1m", "5m", "1h", "1d")
INTERVAL_SECONDS = {"1m": 60, "5m": 300, "1h": 3600, "1d": 86400}
BARS_PER_YEAR = {"1m": 98280, "5m": 19656, "1h": 1638, "1d": 252}
"""The default ``bars_per_year`` of an interval: 252 trading days of 6.5 hours."""
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
SYMBOL_PATTERN = re.compile(r"[A-Z][A-Z0-9.]{0,11}")
_ROOT = re.compile(r"sha256:[0-9a-f]{64}")
_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?")
_TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)")
_TABLE_HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.\- ]+?)\s*\]\]?\s*(#.*)?$")
_KEY_LINE = re.compile(r"\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

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
_INSTRUMENT_KEYS = ("symbol", "tick", "lot")
MAX_NEWS_IN_FRAME = 50


@dataclass(frozen=True, slots=True)
class TermsProblem:
    """One fault in a ``scenario.toml`` (``line`` is 1-based, ``None`` when unknown)."""

    line: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class InstrumentTerms:
    symbol: str
    tick: str
    lot: int | str
    """Whole lots as an integer (as always); a fractional lot as its canonical decimal
    text (``"0.01"``): the form the Scenario object carries (see :func:`lot_member`)."""


@dataclass(frozen=True, slots=True)
class MarginTerms:
    """A margin account's terms (decimal strings, rates per year of 365 days)."""

    leverage: str
    maintenance_margin: str
    borrow_rate: str
    cash_rate: str


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
    def scale(self) -> int:
        """Decimal places of the tape's prices: the finest tick among the instruments."""
        return max(tick_scale(instrument.tick) for instrument in self.instruments)


def lot_member(text: str) -> int | str:
    """A lot's member form: an integer when whole (``"1"``, ``"10.0"`` → ``1``, ``10``),
    else its canonical decimal text (``"0.010"`` → ``"0.01"``)."""
    value = Decimal(text).normalize()
    if value == value.to_integral_value():
        return int(value)
    return f"{value:f}"


def tick_scale(tick: str) -> int:
    """Decimal places a tick needs (``"0.01"`` → 2, ``"0.50"`` → 1, ``"5"`` → 0)."""
    exponent = Decimal(tick).normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


class _Locator:
    """Finds the line of ``key`` inside a table (``""`` = top level), best effort."""

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, int, str], int] = {}
        self._headers: dict[tuple[str, int], int] = {}
        table, index = "", 0
        counts: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            header = _TABLE_HEADER.match(line)
            if header and not _KEY_LINE.match(line):
                table = header.group(2).strip()
                if header.group(1) == "[[":
                    index = counts.get(table, 0)
                    counts[table] = index + 1
                else:
                    index = 0
                self._headers.setdefault((table, index), number)
                continue
            key = _KEY_LINE.match(line)
            if key:
                name = key.group(1).strip('"')
                self._lines.setdefault((table, index, name), number)

    def line(self, table: str, key: str | None, index: int = 0) -> int | None:
        if key is not None:
            found = self._lines.get((table, index, key))
            if found is not None:
                return found
        return self._headers.get((table, index))


class _Checker:
    def __init__(self, text: str) -> None:
        self.locate = _Locator(text)
        self.problems: list[TermsProblem] = []

    def fault(self, table: str, key: str | None, reason: str, index: int = 0) -> None:
        self.problems.append(TermsProblem(self.locate.line(table, key, index), reason))

    @staticmethod
    def _name(table: str, key: str, index: int | None = None) -> str:
        if not table:
            return key
        where = f"{table}[{index}]" if index is not None else table
        return f"{where}.{key}"

    def text(self, data: dict[str, Any], table: str, key: str, *, required: bool = True) -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.fault(table, None, f"missing {self._name(table, key)}")
            return ""
        if not isinstance(value, str):
            self.fault(table, key, f"{self._name(table, key)} must be a string")
            return ""
        return value

    def decimal(
        self,
        data: dict[str, Any],
        table: str,
        key: str,
        *,
        low: Decimal | None = None,
        high: Decimal | None = None,
        positive: bool = False,
        index: int | None = None,
    ) -> str:
        name = self._name(table, key, index)
        at = 0 if index is None else index
        value = data.get(key)
        if value is None:
            self.fault(table, None, f"missing {name}", at)
            return "0"
        if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
            self.fault(
                table,
                key,
                f'{name} must be a decimal string such as "0.01" (quoted, no sign or exponent),'
                f" not {value!r}",
                at,
            )
            return "0"
        number = Decimal(value)
        if positive and number <= 0:
            self.fault(table, key, f"{name} must be greater than 0, not {value}", at)
        if low is not None and number < low:
            self.fault(table, key, f"{name} must be at least {low}, not {value}", at)
        if high is not None and number > high:
            self.fault(table, key, f"{name} must be at most {high}, not {value}", at)
        return value

    def integer(
        self, data: dict[str, Any], table: str, key: str, *, low: int, index: int | None = None
    ) -> int:
        name = self._name(table, key, index)
        at = 0 if index is None else index
        value = data.get(key)
        if value is None:
            self.fault(table, None, f"missing {name}", at)
            return low
        if isinstance(value, bool) or not isinstance(value, int):
            self.fault(table, key, f"{name} must be an integer, not {value!r}", at)
            return low
        if value < low:
            self.fault(table, key, f"{name} must be at least {low}, not {value}", at)
            return low
        if value > 2**53 - 1:
            self.fault(table, key, f"{name} is too large ({value})", at)
            return low
        return value

    def table(self, data: dict[str, Any], name: str) -> dict[str, Any]:
        value = data.get(name)
        if value is None:
            self.fault("", None, f"missing table [{name}]")
            return {}
        if not isinstance(value, dict):
            self.fault("", name, f"{name} must be a table [{name}]")
            return {}
        for key in value:
            if key not in _TABLE_KEYS[name]:
                self.fault(name, key, f"unknown key {key!r} in [{name}]")
        return value


def _cash_text(value: str) -> str:
    """Money to the cent, as the Scenario object carries it."""
    return f"{Decimal(value).quantize(Decimal('0.01')):f}"


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

    check = _Checker(text)
    for key in data:
        if key not in _TOP_KEYS:
            check.fault("", key, f"unknown key {key!r}")

    scenario_id = check.text(data, "", "id")
    if scenario_id and not ID_PATTERN.fullmatch(scenario_id):
        check.fault("", "id", f"id {scenario_id!r} must match [a-z0-9][a-z0-9-]{{0,63}}")
    title = check.text(data, "", "title")
    if "title" in data and isinstance(data["title"], str) and not title.strip():
        check.fault("", "title", "title must not be empty")
    description = check.text(data, "", "description", required=False)
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
    if cash != "0" and Decimal(cash) != Decimal(cash).quantize(Decimal("0.01")):
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

    margin = _margin(check, account)

    fill = check.table(data, "fill")
    participation = (
        check.decimal(fill, "fill", "participation", positive=True, high=Decimal(1))
        if fill
        else "1"
    )
    slippage_bps = check.decimal(fill, "fill", "slippage_bps") if fill else "0"

    instruments = _instruments(check, data.get("instruments"))
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


_MARGIN_KEYS = ("leverage", "maintenance_margin", "borrow_rate", "cash_rate")


def margin_keys(account: Mapping[str, Any]) -> dict[str, str] | None:
    """A Scenario object's account members (JSON, camelCase) as ``scenario.toml``'s
    margin keys, or ``None`` for a cash account (no ``kind``)."""
    if account.get("kind") != "margin":
        return None
    found: dict[str, str] = {}
    for key in _MARGIN_KEYS:
        head, *rest = key.split("_")
        value = account.get(head + "".join(part.title() for part in rest))
        found[key] = value if isinstance(value, str) else ""
    return found


def _margin(check: _Checker, account: dict[str, Any]) -> MarginTerms | None:
    """``[account] kind = "margin"`` and its four terms, or ``None`` (a cash account)."""
    kind = account.get("kind")
    if kind is None:
        for key in _MARGIN_KEYS:
            if key in account:
                check.fault(
                    "account",
                    key,
                    f"unknown key {key!r} in [account] (a margin account's term:"
                    ' it needs kind = "margin")',
                )
        return None
    if kind != "margin":
        check.fault("account", "kind", f'account.kind must be "margin", not {kind!r}')
        return None
    leverage = check.decimal(account, "account", "leverage", low=Decimal(1), high=Decimal(100))
    maintenance = check.decimal(
        account, "account", "maintenance_margin", positive=True, high=Decimal(1)
    )
    borrow = check.decimal(account, "account", "borrow_rate", high=Decimal(10))
    cash = check.decimal(account, "account", "cash_rate", high=Decimal(10))
    return MarginTerms(
        leverage=leverage, maintenance_margin=maintenance, borrow_rate=borrow, cash_rate=cash
    )


def _news_aliases(
    check: _Checker, value: Any, symbols: set[str]
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


def _instruments(check: _Checker, value: Any) -> tuple[InstrumentTerms, ...]:
    if value is None:
        check.fault("", None, "missing [[instruments]] (at least one)")
        return ()
    if not isinstance(value, list) or not value:
        check.fault("", "instruments", "instruments must be an array of tables [[instruments]]")
        return ()
    found: list[InstrumentTerms] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            check.fault("", "instruments", "instruments must be an array of tables [[instruments]]")
            continue
        for key in item:
            if key not in _INSTRUMENT_KEYS:
                check.fault("instruments", key, f"unknown key {key!r} in [[instruments]]", index)
        symbol = item.get("symbol")
        if not isinstance(symbol, str) or not SYMBOL_PATTERN.fullmatch(symbol):
            check.fault(
                "instruments",
                None if symbol is None else "symbol",
                f"instruments[{index}].symbol must be an upper-case symbol matching "
                f"[A-Z][A-Z0-9.]{{0,11}}, not {symbol!r}",
                index,
            )
            symbol = ""
        elif symbol in seen:
            check.fault("instruments", "symbol", f"duplicate instrument {symbol}", index)
        seen.add(symbol)
        tick = check.decimal(item, "instruments", "tick", positive=True, index=index)
        if tick != "0" and tick_scale(tick) > 8:
            check.fault(
                "instruments", "tick", f"instruments[{index}].tick {tick} is finer than 1e-8", index
            )
        found.append(InstrumentTerms(symbol=symbol, tick=tick, lot=_lot(check, item, index)))
    return tuple(found)


def _lot(check: _Checker, item: dict[str, Any], index: int) -> int | str:
    """An instrument's lot: an integer of at least 1 (as always), or a decimal string
    above 0 with at most 8 places (``"0.01"``); ``"1"`` when absent."""
    value = item.get("lot")
    if value is None:
        return 1
    if isinstance(value, int) and not isinstance(value, bool):
        return check.integer(item, "instruments", "lot", low=1, index=index)
    lot = check.decimal(item, "instruments", "lot", positive=True, index=index)
    if lot == "0" or Decimal(lot) <= 0:
        return 1
    if tick_scale(lot) > 8:
        check.fault(
            "instruments", "lot", f"instruments[{index}].lot {lot} is finer than 1e-8", index
        )
        return 1
    if Decimal(lot) >= 10**9:
        check.fault("instruments", "lot", f"instruments[{index}].lot {lot} is too large", index)
        return 1
    return lot_member(lot)
