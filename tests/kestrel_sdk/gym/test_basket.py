"""kestrel/Trading-v0 over a basket: a weight per symbol, observations of every symbol,
seeded windows and a custom reward (on the shipped two-symbol ``pairs-kx``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from kestrel_sdk.gym import ENV_ID, StepValues, TradingEnv

from tests.kestrel_sdk.gym.conftest import copy_pairs

SCENARIO = "pairs-kx"
SYMBOLS = ("KAPPA", "XI")
LAST_BAR = 2519  # pairs-kx: 2520 daily bars


def test_check_env_passes_with_several_symbols() -> None:
    cases: list[dict[str, Any]] = [{}, {"length": 30}, {"start": 100, "length": 10, "window": 4}]
    for options in cases:
        made = gymnasium.make(ENV_ID, scenario=SCENARIO, action="weights", **options)
        env = made.unwrapped
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # not even an advisory note
            check_env(env)
        assert env.action_space == gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        window = options.get("window", 16)
        # every symbol's bars, then each position, cash and equity
        assert env.observation_space.shape == (2 * window * 5 + 2 + 2,)
        env.close()


def test_the_observation_holds_every_symbols_bars() -> None:
    single = {s: TradingEnv(SCENARIO, symbol=s, window=4) for s in SYMBOLS}
    basket = TradingEnv(SCENARIO, action="weights", window=4)
    assert basket.symbols == SYMBOLS
    observed = basket.reset(seed=2, options={"start": 50})[0]
    for index, symbol in enumerate(SYMBOLS):
        alone = single[symbol].reset(seed=2, options={"start": 50})[0]
        assert observed[index * 20 : index * 20 + 20].tolist() == alone[:20].tolist()
        single[symbol].close()
    assert observed[-4:].tolist() == [0.0, 0.0, 1.0, 0.0]  # flat, all cash, no gain
    basket.close()


def _target(weight: str, equity: Decimal, mark: str) -> int:
    """Whole shares of ``weight`` x 0.95 (the default exposure) x equity at ``mark``."""
    return int(Decimal(weight) * Decimal("0.95") * equity / Decimal(mark))


def test_weights_move_the_portfolio_as_documented() -> None:
    env = TradingEnv(SCENARIO, action="weights")
    _, info = env.reset(seed=1)
    frame = env.frame
    assert frame is not None
    equity = Decimal(frame.account.equity)
    marks = dict(frame.marks)
    _, _, _, _, info = env.step(np.array([0.5, 0.5], dtype=np.float32))
    # each leg is worth half of 0.95 x equity at the marks it was sized at, whole lots
    expected = {s: _target("0.5", equity, marks[s]) for s in SYMBOLS}
    assert info["positions"] == expected == {"KAPPA": 953, "XI": 555}
    assert info["events"].count("fill") == 2
    frame = env.frame
    assert frame is not None
    equity, marks = Decimal(frame.account.equity), dict(frame.marks)
    # signed weights short where the scenario is shortable; sells go first
    _, _, _, _, info = env.step([-0.5, 0.25])
    assert info["positions"] == {
        "KAPPA": -_target("0.5", equity, marks["KAPPA"]),
        "XI": _target("0.25", equity, marks["XI"]),
    }
    assert info["positions"]["KAPPA"] < 0
    session = env.session_id
    assert session is not None
    # all cash: flat, cash is the equity
    _, _, _, _, info = env.step([0.0, 0.0])
    assert info["positions"] == {"KAPPA": 0, "XI": 0}
    frame = env.frame
    assert frame is not None
    assert frame.positions == []
    assert frame.account.cash == frame.account.equity
    env.close()


def test_weights_beyond_a_gross_of_one_are_scaled_down_to_one() -> None:
    roots = []
    for action in ([0.5, 0.5], [1.0, 1.0], [0.25, 0.25]):
        env = TradingEnv(SCENARIO, action="weights")
        env.reset(seed=1)
        _, _, _, _, info = env.step(np.array(action, dtype=np.float32))
        roots.append(info["frame_root"])
        env.close()
    assert roots[0] == roots[1]  # (1, 1) is (0.5, 0.5)
    assert roots[2] != roots[0]  # within a gross of 1, used as given


def test_an_action_outside_the_basket_space_is_refused_and_nothing_is_submitted() -> None:
    env = TradingEnv(SCENARIO, action="weights")
    env.reset(seed=1)
    for action in ([0.5], [0.5, 0.5, 0.5], [1.5, 0.0], [float("nan"), 0.0], ["a", "b"]):
        with pytest.raises(gymnasium.error.InvalidAction, match="is not an action of Box"):
            env.step(action)
    frame = env.frame
    assert frame is not None
    assert frame.seq == 0
    env.close()
    with pytest.raises(ValueError, match="has no symbol NOPE"):
        TradingEnv(SCENARIO, action="weights", symbols=["KAPPA", "NOPE"])
    with pytest.raises(ValueError, match="pass action='weights'"):
        TradingEnv(SCENARIO, symbols=["KAPPA", "XI"])
    with pytest.raises(ValueError, match="length must be a whole number"):
        TradingEnv(SCENARIO, action="weights", length=0)


def test_a_basket_shorts_only_where_the_terms_allow(tmp_path: Path) -> None:
    copy_pairs(tmp_path, "pairs-long", shortable=False)
    env = TradingEnv("pairs-long", action="weights", catalog_paths=[tmp_path])
    assert env.action_space == gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)
    env.reset(seed=1)
    with pytest.raises(gymnasium.error.InvalidAction, match=r"outside \[0.0, 1.0\]"):
        env.step([-0.5, 0.5])
    _, _, _, _, info = env.step([0.0, 0.5])
    assert info["positions"]["KAPPA"] == 0
    assert info["positions"]["XI"] > 0
    env.close()


PLAY = """
import json, sys
import numpy as np
from kestrel_sdk.gym import TradingEnv

env = TradingEnv("pairs-kx", action="weights", length=12, window=4)
seen = []
for episode in range(2):
    obs, info = env.reset(seed=int(sys.argv[1]) if episode == 0 else None)
    seen.append([env.episode_window.start, info["frame_root"]])
    step = 0
    while True:
        weights = np.array([(step % 3) / 3, -((step % 2) / 4)], dtype=np.float32)
        obs, reward, terminated, truncated, info = env.step(weights)
        seen.append([info["bar"], info["frame_root"], reward])
        step += 1
        if terminated or truncated:
            seen.append([truncated, info["grade"].root])
            break
env.close()
print(json.dumps(seen))
"""


def _play_elsewhere(seed: int) -> list[Any]:
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_CATALOG_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", PLAY, str(seed)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    played: list[Any] = json.loads(done.stdout)
    return played


def test_a_seeded_start_reproduces_its_roots_across_processes() -> None:
    first, second, other = _play_elsewhere(7), _play_elsewhere(7), _play_elsewhere(8)
    assert first == second
    assert first != other
    # the start is drawn by the env's np_random, seeded by reset(seed=...) as Gymnasium does
    rng = np.random.default_rng(7)
    starts = [int(rng.integers(0, LAST_BAR - 12, endpoint=True)) for _ in range(2)]
    assert first[0][0] == starts[0]
    assert first[14][0] == starts[1]  # the unseeded second episode draws the next
    assert starts[0] != 0
    # 12 steps from the start, truncated at the window's end, graded
    assert [row[0] for row in first[1:13]] == list(range(starts[0] + 1, starts[0] + 13))
    assert first[13][0] is True


def test_a_custom_reward_is_called_with_the_plain_step_values() -> None:
    calls: list[StepValues] = []

    def reward(step: StepValues) -> float:
        calls.append(step)
        return step.positions["KAPPA"] * 1000.0 + step.bar

    shaped = TradingEnv(SCENARIO, action="weights", length=3, reward=reward)
    plain = TradingEnv(SCENARIO, action="weights", length=3)
    for env in (shaped, plain):
        env.reset(seed=4)
    rewards: list[list[float]] = [[], []]
    roots: list[list[str]] = [[], []]
    for action in ([1.0, 1.0], [0.2, 0.0], [0.0, 0.0]):
        for index, env in enumerate((shaped, plain)):
            _, got, _, _, info = env.step(action)
            rewards[index].append(got)
            roots[index].append(info["frame_root"])
    assert roots[0] == roots[1]  # the reward shapes nothing of the session
    assert rewards[0] == [c.positions["KAPPA"] * 1000.0 + c.bar for c in calls]
    assert rewards[0] != rewards[1]
    first = calls[0]
    assert first.action == (0.5, 0.5)  # as applied: normalised
    assert isinstance(first.equity, float)
    assert isinstance(first.marks["XI"], float)
    assert first.previous_equity == first.start_equity == 100000.0
    assert first.events.count("fill") == 2
    assert [c.ended for c in calls] == [False, False, True]
    # the default reward is the change in equity
    assert rewards[1][0] == pytest.approx(first.equity - first.previous_equity)
    shaped.close()
    plain.close()


def test_each_sub_env_of_a_vector_env_draws_the_start_of_its_own_seed() -> None:
    kwargs: dict[str, Any] = {"scenario": SCENARIO, "action": "weights", "length": 5}
    vector = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", **kwargs)
    _, infos = vector.reset(seed=10)
    singles = []
    for index in range(2):
        env = TradingEnv(**kwargs)
        _, info = env.reset(seed=10 + index)
        singles.append((info["bar"], info["frame_root"]))
        env.close()
    assert list(zip(infos["bar"], infos["frame_root"], strict=True)) == singles
    assert singles[0][0] != singles[1][0]
    vector.close()
