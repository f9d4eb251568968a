"""The Inspect task end to end: Inspect's mock model makes scripted tool calls (open, a
few submits, grade) through ``kestrel-mcp`` and through a door on loopback; the log
holds each sample's score and proof, and the proof verifies in an empty home."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from kestrel_inspect import METADATA_KEY, TOKEN_ENV, KestrelConnection, kestrel_trading

from tests.doors import serve_door
from tests.kestrel_inspect.scripted import SUBMITS, scripted_model
from tests.kestrel_inspect.test_board_agents import kestrel_board

SCENARIOS = ["acme-chop", "acme-trend"]
REPO = Path(__file__).resolve().parents[2]


def _run(task: Any, log_dir: Path) -> EvalLog:
    logs = inspect_eval(task, model=scripted_model(), log_dir=str(log_dir), display="none")
    assert len(logs) == 1
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def verify_in_empty_home(proof: dict[str, Any], tmp: Path) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` of ``proof`` in a new process with an empty HOME and no
    Kestrel variables: only the proof and the shipped catalog."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "proof.json"
    path.write_text(json.dumps(proof), encoding="utf-8")
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_nowhere(secret: str, logs: Path) -> None:
    """``secret`` is in no file under ``logs``, nor in any member of an ``.eval`` (zip)
    log, compressed or not."""
    files = [p for p in logs.rglob("*") if p.is_file()]
    assert files, f"no log under {logs}"
    needle = secret.encode()
    for path in files:
        assert needle not in path.read_bytes(), path
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    assert needle not in archive.read(member), f"{path}:{member}"


def _check_log(written: EvalLog, tmp: Path, where: str) -> None:
    """The log as written to disk: a sample per scenario, each scored from its session's
    grade, its proof in the score and verifying in an empty home."""
    log = read_eval_log(written.location)
    assert log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == sorted(SCENARIOS)
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["kestrel_scorer"]
        kestrel = score.metadata[METADATA_KEY] if score.metadata else {}
        proof = kestrel["proof"]
        grade = proof["grade"]
        assert kestrel["connection"] == where
        if where.startswith("http"):  # a door signs the grade it serves
            assert kestrel["attestation"] == proof["attestation"]
        assert grade["scenario"]["id"] == sample.id
        # the session the agent opened and submitted to, every submit in the proof
        assert score.answer == grade["session"] == kestrel["session"]
        assert [p["body"]["bytes"] for p in proof["pentads"]] == list(SUBMITS)
        assert grade["metrics"]["fills"] == 2
        assert isinstance(score.value, dict)
        assert score.value["return"] == float(grade["metrics"]["return"])
        assert score.value["sharpe"] == float(grade["metrics"]["sharpe"])
        assert score.value["max_drawdown"] == float(grade["metrics"]["maxDrawdown"])
        assert score.value["no_lookahead"] == 1.0
        assert score.value["passed"] == (1.0 if grade["passed"] else 0.0)
        assert kestrel["grade"] == grade["root"] in (score.explanation or "")
        done = verify_in_empty_home(proof, tmp / str(sample.id))
        assert done.returncode == 0, done.stderr
        assert f"ok: proof {proof['root']} of grade {grade['root']}" in done.stdout
    # the eval's metrics are the means of the samples' figures
    assert log.results is not None
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    returns: list[float] = []
    for sample in log.samples:
        value = sample.scores["kestrel_scorer"].value if sample.scores else None
        assert isinstance(value, dict)
        returns.append(float(value["return"]))
    assert means["return"] == pytest.approx(sum(returns) / len(returns))


def test_the_task_over_kestrel_mcp(tmp_path: Path) -> None:
    home = tmp_path / "kestrel"
    log = _run(kestrel_trading(SCENARIOS, home=str(home)), tmp_path / "logs")
    _check_log(log, tmp_path / "verify", "kestrel-mcp")
    # the board reads the log directory: a row per sample, each verified and ranked
    board = kestrel_board(str(tmp_path / "logs"), "--json")
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)["rows"]
    assert sorted(r["scenario"] for r in rows) == sorted(SCENARIOS)
    for row in rows:
        assert (row["agent"], row["badge"], row["rank"]) == ("mockllm/model", "replayed-only", 1)
        assert row["source"].startswith(str(log.location))


def test_the_task_through_a_sealed_door_on_loopback(tmp_path: Path) -> None:
    """The README's evaluation: a door sealing acme-chop (acme-trend left open)."""
    with serve_door(tmp_path / "door", "--seal", "acme-chop") as door:
        token_file = tmp_path / "token"
        token_file.write_text(door.token + "\n", encoding="utf-8")
        task = kestrel_trading(SCENARIOS, door=door.url, token_file=str(token_file))
        log = _run(task, tmp_path / "logs")
        board = subprocess.run(
            [
                *(str(Path(sys.executable).parent / "kestrel"), "board", str(tmp_path / "logs")),
                *("--trust", door.url, "--json"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    _check_log(log, tmp_path / "verify", door.url)
    assert_nowhere(door.token, tmp_path / "logs")
    # the door signed each grade; the board checks the statements with the door's keys
    assert board.returncode == 0, board.stderr
    rows = {r["scenario"]: r for r in json.loads(board.stdout)["rows"]}
    assert rows["acme-chop"]["badge"] == "attested-and-sealed"
    assert rows["acme-trend"]["badge"] == "replayed-only"
    assert rows["acme-trend"]["attestation"].endswith("; not sealed")
    for row in rows.values():
        assert row["attestation"].startswith(f"attested by {door.url} (key ")
    assert log.samples is not None
    detail = {
        str(s.id): s.scores["kestrel_scorer"].metadata[METADATA_KEY]["no_lookahead"]  # type: ignore[index]
        for s in log.samples
    }
    assert detail["acme-chop"].startswith("the scenario was sealed for the whole session")
    assert "the scenario was not sealed" in detail["acme-trend"]


def test_inspect_eval_on_the_command_line(tmp_path: Path) -> None:
    """``inspect eval kestrel_inspect/kestrel_trading -T …``: the task is found by its
    registered name, its arguments come from ``-T``, and the log holds the score."""
    home, logs = tmp_path / "kestrel", tmp_path / "logs"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "kestrel_inspect/kestrel_trading"),
            *("-T", "scenarios=acme-chop", "-T", f"home={home}"),
            *("--solver", f"{REPO}/tests/kestrel_inspect/scripted.py@scripted_trader"),
            *("-S", f"home={home}", "--model", "mockllm/model"),
            *("--log-dir", str(logs), "--display", "none"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = list(logs.iterdir())
    log = read_eval_log(str(path))
    assert log.eval.task == "kestrel_inspect/kestrel_trading"
    assert log.samples is not None
    [sample] = log.samples
    assert sample.scores is not None
    score = sample.scores["kestrel_scorer"]
    assert score.metadata is not None
    proof = score.metadata[METADATA_KEY]["proof"]
    assert proof["grade"]["scenario"]["id"] == "acme-chop"
    assert len(proof["pentads"]) == len(SUBMITS)


def test_an_agent_that_opens_no_session_earns_nothing(tmp_path: Path) -> None:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    said = ModelOutput.from_content("mockllm/model", "I will not trade.")
    said.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    [log] = inspect_eval(
        kestrel_trading("acme-chop", home=str(tmp_path / "kestrel")),
        model=get_model("mockllm/model", custom_outputs=[said]),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.samples is not None
    score = log.samples[0].scores["kestrel_scorer"]  # type: ignore[index]
    assert score.value == dict.fromkeys(("return", "sharpe", "max_drawdown"), 0.0) | {
        "no_lookahead": 0.0,
        "passed": 0.0,
    }
    assert score.explanation == "the agent opened no session on acme-chop"


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="name the scenarios to trade"):
        kestrel_trading()
    with pytest.raises(ValueError, match="acme-chop, acme-chop"):
        kestrel_trading("acme-chop,acme-chop")
    with pytest.raises(ValueError, match="style 'reckless' is not one of cautious"):
        kestrel_trading("acme-chop", style="reckless")
    with pytest.raises(ValueError, match="door must be an http"):
        KestrelConnection(door="ftp://example")


def test_the_token_comes_from_the_environment_or_a_file_named_when_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(ValueError, match="a door needs a bearer token: set KESTREL_API_TOKEN"):
        KestrelConnection(door="http://127.0.0.1:9").inspect_server()
    missing = tmp_path / "no-such-token"
    with pytest.raises(ValueError, match=f"token_file '{missing}' cannot be read"):
        KestrelConnection(door="http://127.0.0.1:9", token_file=str(missing)).inspect_server()
    empty = tmp_path / "empty-token"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"token_file '{empty}' is empty"):
        KestrelConnection(door="http://127.0.0.1:9", token_file=str(empty)).inspect_server()
    with pytest.raises(ValueError, match="token_file is for a door"):
        KestrelConnection(token_file=str(empty))
    with pytest.raises(TypeError):  # the token itself is no argument: it would be logged
        kestrel_trading("acme-chop", door="http://127.0.0.1:9", token="kst_secret")  # type: ignore[call-arg]


def test_the_readme_evaluation_offline_with_the_shipped_agent(tmp_path: Path) -> None:
    """The README's "Evaluate an agent" as written, with ``--model kestrel/momentum``: a
    sealed door, the token in ``$KESTREL_API_TOKEN``, ``inspect eval`` on the command
    line, no network and no key. Every sample trades to the end of its tape, passes
    ``no-lookahead``, its proof verifies in an empty home, and the token is in no log."""
    logs = tmp_path / "logs"
    with serve_door(tmp_path / "door", "--seal", "acme-chop") as door:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
        env |= {TOKEN_ENV: door.token, "HOME": str(tmp_path / "home")}
        done = subprocess.run(
            [
                *(sys.executable, "-m", "inspect_ai", "eval", "kestrel_inspect/kestrel_trading"),
                *("-T", "scenarios=acme-chop,acme-trend", "-T", f"door={door.url}"),
                *("--model", "kestrel/momentum", "--log-dir", str(logs), "--display", "none"),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_nowhere(door.token, logs)
    [path] = list(logs.iterdir())
    log = read_eval_log(str(path))
    assert log.status == "success"
    assert log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == ["acme-chop", "acme-trend"]
    for sample in log.samples:
        assert sample.scores is not None
        kestrel = sample.scores["kestrel_scorer"].metadata[METADATA_KEY]  # type: ignore[index]
        proof = kestrel["proof"]
        assert proof["grade"]["conformance"]["checks"], proof["grade"]
        value = sample.scores["kestrel_scorer"].value
        assert isinstance(value, dict)
        assert value["no_lookahead"] == 1.0
        # traded to the end of the tape: the last submit's answer stood down there
        submits = [p["body"]["bytes"] for p in proof["pentads"]]
        assert len(submits) > 50
        assert any(s.startswith("buy ") for s in submits)
        results = [m for m in sample.messages if m.role == "tool"]
        last = results[-1].text.splitlines()[0]  # what the agent read: the compact text
        assert re.fullmatch(r"submission \d+ stood-down \(end-of-tape: .+\)", last), last
        checked = verify_in_empty_home(proof, tmp_path / str(sample.id))
        assert checked.returncode == 0, checked.stderr


def test_the_hold_agent_buys_once_and_holds_to_the_end(tmp_path: Path) -> None:
    [log] = inspect_eval(
        kestrel_trading("acme-trend", home=str(tmp_path / "kestrel")),
        model="kestrel/hold",
        model_args={"step": 250},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    score = sample.scores["kestrel_scorer"]  # type: ignore[index]
    proof = score.metadata[METADATA_KEY]["proof"]  # type: ignore[index]
    submits = [p["body"]["bytes"] for p in proof["pentads"]]
    assert [s for s in submits if "buy" in s or "sell" in s] == [submits[0]]
    assert submits[0].startswith("buy ")
    assert submits[0].endswith("\nadvance 250")
    assert submits[1:] == ["advance 250"] * (len(submits) - 1)
    assert isinstance(score.value, dict)
    assert float(score.value["return"]) > 0  # held through acme-trend's rise


def test_an_unknown_offline_agent_is_named() -> None:
    from inspect_ai.model import get_model

    with pytest.raises(ValueError, match="kestrel/momentum, kestrel/hold"):
        get_model("kestrel/genius")
    with pytest.raises(ValueError, match="step must be at least 1"):
        get_model("kestrel/hold", step=0)
