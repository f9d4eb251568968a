"""Time ``canonical_json`` against ``rfc8785.dumps`` on a frame-sized object.

The runtime roots a frame on every step, so this is the encoder's hot path. Run with
``uv run python benchmarks/canonical.py``; it prints the median time per call of each
encoder over several runs, by wall clock and by process CPU (the machine may be shared),
and their ratios. It also asserts the two agree byte for byte, and names the encoder that
writes plain values: ``orjson`` when the optional ``fast`` extra of kestrel-protocol is
installed, else ``json``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import rfc8785
from kestrel_protocol import SessionFrame, canonical_json, root_of
from kestrel_protocol.canonical import FAST_ENCODER

RUNS = 7
CALLS = 200


def frame_sized() -> dict[str, Any]:
    """A busy frame: a dozen marks and positions, 40 open orders, 60 events."""
    symbols = [f"SYM{i:02d}" for i in range(12)]
    return {
        "kind": "kestrel.frame",
        "session": "ks_0123456789abcdef",
        "seq": 137,
        "scenario": {"id": "acme-2015-daily", "root": "sha256:" + "ab" * 32},
        "clock": {"bar": 412, "time": "2016-08-19T20:00:00Z", "remaining": 2108},
        "status": "open",
        "marks": {s: f"{100 + i}.{i:02d}" for i, s in enumerate(symbols)},
        "bars": {
            s: {
                "open": f"{99 + i}.50",
                "high": f"{101 + i}.75",
                "low": f"{98 + i}.25",
                "close": f"{100 + i}.{i:02d}",
                "volume": 120_000 + 371 * i,
            }
            for i, s in enumerate(symbols)
        },
        "account": {
            "cash": "98211.37",
            "equity": "101204.55",
            "realized": "1830.12",
            "unrealized": "-125.57",
            "fees": "41.20",
            "peak": "102001.00",
            "drawdown": "0.00781250",
        },
        "positions": [
            {
                "symbol": s,
                "qty": (i - 6) * 10 or 5,
                "avgPrice": f"{99 + i}.5",
                "unrealized": "12.30",
            }
            for i, s in enumerate(symbols)
        ],
        "orders": [
            {
                "id": f"o{i}",
                "alias": f"entry-{i}" if i % 3 else None,
                "side": "buy" if i % 2 else "sell",
                "qty": 10 + i,
                "filled": i % 5,
                "symbol": symbols[i % 12],
                "type": "limit" if i % 4 else "stop-limit",
                "limit": f"{100 + i}.25",
                "stop": None if i % 4 else f"{101 + i}.00",
                "tif": "gtc",
                "status": "partially_filled" if i % 5 else "new",
            }
            for i in range(40)
        ],
        "events": [
            {
                "type": "fill",
                "order": f"o{i}",
                "bar": 412,
                "qty": 3,
                "price": f"{100 + i}.20",
                "fee": "1.00",
                "reason": "déjà vu ✓" if i % 10 == 0 else None,
            }
            if i % 2
            else {"type": "accepted", "order": f"o{i}", "bar": 412}
            for i in range(60)
        ],
    }


def median_seconds(*fns: Any, value: Any) -> list[tuple[float, float]]:
    """Median seconds per call of each of ``fns``: (wall, process CPU).

    The functions take turns run by run, so a change in the machine's load falls on all
    of them alike.
    """
    walls: list[list[float]] = [[] for _ in fns]
    cpus: list[list[float]] = [[] for _ in fns]
    for _ in range(RUNS):
        for fn, fn_walls, fn_cpus in zip(fns, walls, cpus, strict=True):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(CALLS):
                fn(value)
            fn_walls.append(time.perf_counter() - wall)
            fn_cpus.append(time.process_time() - cpu)
    return [
        (statistics.median(w) / CALLS, statistics.median(c) / CALLS)
        for w, c in zip(walls, cpus, strict=True)
    ]


def main() -> None:
    value = frame_sized()
    ours = canonical_json(value)
    assert ours == rfc8785.dumps(value), "canonical_json differs from rfc8785.dumps"
    (ours_wall, ours_cpu), (ref_wall, ref_cpu) = median_seconds(
        canonical_json, rfc8785.dumps, value=value
    )
    print(
        f"frame: {len(ours)} canonical bytes, median of {RUNS} runs x {CALLS} calls, "
        f"plain values written by {FAST_ENCODER}"
    )
    print("                      wall    |  process CPU")
    print(f"canonical_json : {ours_wall * 1e6:9.1f} us/call | {ours_cpu * 1e6:9.1f} us/call")
    print(f"rfc8785.dumps  : {ref_wall * 1e6:9.1f} us/call | {ref_cpu * 1e6:9.1f} us/call")
    print(
        f"ratio          : {ref_wall / ours_wall:9.2f}x      | {ref_cpu / ours_cpu:9.2f}x"
        "      (rfc8785 time / canonical_json time)"
    )
    frame = SessionFrame.parse(value)
    [(root_wall, root_cpu)] = median_seconds(root_of, value=frame)
    print(
        f"root_of(SessionFrame model, dump included): {root_wall * 1e6:9.1f} us/call | "
        f"{root_cpu * 1e6:9.1f} us/call CPU"
    )


if __name__ == "__main__":
    main()
