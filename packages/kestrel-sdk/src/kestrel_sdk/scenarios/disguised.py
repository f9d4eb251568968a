"""``disguise_scenario``: a catalog scenario made from another one, unrecognisable.

The bars are transformed as :mod:`kestrel_sdk.runtime.catalog.disguise` describes
(fictitious tickers, bars laid on a calendar of their own in 2200-2400, prices rescaled onto a
new tick, volumes scaled, returns kept within one tick's rounding); the terms (account,
fees, fill, interval, lots) are the source's. The title and description name nothing
of the source: the description carries only the commitment to (source, transform,
secret), which the reveal (:attr:`DisguisedScenario.reveal`) opens, and the salt of the
disguised tape (:mod:`~kestrel_sdk.runtime.catalog.seal_salt`): the commitment is listed
in the catalog, so without the salt the description was public and, sealed, the root
gave up the tape's length and end to a search. The same source and secret make the same
scenario, byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any

from kestrel_protocol import Scenario

from ..runtime.catalog.disguise import disguise_transform, disguised_tape_csv
from ..runtime.catalog.instrument_terms import tick_scale
from ..runtime.catalog.lineage import twin_toml
from ..runtime.catalog.model import LoadedScenario
from ..runtime.catalog.news import News
from ..runtime.catalog.news_disguise import disguised_news, news_tells, text_tells
from ..runtime.catalog.objects import scenario_object
from ..runtime.catalog.reveal import reveal_object
from ..runtime.catalog.seal_salt import salted_description
from ..runtime.catalog.tapes import TapeShape, parse_tape
from .imported import scenario_row
from .staged import write_staged

__all__ = ["DisguisedScenario", "disguise_scenario"]

DESCRIPTION = (
    "Real market bars in disguise: symbols, times and price levels are changed, returns "
    "are kept. Commitment {commitment}; the reveal names the source after the evaluation."
)


class DisguisedScenario:
    """A disguised scenario: its files, its protocol object and its reveal (keep the
    reveal private until the evaluation is over; ``kestrel scenario reveal`` publishes it)."""

    def __init__(
        self,
        scenario: Scenario,
        toml: str,
        tape: str,
        reveal: dict[str, Any],
        news: News | None = None,
    ) -> None:
        self.scenario = scenario
        self.toml = toml
        self.tape = tape
        self.reveal = reveal
        self.news = news
        """The source's news, moved and renamed (:mod:`~..runtime.catalog.news_disguise`)."""

    @property
    def id(self) -> str:
        return self.scenario.id

    @property
    def commitment(self) -> str:
        return str(self.reveal["commitment"])

    def entry(self) -> dict[str, Any]:
        """Its row in the catalog object (as ``kestrel catalog --json`` shows it)."""
        return {**scenario_row(self.scenario), "commitment": self.commitment}

    def write(self, directory: str | Path) -> Path:
        """Write ``scenario.toml`` and ``tape.csv`` (and ``news.jsonl``) into ``directory``
        by :func:`~.staged.write_staged` (a refused target raises ``ScenarioTargetError``);
        all appear at once. The reveal is not written here: check the target first
        (:func:`~.staged.check_target`), as ``kestrel scenario disguise`` does before it
        keeps the reveal."""
        text = self.tape.encode("utf-8")

        def tape(out: IO[bytes]) -> None:
            out.write(text)

        return write_staged(directory, tape, self.toml, self.news)


def _words(text: str) -> str:
    """``text`` in lower case, each run of other characters than letters and digits one
    space, between spaces (``"Alphabet Inc."`` and ``alphabet-inc`` alike)."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


def _names_source(text: str, source: LoadedScenario) -> str | None:
    """The source's id or symbol ``text`` contains, or a name its ``news_aliases`` lists
    (whole words), if any."""
    words = [source.id, *(item.symbol for item in source.scenario.instruments)]
    for word in words:
        if word.lower() in text.lower():
            return word
    for name in sorted({alias for names in source.news_aliases.values() for alias in names}):
        if _words(name) in _words(text):
            return name
    return None


def disguise_scenario(
    source: LoadedScenario,
    scenario_id: str,
    secret: bytes,
    *,
    title: str | None = None,
    sealed: bool = False,
) -> DisguisedScenario:
    """The disguise of ``source`` as ``scenario_id``, decided by ``secret`` (at least 16
    bytes: ``os.urandom(32)``). Sealed when ``sealed`` or when the source is.

    Raises ``ValueError`` naming the problem: a short secret, an id or title that names
    the source (its id, a symbol or a name its ``news_aliases`` lists) or would date it or
    tell its price level as news would (:func:`~..runtime.catalog.news_disguise.text_tells`:
    ``tape-2015``), an invalid id,
    news that would date the disguise or tell its price level
    (:func:`~..runtime.catalog.news_disguise.news_tells`).
    """
    if len(secret) < 16:
        raise ValueError("the secret must be at least 16 bytes (e.g. os.urandom(32))")
    origin = source.scenario
    tape = source.tape
    for what, text in (("id", scenario_id), ("title", title or "")):
        named = _names_source(text, source)
        if named is not None:
            raise ValueError(f"the {what} {text!r} names the source ({named}); choose another")
        dated = text_tells(text, tape)  # served as it is, sealed too: as news would be
        if dated is not None:
            raise ValueError(f"the {what} {text!r} names {dated}; choose another")
    told = None if source.news is None else news_tells(source.news, tape)
    if told is not None:
        raise ValueError(f"{told}; rewrite the source's news without it")
    transform = disguise_transform(tape, secret)
    reveal = reveal_object(scenario_id, origin, transform, secret)
    lots = {item.symbol: item.lot for item in origin.instruments}
    parts = sorted(transform.symbols, key=lambda part: part.disguised)
    instruments: list[dict[str, str | int]] = [
        {"symbol": part.disguised, "tick": part.tick, "lot": lots[part.symbol]} for part in parts
    ]
    symbols = " ".join(part.disguised for part in parts)
    scale = max(tick_scale(part.tick) for part in parts)
    csv = disguised_tape_csv(tape, transform, scale)
    toml, terms = twin_toml(
        source,
        scenario_id=scenario_id,
        title=title or f"{symbols} {origin.tape.interval} bars",
        # salted, sealed or not (a door may seal it): else its root gives up its length
        description=salted_description(DESCRIPTION.format(commitment=reveal["commitment"]), csv),
        instruments=instruments,
        sealed=sealed or source.sealed,
    )
    parsed = parse_tape(csv.encode("utf-8"), {part.disguised: part.tick for part in parts}, scale)
    if isinstance(parsed, list):  # pragma: no cover - the transform writes canonical bars
        raise ValueError(f"internal error: the disguised tape is invalid: {parsed[0].reason}")
    shape = TapeShape(
        bars=len(parsed), start=parsed.times[0], end=parsed.times[-1], root=parsed.root
    )
    news = (
        None
        if source.news is None
        else disguised_news(source.news, transform, source.news_aliases, tape.times)
    )
    news_root = None if news is None else news.root
    return DisguisedScenario(scenario_object(terms, shape, news_root), toml, csv, reveal, news)
