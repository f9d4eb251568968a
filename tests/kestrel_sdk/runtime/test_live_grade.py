"""A session the runtime holds live is graded on its own engine and proved from what its
close built, with no replay; its grade and proof are byte for byte those a replay makes
(a runtime that did not hold the session: after a restart), and a stranger's replay in
an empty home verifies them.

The attack: any member of a grade or proof that differs between the two ways, over
sessions that exercise every part of a grade (many trades, a stand-down by drawdown, by
statement with positions liquidated, and at the tape's end, a margin call, a basket,
shorts, every order form, orders still open at the close, fractional lots, a sealed
scenario, a forward tape).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kestrel_sdk
import pytest
from kestrel_protocol import Proof
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.engine import compute_grade

from tests.kestrel_sdk.runtime.engine.test_margin import CRASH, _scenario
from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog
from tests.kestrel_sdk.runtime.test_service import PINNED_SOURCES

AT = "2026-12-01T14:31:02Z"


def _sma_cross() -> list[str]:
    """``kestrel demo``'s strategy on acme-trend: SMA(10) over SMA(30) holds 100 ACME,
    one submission a bar to the tape's end (about 2,500 steps)."""
    loaded = load_catalog([]).get("acme-trend")
    assert loaded is not None
    close = loaded.tape.columns["ACME"].close
    sources, held = [], False
    for bar in range(len(close) - 1):
        want = bar >= 30 and sum(close[bar - 9 : bar + 1]) * 3 > sum(close[bar - 29 : bar + 1])
        trade = "" if want == held else ("buy 100 ACME\n" if want else "sell 100 ACME\n")
        held = want
        sources.append(trade + "advance 1")
    return sources


@dataclass(frozen=True)
class Case:
    scenario: str
    sources: list[str]
    embed_tape: bool = False
    sealed: tuple[str, ...] = ()
    forward_bars: int = 0
    options: dict[str, Any] = field(default_factory=dict)


CASES = {
    "acme-trend sma cross": Case("acme-trend", _sma_cross()),
    "pinned parity session": Case("acme-trend", PINNED_SOURCES),
    "drawdown stand-down": Case("acme-crash", ["buy 900 ACME\nadvance 300", "advance 2519"]),
    "statement stand-down holding": Case(
        "acme-chop", ["buy 50 ACME\nadvance 40", 'sell 20 ACME\nadvance 5\nstand down "enough"']
    ),
    "end of tape, short pair": Case(
        "pairs-kx",
        [
            "buy 300 KAPPA\nsell 200 XI\nadvance 700",
            "sell 300 KAPPA\nadvance 900",
            "advance 2519\nbuy 5 KAPPA",  # the tape ends first: a statement left unapplied
        ],
    ),
    "basket": Case(
        "basket-20",
        [
            "buy 40 ACRN\nbuy 25 BKLN\nsell 10 CLDY\nadvance 30",
            "sell 40 ACRN limit 1.00 tif gtc\nbuy 5 INDEX\nadvance 60",
            "cancel all\nsell 25 BKLN\nadvance 20",
        ],
    ),
    "margin call": Case(
        "crash",
        ["buy 201 CRSH\nadvance", "buy 200 CRSH\nadvance", "advance", "advance", "advance"],
        embed_tape=True,
    ),
    "order forms": Case(
        "acme-trend",
        [
            "buy 10 ACME limit 200.00 take 230.00 loss 90.00 tif gtc\n"
            "buy 10 ACME limit 200.00 take 500.00 loss trail 5% tif gtc\nadvance 300",
            "buy 20 ACME\nadvance 5\nsell 20 ACME trail 2.50 tif gtc\nadvance 400",
        ],
    ),
    "oco, a target, orders open at the close": Case(
        "acme-chop",
        [
            "buy 40 ACME\nadvance 2",
            "sell 40 ACME limit 130.00 oco exits tif gtc\n"
            "sell 40 ACME stop 80.00 oco exits tif gtc\nadvance 50",
            "buy ACME to 10%\nbuy 5 ACME limit 1.00 tif gtc\nadvance 10",
        ],
    ),
    "fractional lots, a minimum fee, short": Case(
        "frac-chop",
        [
            "buy 10.37 ACME\nadvance 30",
            "sell 25.5 ACME\nadvance 20",
            "buy ACME to 3.33\nadvance 7",
            'stand down "done"',
        ],
        embed_tape=True,
    ),
    "sealed": Case(
        "acme-chop",
        ["buy 30 ACME tif gtc\nadvance 25", "sell 30 ACME\nadvance 10"],
        sealed=("acme-chop",),
    ),
    "forward": Case(
        SCENARIO_ID,
        ["buy 5 ACME\nbuy 3 BETA\nadvance 4", "sell 5 ACME\nadvance 3"],
        forward_bars=12,
    ),
}


def _catalog(root: Path) -> Path:
    """The tests' own scenarios: a margin account that a crash calls, a forward tape, and
    acme-chop traded in fractional lots."""
    catalog = forward_catalog(root)
    rates = {"cash_rate": "0.05", "borrow_rate": "0.12"}
    _scenario(catalog, "crash", CRASH, leverage="2", maintenance_margin="0.25", **rates)
    shipped = Path(kestrel_sdk.__file__).parent / "catalog_data" / "acme-chop"
    fractional = catalog / "frac-chop"  # acme-chop in hundredths, shortable, a minimum fee
    fractional.mkdir()
    terms = (shipped / "scenario.toml").read_text("utf-8")
    for old, new in (
        ('id = "acme-chop"', 'id = "frac-chop"'),
        ("lot = 1", 'lot = "0.01"'),
        ("shortable = false", "shortable = true"),
        ('minimum = "0.00"', 'minimum = "0.13"'),
    ):
        assert old in terms, old
        terms = terms.replace(old, new)
    (fractional / "scenario.toml").write_text(terms, "utf-8")
    (fractional / "tape.csv").write_bytes((shipped / "tape.csv").read_bytes())
    return catalog


def _played(home: Path, catalog: Path, case: Case) -> tuple[Runtime, str]:
    """A runtime in ``home`` holding the case's session, open and played."""
    runtime = Runtime(home, [catalog], sealed=case.sealed)
    if case.forward_bars:
        runtime.append_bars(SCENARIO_ID, bars(0, case.forward_bars), clock=lambda: AT)
    sid = runtime.open_session("alice", case.scenario, "live-grade").session_id
    assert sid is not None
    for source in case.sources:
        runtime.submit("alice", sid, source)
    return runtime, sid


@contextmanager
def _no_replay() -> Iterator[None]:
    """Grading and proving may not replay the session (any replay fails the test)."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the session was replayed")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grading_module, "compute_grade", refused)
        yield


def _replayed(calls: list[None]) -> Callable[..., Any]:
    real = compute_grade

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(None)
        return real(*args, **kwargs)

    return counted


@pytest.mark.parametrize("name", list(CASES))
def test_a_live_grade_and_proof_are_the_replayed_ones_byte_for_byte(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    catalog = _catalog(tmp_path)
    live, sid = _played(tmp_path / "live", catalog, case)
    with _no_replay():
        proved = live.proof("alice", sid, embed_tape=case.embed_tape)
    proof = proved.model()
    # the same session in another home, closed, then graded by a runtime that did not
    # hold it: a replay of its pentads from the store
    other, other_sid = _played(tmp_path / "replayed", catalog, case)
    assert other_sid == sid
    other.close("alice", sid)
    other.shutdown()
    restarted = Runtime(tmp_path / "replayed", [catalog], sealed=case.sealed)
    calls: list[None] = []
    monkeypatch.setattr(grading_module, "compute_grade", _replayed(calls))
    replayed_text = restarted.proof("alice", sid, embed_tape=case.embed_tape)
    replayed = replayed_text.model()
    assert calls, "the restarted runtime did not replay the session"
    assert proof.grade.to_json() == replayed.grade.to_json()
    for member in ("record", "head", "blotter", "scenario", "pentads", "embedded"):
        assert getattr(proof, member) == getattr(replayed, member), member
    assert proof.canonical() == replayed.canonical()
    assert proved.text == replayed_text.text == proof.canonical().decode("utf-8")
    assert Proof.parse(proof.canonical()) == proof  # its root and every member's verify
    if name == "end of tape, short pair":
        checks = {check.id: check.passed for check in proof.grade.conformance.checks}
        assert checks["no-statement-after-stand-down"] is False
    if case.scenario == "crash":  # the call, and its liquidation, are in the grade
        checks = {check.id: check.passed for check in proof.grade.conformance.checks}
        assert checks["no-margin-call"] is False
    if case.forward_bars:  # a forward tape lives in the store: the runtime's verifier
        assert live.verify(proof.grade).ok
    else:  # a stranger's replay, in an empty home with the shipped catalog only
        report = Runtime(tmp_path / "stranger", []).verify_proof(proof.to_json())
        assert report.ok, report.mismatch
    restarted.shutdown()
    live.shutdown()


def test_kestrel_verify_in_an_empty_home_checks_a_live_proof(tmp_path: Path) -> None:
    case = CASES["acme-trend sma cross"]
    live, sid = _played(tmp_path / "live", _catalog(tmp_path), case)
    with _no_replay():
        proof = live.proof("alice", sid).model()
    live.shutdown()
    path = proof.write(tmp_path / "proof.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(empty)
    verified = subprocess.run(
        [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify", str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"ok: proof {proof.root} of grade {proof.grade.root}")
