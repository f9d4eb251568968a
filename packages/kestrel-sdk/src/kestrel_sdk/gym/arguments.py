"""What :class:`.env.TradingEnv`'s arguments may be: each wrong one is a ``ValueError``
naming it, before anything is opened."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kestrel_protocol.ports import Transport

from .reward import Reward
from .spaces import ActionKind
from .windows import check_bound

__all__ = ["check_arguments"]


def check_arguments(
    *,
    action: ActionKind,
    symbol: str | None,
    symbols: Sequence[str] | None,
    start: int | None,
    length: int | None,
    reward: Reward | None,
    window: int,
    exposure: float,
    render_mode: str | None,
    transport: Callable[[], Transport] | None,
    in_process: tuple[str | Path | None, str | None, Sequence[str | Path] | None],
) -> tuple[int | None, int | None]:
    """Refuse a wrong argument of the env; the episodes' ``start`` and ``length``
    (:mod:`.windows`) as checked. ``in_process`` is ``(home, store, catalog_paths)``: the
    runtime in this process, which a ``transport`` excludes."""
    if action not in ("discrete", "continuous", "weights"):
        raise ValueError(f"action must be 'discrete', 'continuous' or 'weights', not {action!r}")
    if action == "weights" and symbol is not None:
        raise ValueError("action='weights' trades symbols=[...] (a basket), not symbol=")
    if action != "weights" and symbols is not None:
        raise ValueError(f"symbols= is a basket: pass action='weights', not {action!r}")
    if isinstance(symbols, str):
        raise ValueError(f"symbols must be a sequence of symbols, not the string {symbols!r}")
    bounds = check_bound("start", start, 0), check_bound("length", length, 1)
    if reward is not None and not callable(reward):
        raise ValueError(f"reward must be a callable of StepValues, not {reward!r}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a whole number of bars, at least 1, not {window!r}")
    if not 0 < exposure <= 1:
        raise ValueError(f"exposure must be in (0, 1], not {exposure}")
    if render_mode not in (None, "ansi", "rgb_array"):
        raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array', not {render_mode!r}")
    if transport is not None and in_process != (None, None, None):
        raise ValueError(
            "pass a transport, or home/store/catalog_paths for the runtime in this "
            "process, not both (the transport's runtime has its own)"
        )
    return bounds
