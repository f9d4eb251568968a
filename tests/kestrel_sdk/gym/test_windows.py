"""kestrel/Trading-v0 episode windows: ``start``/``length`` (walk-forward), and nothing of
the bars after a window's end reaching the agent, its rewards or the grade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kestrel_sdk.gym import TradingEnv

from tests.kestrel_sdk.gym.conftest import BARS, copy_pairs

START, LENGTH = 100, 20


def _play(env: TradingEnv) -> list[Any]:
    """What the agent sees of one windowed episode: observations, rewards, bars, equity
    and positions of every step, then the grade's metrics and conformance."""
    obs, info = env.reset(seed=3, options={"start": START, "length": LENGTH})
    seen: list[Any] = [obs.tolist(), info["bar"], info["equity"]]
    step = 0
    while True:
        weights = [(step % 4) / 4, -((step % 3) / 3)]
        obs, reward, terminated, truncated, info = env.step(np.array(weights, np.float32))
        seen.append([obs.tolist(), reward, info["bar"], info["equity"], info["positions"]])
        step += 1
        if terminated or truncated:
            assert truncated
            assert not terminated
            grade = info["grade"]
            checks = [(c.id, c.passed) for c in grade.conformance.checks]
            seen.append([grade.metrics.model_dump(), checks])
            return seen


def test_a_window_never_reads_a_bar_beyond_its_end(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    copy_pairs(catalog, "pairs-same", warp_after=None)
    copy_pairs(catalog, "pairs-warped", warp_after=START + LENGTH)
    same = TradingEnv("pairs-same", action="weights", window=8, catalog_paths=[catalog])
    warped = TradingEnv("pairs-warped", action="weights", window=8, catalog_paths=[catalog])
    played = _play(same)
    assert played == _play(warped)
    # the episode observed bars START to START + LENGTH, no further, and stood down there
    assert played[1] == START
    assert [row[2] for row in played[3:-1]] == list(range(START + 1, START + LENGTH + 1))
    frame = same.frame
    assert frame is not None
    assert frame.clock.bar == START + LENGTH
    assert dict(played[-1][1])["flat-at-end"]
    assert all(passed for _, passed in played[-1][1])
    # the warp is there to be read: one bar further, the two tapes differ
    far = [
        TradingEnv(s, action="weights", window=8, catalog_paths=[catalog])
        for s in ("pairs-same", "pairs-warped")
    ]
    later = [env.reset(seed=3, options={"start": START + LENGTH + 1})[0] for env in far]
    assert later[0].tolist() != later[1].tolist()
    for env in (same, warped, *far):
        env.close()


def test_walk_forward_windows_follow_each_other(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], window=4, length=8)
    ends = []
    for k in range(3):
        obs, info = env.reset(seed=k, options={"start": 8 * k})
        assert info["bar"] == 8 * k
        assert env.observation_space.contains(obs)
        while True:
            _, _, terminated, truncated, info = env.step(1)
            if terminated or truncated:
                assert truncated
                ends.append((info["bar"], info["stand_down"], info["grade"].passed))
                break
    assert ends == [(8, "statement", True), (16, "statement", True), (24, "statement", True)]
    env.close()


def test_a_window_that_does_not_fit_the_tape_is_refused(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], length=BARS)
    with pytest.raises(ValueError, match=f"length {BARS} is longer than the tape"):
        env.reset(seed=1)
    with pytest.raises(ValueError, match="passes the tape's last bar"):
        env.reset(seed=1, options={"start": 30, "length": 10})
    with pytest.raises(ValueError, match="start must be a whole number"):
        env.reset(seed=1, options={"start": -1})
    # the whole tape, as before windows existed, when neither is set
    _, info = env.reset(seed=1, options={"length": None})
    assert info["bar"] == 0
    env.close()
