"""kestrel/Trading-v0 vectorised: each sub-env of ``gymnasium.make_vec`` is the
deterministic session a single env seeded alike would be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from kestrel_sdk.gym import ENV_ID, TradingEnv

from tests.kestrel_sdk.gym.conftest import BARS

N = 3
SEED = 40
STEPS = BARS + 6  # across an episode's end: the sub-envs reset themselves
KWARGS: dict[str, Any] = {"scenario": "zig", "window": 4}


def _action(step: int, index: int) -> int:
    return (step * 7 + index) % 3


def _single(catalog: Path, index: int) -> list[tuple[str, str]]:
    """(session, frame root) of every step of a single env seeded ``SEED + index``,
    resetting (unseeded) on the step after an episode ends, as a vector env does."""
    env = TradingEnv(catalog_paths=[catalog], **KWARGS)
    _, info = env.reset(seed=SEED + index)
    seen = [(info["session"], info["frame_root"])]
    done = False
    for step in range(STEPS):
        if done:
            _, info = env.reset()
            done = False
        else:
            _, _, terminated, truncated, info = env.step(_action(step, index))
            done = terminated or truncated
        seen.append((info["session"], info["frame_root"]))
    env.close()
    return seen


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_gives_each_sub_env_the_roots_of_a_single_env_seeded_alike(
    catalog: Path, mode: str
) -> None:
    vector = gymnasium.make_vec(
        ENV_ID, num_envs=N, vectorization_mode=mode, catalog_paths=[catalog], **KWARGS
    )
    try:
        assert vector.single_action_space == gymnasium.spaces.Discrete(3)
        _, info = vector.reset(seed=SEED)
        seen = [list(zip(info["session"], info["frame_root"], strict=True))]
        grades = []
        for step in range(STEPS):
            actions = np.array([_action(step, index) for index in range(N)])
            info = vector.step(actions)[4]
            seen.append(list(zip(info["session"], info["frame_root"], strict=True)))
            if "grade" in info:
                grades += [
                    grade for grade, has in zip(info["grade"], info["_grade"], strict=True) if has
                ]
    finally:
        vector.close()
    for index in range(N):
        assert [step[index] for step in seen] == _single(catalog, index)
    sessions = {step[index][0] for step in seen for index in range(N)}
    assert len(sessions) == 2 * N  # each sub-env a session of its own, then another
    assert len(grades) == N  # every first episode graded, in the sub-env's info
    assert all(grade.passed for grade in grades)
