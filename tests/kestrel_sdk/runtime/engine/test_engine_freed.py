"""An engine let go (a session discarded, a gym episode ended) is freed at once by
reference counting, with its orders and fills: no reference cycle runs through it, so
nothing of it waits for the cyclic collector, whose passes over a dropped episode's
thousands of objects the next steps would pay for (docs/engine.md, "Memory")."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.engine.orders import LiveOrder

from tests.kestrel_sdk.runtime.engine.tapes import daily

ROWS = [(p, p, p, p) for p in ("100", "101", "102", "103", "104", "105")]


@contextmanager
def _no_cyclic_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def test_a_session_s_engine_is_freed_as_soon_as_it_is_let_go() -> None:
    with _no_cyclic_collector():
        engine = SessionEngine(daily(ROWS), "ks_t")
        engine.submit("buy 10 ACME\nadvance")
        engine.submit("sell 10 ACME\nadvance\nbuy 5 ACME limit 1.00 tif gtc\nadvance")
        engine.frame()  # the frame's object and the blotter made too
        engine.blotter()
        assert [o.status for o in engine.orders] == ["filled", "filled", "new"]
        held = weakref.ref(engine)
        orders = {id(order) for order in engine.orders}
        del engine
        assert held() is None
        assert not [o for o in gc.get_objects() if isinstance(o, LiveOrder) and id(o) in orders]
