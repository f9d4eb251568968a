"""What a step hands back stays what it was: seeded episodes' observations (bytes), rewards,
flags and infos hash to the digests the env gave before its per-step work was cut (main at
``b22f4ef``), and an observation once returned is never changed by a later step."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kestrel_sdk.gym import StepValues, TradingEnv
from kestrel_sdk.gym.spaces import ActionKind


def _shaped(step: StepValues) -> float:
    """A custom reward reading every value a step hands it."""
    return (
        step.equity / step.previous_equity
        - step.cash / step.start_equity
        + len(step.events)
        + sum(step.positions.values()) * 1e-6
        + sum(step.marks.values())
        + step.bar
        + step.ended
        + float(np.sum(step.action))
    )


# name: (env options, seed, steps, sha256 of the episode's outputs) as main gave them
EPISODES: dict[str, tuple[dict[str, Any], int, int, str]] = {
    "zig, discrete, shortable": (
        {"scenario": "zig", "window": 4},
        3,
        39,
        "599f13e69a5ca1da665ced14c3abf9dce1f4c6c042480d63c47b8d58b8e6838d",
    ),
    "zig, continuous": (
        {"scenario": "zig", "action": "continuous", "window": 4},
        4,
        39,
        "07f2fc8535738c0a1b15eec1cfc59bcf962010f3e208839f814ae711789f714e",
    ),
    "acme-trend, discrete, the whole tape": (
        {"scenario": "acme-trend", "window": 16},
        7,
        2519,
        "2e7bc624a66933494c0667e75409dee8fba802f9cd8fd2997a4bcfe5a9ab720e",
    ),
    "acme-trend, continuous, a window, a custom reward": (
        {
            "scenario": "acme-trend",
            "action": "continuous",
            "window": 8,
            "start": 100,
            "length": 300,
            "reward": _shaped,
        },
        7,
        300,
        "4f9190df193d40791b818bb1748229e9efd91bceb0f76dfcd0b53fe7b5dee1b8",
    ),
    "pairs-kx, weights": (
        {"scenario": "pairs-kx", "action": "weights", "window": 8, "length": 200},
        7,
        200,
        "17628670bad0e621f4d8c078a2ee9a161fe9463db26b979a964cf410794aecb3",
    ),
}


def _play(env: TradingEnv, seed: int) -> tuple[int, str, list[tuple[np.ndarray, bytes]]]:
    """One episode of seeded random actions: its steps, the digest of everything it
    handed back, and each observation with its bytes when returned."""
    digest = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    returned = [(obs, obs.tobytes())]
    digest.update(obs.tobytes() + json.dumps(info).encode())
    steps = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        steps += 1
        returned.append((obs, obs.tobytes()))
        assert obs.dtype == np.float32
        shown = {key: value for key, value in info.items() if key not in ("grade", "proof")}
        outputs = [type(reward).__name__, reward, terminated, truncated, shown]
        digest.update(obs.tobytes() + json.dumps(outputs).encode())  # a float's repr is exact
        if terminated or truncated:
            return steps, digest.hexdigest(), returned


@pytest.mark.parametrize("name", list(EPISODES))
def test_a_seeded_episode_hands_back_what_it_did(name: str, catalog: Path) -> None:
    options, seed, steps, expected = EPISODES[name]
    env = TradingEnv(catalog_paths=[catalog], grade=False, **options)
    try:
        assert _play(env, seed)[:2] == (steps, expected)
    finally:
        env.close()


@pytest.mark.parametrize("action", ["discrete", "continuous"])
def test_an_observation_returned_is_never_changed_by_later_steps(
    action: ActionKind, catalog: Path
) -> None:
    env = TradingEnv("zig", action=action, catalog_paths=[catalog], grade=False, window=4)
    try:
        _, _, first = _play(env, 1)
        _, _, second = _play(env, 2)  # the same bars again, another account
    finally:
        env.close()
    assert len({id(obs) for obs, _ in first + second}) == len(first + second)
    for obs, when_returned in first + second:
        assert obs.tobytes() == when_returned
