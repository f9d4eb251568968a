"""A corpus of Kestrel sources and what the language front end makes of each.

``sources()`` generates the corpus (seeded, so the same every run): every statement form
of docs/spec.md §3 with its options in every order and case, then the same lines broken
on purpose (tokens dropped, doubled, swapped or replaced by bad numbers, unicode
look-alikes, quotes and backslashes), comments, blank and whitespace lines, a byte order
mark, long lines, multi-line sources whose statements refer to each other, and sources
at the size and statement limits.

``observe(source)`` is everything a caller can see of one source: the located statements
and syntax diagnostics of ``parse_located``, the reports of ``validate_source`` with a
scenario and with a scenario and a session, and what a session's ``Programs.check`` makes
of it (its statements, or its refusal with every diagnostic).

``corpus.json.gz`` holds the observations made by the implementation on ``main`` before the
front end was rewritten for speed (commit 2d9fa7d); ``test_parser_corpus.py`` checks that
today's implementation observes the same. Regenerate it only for an intended change of
behaviour, and say so in the commit::

    uv run python -m tests.kestrel_sdk.runtime.lang.corpus
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import MISSING, fields
from decimal import Decimal
from pathlib import Path
from typing import Any

from kestrel_protocol import KestrelError
from kestrel_sdk.runtime.engine.program import Programs
from kestrel_sdk.runtime.lang import SessionContext, parse_located, validate_source

from tests.kestrel_sdk.runtime.engine.tapes import scenario

__all__ = ["FIXTURE", "LONG", "digest", "expected", "load", "observe", "sources"]

FIXTURE = Path(__file__).with_name("corpus.json.gz")
LONG = 400
"""Sources longer than this are kept in the fixture with the digest of their observation."""

_DAYS = ("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05")
_ROW = ("100", "101", "99", "100", 1_000_000)
SCENARIO = scenario(
    [(f"{d}T00:00:00Z", {"ACME": _ROW, "BRK.B": _ROW}) for d in _DAYS],
    tick="0.05",
    lot=10,
)
SESSION = SessionContext(
    orders=2, aliases=frozenset({"entry", "exit"}), clock=1, times=SCENARIO.tape.times
)

# -- observing ---------------------------------------------------------------------------


def _value(value: Any) -> Any:
    return value if value is None or isinstance(value, str | bool) else repr(value)


_WHOLE_QTY = re.compile(r"qty=Decimal\('([0-9]+)'\)")
"""A whole quantity in a statement's repr, pinned as the integer it was (see :func:`_field`)."""


def _field(statement: Any, name: str) -> Any:
    """A statement's field as the fixture holds it. An order's quantity is a ``Decimal``
    since fractional lots; a whole one is pinned as the integer it was before them."""
    value = getattr(statement, name)
    if name == "qty" and isinstance(value, Decimal) and value == value.to_integral_value():
        return repr(int(value))
    return _value(value)


def _diagnostics(found: Any) -> list[list[Any]]:
    return [[d.line, d.column, d.code, d.severity, d.message] for d in found]


def _refusal(err: KestrelError) -> dict[str, Any]:
    detail = dict(err.detail)
    if "diagnostics" in detail:
        detail["diagnostics"] = [list(d.values()) for d in detail["diagnostics"]]
    return {"refusal": err.code, "message": str(err), "detail": detail}


def observe(source: str) -> dict[str, Any]:
    """Every output of the front end for ``source``, as JSON data (diagnostics as lists of
    line, column, code, severity and message)."""
    seen: dict[str, Any] = {}
    try:
        located, diagnostics = parse_located(source)
    except KestrelError as err:
        seen["parse"] = _refusal(err)
    else:
        seen["parse"] = [
            [
                [type(item.statement).__name__]
                + [
                    _field(item.statement, f.name)
                    for f in fields(item.statement)
                    # the order forms' parts are absent from a plain order (docs/spec.md §3)
                    if f.default is MISSING or getattr(item.statement, f.name) is not None
                ]
                + [list(item.columns.items())]
                for item in located
            ],
            _diagnostics(diagnostics),
        ]
    for name, args in (("scenario", (SCENARIO,)), ("session", (SCENARIO, SESSION))):
        try:
            report = validate_source(source, *args)
        except KestrelError as err:
            seen[name] = _refusal(err)
        else:
            seen[name] = [report.ok, report.statements, _diagnostics(report.diagnostics)]
    try:
        program = Programs(SCENARIO).check(source, lambda: SESSION)
    except KestrelError as err:
        seen["program"] = refused = _refusal(err)
        session = seen["session"]
        if isinstance(session, list) and refused["detail"] == {"diagnostics": session[2]}:
            refused["detail"] = "the session report's diagnostics"
    else:
        seen["program"] = [_WHOLE_QTY.sub(r"qty=\1", repr(st)) for st in program.statements]
    return seen


def digest(seen: dict[str, Any]) -> str:
    """The sha256 of an observation (what the fixture keeps of a long source's)."""
    text = json.dumps(seen, ensure_ascii=True, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def expected(source: str) -> dict[str, Any]:
    """A fixture entry: the observation itself, or its digest for a long source."""
    seen = observe(source)
    if len(source) > LONG:
        return {"source": source, "sha256": digest(seen)}
    return {"source": source, **seen}


# -- generating --------------------------------------------------------------------------

_SPACES = (" ", " ", " ", "  ", "\t", " \t ", "\f", "\v", "\r")
_BAD_NUMBERS = (
    "0", "00", "01", "-1", "+1", "1.", ".5", "1.5", "1e3", "1_000", "999999999", "1000000000",
    "1234567890", "٣", "１", "¹", "1,5", "0.0", "0.00", "000.000", "12345678901234567.89",
    "12345678901234567.891", "99999999999999999999", "0.05", "0.03", "100.07", "abc", "",
)  # fmt: skip
_BAD_WORDS = (
    "ＡＣＭＥ", "mar\u212aet", "\u212aill", "İ", "ß", "straße", "a\u0301", "\u00a0", "\x00",
    "\x1c", "\u2028", "\ud800", "\U0001f985", "o0", "o01", "o3", "o99999999999999999999",
    "all", "ALL", "to", "down", "as", "tif", "limit", "stop", "market", "day", "gtc", "ioc",
    "entry", "exit", "x", "a-b_c", "Entry", "9ACME", "ACME.", "ACMEACMEACMEA", "brk.b",
    "acme", "XYZ", "BRK.B", "a" * 32, "a" * 33, "#", "#x", "a#b", '"', '""', '"a b"',
    '"a\\"b"', '"a\\\\"', '"\\', '"x\\"', 'a"b"', '"a"b', "\\", "\\\\", "2024-01-03T00:00:00Z",
)  # fmt: skip
_TIMES = (
    "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z",
    "2024-01-03t12:00z", "2024-01-04T00:00:00.5Z", "2024-01-05T00:00:00+00:00",
    "2024-01-05T00:00:01Z", "2024-01-06T00:00:00Z", "2023-12-31T23:59:59Z",
    "2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-03T24:00:00Z",
    "2024-01-03T00:60:00Z", "2024-01-03T00:00:61Z", "2024-01-03T00:00:00.Z",
    "2024-01-03T00:00:00.1234567890Z", "2024-01-03T00:00:00+02:00", "2024-01-03 00:00:00Z",
    "2024-1-3T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "tomorrow",
)  # fmt: skip
_REASONS = ('"done"', '""', '"a # b"', '"say \\"hi\\""', '"C:\\\\"', '"\\n"', '"ünïcode 🦅"')


def _case(rng: random.Random, word: str) -> str:
    pick = rng.random()
    if pick < 0.6:
        return word
    if pick < 0.8:
        return word.upper()
    return "".join(c.upper() if rng.random() < 0.5 else c for c in word)


def _qty(rng: random.Random) -> str:
    return rng.choice(("1", "10", "20", "15", "37", "100", "990", "999999999", "2500"))


def _price(rng: random.Random) -> str:
    return rng.choice(("100", "100.05", "99.95", "101.25", "0.05", "100.03", "7", "98.50"))


def _order(rng: random.Random) -> list[str]:
    words = [_case(rng, rng.choice(("buy", "sell"))), _qty(rng)]
    words.append(rng.choice(("ACME", "acme", "BRK.B", "brk.b", "XYZ", "Acme")))
    kind = rng.choice(("", "market", "limit", "stop", "stop-limit"))
    if kind == "market":
        words.append(_case(rng, "market"))
    elif kind in ("limit", "stop"):
        words += [_case(rng, kind), _price(rng)]
    elif kind == "stop-limit":
        words += [_case(rng, "stop"), _price(rng), _case(rng, "limit"), _price(rng)]
    if rng.random() < 0.4:
        words += [_case(rng, "tif"), _case(rng, rng.choice(("day", "gtc", "ioc")))]
    if rng.random() < 0.4:
        words += [_case(rng, "as"), rng.choice(("entry", "exit", "a", "b", "stop-1", "z_9"))]
    return words


def _statement(rng: random.Random) -> list[str]:
    pick = rng.random()
    if pick < 0.45:
        return _order(rng)
    if pick < 0.6:
        ref = rng.choice(("o1", "o2", "o3", "o4", "entry", "exit", "a", "b", "nope"))
        if rng.random() < 0.3:
            return [_case(rng, "cancel"), _case(rng, "all")] + (
                [rng.choice(("ACME", "brk.b", "XYZ"))] if rng.random() < 0.5 else []
            )
        return [_case(rng, "cancel"), ref]
    if pick < 0.9:
        if rng.random() < 0.35:
            return [_case(rng, "advance"), _case(rng, "to"), rng.choice(_TIMES)]
        return [_case(rng, "advance")] + ([] if rng.random() < 0.3 else [_qty(rng)])
    return [_case(rng, "stand"), _case(rng, "down")] + (
        [rng.choice(_REASONS)] if rng.random() < 0.5 else []
    )


def _mutate(rng: random.Random, words: list[str]) -> list[str]:
    words = list(words)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        pick = rng.random()
        i = rng.randrange(len(words)) if words else 0
        if pick < 0.2 and words:
            del words[i]
        elif pick < 0.35 and words:
            words.insert(i, words[i])
        elif pick < 0.45 and len(words) > 1:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif pick < 0.65:
            words[i:i] = [rng.choice(_BAD_NUMBERS)]
            if words[i + 1 :]:
                del words[i + 1]
        elif pick < 0.9:
            words[i:i] = [rng.choice(_BAD_WORDS)]
            if words[i + 1 :] and rng.random() < 0.5:
                del words[i + 1]
        else:
            words.append(rng.choice(_BAD_WORDS + _BAD_NUMBERS))
    return words


def _line(rng: random.Random, broken: float) -> str:
    pick = rng.random()
    if pick < 0.05:
        return ""
    if pick < 0.08:
        return rng.choice(_SPACES) * rng.randrange(1, 4)
    if pick < 0.12:
        return rng.choice(("#", "# a plan", '# "quoted', "  ## x y z", "#\t"))
    words = _statement(rng)
    if rng.random() < broken:
        words = _mutate(rng, words)
    if rng.random() < 0.15:
        glue = rng.choice(("#", '"', "\\"))
        words.append(glue + rng.choice(("", "x", "y z")))
    text = rng.choice(("", "", "", " ", "\t")) + "".join(
        w + rng.choice(_SPACES) for w in words
    ).rstrip(" ")
    if rng.random() < 0.1:
        text += rng.choice(("  # note", "# x", '#"', ' # "a b"'))
    return text


def sources(seed: int = 20261203) -> Iterator[str]:
    """The corpus, the same on every run."""
    rng = random.Random(seed)
    fixed = [
        "", "\n", "\ufeff", "\ufeffbuy 10 ACME", "buy 10 ACME\ufeff", "advance\n\ufeffadvance",
        "buy 37 ACME\nadvance 1\n", "sell 37 ACME\r\nadvance 1\r\n", "\r", "\n\n\n",
        "buy 10 ACME as a\nbuy 10 ACME as a\nbuy 10 ACME as a", "stand down\nstand down",
        'stand down "x\nfly', "advance\n\ud800", "buy 10 ACME\ncancel o3\ncancel o4",
        "buy 10 ACME as later\ncancel later\ncancel entry\ncancel o02",
        "advance 2\nadvance to 2024-01-03T00:00:00Z\nadvance to 2024-01-04T00:00:00Z",
        "advance 999999999\nadvance to 2024-01-05T00:00:00Z",
    ]  # fmt: skip
    yield from fixed
    for _ in range(1500):  # one line each, half of them broken
        yield _line(rng, broken=0.5)
    for _ in range(1100):  # several lines
        yield "\n".join(_line(rng, broken=0.2) for _ in range(rng.randrange(2, 8)))
    for _ in range(25):  # long lines and many lines
        yield " ".join(rng.choice(_BAD_WORDS) for _ in range(rng.randrange(50, 400)))
        yield "\n".join(_line(rng, broken=0.1) for _ in range(rng.randrange(50, 200)))
    yield "# " + "x" * (64 * 1024 - 2)  # exactly at the byte limit
    yield "#" * 64_000 + "é" * 1000  # over it in bytes, under it in characters
    yield "advance\n" * 8191 + "advance"  # the most statements 64 KiB holds, 8,192
    yield "advance\n" * 8192 + "\ud800"  # over the byte limit by a lone surrogate's bytes
    yield "x\n" * 10_000  # the most statements a source may hold, each a K100
    yield "x\n" * 10_001  # one statement too many
    yield '"\n' * 10_001  # an unterminated quote is a statement, but is not counted out


def load() -> list[dict[str, Any]]:
    """The fixture's entries."""
    entries: list[dict[str, Any]] = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    return entries


def main() -> None:
    lines = [json.dumps(expected(source), ensure_ascii=True) for source in sources()]
    text = "[\n" + ",\n".join(lines) + "\n]\n"
    FIXTURE.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{len(lines)} sources -> {FIXTURE}")


if __name__ == "__main__":
    main()
