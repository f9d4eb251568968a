"""Per-session bounds: how large one session may grow, so one session cannot take the
server (its frame and blotter are sent whole on every read).

Open orders are bounded (default :data:`DEFAULT_MAX_OPEN_ORDERS`): a submission that
could leave more orders open than the bound, at any statement, is refused before it is
applied (``LIMIT_EXCEEDED``, ``detail.limit == "openOrders"``) and nothing is stored.
"Could": an ``advance`` is counted as filling nothing, so the check needs no tape; a
``cancel`` of an open order (by id or alias, placed before or in the same submission)
and ``cancel all [SYMBOL]`` count as they will apply. The bound is the runtime's
(``kestrel-door serve --max-open-orders``), lowered by a scenario's ``max_open_orders``;
it is checked on submission only, never on replay: an accepted submission stays valid
whatever the bound later is.
"""

from __future__ import annotations

from kestrel_protocol import KestrelError, RefusalCode

from .engine import Program, SessionEngine
from .lang.syntax import Cancel, Order

__all__ = ["DEFAULT_MAX_OPEN_ORDERS", "check_open_orders", "open_order_bound"]

DEFAULT_MAX_OPEN_ORDERS = 1000


def open_order_bound(runtime_bound: int, scenario_bound: int | None) -> int:
    """The bound a session on a scenario gets: the runtime's, or the scenario's if lower."""
    return runtime_bound if scenario_bound is None else min(runtime_bound, scenario_bound)


def check_open_orders(engine: SessionEngine, program: Program, bound: int) -> None:
    """Refuse ``program`` when it could leave more than ``bound`` orders open (the cost
    is the open orders', and nothing for a program that places none)."""
    if not program.places or len(engine.open_orders) + program.placed <= bound:
        return
    statements = program.statements
    open_now = {order.id: order.symbol for order in engine.open_orders}
    aliases = {o.alias: o.id for o in engine.open_orders if o.alias is not None}
    next_id = len(engine.orders) + 1
    for statement in statements:
        if isinstance(statement, Order):
            order_id = f"o{next_id}"
            for child in range(statement.placed):  # the entry, then a bracket's children
                open_now[f"o{next_id + child}"] = statement.symbol
            next_id += statement.placed
            if statement.alias is not None:
                aliases[statement.alias] = order_id
            if len(open_now) > bound:  # only a new order can break it (a session
                _refuse(len(open_now), bound)  # over a since-lowered bound may cancel)
        elif isinstance(statement, Cancel):
            if statement.ref is not None:
                open_now.pop(aliases.get(statement.ref, statement.ref), None)
            else:
                kept = {
                    k: v
                    for k, v in open_now.items()
                    if statement.symbol is not None and v != statement.symbol
                }
                open_now = kept


def _refuse(found: int, bound: int) -> None:
    raise KestrelError(
        RefusalCode.LIMIT_EXCEEDED,
        f"this submission would leave {found} orders open; a session may have at most "
        f"{bound} (openOrders); cancel some first",
        {"limit": "openOrders", "max": bound, "found": found},
    )
