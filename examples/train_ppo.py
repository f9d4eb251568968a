"""Train PPO (stable-baselines3) on ``acme-trend``, evaluate it on ``acme-chop``, and write
each evaluation episode's proof.

Needs PyTorch and stable-baselines3, which the workspace does not install (CI does not run
this example). In a virtual environment of its own, from your Kestrel clone::

    python3 -m venv ~/.venvs/kestrel-ppo
    ~/.venvs/kestrel-ppo/bin/pip install torch stable-baselines3 \\
        ./packages/kestrel-protocol './packages/kestrel-sdk[gym]'
    ~/.venvs/kestrel-ppo/bin/python examples/train_ppo.py [--timesteps 50000] [--out proofs]

Training runs ``--envs`` sub-envs through stable-baselines3's ``make_vec_env`` (seeded, so
sub-env ``i`` plays the sessions ``seed-{seed + i}``, ``seed-{seed + i}.1``, ...) without
grading (``grade=False``: a training loop needs no proofs). Evaluation plays
``--episodes`` episodes on ``acme-chop`` with the trained policy, deterministically; the
env grades each one and the script writes its proof to ``OUT/<session>.json``, which
``kestrel verify OUT/<session>.json`` checks on any machine, with an empty home.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import gymnasium
import kestrel_sdk.gym
from kestrel_protocol import GradeResult
from stable_baselines3 import PPO  # type: ignore[import-not-found]
from stable_baselines3.common.env_util import make_vec_env  # type: ignore[import-not-found]

TRAIN = "acme-trend"
EVALUATE = "acme-chop"
WINDOW = 16


def train(timesteps: int, envs: int, seed: int) -> Any:
    """PPO trained on ``TRAIN`` for ``timesteps`` steps of all sub-envs together."""
    vector = make_vec_env(
        kestrel_sdk.gym.ENV_ID,
        n_envs=envs,
        seed=seed,
        env_kwargs={"scenario": TRAIN, "window": WINDOW, "grade": False},
    )
    model = PPO("MlpPolicy", vector, n_steps=512, batch_size=128, seed=seed, verbose=0)
    model.learn(total_timesteps=timesteps)
    vector.close()
    return model


def evaluate(model: Any, episodes: int, seed: int, out: Path) -> list[GradeResult]:
    """Play ``episodes`` episodes of ``EVALUATE``; write each proof to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    env = gymnasium.make(kestrel_sdk.gym.ENV_ID, scenario=EVALUATE, window=WINDOW)
    grades: list[GradeResult] = []
    try:
        for episode in range(episodes):
            observation, _ = env.reset(seed=seed if episode == 0 else None)
            while True:
                action, _ = model.predict(observation, deterministic=True)
                observation, _, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    break
            grade: GradeResult = info["grade"]
            path = info["proof"].write(out / f"{grade.session}.json")
            grades.append(grade)
            metrics = grade.metrics
            print(
                f"  episode {episode + 1}: {info['stand_down']}, return {metrics.return_}, "
                f"sharpe {metrics.sharpe}, fills {metrics.fills}, passed {grade.passed}\n"
                f"    grade {grade.root}\n    proof {path}"
            )
    finally:
        env.close()
    return grades


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=50_000)
    parser.add_argument("--envs", type=int, default=4, help="training sub-envs (default 4)")
    parser.add_argument("--episodes", type=int, default=2, help="evaluation episodes")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("proofs"), help="where proofs go")
    args = parser.parse_args()
    print(f"training PPO on {TRAIN}: {args.timesteps} steps, {args.envs} envs")
    started = time.perf_counter()
    model = train(args.timesteps, args.envs, args.seed)
    elapsed = time.perf_counter() - started
    print(f"trained in {elapsed:.1f} s ({args.timesteps / elapsed:,.0f} steps/s with learning)")
    print(f"evaluating on {EVALUATE}:")
    evaluate(model, args.episodes, args.seed, args.out)
    print(f"check a proof anywhere: kestrel verify {args.out}/<session>.json")


if __name__ == "__main__":
    main()
