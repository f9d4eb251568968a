"""Gymnasium env benchmark: ``kestrel/Trading-v0`` against gym-trading-env on one tape.

Run: ``uv run python benchmarks/gym_env.py [--runs 5] [--vector 2,8]``.

Both envs trade ``acme-trend``'s 2,520 daily bars of ACME with positions -1/0/1 (short,
flat, long) and 0.1 % fees: for Kestrel the tape imported as a shortable scenario with
its fees (10 bps), ``Discrete(3)``, ``window=16``; for gym-trading-env 0.3.5
(``TradingEnv``) the same bars as a DataFrame, ``positions=[-1, 0, 1]``,
``trading_fees=0.001``, a 16-bar window of five features (its observation as wide as
ours). Both take random actions (``action_space.sample()``) for whole episodes: reset,
then steps until the tape ends. Kestrel's step is a session step: the action's market
order, filled at the next bar's open with its fee, ``advance 1``, the frame and its root
(``info["frame_root"]``), on the env's default store, in this process.

Kestrel runs without grading (``grade=False``: gym-trading-env grades nothing) and, on
its own line, with each episode graded and proved (its close, its grade and the proof).
It runs again as ``gymnasium.make("kestrel/Trading-v0", …)`` gives it (the checker and
order-enforcing wrappers): with its defaults (each episode graded and proved) and as a
training loop makes it (``grade=False``). Runs alternate, Kestrel then the peer, and each
ratio to the peer's run beside it is printed with their median: on a shared virtual
machine whose speed drifts, runs back to back see the same machine. Rates are steps per
second of process CPU (and of wall time).

``--vector``: ``gymnasium.make_vec`` of Kestrel's env, sync and async, with ``N``
sub-envs, in steps per second of all sub-envs together, by wall time, and by CPU time of
this process and its workers (async workers are child processes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import gymnasium
import kestrel_sdk.gym
import numpy as np
import pandas as pd  # type: ignore[import-untyped]
from kestrel_sdk.gym import TradingEnv
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.scenarios import ScenarioTermsInput, scenario_from_file

with warnings.catch_warnings():  # gym_trading_env turns every warning into an error
    from gym_trading_env.environments import (  # type: ignore[import-untyped]
        TradingEnv as PeerEnv,
    )

SOURCE = "acme-trend"
SCENARIO = "acme-trend-short"
WINDOW = 16
FEES = 0.001


def make_catalog(directory: Path) -> tuple[Path, pd.DataFrame]:
    """A catalog holding ``acme-trend``'s tape as a shortable scenario with 10 bps fees,
    and the same bars as gym-trading-env's DataFrame."""
    csv = Runtime(directory / "home").tape("bench", SOURCE)
    bars = pd.read_csv(StringIO(csv))
    source = directory / "ACME.csv"
    table = bars[["time", "open", "high", "low", "close", "volume"]]
    table.rename(columns={"time": "Date"}).to_csv(source, index=False)
    terms = ScenarioTermsInput(shortable=True, fee_bps="10")
    scenario_from_file(source, SCENARIO, terms=terms).write(directory / "catalog" / SCENARIO)
    frame = table.copy()
    frame["date"] = pd.to_datetime(frame["time"]).dt.tz_localize(None)
    frame = frame.set_index("date").drop(columns=["time"])
    close = frame["close"]
    for name in ("open", "high", "low", "close"):
        frame[f"feature_{name}"] = frame[name] / close - 1
    frame["feature_volume"] = frame["volume"] / frame["volume"].rolling(WINDOW, 1).mean() - 1
    return directory / "catalog", frame


def episode(env: Any) -> int:
    """Steps of one whole episode of random actions."""
    env.reset()
    steps = 0
    sample = env.action_space.sample
    step = env.step
    while True:
        _, _, terminated, truncated, _ = step(sample())
        steps += 1
        if terminated or truncated:
            return steps


def timed(run: Callable[[], int], episodes: int) -> tuple[float, float]:
    """(steps/s by CPU, steps/s by wall) of ``episodes`` whole episodes."""
    cpu, wall = time.process_time(), time.perf_counter()
    steps = sum(run() for _ in range(episodes))
    return steps / (time.process_time() - cpu), steps / (time.perf_counter() - wall)


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def vector_rate(catalog: Path, mode: str, n: int, steps: int) -> tuple[float, float]:
    """(steps/s by wall, steps/s by CPU of this process and its workers) of ``n``
    sub-envs stepping ``steps`` times together (random actions, autoreset)."""
    vector = gymnasium.make_vec(
        kestrel_sdk.gym.ENV_ID,
        num_envs=n,
        vectorization_mode=mode,
        scenario=SCENARIO,
        catalog_paths=[catalog],
        window=WINDOW,
        grade=False,
    )
    vector.reset(seed=0)
    vector.action_space.seed(0)
    cpu, children, wall = time.process_time(), _children_cpu(), time.perf_counter()
    for _ in range(steps):
        vector.step(vector.action_space.sample())
    elapsed = time.perf_counter() - wall
    vector.close()  # async workers exit: their CPU time is counted from here on
    used = time.process_time() - cpu + _children_cpu() - children
    return n * steps / elapsed, n * steps / used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="alternated pairs (default 5)")
    parser.add_argument("--episodes", type=int, default=2, help="episodes per run (default 2)")
    parser.add_argument("--vector", default="2,8", help="sub-env counts for make_vec ('' none)")
    parser.add_argument("--vector-steps", type=int, default=1500)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        catalog, frame = make_catalog(Path(directory))
        kestrel = TradingEnv(SCENARIO, catalog_paths=[catalog], window=WINDOW, grade=False)
        graded = TradingEnv(SCENARIO, catalog_paths=[catalog], window=WINDOW)
        made = gymnasium.make(
            kestrel_sdk.gym.ENV_ID, scenario=SCENARIO, catalog_paths=[catalog], window=WINDOW
        )
        training = gymnasium.make(
            kestrel_sdk.gym.ENV_ID,
            scenario=SCENARIO,
            catalog_paths=[catalog],
            window=WINDOW,
            grade=False,
        )
        peer = PeerEnv(
            df=frame,
            positions=[-1, 0, 1],
            trading_fees=FEES,
            windows=WINDOW,
            initial_position=0,
            portfolio_initial_value=100_000,
            verbose=0,
        )
        for env in (kestrel, graded, made, training, peer):
            env.reset(seed=0)
            env.action_space.seed(0)
        print(
            f"{SOURCE} as {SCENARIO}: {len(frame)} bars, positions -1/0/1, fees 0.1 %, "
            f"window {WINDOW}, random actions, {args.episodes} whole episodes a run "
            f"(graded: 1); Python {sys.version.split()[0]}, NumPy {np.__version__}, "
            f"pandas {pd.__version__}"
        )
        print(
            "steps/s of CPU; ratios to gym-trading-env's run beside them\n"
            "run  kestrel cpu (wall)    graded   make: graded  training   "
            "gym-trading-env cpu (wall)   ratios: kestrel  make graded  make training"
        )
        ratios: list[tuple[float, float, float]] = []
        rows = []
        for run in range(args.runs):
            k_cpu, k_wall = timed(lambda: episode(kestrel), args.episodes)
            p_cpu, p_wall = timed(lambda: episode(peer), args.episodes)
            g_cpu, _ = timed(lambda: episode(graded), 1)
            m_cpu, _ = timed(lambda: episode(made), 1)
            t_cpu, _ = timed(lambda: episode(training), args.episodes)
            ratios.append((k_cpu / p_cpu, m_cpu / p_cpu, t_cpu / p_cpu))
            rows.append((k_cpu, k_wall, g_cpu, m_cpu, t_cpu, p_cpu, p_wall))
            print(
                f"{run + 1:>3}  {k_cpu:>7,.0f} ({k_wall:>7,.0f})  {g_cpu:>7,.0f}   "
                f"{m_cpu:>10,.0f}  {t_cpu:>8,.0f}   {p_cpu:>14,.0f} ({p_wall:>7,.0f})   "
                f"{ratios[-1][0]:>14.2f}x  {ratios[-1][1]:>10.2f}x  {ratios[-1][2]:>12.2f}x"
            )
        for env in (kestrel, graded, made, training):
            env.close()
        med = [statistics.median(column) for column in zip(*rows, strict=True)]
        print(
            f"median: Kestrel {med[0]:,.0f} steps/s CPU ({med[1]:,.0f} wall), graded and "
            f"proved {med[2]:,.0f}; gymnasium.make graded and proved {med[3]:,.0f}, "
            f"training {med[4]:,.0f}; gym-trading-env {med[5]:,.0f} ({med[6]:,.0f} wall)"
        )
        k_ratio, m_ratio, t_ratio = (
            statistics.median(column) for column in zip(*ratios, strict=True)
        )
        print(
            f"ratio to gym-trading-env (CPU, median of pairs): Kestrel {k_ratio:.2f}x; "
            f"gymnasium.make graded and proved {m_ratio:.2f}x, training {t_ratio:.2f}x"
        )
        counts = [int(n) for n in args.vector.split(",") if n.strip()]
        for n in counts:
            for mode in ("sync", "async"):
                wall, cpu = vector_rate(catalog, mode, n, args.vector_steps)
                print(
                    f"make_vec {mode:<5} N={n}: {wall:>8,.0f} steps/s wall "
                    f"({cpu:,.0f} per CPU second)"
                )


if __name__ == "__main__":
    main()
