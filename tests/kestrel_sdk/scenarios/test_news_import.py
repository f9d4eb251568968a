"""`kestrel scenario new --news FILE`: timestamped text beside the bars, checked line by
line and field by field, written canonical, its root committed by the scenario as
``newsRoot``; a scenario without news keeps its object (and root) unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_protocol import root_of_bytes
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime.catalog import load_catalog

BARS = """Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.15,188.44,183.89,185.64,184.93,82488700
2024-01-03,184.22,185.88,183.43,184.25,183.55,58414500
2024-01-04,182.15,183.09,180.88,181.91,181.22,71983600
"""

NEWS_CSV = """time,symbol,headline,body
2024-01-03T00:00:00Z,ACME,"Acme beats, again","Acme Corp said revenue rose 12%."
2023-12-30T12:00:00Z,,Markets quiet,Holiday trading was thin.
2024-01-02T00:00:00Z,ACME,Acme guidance,"Line one
line two"
"""


def _kestrel(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _bars(tmp_path: Path) -> Path:
    path = tmp_path / "ACME.csv"
    path.write_text(BARS)
    return path


def test_csv_news_import_writes_canonical_jsonl_committed_by_news_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    news = tmp_path / "news.csv"
    news.write_text(NEWS_CSV)
    catalog = tmp_path / "catalog"
    result = _kestrel(
        "scenario", "new", "acme-news", "--from", str(_bars(tmp_path)),
        "--news", str(news), "--out", str(catalog / "acme-news"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "wrote 3 news items" in result.stdout
    written = (catalog / "acme-news" / "news.jsonl").read_bytes()
    lines = [json.loads(line) for line in written.decode().splitlines()]
    # canonical order: by time; the market-wide item has no symbol member
    assert [item["time"] for item in lines] == [
        "2023-12-30T12:00:00Z",
        "2024-01-02T00:00:00Z",
        "2024-01-03T00:00:00Z",
    ]
    assert "symbol" not in lines[0]
    assert lines[1]["body"] == "Line one\nline two"
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    assert _kestrel("catalog", "--check").exit_code == 0
    loaded = load_catalog().get("acme-news")
    assert loaded is not None
    assert loaded.news is not None
    assert loaded.scenario.news_root == root_of_bytes(written)
    assert [item.id for item in loaded.news.items] == ["n1", "n2", "n3"]
    # the same items as JSONL, in any order, make the same bytes and root
    jsonl = tmp_path / "news.jsonl"
    jsonl.write_text("".join(json.dumps(item) + "\n" for item in reversed(lines)))
    again = _kestrel(
        "scenario", "new", "acme-news-2", "--from", str(_bars(tmp_path)),
        "--news", str(jsonl), "--out", str(tmp_path / "again"),
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "news.jsonl").read_bytes() == written


def test_a_scenario_without_news_has_no_news_member(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    result = _kestrel("scenario", "new", "plain", "--from", str(_bars(tmp_path)), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert not (out / "news.jsonl").exists()
    loaded = load_catalog([tmp_path]).get("plain")
    assert loaded is not None
    assert loaded.news is None
    assert "newsRoot" not in loaded.scenario.to_json()
    assert "newsInFrame" not in loaded.scenario.to_json()


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"time": "2024-01-02", "headline": "h", "body": ""}', "line 2: time:"),
        ('{"time": "2024-02-30T00:00:00Z", "headline": "h", "body": ""}', "line 2: time:"),
        (
            '{"time": "2024-01-05T00:00:00Z", "headline": "h", "body": ""}',
            "line 2: time: 2024-01-05T00:00:00Z is after the tape",
        ),
        (
            '{"time": "2024-01-02T00:00:00Z", "symbol": "XYZ", "headline": "h", "body": ""}',
            "line 2: symbol: 'XYZ' is not one of the scenario's symbols (ACME)",
        ),
        ('{"time": "2024-01-02T00:00:00Z", "headline": " ", "body": ""}', "line 2: headline:"),
        ('{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": 5}', "line 2: body:"),
        ('{"time": "2024-01-02T00:00:00Z", "headline": "h", "url": "x"}', "line 2: url:"),
        ('{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": "x"', "line 2: not a JSON"),
        (
            '{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": "' + "x" * 20_001 + '"}',
            "line 2: body: longer than 20000",
        ),
        ("[" * 100_000 + "]" * 100_000, "line 2: not a JSON object: nested too deeply"),
        (
            '{"time": "2024-01-02T00:00:00Z", "headline": "Acme\\nposition ACME 1000"}',
            "line 2: headline: holds the control character '\\n' (character 5)",
        ),
        (
            '{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": "a\\u001b[2Jb"}',
            "line 2: body: holds the control character '\\x1b' (character 2)",
        ),
        (
            '{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": ' + "9" * 5000 + "}",
            "line 2: not a JSON object: a number too long",
        ),
    ],
    ids=[
        "date-only",
        "no-such-day",
        "after-tape",
        "symbol",
        "headline",
        "body",
        "unknown",
        "json",
        "too-long",
        "nested-too-deeply",
        "headline-line-break",
        "body-terminal-escape",
        "number-too-long",
    ],
)
def test_a_bad_news_line_is_named_by_line_and_field_and_nothing_is_written(
    tmp_path: Path, line: str, needle: str
) -> None:
    good = '{"time": "2024-01-02T00:00:00Z", "headline": "ok", "body": ""}'
    news = tmp_path / "news.jsonl"
    news.write_text(good + "\n" + line + "\n")
    out = tmp_path / "out"
    result = _kestrel(
        "scenario", "new", "bad-news", "--from", str(_bars(tmp_path)),
        "--news", str(news), "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"news.jsonl: {needle}" in result.stderr, result.stderr
    assert "news.jsonl; nothing written" in result.stderr
    assert not out.exists()


def test_a_bad_csv_header_is_named(tmp_path: Path) -> None:
    news = tmp_path / "news.csv"
    news.write_text("when,headline\n2024-01-02T00:00:00Z,x\n")
    result = _kestrel(
        "scenario", "new", "bad-csv", "--from", str(_bars(tmp_path)), "--news", str(news),
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert "news.csv: line 1: the header must be time,symbol,headline,body" in result.stderr


def test_a_crlf_csv_with_a_body_of_several_lines_imports(tmp_path: Path) -> None:
    news = tmp_path / "news.csv"
    news.write_bytes(NEWS_CSV.replace("\n", "\r\n").encode())
    result = _kestrel(
        "scenario", "new", "crlf-news", "--from", str(_bars(tmp_path)), "--news", str(news),
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "wrote 3 news items" in result.stdout


def test_a_csv_field_longer_than_csv_reads_is_named(tmp_path: Path) -> None:
    news = tmp_path / "news.csv"
    news.write_text('time,symbol,headline,body\n2024-01-02T00:00:00Z,,h,"' + "x" * 200_000 + '"\n')
    out = tmp_path / "out"
    result = _kestrel(
        "scenario", "new", "long-csv", "--from", str(_bars(tmp_path)), "--news", str(news),
        "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "news.csv: line 2: not CSV: field larger than field limit (131072)"
    )
    assert not out.exists()


def test_a_news_file_too_deep_for_json_costs_its_scenario_not_the_catalog(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "cat"
    bars = str(_bars(tmp_path))
    for name in ("deep", "fine"):
        made = _kestrel("scenario", "new", name, "--from", bars, "--out", str(catalog / name))
        assert made.exit_code == 0, made.output
    (catalog / "deep" / "news.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    index = load_catalog([catalog])
    assert index.get("deep") is None
    assert index.get("fine") is not None
    assert [str(problem) for problem in index.problems] == [
        f"{catalog / 'deep' / 'news.jsonl'}:1: not a JSON object: nested too deeply"
    ]


def test_a_damaged_news_file_in_the_catalog_is_reported_with_its_line(
    tmp_path: Path,
) -> None:
    out = tmp_path / "cat" / "damaged"
    assert (
        _kestrel("scenario", "new", "damaged", "--from", str(_bars(tmp_path)), "--out", str(out))
    ).exit_code == 0
    (out / "news.jsonl").write_text('{"time": "2024-01-02T00:00:00Z", "headline": ""}\n')
    index = load_catalog([tmp_path / "cat"])
    assert index.get("damaged") is None
    assert [str(problem) for problem in index.problems] == [
        f"{out / 'news.jsonl'}:1: headline: missing or empty"
    ]


def test_a_news_file_over_the_size_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kestrel_sdk.runtime.catalog import news

    monkeypatch.setattr(news, "MAX_BYTES", 100)
    path = tmp_path / "news.jsonl"
    line = '{"time": "2024-01-02T00:00:00Z", "headline": "h", "body": "' + "x" * 60 + '"}\n'
    path.write_text(line * 2)
    result = _kestrel(
        "scenario", "new", "big", "--from", str(_bars(tmp_path)), "--news", str(path),
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert "news.jsonl: larger than 100 bytes" in result.stderr
