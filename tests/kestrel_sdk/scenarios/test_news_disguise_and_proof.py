"""News through a disguise and a proof: the disguise renames every alias of a symbol in
headlines and bodies (and moves times with the bars), its reveal checks the news too; a
proof embeds the news and verifies in an empty home, and news changed in it fails
verification naming newsRoot. News that would date a disguise or tell its price level is
refused, naming the item and the words."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.reveal import RevealMismatch, check_reveal
from kestrel_sdk.scenarios import disguise_scenario

from tests.news_catalog import NEWS_ID, marker, news_items, write_news_scenario

SECRET = bytes(range(32))


def test_a_disguise_renames_a_symbols_aliases_in_headlines_and_bodies(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    write_news_scenario(catalog)
    source = load_catalog([catalog]).get(NEWS_ID)
    assert source is not None
    assert source.news is not None
    disguised = disguise_scenario(source, "tape-n1", SECRET)
    disguised.write(catalog / "tape-n1")
    twin = load_catalog([catalog]).get("tape-n1")
    assert twin is not None
    assert twin.news is not None
    renamed = {part["symbol"]: part["as"] for part in disguised.reveal["transform"]["symbols"]}
    text = (catalog / "tape-n1" / "news.jsonl").read_text("utf-8")
    assert "Acme" not in text
    assert "ACME" not in text
    assert "BETA" not in text
    assert "2023" not in text
    assert "2024" not in text
    first = twin.news.items[0]
    assert first.headline == f"{renamed['ACME']} update {marker(0)}"
    assert first.body.startswith(f"{renamed['ACME']} said {marker(0)}")
    assert {item.symbol for item in twin.news.items} == {renamed["ACME"], renamed["BETA"], None}
    assert disguised.news is not None
    assert twin.scenario.news_root == disguised.news.root
    # each item is visible at the disguised bar its source item was visible at
    for mine, theirs in zip(twin.news.items, source.news.items, strict=True):
        assert twin.news.visible(mine.time) == source.news.visible(theirs.time)
    # the reveal opens it, news included; a twin whose news differs is named
    check_reveal(twin, disguised.reveal, source)
    (catalog / "tape-n1" / "news.jsonl").write_text(text.replace(marker(5), "CHANGED"), "utf-8")
    changed = load_catalog([catalog]).get("tape-n1")
    assert changed is not None
    with pytest.raises(RevealMismatch) as raised:
        check_reveal(changed, disguised.reveal, source)
    assert raised.value.field == "newsRoot"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("Acme Corporation reported Q4 2023 results.", "'2023', a year near the source's bars"),
        ("Acme shares closed at $104.50 on the news.", "'$104.50', within 5 % of the source's"),
        ("Acme reported on Tuesday, Jan. 9th.", "'Jan. 9th', a day of the year (with its weekday"),
        ("Shares of BETA ended the day at 57.25.", "'57.25', within 5 % of the source's"),
        # issue 48: each of these was shown as it is
        ("Acme guided for Q4 FY23.", "'FY23', a year near the source's bars"),
        ("Acme's Q3 '23 call.", "\"Q3 '23\", a year near the source's bars"),
        ("Acme reported on 1/9/24, a Tuesday.", "'1/9/24', a day of the year (with its"),
        ("Acme rallied into Christmas.", "'Christmas', a day of the year (with its"),
        ("Acme closed at EUR104.50.", "'104.50', within 5 % of the source's"),
        ("Acme closed at 104.50USD.", "'104.50', within 5 % of the source's"),
        ("Acme closed at 104,50 € on the news.", "'104,50', within 5 % of the source's"),
        # issue 48, session 16: each of these was shown as it is; a move in money divided
        # into the disguised bar's move gives the factor, a day of the month the years
        ("Acme shares fell $4.50 on the news.", "'fell $4.50', a price move in money"),
        ("Acme rose 3.25 points.", "'rose 3.25 points', a price move in money"),
        ("Acme lost 45 cents.", "'lost 45 cents', a price move in money"),
        ("Acme was down 1.20 at the close.", "'down 1.20', a price move in money"),
        ("Acme reports on the 14th.", "'on the 14th', a day of the month (with its weekday"),
        ("Acme met on Thursday the 14th.", "'on Thursday the 14th', a day of the month"),
        # issue 48, session 17: a month was shown as it is; beside the item's disguised
        # date it tells where in the year the source is (the calendar no longer does)
        ("Acme's sales were strong in March.", "'March', a month (beside the disguised date"),
        ("Acme: Sept. orders rose.", "'Sept.', a month"),
        ("Acme hired in May.", "'May', a month"),
    ],
)
def test_news_that_would_date_the_disguise_or_tell_its_prices_is_refused(
    tmp_path: Path, body: str, named: str
) -> None:
    """A year near the source's bars, a day of the year or of the month, a month or a
    price near its range would be shown as it is by the disguise (a 22xx tape reporting
    "Q4 2023 results"): refused, naming the item, the field and the words; figures such
    as an EPS of $2.31 or a 104.5 % rise pass, and so do "may" and "Marketing"."""
    catalog = tmp_path / "catalog"
    directory = write_news_scenario(catalog)
    harmless = (
        "EPS of $2.31 against $1.94; revenue rose 104.5 % and 105.2 percent in 1998; "
        "12 Marketing staff may leave."
    )
    item = {"time": "2024-01-20T12:00:00Z", "symbol": "ACME", "headline": "Results", "body": ""}
    with (directory / "news.jsonl").open("a", encoding="utf-8") as news:
        news.write(json.dumps({**item, "body": harmless}) + "\n")
    source = load_catalog([catalog]).get(NEWS_ID)
    assert source is not None
    disguise_scenario(source, "tape-n1", SECRET)  # the harmless figures pass
    with (directory / "news.jsonl").open("a", encoding="utf-8") as news:
        news.write(json.dumps({**item, "time": "2024-01-30T12:00:00Z", "body": body}) + "\n")
    source = load_catalog([catalog]).get(NEWS_ID)
    assert source is not None
    with pytest.raises(ValueError, match="would show it") as raised:
        disguise_scenario(source, "tape-n1", SECRET)
    assert f"(2024-01-30T12:00:00Z) body names {named}" in str(raised.value)


def test_figures_that_are_no_price_move_nor_day_pass(tmp_path: Path) -> None:
    """An ordinal that is no day, a move in percent and an amount in billions tell
    neither the factor nor the date: the disguise shows them."""
    catalog = tmp_path / "catalog"
    directory = write_news_scenario(catalog)
    harmless = (
        "Acme, the 3rd largest maker, rose 4.5 % for the 2nd time; revenue rose $2 billion "
        "and sales increased 3.1 percent by the 2nd quarter; Acme added 300 jobs; orders "
        "rose 2.5 times and it gained 1.5 million subscribers."
    )
    item = {"time": "2024-01-20T12:00:00Z", "symbol": "ACME", "headline": "Results"}
    with (directory / "news.jsonl").open("a", encoding="utf-8") as news:
        news.write(json.dumps({**item, "body": harmless}) + "\n")
    source = load_catalog([catalog]).get(NEWS_ID)
    assert source is not None
    twin = disguise_scenario(source, "tape-n1", SECRET).write(catalog / "tape-n1")
    assert "the 3rd largest maker, rose 4.5 %" in (twin / "news.jsonl").read_text("utf-8")


def _kestrel(home: Path, catalog: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", *args],
        env={**os.environ, "KESTREL_HOME": str(home), "KESTREL_CATALOG_PATH": str(catalog)},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_the_cli_refuses_to_disguise_shipped_news_naming_its_years(tmp_path: Path) -> None:
    """``kestrel scenario disguise basket-20`` (its news reports "Q4 2021 results"):
    INVALID_ARGUMENT naming the item and the year, nothing written, no reveal kept."""
    home, out = tmp_path / "home", tmp_path / "tape-x"
    done = _kestrel(
        home, "", "scenario", "disguise", "basket-20", "--as", "tape-x", "--out", str(out)
    )
    assert done.returncode == 1, done
    assert done.stderr.startswith("kestrel: INVALID_ARGUMENT: news item n1 ("), done.stderr
    assert "body names '2021', a year near the source's bars (2022 to 2023)" in done.stderr
    assert done.stderr.rstrip().endswith("nothing written"), done.stderr
    assert not out.exists()
    assert not (home / "reveals").exists()


def test_the_cli_says_it_wrote_the_news_of_a_disguise_and_a_sealed_copy(tmp_path: Path) -> None:
    """A disguise and a sealed copy of a scenario with news hold a ``news.jsonl``, which
    their verifiers need (its root is the scenario's): the CLI names it as it names the
    other two files (it said only ``scenario.toml and tape.csv``)."""
    catalog, home = tmp_path / "catalog", tmp_path / "home"
    write_news_scenario(catalog)
    for command in ("disguise", "sealed-copy"):
        out = tmp_path / f"{command}-out"
        done = _kestrel(
            home, catalog, "scenario", command, NEWS_ID, "--as", "tape-n1", "--out", str(out)
        )
        assert done.returncode == 0, done
        lines = done.stdout.splitlines()
        assert lines[0] == f"wrote {out / 'scenario.toml'} and {out / 'tape.csv'}", lines
        assert lines[1] == f"wrote {len(news_items())} news items to {out / 'news.jsonl'}", lines
        assert (out / "news.jsonl").read_bytes().count(b"\n") == len(news_items())


def test_an_id_or_title_naming_a_news_alias_is_refused(tmp_path: Path) -> None:
    """The names a disguise hides in the news (``news_aliases``) are refused in its id and
    title as its source's id and symbols are, whatever their case and punctuation."""
    catalog = tmp_path / "catalog"
    toml = write_news_scenario(catalog) / "scenario.toml"
    aliases = '{ ACME = ["Acme Corporation", "Acme"], BETA = ["Coyote Works Inc."] }'
    toml.write_text(
        re.sub(r"(?m)^news_aliases = .*$", f"news_aliases = {aliases}", toml.read_text())
    )
    source = load_catalog([catalog]).get(NEWS_ID)
    assert source is not None
    assert source.news_aliases["BETA"] == ("Coyote Works Inc.",)
    with pytest.raises(ValueError, match=r"the id 'coyote-works-inc-7' names the source \(Coyote"):
        disguise_scenario(source, "coyote-works-inc-7", SECRET)
    with pytest.raises(ValueError, match=r"the title 'Coyote works, inc: daily' names the source"):
        disguise_scenario(source, "tape-n1", SECRET, title="Coyote works, inc: daily")
    assert disguise_scenario(source, "coyote-7", SECRET).id == "coyote-7"


def test_an_id_or_title_dating_the_source_or_naming_its_prices_is_refused() -> None:
    """The id and title are served wherever the disguise is, sealed too: an id such as
    ``tape-2015`` on a tape of 2010 to 2019 dated it (it passed), as a news item naming
    the year is refused; a day of the year or a price near the source's, likewise."""
    source = load_catalog([]).get("acme-trend")  # 2010-01-04 to 2019-08-30
    assert source is not None
    with pytest.raises(ValueError, match=r"the id 'tape-2015' names '2015', a year near the"):
        disguise_scenario(source, "tape-2015", SECRET)
    with pytest.raises(ValueError, match=r"the title 'Up from \$40.00 to Christmas' names"):
        disguise_scenario(source, "tape-z1", SECRET, title="Up from $40.00 to Christmas")
    assert disguise_scenario(source, "tape-1975", SECRET, title="Trend 7").id == "tape-1975"


def _proof(tmp_path: Path) -> dict[str, Any]:
    catalog = tmp_path / "catalog"
    write_news_scenario(catalog)
    runtime = Runtime(tmp_path / "home", [catalog])
    sid = runtime.open_session("alice", NEWS_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, "advance 5")
    runtime.submit("alice", sid, "buy 3 ACME\nadvance 20")
    assert isinstance(runtime.grade("alice", sid), GradeResult)
    proof = runtime.proof("alice", sid, embed_tape=True).to_json()
    runtime.shutdown()
    return proof


def test_a_proof_embeds_the_news_and_verifies_in_an_empty_home(tmp_path: Path) -> None:
    proof = _proof(tmp_path)
    assert proof["embedded"]["news"].count("\n") == len(news_items())
    assert proof["head"]["news"]  # the head frame shows news, its root replayed
    empty = Runtime(tmp_path / "empty", [])
    report = empty.verify_proof(proof)
    assert report.ok, report.to_json()
    # news changed in the proof: verification fails naming newsRoot
    tampered = json.loads(json.dumps(proof))
    tampered["embedded"]["news"] = tampered["embedded"]["news"].replace(marker(10), "NEWSMARK-X")
    failed = empty.verify_proof(tampered)
    assert not failed.ok
    assert failed.mismatch is not None
    assert failed.mismatch.field == "embedded.scenario.newsRoot", failed.to_json()
    # the news left out of a proof whose scenario has news: named too
    dropped = json.loads(json.dumps(proof))
    del dropped["embedded"]["news"]
    missing = empty.verify_proof(dropped)
    assert not missing.ok
    assert missing.mismatch is not None
    assert missing.mismatch.field == "embedded.scenario.newsRoot"
    empty.shutdown()
