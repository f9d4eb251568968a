"""``kestrel board --trust`` says on the command line what it saw of each evaluator's
trials (issue 48, session 17: the evaluator's first hour).

The board states per parent which trials were minted and not shown (its page's *Trials*
table, JSON ``trials``), but the command printed only ``N proofs (…)``: an evaluator who
published one trial of two read a clean summary and had to open the page to learn that
trial 2 was withheld. Each parent now has a line after the summary, in the page's words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from kestrel_sdk.cli import cli as kestrel_cli

from tests.doors import serve_door
from tests.kestrel_door.test_trial_numbers import _mint, _predicate, _run


def test_the_board_command_says_which_trials_it_was_not_shown(tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        trials = [_mint(door, f"run-{n}") for n in (1, 2)]
        proof = _run(door, trials[0]["token"])
        signed = _predicate(proof)
        folder = tmp_path / "published"
        folder.mkdir()
        (folder / "run-1.json").write_text(json.dumps(proof), encoding="utf-8")
        page = tmp_path / "board.html"
        result = CliRunner().invoke(
            kestrel_cli,
            [
                "--home",
                str(tmp_path / "home"),
                "board",
                str(folder),
                "--trust",
                door.url,
                "-o",
                str(page),
                "--allow-failed",  # its 20 bars fail whole-window: a failed row shows its trial
            ],
        )
    assert result.exit_code == 0, result.output
    parent = signed["trialOf"]
    summary, line = result.output.splitlines()
    assert (
        summary == f"{page.resolve()}: 1 proof (0 attested-and-sealed, 0 replayed-only, 1 failed)"
    )
    said = "trials 1–2 minted at least; 2 not shown; the door's count as of "
    # when the door signed its count (its clock, UTC), and where anyone asks again
    issuer, url = re.escape(signed["issuer"]), re.escape(f"{signed['issuer']}/v1/trials/of/")
    assert re.fullmatch(
        rf"trials of {parent} at {issuer} \({parent}\): {said}"
        rf"\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(ask the door again at {url}{parent}\)",
        line,
    ), line
