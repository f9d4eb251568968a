"""``kestrel_trading`` on a forward scenario (issue 47): the evaluation waits for bars.

A door serves ``acme-forward``, a forward scenario with a three-bar prefix, while
``kestrel-door feed replay --every 200ms`` grows its tape by 30 bars (slower than the
agent: an advance that did not wait would be refused before the end); the shipped offline
agent ``kestrel/momentum`` (``step`` 5: each ``advance 5`` reaches past the edge) trades
it through ``inspect eval``. Its submits wait for the bars the feed has not published
yet instead of failing; once the feed has replayed its file the operator freezes the
window and the agent's session stands down at the end of its tape. The sample is
scored from its proof, which traded every bar of the frozen tape, and the door's
statement says the session was forward.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai import eval as inspect_eval
from kestrel_door.cli import door_group
from kestrel_inspect import METADATA_KEY, TOKEN_ENV, kestrel_trading

from tests.doors import serve_door
from tests.forward_door import PREFIX, SCENARIO, bars, forward_catalog

APPENDED = 30


def _door(home: Path, *args: str) -> list[str]:
    command = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]
    return [*command, "--home", str(home), *args]


def test_the_offline_agent_waits_for_a_forward_tape_and_trades_it_to_the_freeze(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(forward_catalog(tmp_path / "catalog")))
    recorded = tmp_path / "day.csv"
    recorded.write_text(bars(PREFIX, PREFIX + APPENDED))
    home = tmp_path / "door"
    with serve_door(home) as door:
        monkeypatch.setenv(TOKEN_ENV, door.token)
        errors: list[str] = []

        def operator() -> None:
            """The feed, then the freeze once every bar of the file is published."""
            replay = subprocess.run(
                _door(home, "feed", "replay", SCENARIO, str(recorded), "--every", "200ms"),
                env=os.environ.copy(),
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if replay.returncode != 0:
                errors.append(replay.stderr)
            frozen = CliRunner().invoke(
                door_group, ["--home", str(home), "feed", "freeze", SCENARIO]
            )
            if frozen.exit_code != 0:
                errors.append(frozen.output)

        feeding = threading.Thread(target=operator, daemon=True)
        feeding.start()
        [log] = inspect_eval(
            kestrel_trading(SCENARIO, door=door.url, wait=2),
            model="kestrel/momentum",
            model_args={"step": 5},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
        feeding.join(timeout=300)
    assert not errors, errors
    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    assert sample.scores is not None
    score = sample.scores["kestrel_scorer"]
    assert score.metadata is not None, score.explanation
    proof = score.metadata[METADATA_KEY]["proof"]
    for m in sample.messages:
        print(
            m.role, (m.text or "")[:300], getattr(m, "error", None), getattr(m, "tool_calls", None)
        )
    # it traded every bar of the frozen tape, never stopping at the edge
    assert proof["head"]["clock"]["bar"] == PREFIX + APPENDED - 1
    submits = [p["body"]["bytes"] for p in proof["pentads"]]
    assert all(s.endswith("advance 5") for s in submits), submits  # the agent's own source
    results = [m for m in sample.messages if m.role == "tool"]
    last = results[-1].text.splitlines()[0]
    assert "stood-down (end-of-tape" in last, last
    assert isinstance(score.value, dict)
    assert score.value["no_lookahead"] == 1.0
    statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    assert statement["predicate"]["forward"] is True
