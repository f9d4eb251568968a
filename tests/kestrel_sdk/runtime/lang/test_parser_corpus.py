"""The language front end's behaviour is pinned source by source: 2,675 generated sources
(every statement form, broken on purpose in every way ``corpus.py`` knows) give the same
statements, columns, diagnostics, reports and refusals as ``main``'s implementation did
before it was rewritten for speed (``corpus.json.gz``, made by ``corpus.py``)."""

from __future__ import annotations

import json

from tests.kestrel_sdk.runtime.lang.corpus import LONG, digest, load, observe, sources


def test_the_fixture_holds_the_corpus_generator_s_sources() -> None:
    # the generator is the corpus's documentation: it still describes the fixture
    assert [entry["source"] for entry in load()] == list(sources())


def test_every_source_is_observed_as_before() -> None:
    entries = load()
    assert len(entries) > 2500
    assert sum(len(entry["source"]) > LONG for entry in entries) > 50
    differ = []
    for entry in entries:
        source = entry["source"]
        seen = json.loads(json.dumps(observe(source)))  # tuples as lists, like the fixture
        if len(source) > LONG:
            same = digest(seen) == entry["sha256"]
        else:
            same = seen == {key: value for key, value in entry.items() if key != "source"}
        if not same:
            differ.append(source)
    assert differ == [], f"{len(differ)} sources differ, the first: {differ[0]!r}"
