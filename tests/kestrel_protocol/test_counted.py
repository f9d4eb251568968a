"""Every face counts things in the number's own form: "1 proof", never "1 proofs"."""

from __future__ import annotations

from kestrel_protocol import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "proof") == "1 proof"
    assert counted(0, "proof") == "0 proofs"
    assert counted(2519, "bar") == "2519 bars"
    assert counted(1, "news item") == "1 news item"
    assert counted(3, "news item") == "3 news items"
    assert counted(2, "entry", "entries") == "2 entries"
