"""``--model kestrel/news``: the offline agent that reads a basket's news from its frames'
text and rebalances by target weights, end to end through the Inspect task on
``basket-20``; and the offline agents read a wide frame's rows as they read a narrow
frame's lines."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from kestrel_inspect import METADATA_KEY, kestrel_trading
from kestrel_inspect.scripted import read_frame

from tests.kestrel_inspect.test_task import verify_in_empty_home

REPO = Path(__file__).resolve().parents[2]
TAPE = REPO / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data/basket-20/tape.csv"

WIDE = """\
submission 4 applied
frame 4 of ks_x on basket-20: open, bar 41 (2022-03-01T00:00:00Z), 463 bars remaining
bars (symbol open high low close volume; the close is the mark):
ACRN 93.81 94.38 92.47 93.69 925000
INDEX 1021.96 1023.88 1018.78 1020.69 5375000
SLVR 162.36 164.15 158.73 159.53 737500
account: equity 100589.60, cash 71071.50, realized 0.00, unrealized 618.50, fees 28.90, \
peak 100668.30, drawdown 0.00078178
positions (symbol qty avgPrice unrealized):
ACRN 10 92.95 7.40
INDEX 30 999.34 213.50
orders: none
events:
bar 40 fill o1 10 @ 92.95 fee 0.93
news:
  n7 2022-02-25T21:05:00Z: Central bank cuts its policy rate by 25 bp | The central bank ...
  n8 2022-02-28T21:05:00Z SLVR: SLVR beats estimates: quarterly EPS $1.10 vs $0.98 expected \
| Silverline Bank (Finance) reported ..."""


def test_a_wide_frame_reads_as_its_rows_and_its_news() -> None:
    frame = read_frame(WIDE)
    assert frame is not None
    assert frame["status"] == "open"
    assert frame["bar"] == 41
    assert frame["marks"] == {"ACRN": "93.69", "INDEX": "1020.69", "SLVR": "159.53"}
    assert frame["account"] == {"equity": "100589.60"}
    assert frame["positions"] == [
        {"symbol": "ACRN", "qty": "10"},
        {"symbol": "INDEX", "qty": "30"},
    ]
    assert frame["news"] == [
        {
            "id": "n7",
            "time": "2022-02-25T21:05:00Z",
            "headline": "Central bank cuts its policy rate by 25 bp",
        },
        {
            "id": "n8",
            "time": "2022-02-28T21:05:00Z",
            "symbol": "SLVR",
            "headline": "SLVR beats estimates: quarterly EPS $1.10 vs $0.98 expected",
        },
    ]


def test_the_news_agent_trades_basket_20_to_a_verified_grade_above_its_index(
    tmp_path: Path,
) -> None:
    [log] = inspect_eval(
        kestrel_trading("basket-20", home=str(tmp_path / "home")),
        model="kestrel/news",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = read_eval_log(log.location).samples or []
    assert sample.scores is not None
    score = sample.scores["kestrel_scorer"]
    proof = (score.metadata or {})[METADATA_KEY]["proof"]
    grade = proof["grade"]
    assert grade["passed"] is True
    sources = "".join(p["body"]["bytes"] for p in proof["pentads"])
    assert "buy INDEX to 90%" in sources
    assert len(proof["pentads"]) > 500  # a bar a call, to the end of the tape
    targets = [line for line in sources.splitlines() if " to " in line]
    assert len({line.split()[1] for line in targets}) >= 15
    assert all(line.startswith(("buy ", "sell ", "advance")) for line in sources.splitlines())
    closes = [
        Decimal(row.split(",")[5])
        for row in TAPE.read_text(encoding="utf-8").splitlines()[1:]
        if row.split(",")[1] == "INDEX"
    ]
    assert Decimal(grade["metrics"]["return"]) > closes[-1] / closes[0] - 1 + Decimal("0.2")
    done = verify_in_empty_home(proof, tmp_path / "verify")
    assert done.returncode == 0, done.stderr
    assert f"ok: proof {proof['root']} of grade {grade['root']}" in done.stdout
