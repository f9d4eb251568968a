"""Repeated trials (issue 50): ``--epochs N`` gives N honest runs of each scenario.

The README's "Evaluate an agent" with the shipped offline agent, ``--epochs 3`` on two
scenarios, samples running concurrently, over ``kestrel-mcp`` and through a sealed door
on loopback: each sample and epoch trades as its own trial principal, so every sample
passes ``no-lookahead`` (one identity for all six made them fail one another), the
metrics carry a standard error, every proof verifies in an empty home, and no token (the
evaluator's, or a trial's) is anywhere in the log directory. A door that cannot serve a
sample leaves it unscored with the reason, not a 0 of the agent's.
"""

from __future__ import annotations

import base64
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from kestrel_door.cli import door_group
from kestrel_inspect import METADATA_KEY, TOKEN_ENV, UNAVAILABLE, kestrel_trading

from tests.doors import serve_door
from tests.kestrel_inspect.test_task import assert_nowhere, verify_in_empty_home
from tests.loopback import free_port

SCENARIOS = ("acme-chop", "acme-trend")
EPOCHS = 3
METRICS = ("return", "sharpe", "max_drawdown", "no_lookahead", "passed")


def _inspect_eval(logs: Path, env: dict[str, str], *task_args: str) -> EvalLog:
    """``inspect eval`` on the command line as the README has it, with the offline agent
    at a coarse step, three epochs and every sample at once."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "kestrel_inspect/kestrel_trading"),
            *("-T", f"scenarios={','.join(SCENARIOS)}", *task_args),
            *("--model", "kestrel/momentum", "-M", "step=250", "--epochs", str(EPOCHS)),
            *("--max-samples", str(len(SCENARIOS) * EPOCHS)),
            *("--log-dir", str(logs), "--display", "none"),
        ],
        env=env,
        cwd=logs.parent,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = list(logs.iterdir())
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return log


def _check_trials(log: EvalLog, tmp: Path) -> list[dict[str, Any]]:
    """Six samples, each its own trial and session, each passing no-lookahead and
    verifying in an empty home; the metrics carry a stderr. Returns the proofs."""
    assert log.samples is not None
    assert sorted((str(s.id), s.epoch) for s in log.samples) == sorted(
        (scenario, epoch) for scenario in SCENARIOS for epoch in range(1, EPOCHS + 1)
    )
    proofs, trials, sessions = [], set(), set()
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["kestrel_scorer"]
        kestrel = score.metadata[METADATA_KEY]  # type: ignore[index]
        assert isinstance(score.value, dict)
        assert score.value["no_lookahead"] == 1.0, kestrel["no_lookahead"]
        proof = kestrel["proof"]
        assert proof["grade"]["scenario"]["id"] == sample.id
        trials.add(kestrel["trial"])
        sessions.add(kestrel["session"])
        checked = verify_in_empty_home(proof, tmp / f"{sample.id}-{sample.epoch}")
        assert checked.returncode == 0, checked.stderr
        proofs.append(proof)
    assert len(trials) == len(sessions) == len(log.samples)
    assert log.results is not None
    for metric in log.results.scores:
        assert set(metric.metrics) >= {"mean", "stderr"}, metric.metrics
    assert sorted(m.name for m in log.results.scores) == sorted(METRICS)
    return proofs


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(tmp / "home")
    return env


def test_three_epochs_over_kestrel_mcp_are_three_honest_runs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    home = tmp_path / "kestrel"
    log = _inspect_eval(logs, _clean_env(tmp_path), "-T", f"home={home}")
    _check_trials(log, tmp_path / "verify")
    assert log.samples is not None
    for sample in log.samples:
        trial = sample.scores["kestrel_scorer"].metadata[METADATA_KEY]["trial"]  # type: ignore[index]
        assert trial.startswith(f"local/trial-{sample.id}-e{sample.epoch}-")


def test_three_epochs_through_a_sealed_door_are_three_honest_runs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    with serve_door(tmp_path / "door", "--seal", "acme-chop", principal="evaluator") as door:
        env = _clean_env(tmp_path) | {TOKEN_ENV: door.token}
        log = _inspect_eval(logs, env, "-T", f"door={door.url}")
        listed = CliRunner().invoke(
            door_group, ["--home", str(door.home), "token", "list", "--json"]
        )
        ranked = subprocess.run(
            [
                *(str(Path(sys.executable).parent / "kestrel"), "board", str(logs)),
                *("--trust", door.url, "--json"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert ranked.returncode == 0, ranked.stderr
    board = json.loads(ranked.stdout)
    proofs = _check_trials(log, tmp_path / "verify")
    # no bearer of any kind in the logs: not the evaluator's, not a trial's
    assert_nowhere(door.token, logs)
    assert_nowhere("kestrel_tok_", logs)
    # each trial was the evaluator's, signed under a pseudonym of its own, and is revoked
    pseudonyms, parents = set(), set()
    for proof in proofs:
        statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
        pseudonyms.add(statement["predicate"]["principal"])
        parents.add(statement["predicate"]["trialOf"])
    assert len(pseudonyms) == len(proofs)
    # ... each naming the evaluator's pseudonym as whose trial it was: one agent on the board
    [evaluator] = parents
    assert evaluator.startswith("p_")
    assert evaluator not in pseudonyms
    cells = {(c["agent"], s["scenario"]): c["n"] for s in board["scenarios"] for c in s["cells"]}
    assert cells == {(evaluator, "acme-chop"): 3, (evaluator, "acme-trend"): 3}, cells
    rows = [r for r in json.loads(listed.output) if r["principal"] != "evaluator"]
    assert len(rows) == len(proofs)
    for row in rows:
        assert row["principal"].startswith("evaluator/trial-")
        assert row["label"] == "trial of evaluator"
        assert "kestrel:trials" not in row["scopes"]
        assert row["revokedAt"] is not None
        # each sees and trades only its sample's scenario (its name begins with the id)
        [scenario] = row["scenarios"]
        assert row["principal"].startswith(f"evaluator/trial-{scenario}-e")


def test_a_door_that_cannot_serve_leaves_the_sample_unscored_with_the_reason(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Nothing listens at the door: no trial can be made, the model is never asked, and
    each sample is unscored (not a 0 in the mean), its reason said."""
    monkeypatch.setenv(TOKEN_ENV, "kestrel_tok_" + "x" * 43)
    [log] = inspect_eval(
        kestrel_trading("acme-chop", door=f"http://127.0.0.1:{free_port()}"),
        model="kestrel/momentum",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    score = sample.scores["kestrel_scorer"]  # type: ignore[index]
    assert score.reason == UNAVAILABLE
    assert isinstance(score.value, float)
    assert math.isnan(score.value)
    assert score.explanation is not None
    assert score.explanation.startswith("Kestrel could not serve the sample: the door did not")
    assert not [m for m in sample.messages if m.role == "assistant"]  # the model never ran
    assert log.results is not None
    assert {m.name: m.unscored_samples for m in log.results.scores} == dict.fromkeys(METRICS, 1)


def test_a_door_gone_before_the_proof_leaves_the_sample_unscored(tmp_path: Path) -> None:
    """The agent opens and trades; the door goes down before the scorer asks for the
    proof: the sample is unscored (the door's outage is not the agent's 0)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    with serve_door(tmp_path / "door", principal="evaluator") as door:
        assert door.process is not None
        process = door.process

        def generate(messages: list[Any], *_: Any) -> ModelOutput:
            results = [m for m in messages if m.role == "tool"]
            if not results:
                output = ModelOutput.for_tool_call(
                    "mockllm/model", "kestrel_session_open", {"scenario": "acme-chop"}
                )
            elif len(results) == 1:
                session = json.loads(results[0].text)["sessionId"]
                output = ModelOutput.for_tool_call(
                    "mockllm/model",
                    "kestrel_session_submit",
                    {"sessionId": session, "source": "advance 5"},
                )
            else:
                process.terminate()
                process.wait(timeout=30)
                output = ModelOutput.from_content("mockllm/model", "done")
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output

        token_file = tmp_path / "token"
        token_file.write_text(door.token, encoding="utf-8")
        [log] = inspect_eval(
            kestrel_trading("acme-chop", door=door.url, token_file=str(token_file)),
            model=get_model("mockllm/model", custom_outputs=generate),
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.samples is not None
    [sample] = log.samples
    score = sample.scores["kestrel_scorer"]  # type: ignore[index]
    assert score.reason == UNAVAILABLE, score
    assert isinstance(score.value, float)
    assert math.isnan(score.value)
    assert score.explanation is not None
    assert f"was not graded: {door.url} did not answer" in score.explanation
    assert_nowhere(door.token, tmp_path / "logs")


def _failed_eval(tmp_path: Path, door: str, scenario: str, token_file: Path) -> str:
    """An eval of ``scenario`` through ``door`` with the token in ``token_file``, logged
    under ``tmp_path / "logs"``, that must fail: its error message."""
    [log] = inspect_eval(
        kestrel_trading(scenario, door=door, token_file=str(token_file)),
        model="kestrel/momentum",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "error"
    assert log.error is not None
    return log.error.message


def test_an_evaluator_token_without_the_trials_scope_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    """The agent's kind of token (no ``kestrel:trials``) given to the harness: no sample
    trades as the token's own principal; the eval fails saying which scope is missing."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        issued = CliRunner().invoke(
            door_group,
            [
                *("--home", str(door.home), "token", "issue", "--principal", "agent"),
                *("--scope", "kestrel:read kestrel:trade kestrel:grade"),
            ],
        )
        token_file = tmp_path / "token"
        token_file.write_text(issued.output.split()[-1], encoding="utf-8")
        message = _failed_eval(tmp_path, door.url, "acme-chop", token_file)
    assert "the door refused to mint the trial" in message
    assert "kestrel:trials" in message


def test_an_evaluator_token_the_door_does_not_know_is_refused_saying_so(
    tmp_path: Path,
) -> None:
    """A token the door does not accept (mistyped, revoked, or issued in another door's
    home): the eval fails saying the token is not valid there and how to issue one, not
    that it lacks ``kestrel:trials`` (which sends the evaluator after the wrong fix); the
    token is in no file of the log directory."""
    token_file = tmp_path / "token"
    bogus = "kestrel_tok_not-issued-by-this-door"
    token_file.write_text(bogus, encoding="utf-8")
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        message = _failed_eval(tmp_path, door.url, "acme-chop", token_file)
    assert "the door refused to mint the trial" in message
    assert "not valid here: unknown, revoked or expired" in message  # the door's word
    assert "kestrel-door token issue" in message
    assert "needs the scope" not in message
    assert_nowhere(bogus, tmp_path / "logs")


def test_a_scenario_the_door_does_not_have_is_refused_naming_it_not_the_token(
    tmp_path: Path,
) -> None:
    """A mistyped scenario id through a door (the evaluator's token is right): the eval
    fails naming the id the door's catalog lacks, not sending the evaluator after a scope
    the token already holds."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        token_file = tmp_path / "token"
        token_file.write_text(door.token, encoding="utf-8")
        message = _failed_eval(tmp_path, door.url, "acme-trnd", token_file)
    assert "UNKNOWN_SCENARIO: no scenario 'acme-trnd' in the door's catalog" in message
    assert "needs the scope" not in message
