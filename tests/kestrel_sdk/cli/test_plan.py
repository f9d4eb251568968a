from __future__ import annotations

from kestrel_sdk.cli.plan import LONG_RUN_BARS, estimate_bars, plan_chunks


def test_estimate_counts_advances() -> None:
    assert estimate_bars("buy 1 ACME\nadvance\nADVANCE 5 # five\nadvance 10\n") == 16
    assert estimate_bars("advance to 2024-01-01T00:00:00Z\n") == LONG_RUN_BARS


def test_chunks_keep_line_numbers_and_bars() -> None:
    source = "buy 10 ACME\n" + "advance 1\n" * 300 + "stand down\n"
    chunks = plan_chunks(source, pieces=10)
    assert sum(c.bars for c in chunks) == 300
    assert len(chunks) > 5
    for chunk in chunks:
        lines = chunk.source.split("\n")
        # every non-blank line of a chunk sits at its line number in the source
        for number, text in enumerate(lines, start=1):
            if text.strip():
                assert source.split("\n")[number - 1] == text
    assert chunks[-1].source.rstrip().endswith("stand down")


def test_a_long_advance_is_split_on_its_own_line() -> None:
    source = "buy 10 ACME\nadvance 1000\nsell 10 ACME\n"
    chunks = plan_chunks(source, pieces=4)
    advances = [c for c in chunks if "advance" in c.source]
    assert sum(c.bars for c in advances) == 1000
    assert all(c.source.startswith("\n") and c.source.count("\n") == 2 for c in advances)
    joined = [c.source.strip() for c in chunks]
    assert joined[0] == "buy 10 ACME"
    assert joined[-1] == "sell 10 ACME"
