"""DotenvSecretStore: private, atomic, lossless under concurrency, readable by python-dotenv."""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from dotenv import dotenv_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_protocol import RefusalCode
from kestrel_protocol.ports import SecretStore, SecretWrite
from kestrel_secrets import DotenvSecretStore, SecretStoreError

KEYS = st.from_regex(r"[A-Z_][A-Z0-9_]{0,10}", fullmatch=True).filter(lambda k: "LIVE" not in k)
# Strings built to hit every quoting hazard, mixed with arbitrary text.
HAZARDS = st.sampled_from(
    ['"', "'", "\\", "\\\\", '\\"', "$", "${HOME}", "$X", "#", " # ", "\n", "\r", "\r\n",
     "\t", " ", "=", "\x00", "\u2028", "\ufeff", "é", "\U0001f600", "\\n", "`"]
)  # fmt: skip
VALUES = st.one_of(st.text(), st.lists(st.one_of(HAZARDS, st.text(max_size=3))).map("".join))
OPERATOR_TEXT = (
    "# operator: paper keys only\nexport EDITOR_SET='hand written'\n\nPLAIN=abc # note\n"
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_it_is_a_secret_store_at_kestrel_home_by_default() -> None:
    store = DotenvSecretStore()
    assert isinstance(store, SecretStore)
    assert store.location == str(Path(os.environ["KESTREL_HOME"]) / ".env")


def test_set_creates_a_private_directory_and_file(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / "home" / ".env")
    assert store.set("ALPACA_KEY_ID", "PK123") == SecretWrite("ALPACA_KEY_ID", store.location)
    assert _mode(tmp_path / "home") == 0o700
    assert _mode(store.path) == 0o600
    assert store.names() == ["ALPACA_KEY_ID"]
    assert store.reveal("ALPACA_KEY_ID") == "PK123"
    assert store.reveal("MISSING") is None
    assert dotenv_values(store.path, interpolate=False) == {"ALPACA_KEY_ID": "PK123"}


def test_set_overwrites_and_unset_removes(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / ".env")
    store.set("A", "1")
    store.set("B", "2")
    store.set("A", "3")
    assert store.reveal("A") == "3"
    assert store.unset("A") == SecretWrite("A", store.location, removed=True)
    assert store.unset("A") == SecretWrite("A", store.location, removed=False)
    assert store.names() == ["B"]
    assert store.path.read_text() == 'B="2"\n'


def test_unset_of_a_missing_key_creates_nothing(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / "home" / ".env")
    assert store.unset("NOPE").removed is False
    assert not (tmp_path / "home").exists()
    assert store.names() == []


def test_a_looser_existing_file_and_directory_are_tightened_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    env = home / ".env"
    env.write_text(OPERATOR_TEXT)
    env.chmod(0o644)
    store = DotenvSecretStore(env)
    with caplog.at_level(logging.WARNING, logger="kestrel_secrets"):
        assert store.names() == ["EDITOR_SET", "PLAIN"]
        store.set("NEW", "v")
    assert _mode(env) == 0o600
    assert _mode(home) == 0o700
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "0644" in messages
    assert "0600" in messages
    assert "0755" in messages
    assert "0700" in messages
    assert env.read_text() == OPERATOR_TEXT + 'NEW="v"\n'


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.dictionaries(KEYS.filter(lambda k: k not in ("EDITOR_SET", "PLAIN")), VALUES, max_size=4),
    st.data(),
)
def test_any_value_round_trips_through_python_dotenv(
    values: dict[str, str], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = Path(tmp) / ".env"
        env.write_text(OPERATOR_TEXT)
        env.chmod(0o600)
        store = DotenvSecretStore(env)
        for key, value in values.items():
            store.set(key, data.draw(VALUES))  # an earlier value, overwritten next
            store.set(key, value)
        expected: dict[str, str | None] = {"EDITOR_SET": "hand written", "PLAIN": "abc"}
        expected.update(values)
        assert dotenv_values(env, interpolate=False) == expected
        assert {k: store.reveal(k) for k in values} == values
        assert env.read_bytes().decode().startswith(OPERATOR_TEXT)
        assert store.names() == sorted(expected)


def test_a_symlinked_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.env"
    target.write_text("OTHER=1\n")
    link = tmp_path / "home" / ".env"
    link.parent.mkdir()
    link.symlink_to(target)
    store = DotenvSecretStore(link)
    for attempt in (
        lambda: store.set("TOKEN", "canary-value"),
        lambda: store.unset("OTHER"),
        store.names,
        lambda: store.reveal("OTHER"),
    ):
        with pytest.raises(SecretStoreError) as info:
            attempt()
        assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
        assert "symlink" in info.value.message
        assert "canary-value" not in str(info.value)
    assert link.is_symlink()
    assert target.read_text() == "OTHER=1\n"


def test_a_symlinked_home_directory_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "home").symlink_to(real)
    store = DotenvSecretStore(tmp_path / "home" / ".env")
    store.set("A", "1")
    assert (real / ".env").read_text() == 'A="1"\n'


def test_refused_keys_leave_the_file_byte_identical(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_bytes(OPERATOR_TEXT.encode())
    env.chmod(0o600)
    before = sorted(os.listdir(tmp_path))
    store = DotenvSecretStore(env)
    for key, code in (
        ("ALPACA_LIVE_KEY", RefusalCode.SECRET_KEY_LIVE),
        ("lower", RefusalCode.SECRET_KEY_INVALID),
    ):
        with pytest.raises(SecretStoreError) as info:
            store.set(key, "v")
        assert info.value.code == code
    with pytest.raises(SecretStoreError) as info:
        store.unset("lower")
    assert info.value.code == RefusalCode.SECRET_KEY_INVALID
    assert env.read_bytes() == OPERATOR_TEXT.encode()
    assert sorted(os.listdir(tmp_path)) == before


def test_a_live_key_written_by_hand_can_be_removed_but_not_set(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_bytes((OPERATOR_TEXT + "ALPACA_LIVE_KEY=pasted-by-hand\n").encode())
    env.chmod(0o600)
    store = DotenvSecretStore(env)
    with pytest.raises(SecretStoreError) as info:
        store.set("ALPACA_LIVE_KEY", "v")
    assert info.value.code == RefusalCode.SECRET_KEY_LIVE
    assert store.reveal("ALPACA_LIVE_KEY") == "pasted-by-hand"
    assert store.unset("ALPACA_LIVE_KEY").removed is True
    assert env.read_bytes() == OPERATOR_TEXT.encode()
    assert store.unset("ALPACA_LIVE_KEY").removed is False


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / ".env"
    store = DotenvSecretStore(env)
    store.set("A", "1")
    before = env.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(SecretStoreError) as info:
        store.set("B", "canary-disk-full")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "canary-disk-full" not in str(info.value)
    assert env.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_non_utf8_file_is_refused_not_rewritten(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_bytes(b"A=\xff\xfe\n")
    with pytest.raises(SecretStoreError) as info:
        DotenvSecretStore(env).set("B", "1")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert env.read_bytes() == b"A=\xff\xfe\n"


def test_an_unwritable_directory_is_unavailable_without_the_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated rather than chmod-ed: CI may run as root, which ignores file modes.
    def denied(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    env = tmp_path / ".env"
    with pytest.raises(SecretStoreError) as info:
        DotenvSecretStore(env).set("A", "canary-ro")
    assert info.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "Permission denied" in info.value.message
    assert "canary-ro" not in str(info.value)
    assert not env.exists()


_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from kestrel_secrets import DotenvSecretStore

    path, prefix, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    store = DotenvSecretStore(path)
    while not go.exists():
        time.sleep(0.005)
    for i in range(200):
        store.set(f"{prefix}_{i:03d}", f"value {prefix} {i} \\"q\\" $X #")
    """
)


def test_two_processes_writing_200_keys_each_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = home / ".env"
    env.write_text("# operator comment: do not remove\n")
    env.chmod(0o600)
    go = tmp_path / "go"
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(env), prefix, str(go)])
        for prefix in ("P", "Q")
    ]
    time.sleep(0.5)  # both interpreters up and polling before the start signal
    go.touch()
    for writer in writers:
        assert writer.wait(timeout=300) == 0
    values = dotenv_values(env, interpolate=False)
    expected = {f"{p}_{i:03d}" for p in ("P", "Q") for i in range(200)}
    assert set(values) == expected
    assert values["Q_123"] == 'value Q 123 "q" $X #'
    assert DotenvSecretStore(env).names() == sorted(expected)
    assert _mode(env) == 0o600
    assert env.read_text().startswith("# operator comment: do not remove\n")
    assert [p.name for p in home.iterdir() if p.name.endswith(".tmp")] == []


def test_writers_in_threads_of_one_process_lose_nothing(tmp_path: Path) -> None:
    store = DotenvSecretStore(tmp_path / ".env")

    def write(prefix: str) -> None:
        for i in range(25):
            store.set(f"{prefix}_{i:02d}", str(i))

    threads = [threading.Thread(target=write, args=(p,)) for p in ("A", "B", "C", "D")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(store.names()) == 100


_ENDLESS_WRITER = textwrap.dedent(
    """
    import sys
    from kestrel_secrets import DotenvSecretStore

    store = DotenvSecretStore(sys.argv[1])
    i = 0
    while True:
        store.set(f"K_{i:05d}", "v" * 2000 + str(i))
        i += 1
    """
)


def test_a_killed_writer_leaves_a_whole_file_and_its_temporary_is_cleaned(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    writer = subprocess.Popen([sys.executable, "-c", _ENDLESS_WRITER, str(env)])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if env.exists() and len(DotenvSecretStore(env).names()) >= 30:
                break
            time.sleep(0.01)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    values = dotenv_values(env, interpolate=False)
    assert len(values) >= 30
    for key, value in values.items():
        assert value == "v" * 2000 + str(int(key[2:]))  # no torn value
    # A temporary a dead writer left behind holds secrets; the next write removes it.
    stale = tmp_path / ".env.deadbeef.tmp"
    stale.write_text('K_99999="canary-stale"\n')
    DotenvSecretStore(env).set("AFTER", "1")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_write_an_operators_unterminated_quote_would_swallow_is_refused_unwritten(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".env"
    path.write_text("# operator notes\nBROKER='half-typed\n", encoding="utf-8")
    path.chmod(0o600)
    before = path.read_bytes()
    store = DotenvSecretStore(path)
    with pytest.raises(SecretStoreError) as refused:
        store.set("PAPER_NOTE", "it's fine")
    assert refused.value.code == RefusalCode.SECRET_STORE_UNAVAILABLE
    assert "line 2" in refused.value.message
    assert "it's fine" not in str(refused.value)
    assert path.read_bytes() == before
    store.set("PAPER_KEY", "no quotes here")
    assert dotenv_values(path, interpolate=False)["PAPER_KEY"] == "no quotes here"
