"""``render_frame``: the human rendering of a frame.

A rendering is for people reading a terminal or a log; the frame (and its root) stays
the truth. Plain text, no colour codes, stable layout: clock and status first, then
marks, account, positions, open orders and the events since the previous frame.
"""

from __future__ import annotations

from kestrel_protocol import FrameEvent, FrameOrder, SessionFrame
from kestrel_protocol.quoting import counted

__all__ = ["render_frame"]


def _order(order: FrameOrder) -> str:
    price = ""
    if order.type == "limit":
        price = f" limit {order.limit}"
    elif order.type == "stop":
        price = f" stop {order.stop}"
    elif order.type == "stop-limit":
        price = f" stop {order.stop} limit {order.limit}"
    elif order.type == "trailing-stop":
        price = f" trail {order.trail} stop {order.stop}"
    if order.target is not None:
        price += f" to {order.target}"
    if order.group is not None:
        price += f" oco {order.group}"
    if order.parent is not None:
        price += f" of {order.parent}"
    alias = f" as {order.alias}" if order.alias else ""
    filled = f" filled {order.filled}/{order.qty}" if order.filled not in (0, "0") else ""
    return (
        f"  {order.id} {order.side} {order.qty} {order.symbol} {order.type}{price}"
        f" tif {order.tif}{alias} [{order.status}]{filled}"
    )


def _event(event: FrameEvent) -> str:
    parts = [f"  bar {event.bar}: {event.type}"]
    if event.order is not None:
        parts.append(event.order)
    if event.qty is not None:
        parts.append(f"{event.qty}")
    if event.price is not None:
        parts.append(f"@ {event.price}")
    if event.fee is not None:
        parts.append(f"fee {event.fee}")
    if event.reason:
        parts.append(f"({event.reason})")
    return " ".join(parts)


def render_frame(frame: SessionFrame) -> str:
    """A compact, human-readable rendering of a frame; callers choose to use it."""
    clock = frame.clock
    account = frame.account
    lines = [
        f"{frame.session} seq {frame.seq} · {frame.scenario.id} · {frame.status}",
        f"clock  bar {clock.bar} {clock.time}"
        + ("" if clock.remaining is None else f" ({counted(clock.remaining, 'bar')} remaining)"),
        "marks  " + ("  ".join(f"{s} {p}" for s, p in sorted(frame.marks.items())) or "-"),
        f"equity {account.equity}  cash {account.cash}  realized {account.realized}"
        f"  unrealized {account.unrealized}  fees {account.fees}",
        f"peak   {account.peak}  drawdown {account.drawdown}",
    ]
    if frame.positions:
        lines.append("positions")
        lines.extend(
            f"  {p.symbol} {_signed(p.qty)} @ {p.avg_price}  unrealized {p.unrealized}"
            for p in frame.positions
        )
    else:
        lines.append("positions  flat")
    if frame.orders:
        lines.append("open orders")
        lines.extend(_order(o) for o in frame.orders)
    if frame.events:
        lines.append("events")
        lines.extend(_event(e) for e in frame.events)
    return "\n".join(lines)


def _signed(qty: int | str) -> str:
    """A position's quantity with its sign (``+100``, ``-0.26``): an integer, or a
    fractional lot's decimal text."""
    if isinstance(qty, int):
        return f"{qty:+d}"
    return qty if qty.startswith("-") else f"+{qty}"
