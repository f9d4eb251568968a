"""Kestrel as a Gymnasium environment: a random and a simple policy, graded per episode.

Run it with ``uv run --package kestrel-sdk --extra gym python examples/gym_policies.py
[SCENARIO] [EPISODES]`` (default ``acme-chop``, 3 episodes; the ``gym`` extra is
``kestrel-sdk[gym]``: Gymnasium and NumPy). Nothing is trained: the point is
the loop a learner would run. Each episode is one Kestrel session, seeded so it can be
replayed exactly; when it ends (the tape ran out, or the drawdown limit stood it down)
the env grades it, and the grade, with its root, is printed. Episodes after the first
fail ``no-lookahead``: the principal has been shown the tape's end already, which is
what training on a tape means (evaluate on a sealed scenario no episode has seen; see
``docs/evaluation.md``).

The simple policy is mean reversion on the observation: go long after a down bar
(close below open), flat after an up bar.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import gymnasium
import kestrel_sdk.gym
import numpy as np
from kestrel_protocol import GradeResult
from numpy.typing import NDArray

FLAT, LONG = 0, 1
LAST_OPEN = -8  # the current bar's open / close - 1 (see kestrel_sdk.gym.spaces)


def mean_reversion(observation: NDArray[np.float32]) -> int:
    return LONG if observation[LAST_OPEN] > 0 else FLAT


def run(
    env: gymnasium.Env[Any, Any], policy: Callable[[Any], Any], episodes: int, seed: int
) -> list[GradeResult]:
    grades: list[GradeResult] = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed if episode == 0 else None)
        total = 0.0
        while True:
            observation, reward, terminated, truncated, info = env.step(policy(observation))
            total += float(reward)
            if terminated or truncated:
                break
        grade: GradeResult = info["grade"]
        grades.append(grade)
        metrics = grade.metrics
        failed = [check.id for check in grade.conformance.checks if not check.passed]
        verdict = "passed True" if grade.passed else f"passed False (failed {', '.join(failed)})"
        print(
            f"  episode {episode + 1}: {info['stand_down']:<12} reward {total:>11.2f}  "
            f"return {metrics.return_:>11}  sharpe {metrics.sharpe:>11}  fills {metrics.fills:>4}"
            f"  {verdict}  grade {grade.root}"
        )
    return grades


def main(scenario: str = "acme-chop", episodes: int = 3) -> dict[str, list[GradeResult]]:
    results: dict[str, list[GradeResult]] = {}
    env = gymnasium.make(kestrel_sdk.gym.ENV_ID, scenario=scenario, window=8)
    try:
        env.action_space.seed(7)
        policies: dict[str, Callable[[Any], Any]] = {
            "random": lambda _observation: env.action_space.sample(),
            "mean-reversion": mean_reversion,
        }
        for name, policy in policies.items():
            print(f"{name} policy on {scenario}:")
            results[name] = run(env, policy, episodes, seed=7)
    finally:
        env.close()
    return results


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "acme-chop",
        int(sys.argv[2]) if len(sys.argv) > 2 else 3,
    )
