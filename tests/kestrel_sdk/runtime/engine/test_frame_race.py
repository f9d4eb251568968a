"""A step's frame object is made on first read from the engine's state while the engine
has not moved on (:meth:`FrameBuilder._unchanged`). A read that began before the next
submission and is still making the object when that submission changes the engine (a
reader on another thread, a submission on the session's) must not keep what it made: the
state it read from is then partly the next step's. Driven here deterministically: the
next submission runs inside the read, after the read took the frame's values and before
it makes the object from them."""

from __future__ import annotations

from typing import Any

from kestrel_protocol import SessionFrame
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.frame_values import FrameValues


def test_a_frame_whose_read_the_next_submission_overtakes_is_the_frame_it_was() -> None:
    loaded = load_catalog([]).get("acme-trend")
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_overtaken")
    engine.submit("buy 10 ACME\nadvance 2")
    step = engine.submit("advance 1")
    models = engine._frames._models  # the objects' maker, which the read calls last
    make = models.frame

    def overtaken(*args: Any) -> SessionFrame:
        models.frame = make  # type: ignore[method-assign]  # (once)
        engine.submit("sell 4 ACME\nbuy 1 ACME limit 1 tif gtc\nadvance 3")
        return make(*args)

    models.frame = overtaken  # type: ignore[method-assign,assignment]
    read = step.frame
    assert models.frame is make, "the read made no object from the engine's state"
    assert read == SessionFrame.model_validate_json(step.text)
    assert (read.positions[0].qty, read.orders) == (10, [])
    assert step.values() == FrameValues.of(read)
