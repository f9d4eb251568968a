"""kestrel/Trading-v0 used wrongly: invalid actions are refused before anything is
submitted, and an env that is never closed does not keep its process alive."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.error import InvalidAction
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.gym import ENV_ID, TradingEnv

INVALID_DISCRETE: list[Any] = [
    1.5,
    "1",
    True,
    False,
    np.True_,
    float("nan"),
    None,
    np.float64(1.0),
    np.array([1]),
    np.array([[0]]),
    np.array(1.0),
    [1],
]


async def _stored_seq(home: Path, session: str) -> int:
    """The session's seq as a second runtime over the same home reads it."""
    async with create_sdk(local_transport(home=home)) as sdk:
        return (await sdk.session(session).frame()).frame.seq


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("scenario", "space", "out_of_range"),
    [("pairs-kx", gymnasium.spaces.Discrete(3), [-1, -2, 3]), ("acme-trend", None, [2, -1])],
)
async def test_every_invalid_discrete_action_is_refused_with_nothing_submitted(
    tmp_path: Path, scenario: str, space: Any, out_of_range: list[int]
) -> None:
    home = tmp_path / "home"
    env = TradingEnv(scenario, home=home, grade=False)
    try:
        assert env.action_space == (space or gymnasium.spaces.Discrete(2))
        env.reset(seed=1)
        env.step(1)  # a long: the refusals below must leave it as it is
        session, frame = env.session_id, env.frame
        assert session is not None
        assert frame is not None
        assert frame.seq == 1
        for action in [*out_of_range, *INVALID_DISCRETE]:
            with pytest.raises(InvalidAction) as refused:
                env.step(action)
            message = str(refused.value)
            assert repr(action) in message
            assert str(env.action_space) in message
            assert env.frame is frame  # nothing came back, nothing was submitted
        assert await _stored_seq(home, session) == 1
        # and the episode goes on from where it was
        _, _, _, _, info = env.step(np.int64(0))
        assert info["bar"] == 2
        assert await _stored_seq(home, session) == 2
    finally:
        env.close()


@pytest.mark.anyio
async def test_every_invalid_continuous_action_is_refused_with_nothing_submitted(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = TradingEnv("pairs-kx", action="continuous", home=home, grade=False)
    try:
        env.reset(seed=1)
        session = env.session_id
        assert session is not None
        refused_actions: list[Any] = [
            np.array([1.5], dtype=np.float32),
            np.array([-1.01]),
            np.array([np.nan], dtype=np.float32),
            np.array([np.inf]),
            np.array([True]),
            np.array(["1"]),
            np.array([0.5, 0.5]),
            np.array([[0.5]]),
            0.5,
            "0.5",
            None,
        ]
        for action in refused_actions:
            with pytest.raises(InvalidAction) as refused:
                env.step(action)
            assert repr(action) in str(refused.value)
            assert str(env.action_space) in str(refused.value)
        assert await _stored_seq(home, session) == 0
        env.step(np.array([-0.5], dtype=np.float32))  # a float32 array within bounds
        env.step(np.array([1.0]))  # float64 too: the value is what is checked
        env.step([0])  # and a sequence of one number
        assert await _stored_seq(home, session) == 3
    finally:
        env.close()


def test_a_long_only_scenario_refuses_a_short_fraction(tmp_path: Path) -> None:
    env = TradingEnv("acme-trend", action="continuous", grade=False)
    try:
        env.reset(seed=1)
        with pytest.raises(InvalidAction, match=r"outside \[0.0, 1.0\]"):
            env.step(np.array([-0.5], dtype=np.float32))
        assert env.frame is not None
        assert env.frame.seq == 0
    finally:
        env.close()


UNCLOSED = textwrap.dedent(
    """
    import sys
    import gymnasium
    import kestrel_sdk.gym
    from kestrel_sdk import local_transport

    how, catalog = sys.argv[1], sys.argv[2]
    kwargs = {{"catalog_paths": [catalog]}}
    if how == "transport":  # an event loop on a thread of the env's own
        kwargs = {{"transport": lambda: local_transport(catalog_paths=[catalog])}}
    env = gymnasium.make("{env_id}", scenario="zig", window=4, **kwargs)
    env.reset(seed=1)
    env.step(1)
    print("last line", flush=True)
    if how == "raise":
        raise RuntimeError("the script failed before env.close()")
    """
).format(env_id=ENV_ID)


@pytest.mark.parametrize("how", ["default", "raise", "transport"])
def test_an_unclosed_env_lets_its_process_exit_within_2_s(
    catalog: Path, tmp_path: Path, how: str
) -> None:
    script = tmp_path / "unclosed.py"
    script.write_text(UNCLOSED, encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "KESTREL_HOME": str(tmp_path / "home")}
    child = subprocess.Popen(
        [sys.executable, str(script), how, str(catalog)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "last line\n"
        last = time.monotonic()
        child.wait(timeout=2)
        assert time.monotonic() - last < 2
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.stderr is not None
    stderr = child.stderr.read()
    if how == "raise":
        assert child.returncode == 1
        assert "the script failed before env.close()" in stderr
    else:
        assert child.returncode == 0, stderr
    assert list(temp.iterdir()) == []  # the env's private store left no file behind


def test_a_dropped_env_releases_its_store() -> None:
    env = TradingEnv("acme-chop", grade=False)
    env.reset(seed=1)
    released = env._finalizer  # what the test watches, not what it drives
    assert released.alive
    del env
    assert not released.alive


def test_the_default_store_is_the_envs_own_whatever_kestrel_store_names(
    catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_STORE", "postgresql://127.0.0.1:9/nowhere")
    env = TradingEnv("zig", catalog_paths=[catalog], window=4)
    env.reset(seed=1)
    _, _, _, _, info = env.step(1)
    assert info["position"] > 0
    env.close()
    assert env.grades[0].passed


def test_a_dropped_env_over_a_transport_stops_its_event_loop_thread(catalog: Path) -> None:
    def loops() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name == "kestrel-gym-loop"]

    before = len(loops())
    env = TradingEnv("zig", transport=lambda: local_transport(catalog_paths=[catalog]))
    env.reset(seed=1)
    env.step(1)
    assert len(loops()) == before + 1
    del env  # never closed
    assert len(loops()) == before


def test_close_stops_the_event_loop_thread_and_grades_the_episode(catalog: Path) -> None:
    env = TradingEnv("zig", transport=lambda: local_transport(catalog_paths=[catalog]))
    env.reset(seed=1)
    session = env.session_id
    env.step(1)
    env.close()
    assert "kestrel-gym-loop" not in [t.name for t in threading.enumerate()]
    (grade,) = env.grades
    assert grade.session == session
    # in a kept store the env's own read of the tape is on the principal's horizon
    assert [c.id for c in grade.conformance.checks if not c.passed] == ["no-lookahead"]
    env.close()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
