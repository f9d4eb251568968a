"""kestrel/Trading-v0: a checked Gymnasium env whose episodes are reproducible sessions."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from kestrel_door import DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_protocol import Blotter, Proof, canonical_json
from kestrel_sdk import SdkError, local_transport, remote_transport
from kestrel_sdk.gym import ENV_ID, TradingEnv
from kestrel_sdk.scenarios import ScenarioTermsInput, scenario_from_file

from tests.kestrel_sdk.gym.conftest import BARS, day_text
from tests.loopback import serve_built


def _episode_roots(
    env: TradingEnv, policy: Callable[[Any], Any], seed: int, graded: bool = True
) -> list[Any]:
    """Frame roots of every step of two episodes (and their grades' roots if ``graded``)."""
    seen: list[Any] = []
    for episode in range(2):
        obs, info = env.reset(seed=seed if episode == 0 else None)
        seen.append(info["frame_root"])
        while True:
            obs, _reward, terminated, truncated, info = env.step(policy(obs))
            seen.append(info["frame_root"])
            if terminated or truncated:
                assert ("grade" in info) == ("proof" in info) == graded
                if graded:
                    seen.append(info["grade"].root)
                break
    return seen


def _random(env: TradingEnv) -> Callable[[Any], Any]:
    return lambda _obs: env.action_space.sample()


def test_check_env_passes(catalog: Path) -> None:
    for action in ("discrete", "continuous"):
        made = gymnasium.make(ENV_ID, scenario="zig", action=action, catalog_paths=[catalog])
        env = made.unwrapped  # with its spec: check_env tries the ansi render mode too
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # not even an advisory note
            check_env(env)
        env.close()


def test_every_observation_is_within_the_finite_observation_space(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], window=8, exposure=1.0)
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Box)
    assert np.isfinite(space.low).all()
    assert np.isfinite(space.high).all()
    env.action_space.seed(3)
    obs, _ = env.reset(seed=3)
    seen = [obs]
    for _ in range(3 * BARS):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        seen.append(obs)
        if terminated or truncated:
            seen.append(env.reset()[0])
    env.close()
    assert all(space.contains(obs) for obs in seen)
    # the volume feature reaches its bound when a window's volume is all on one bar
    assert space.high[4] == 8 - 1


def test_registered_id_makes_the_env(catalog: Path) -> None:
    env = gymnasium.make(ENV_ID, scenario="zig", catalog_paths=[catalog], window=4)
    assert env.observation_space.shape == (4 * 5 + 3,)
    assert env.action_space == gymnasium.spaces.Discrete(3)  # shortable: flat/long/short
    env.close()


def test_same_policy_and_seed_give_the_same_roots_and_grades(catalog: Path) -> None:
    runs = []
    for _ in range(2):
        env = TradingEnv("zig", catalog_paths=[catalog])
        env.action_space.seed(5)
        runs.append(_episode_roots(env, _random(env), seed=5))
        grades = env.grades
        env.close()
    assert runs[0] == runs[1]
    assert len(runs[0]) == 2 * (BARS + 1)
    # the second episode trades a tape its principal has seen to the end in the first:
    # it fails no-lookahead (naming the first episode's session) and nothing else
    assert [grade.passed for grade in grades] == [True, False]
    failed = [c for c in grades[1].conformance.checks if not c.passed]
    assert [c.id for c in failed] == ["no-lookahead"]
    assert failed[0].detail.startswith(f"session {grades[0].session} of the same principal")
    other = TradingEnv("zig", catalog_paths=[catalog])
    other.action_space.seed(5)
    assert _episode_roots(other, _random(other), seed=6) != runs[0]
    other.close()


def test_discrete_long_then_flat_trades_a_full_position_at_the_next_open(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], exposure=0.5)
    obs, info = env.reset(seed=1)
    assert info["session"] == env.session_id
    assert info["position"] == 0
    obs, reward, _, _, info = env.step(1)  # long: 0.5 x 100000 / mark 100 = 500 shares
    assert info["position"] == 500
    assert "fill" in info["events"]
    # bar 1 opens at 101 and closes at 102: +1 per share, less 10 bps of 500 x 101
    assert reward == pytest.approx(500 * 1 - 50.50)
    obs, reward, _, _, info = env.step(1)  # holding: no order, the reward is the mark move
    assert info["position"] == 500
    assert reward == pytest.approx(500 * 2)
    assert obs[-3] == pytest.approx(500 * 104 / info["equity"], rel=1e-6)  # position / equity
    _, _, _, _, info = env.step(0)
    assert info["position"] == 0
    env.close()


def test_truncated_at_the_end_of_the_tape_with_the_grade_in_info(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], action="continuous")
    env.reset(seed=2)
    steps = 0
    while True:
        _, _, terminated, truncated, info = env.step(np.array([0.3], dtype=np.float32))
        steps += 1
        if terminated or truncated:
            break
    assert (terminated, truncated, steps) == (False, True, BARS - 1)
    assert info["stand_down"] == "end-of-tape"
    assert info["grade"].passed
    assert env.grades == [info["grade"]]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0.0], dtype=np.float32))
    env.close()


def test_terminated_when_the_drawdown_limit_stands_it_down(tmp_path: Path) -> None:
    lines = ["Date,Open,High,Low,Close,Volume"]
    for day in range(20):
        close = 100 - 4 * day
        lines.append(f"{day_text(day)},{close},{close + 1},{close - 1},{close},100000")
    source = tmp_path / "DROP.csv"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    terms = ScenarioTermsInput(max_drawdown="0.1")
    scenario_from_file(source, "drop", terms=terms).write(tmp_path / "catalog" / "drop")
    env = TradingEnv("drop", catalog_paths=[tmp_path / "catalog"])
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(1)
        if terminated or truncated:
            break
    assert (terminated, truncated, info["stand_down"]) == (True, False, "max-drawdown")
    env.close()


def test_close_grades_an_unfinished_episode_flat(catalog: Path) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog])
    env.reset(seed=3)
    env.step(1)
    env.step(1)
    env.close()
    (grade,) = env.grades
    assert grade.passed  # stood down before closing: flat at the end
    assert grade.metrics.fills == 2


def test_a_finished_seed_is_not_replayed_in_a_kept_home(catalog: Path, tmp_path: Path) -> None:
    for attempt in range(2):
        env = TradingEnv("zig", catalog_paths=[catalog], home=tmp_path / "home")
        try:
            if attempt == 0:
                env.reset(seed=9)
            else:
                with pytest.raises(SdkError) as refused:
                    env.reset(seed=9)
                assert refused.value.code == "SESSION_CLOSED"
        finally:
            env.close()


@pytest.mark.anyio
async def test_over_the_remote_transport_the_roots_are_the_local_ones(
    catalog: Path, tmp_path: Path
) -> None:
    owner = local_transport(home=tmp_path / "door-home", catalog_paths=[catalog])
    runtime = owner.runtime  # type: ignore[attr-defined]
    store = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(store)
    token = tokens.issue("alice", ["kestrel:read", "kestrel:trade", "kestrel:grade"])[1]

    def door_at(base: str) -> Any:
        return create_door_app(
            DoorConfig(base_url=base),
            transport_for=lambda principal: local_transport(principal=principal, runtime=runtime),
            grant_verifiers=[tokens],
        )

    def run(make: Callable[[], Any]) -> list[Any]:
        env = TradingEnv("zig", transport=make)
        try:
            return _episode_roots(
                env, lambda obs: 1 if obs[-8] < 0 else 2, seed=4
            )  # after an up bar: long
        finally:
            env.close()

    try:
        async with serve_built(door_at) as url:
            remote = await anyio.to_thread.run_sync(
                run, lambda: remote_transport(base_url=url, token=token)
            )
    finally:
        await owner.aclose()
        store.close()
    local = run(
        lambda: local_transport(home=tmp_path / "alice", catalog_paths=[catalog], principal="alice")
    )
    assert remote == local


def _verify_elsewhere(tmp_path: Path, proof: Any, name: str) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` of the proof's file in a process whose ``HOME`` and
    ``KESTREL_HOME`` are new empty directories (and no user catalog)."""
    file = proof.write(tmp_path / f"{name}.json")
    assert file.read_bytes() == canonical_json(proof.to_json()) + b"\n"
    user_home, home = tmp_path / f"{name}-user", tmp_path / f"{name}-home"
    user_home.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_CATALOG_PATH"}
    env.update(HOME=str(user_home), KESTREL_HOME=str(home))
    return subprocess.run(
        [str(Path(sys.executable).parent / "kestrel"), "verify", str(file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_each_episode_has_a_proof_that_verifies_in_an_empty_home(
    catalog: Path, tmp_path: Path
) -> None:
    env = TradingEnv("zig", catalog_paths=[catalog], embed_tape=True, window=4)
    bare = TradingEnv("zig", catalog_paths=[catalog], window=4)
    try:
        for made in (env, bare):
            made.reset(seed=11)
            for step in range(10_000):
                _obs, _r, terminated, truncated, info = made.step(1 if step % 3 else 2)
                if terminated or truncated:
                    break
            assert info["proof"] is made.proofs[-1]
            assert info["proof"].model().grade == info["grade"] == made.grades[-1]
        env.reset(seed=12)
        env.step(1)
    finally:
        env.close()  # grades and proves the abandoned second episode
        bare.close()
    assert len(env.proofs) == len(env.grades) == 2
    assert env.proofs[1].model().grade == env.grades[1]
    assert env.proofs[0].model().embedded is not None
    assert env.proofs[0].model().record.session == env.grades[0].session
    for i, proof in enumerate(env.proofs):
        done = _verify_elsewhere(tmp_path, proof, f"embedded-{i}")
        assert done.returncode == 0, done.stderr
        assert proof.model().grade.root in done.stdout
    # the same episode's proof without its tape cannot be checked where zig is unknown
    refused = _verify_elsewhere(tmp_path, bare.proofs[0], "bare")
    assert refused.returncode != 0
    assert "zig" in refused.stderr
    assert bare.proofs[0].model().grade == env.proofs[0].model().grade  # same seed, actions


def test_a_graded_episode_keeps_its_proof_as_text_and_makes_the_object_when_asked(
    catalog: Path,
) -> None:
    def alive() -> list[Any]:  # the proofs and blotters this process holds now
        gc.collect()
        return [o for o in gc.get_objects() if isinstance(o, (Proof, Blotter))]

    env = TradingEnv("zig", catalog_paths=[catalog], window=4)
    env.reset(seed=3)
    held = alive()  # other tests' may be alive (held here: no id of theirs is reused)
    before = {id(o) for o in held}
    for step in range(10_000):
        _obs, _r, terminated, truncated, info = env.step(1 if step % 3 else 2)
        if terminated or truncated:
            break
    proof = info["proof"]
    assert not [o for o in alive() if id(o) not in before], "objects nobody asked for"
    made = proof.model()  # asked for: made once, from the text it keeps
    assert made is proof.model() is env.proofs[-1].model()
    assert made.grade == info["grade"] == env.grades[-1]
    assert proof.text.encode("utf-8") == made.canonical()
    env.close()


def test_a_private_store_keeps_nothing_of_a_proved_episode_and_a_kept_one_keeps_it_all(
    catalog: Path, tmp_path: Path
) -> None:
    for where in ("private", "kept"):
        home = None if where == "private" else tmp_path / "home"
        env = TradingEnv("zig", catalog_paths=[catalog], window=4, home=home)
        env.reset(seed=5)
        for _ in range(2):  # two episodes in one store (an unseeded reset keeps it)
            for step in range(10_000):
                _obs, _r, terminated, truncated, _info = env.step(1 if step % 3 else 2)
                if terminated or truncated:
                    break
            env.reset()
        store = env._backend.runtime.store  # type: ignore[attr-defined]
        proofs = [proof.model() for proof in env.proofs]
        assert len(proofs) == 2
        for proof in proofs:
            sid = proof.record.session
            made = [proof.record.root, proof.grade.root, proof.blotter.root, proof.record.head]
            made += [pentad.root for pentad in proof.pentads]
            kept = [store.lookup(root)[1] == "ok" for root in made]
            if where == "private":  # the proof holds it all: the store keeps none of it
                assert store.session(sid) is None
                assert not any(kept), where
            else:  # a kept store keeps the session, its steps and its proof's parts
                assert store.session(sid) is not None
                assert store.pruned(sid) is None
                assert len(store.journal(sid)) > 1
                assert all(kept), where
        for proof, grade in zip(proofs, env.grades, strict=True):  # the proofs hold them
            assert proof.grade == grade
            assert len(proof.pentads) > 1
        if where == "private":  # the second episode is still checked against the first's
            lookahead = [  # reach, though the store forgot the first (a kept store's
                [c.passed for c in grade.conformance.checks if c.id == "no-lookahead"]
                for grade in env.grades  # principal read the whole tape to make the env)
            ]
            assert lookahead == [[True], [False]]
            detail = next(
                c.detail for c in env.grades[1].conformance.checks if c.id == "no-lookahead"
            )
            assert detail.startswith(f"session {env.grades[0].session} of the same principal")
        env.close()


def test_rgb_array_draws_the_latest_bars_tinted_by_the_position(catalog: Path) -> None:
    # what stable-baselines3's make_vec_env asks for unless told otherwise
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gymnasium.make(
            ENV_ID, scenario="zig", catalog_paths=[catalog], render_mode="rgb_array"
        )
    env.reset(seed=1)
    flat = env.render()
    assert isinstance(flat, np.ndarray)
    assert flat.shape == (128, 256, 3)
    assert flat.dtype == np.uint8
    env.step(1)
    long = env.render()
    env.step(2)
    short = env.render()
    env.close()
    assert isinstance(long, np.ndarray)
    assert isinstance(short, np.ndarray)
    corners = {tuple(image[0, -1]) for image in (flat, long, short)}
    assert len(corners) == 3  # the background tells flat, long and short apart
    assert (long[:, :8] != long[0, -1]).any()  # and the first bars are drawn on it


def test_grade_false_plays_the_same_sessions_and_grades_nothing(catalog: Path) -> None:
    runs, graded = [], set()
    for grade in (True, False):
        env = TradingEnv("zig", catalog_paths=[catalog], grade=grade)
        env.action_space.seed(8)
        runs.append(_episode_roots(env, _random(env), seed=8, graded=grade))
        assert len(env.grades) == len(env.proofs) == (2 if grade else 0)
        graded |= {made.root for made in env.grades}
        env.close()
    assert len(graded) == 2
    assert [root for root in runs[0] if root not in graded] == runs[1]  # frames alike


def test_fractional_volumes_are_observed_exactly_as_the_tape_holds_them(tmp_path: Path) -> None:
    # a crypto tape: volumes of fractions of a coin; the volume feature is v / mean - 1
    lines = ["Date,Open,High,Low,Close,Volume"]
    volumes = ["1.5", "0.5", "0.00000001", "2.25"]
    for day, volume in enumerate(volumes):
        lines.append(f"{day_text(day)},100,101,99,100,{volume}")
    source = tmp_path / "BTC.csv"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scenario_from_file(source, "btc").write(tmp_path / "catalog" / "btc")
    env = TradingEnv("btc", catalog_paths=[tmp_path / "catalog"], window=2)
    obs, _ = env.reset(seed=0)
    assert obs[[4, 9]].tolist() == [0.0, 0.0]  # bar 0 twice: its own mean
    obs, *_ = env.step(0)
    assert obs[[4, 9]].tolist() == [0.5, -0.5]  # 1.5 and 0.5 around their mean 1
    env.close()
