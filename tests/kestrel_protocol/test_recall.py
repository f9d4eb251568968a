"""What completion offers: the roots a caller was shown, newest first, bounded."""

from __future__ import annotations

from kestrel_protocol.surface import Recall


def _root(n: int) -> str:
    return f"sha256:{n:064x}"


def test_roots_are_offered_newest_first_and_a_root_seen_again_is_newest() -> None:
    recall = Recall()
    for n in range(3):
        recall.note({"pentad": {"root": _root(n)}})
    recall.note({"root": _root(0), "kind": "kestrel.record"})
    assert recall.roots() == [_root(0), _root(2), _root(1)]
    assert recall.grades() == []


def test_past_the_limit_the_oldest_roots_go_first_and_grades_are_kept_apart() -> None:
    recall = Recall(limit=3)
    recall.note({"kind": "kestrel.grade", "root": _root(100), "record": _root(101)})
    for n in range(5):
        recall.note({"pentad": {"root": _root(n)}})
    recall.note({"pentad": {"root": _root(3)}})  # seen again: newest, nothing dropped
    assert recall.roots() == [_root(3), _root(4), _root(2)]
    assert recall.grades() == [_root(100)]  # a grade is still offered as a grade root


def test_a_long_run_keeps_exactly_the_last_roots() -> None:
    recall = Recall(limit=1000)
    for n in range(25_000):
        recall.note({"pentad": {"root": _root(n)}, "pentads": [_root(10**6 + n)]})
    roots = recall.roots()
    assert len(roots) == 1000
    expected = [r for n in range(24_999, 24_499, -1) for r in (_root(n), _root(10**6 + n))]
    assert roots == expected


def test_roots_seen_again_across_many_notes_are_offered_as_the_last_ones_seen() -> None:
    # what moving a root seen again to the end and dropping the oldest would hold, read
    # after every note, with roots coming back before and after they fell out
    recall = Recall(limit=4)
    shown: list[str] = []
    for n in range(60):
        root = _root((n * 7) % 11)
        recall.note({"pentad": {"root": root}})
        shown = [r for r in shown if r != root] + [root]
        assert recall.roots() == shown[::-1][:4]
