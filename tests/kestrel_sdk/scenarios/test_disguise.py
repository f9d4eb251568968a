"""Disguised tapes (issue 46): real bars no model recognises, returns kept, verifiable.

backtesting.py's GOOG (daily), EURUSD (hourly) and BTCUSD (monthly, fractional volumes)
are imported and disguised: every bar-to-bar return is the source's within one tick's
rounding, no price is within 1 % of a source close, the bars are laid past 2200 on
sessions of the disguise's own (each session's bars kept together), the symbols and title
are fictitious.
After the evaluation the reveal is published; ``kestrel verify --reveal`` confirms the
proof's tape is exactly the disguise of the source, and fails naming the bar and symbol
of a tape changed by one tick, or what differs when revealed against the wrong source.
Scouting the labelled tape and then trading its twin fails ``no-lookahead`` naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import GradeResult, canonical_json
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.catalog.reveal import check_reveal, lineage_tag
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

from tests.exchange_hours import read_sessions

SECRET = bytes(range(32))
TWIN = {"goog": "tape-q7", "eurusd": "tape-k2", "btcusd": "tape-m4"}


def _shipped(name: str) -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name(f"{name}.csv")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GOOG, EURUSD and BTCUSD imported, and each disguised, in one catalog directory."""
    root = tmp_path_factory.mktemp("catalog")
    for name in TWIN:
        scenario_from_file(_shipped(name.upper()), name).write(root / name)
    index = load_catalog([root])
    for name, twin in TWIN.items():
        source = index.get(name)
        assert source is not None
        disguise_scenario(source, twin, SECRET).write(root / twin)
    return root


def _pair(catalog: Path, name: str) -> tuple[LoadedScenario, LoadedScenario]:
    index = load_catalog([catalog])
    source, twin = index.get(name), index.get(TWIN[name])
    assert source is not None
    assert twin is not None
    return source, twin


@pytest.mark.parametrize("name", list(TWIN))
def test_returns_are_kept_bar_for_bar_within_one_tick(catalog: Path, name: str) -> None:
    source, twin = _pair(catalog, name)
    src, dis = source.tape, twin.tape
    assert len(src) == len(dis)
    (symbol,) = src.symbols
    (disguised,) = dis.symbols
    tick = Decimal(twin.scenario.instruments[0].tick)
    unit_s, unit_d = Decimal(1).scaleb(-src.scale), Decimal(1).scaleb(-dis.scale)
    closes_s = [Decimal(v) * unit_s for v in src.columns[symbol].close]
    closes_d = [Decimal(v) * unit_d for v in dis.columns[disguised].close]
    for i in range(1, len(src)):
        ratio = closes_s[i] / closes_s[i - 1]
        # the disguised close is the previous one moved by the source's return, to a tick
        error = abs(closes_d[i] - closes_d[i - 1] * ratio)
        assert error <= tick * max(Decimal(1), ratio), (
            name,
            i,
            closes_d[i - 1],
            closes_d[i],
            ratio,
        )
        assert closes_d[i] % tick == 0
    # no disguised price within 1 % of any source close
    low, high = min(closes_s), max(closes_s)
    for column in ("open", "high", "low", "close"):
        for value in getattr(dis.columns[disguised], column):
            price = Decimal(value) * unit_d
            assert price < low / Decimal("1.01") or price > high * Decimal("1.01")
    # the calendar: every bar after 2200; the bars of each session (a day's, an FX
    # week's) one session of the disguise; a daily tape's time of day and the first
    # bar's weekday kept (:mod:`test_disguise_calendar`: no holiday;
    # :mod:`test_disguise_sessions`: no clock of the source's)
    first_s = datetime.fromisoformat(src.times[0].replace("Z", "+00:00"))
    assert all(
        datetime.fromisoformat(time.replace("Z", "+00:00")).year >= 2200 > first_s.year
        for time in dis.times
    )
    sessions_s, sessions_d = read_sessions(src.times), read_sessions(dis.times)
    assert [s.bars for s in sessions_d] == [s.bars for s in sessions_s]
    if len({time[10:] for time in src.times}) == 1:
        assert {time[10:] for time in dis.times} == {src.times[0][10:]}
        assert sorted(dis.times) == list(dis.times)
        assert len({time[:10] for time in dis.times}) == len(dis.times)
        first_d = datetime.fromisoformat(dis.times[0].replace("Z", "+00:00"))
        assert (first_d - first_s) % timedelta(weeks=1) == timedelta(0)
    # the names: nothing of the source
    assert disguised != symbol
    assert symbol not in twin.scenario.title
    assert symbol not in twin.scenario.description
    assert twin.scenario.tape.start[:4] not in twin.scenario.title


def test_no_served_view_or_proof_carries_the_lineage_tag(catalog: Path, tmp_path: Path) -> None:
    """A disguise's ``scenario.toml`` records its lineage, a tag anyone computes from the
    source's public bars (an import of GOOG.csv gives it): the catalog entry, the frames
    and the proofs (embedded tape or not) carry neither it nor the source's tape root."""
    source, twin = _pair(catalog, "goog")
    tag = lineage_tag(source)
    assert twin.lineage == tag
    assert f'lineage = "{tag}"' in (catalog / TWIN["goog"] / "scenario.toml").read_text()
    served_catalog = tmp_path / "served"  # the disguise alone, as a door serves it
    shutil.copytree(catalog / TWIN["goog"], served_catalog / TWIN["goog"])
    runtime = Runtime(tmp_path / "home", [served_catalog])
    try:
        sid = runtime.open_session("alice", TWIN["goog"]).session_id
        assert sid is not None
        served = [
            runtime.catalog().to_json(),
            runtime.submit("alice", sid, "advance 3").model().to_json(),
            _traded_proof(runtime, TWIN["goog"], "bob", embed=True),
            _traded_proof(runtime, TWIN["goog"], "carol", embed=False),
        ]
    finally:
        runtime.shutdown()
    for shown in served:
        text = canonical_json(shown).decode()
        assert tag not in text
        assert source.scenario.tape.root not in text


def test_the_same_source_and_secret_make_the_same_scenario(catalog: Path) -> None:
    source, twin = _pair(catalog, "goog")
    again = disguise_scenario(source, TWIN["goog"], SECRET)
    assert again.scenario.root == twin.scenario.root
    other = disguise_scenario(source, TWIN["goog"], bytes(32))
    assert other.scenario.tape.root != twin.scenario.tape.root


def test_an_id_that_names_the_source_is_refused(catalog: Path) -> None:
    source, _ = _pair(catalog, "goog")
    with pytest.raises(ValueError, match=r"names the source \(goog\)"):
        disguise_scenario(source, "goog-x", SECRET)


def _kestrel(home: Path, catalog: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_CATALOG_PATH": str(catalog)}
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", *args]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _traded_proof(
    runtime: Runtime, scenario: str, principal: str = "alice", *, embed: bool = True
) -> Any:
    sid = runtime.open_session(principal, scenario).session_id
    assert sid is not None
    for source in ("advance 5", f"buy 3 {runtime.loaded(scenario).tape.symbols[0]}\nadvance 20"):
        runtime.submit(principal, sid, source)
    assert isinstance(runtime.grade(principal, sid), GradeResult)
    return runtime.proof(principal, sid, embed_tape=embed).to_json()


def test_cli_disguise_reveal_and_verify(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    scenario_from_file(_shipped("GOOG"), "goog").write(catalog / "goog")
    scenario_from_file(_shipped("EURUSD"), "eurusd").write(catalog / "eurusd")
    home = tmp_path / "home"
    made = _kestrel(home, catalog, "scenario", "disguise", "goog", "--as", "tape-q7", "--sealed")
    assert made.returncode == 0, made.stderr
    entry = next(
        e for e in load_catalog([catalog]).catalog.to_json()["scenarios"] if e["id"] == "tape-q7"
    )
    assert entry["sealed"] is True
    assert entry["commitment"].startswith("sha256:")
    assert "GOOG" not in json.dumps(entry)

    runtime = Runtime(home, [catalog])
    proof = _traded_proof(runtime, "tape-q7", embed=False)  # sealed: verified from the catalog
    runtime.shutdown()
    (tmp_path / "proof.json").write_bytes(canonical_json(proof))
    (tmp_path / "file").write_text("")
    unwritable = _kestrel(
        home, catalog, "scenario", "reveal", "tape-q7", "-o", str(tmp_path / "file" / "r.json")
    )  # a path that cannot be written: named, as every --out is (it was INTERNAL)
    assert unwritable.returncode == 1, unwritable
    assert unwritable.stderr.startswith(
        f"kestrel: INVALID_INPUT: --out {tmp_path / 'file' / 'r.json'}: cannot write ("
    ), unwritable.stderr
    revealed = _kestrel(
        home, catalog, "scenario", "reveal", "tape-q7", "-o", str(tmp_path / "r.json")
    )
    assert revealed.returncode == 0, revealed.stderr
    reveal = json.loads((tmp_path / "r.json").read_text())
    assert reveal["commitment"] == entry["commitment"]

    ok = _kestrel(
        home, catalog, "verify", str(tmp_path / "proof.json"), "--reveal", str(tmp_path / "r.json")
    )
    assert ok.returncode == 0, ok.stderr
    assert "provenance: disguised: disguised goog, revealed" in ok.stdout

    # revealed against the wrong source: what differs is named
    wrong = {**reveal, "source": {**reveal["source"], "id": "eurusd"}}
    wrong_path = tmp_path / "wrong.json"
    wrong_path.write_text(json.dumps(wrong))
    failed = _kestrel(
        home, catalog, "verify", str(tmp_path / "proof.json"), "--reveal", str(wrong_path)
    )
    assert failed.returncode != 0
    assert "verification failed: reveal.commitment" in failed.stderr

    # the right reveal, against another source given as a scenario directory
    against = _kestrel(
        home,
        catalog,
        "verify",
        str(tmp_path / "proof.json"),
        "--reveal",
        str(tmp_path / "r.json"),
        "--source",
        str(catalog / "eurusd"),
    )
    assert against.returncode != 0
    assert "verification failed: source.id: expected goog, found eurusd" in against.stderr


def test_a_disguise_whose_reveal_cannot_be_kept_is_not_written(tmp_path: Path) -> None:
    """The reveal holds the only copy of a random secret: where it cannot be kept (the
    home's ``reveals`` is a file), the disguise is refused naming why, and no scenario
    is written that no one could ever reveal (it was written, then INTERNAL)."""
    catalog, home, out = tmp_path / "catalog", tmp_path / "home", tmp_path / "tape-q7"
    scenario_from_file(_shipped("GOOG"), "goog").write(catalog / "goog")
    home.mkdir()
    (home / "reveals").write_text("not a directory")
    made = _kestrel(
        home, catalog, "scenario", "disguise", "goog", "--as", "tape-q7", "--out", str(out)
    )
    assert made.returncode == 1, made
    assert made.stderr.startswith("kestrel: INVALID_ARGUMENT: cannot keep the reveal: "), made
    assert str(home / "reveals") in made.stderr
    assert made.stderr.rstrip().endswith("; nothing written"), made.stderr
    assert not out.exists()
    (home / "reveals").unlink()  # once it can be kept: written, and the reveal opens it
    made = _kestrel(
        home, catalog, "scenario", "disguise", "goog", "--as", "tape-q7", "--out", str(out)
    )
    assert made.returncode == 0, made
    (kept,) = (home / "reveals").iterdir()
    source, twin = load_catalog([catalog]).get("goog"), load_catalog([tmp_path]).get("tape-q7")
    assert source is not None
    assert twin is not None
    check_reveal(twin, json.loads(kept.read_text()), source)


def test_one_tick_changed_fails_naming_the_bar_and_symbol(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    scenario_from_file(_shipped("GOOG"), "goog").write(catalog / "goog")
    source = load_catalog([catalog]).get("goog")
    assert source is not None
    made = disguise_scenario(source, "tape-q7", SECRET)
    made.write(catalog / "tape-q7")
    symbol = made.scenario.instruments[0].symbol
    tick = Decimal(made.scenario.instruments[0].tick)
    # a forger moves bar 100's close up by one tick, in the tape a proof embeds
    lines = made.tape.split("\n")
    fields = lines[101].split(",")
    fields[5] = f"{Decimal(fields[5]) + tick:f}"
    high = max(Decimal(fields[3]), Decimal(fields[5]))
    fields[3] = f"{high:f}"
    lines[101] = ",".join(fields)
    forged_dir = tmp_path / "forged" / "tape-q7"
    forged_dir.mkdir(parents=True)
    (forged_dir / "scenario.toml").write_text(made.toml)
    (forged_dir / "tape.csv").write_text("\n".join(lines))
    home = tmp_path / "home"
    runtime = Runtime(home, [tmp_path / "forged"])
    proof = _traded_proof(runtime, "tape-q7")
    runtime.shutdown()
    (tmp_path / "proof.json").write_bytes(canonical_json(proof))
    (tmp_path / "r.json").write_text(json.dumps(made.reveal))
    failed = _kestrel(
        home, catalog, "verify", str(tmp_path / "proof.json"), "--reveal", str(tmp_path / "r.json")
    )
    assert failed.returncode != 0
    assert f"bar 100 ({fields[0]}) {symbol} close: expected" in failed.stderr, failed.stderr


def test_scouting_the_labelled_tape_then_trading_its_twin_fails_no_lookahead(
    catalog: Path, tmp_path: Path
) -> None:
    runtime = Runtime(tmp_path / "home", [catalog])
    runtime.tape("mallory", "goog")  # the labelled tape, read whole
    proof = _traded_proof(runtime, TWIN["goog"], principal="mallory")
    checks = {c["id"]: c for c in proof["grade"]["conformance"]["checks"]}
    assert checks["no-lookahead"]["passed"] is False, checks["no-lookahead"]
    assert checks["no-lookahead"]["detail"].startswith("tape goog read before submission 1")
    # another principal, or the twin without the scout, passes
    honest = _traded_proof(runtime, TWIN["goog"], principal="alice")
    assert {c["id"]: c for c in honest["grade"]["conformance"]["checks"]}["no-lookahead"][
        "passed"
    ] is True
    runtime.shutdown()


def test_the_labelled_tape_read_mid_session_fails_the_twin_at_its_next_submission(
    catalog: Path, tmp_path: Path
) -> None:
    """The twin's session has stepped (its horizon row is known to the runtime) before
    the labelled tape is read: its next submission still reads the lineage's row and is
    marked behind it."""
    runtime = Runtime(tmp_path / "home", [catalog])
    sid = runtime.open_session("mallory", TWIN["goog"]).session_id
    assert sid is not None
    runtime.submit("mallory", sid, "advance 5")
    runtime.submit("mallory", sid, "advance 5")
    runtime.tape("mallory", "goog")  # the labelled tape, read whole, between two steps
    runtime.submit("mallory", sid, "advance 5")
    assert isinstance(runtime.grade("mallory", sid), GradeResult)
    proof = runtime.proof("mallory", sid, embed_tape=False).to_json()
    check = next(c for c in proof["grade"]["conformance"]["checks"] if c["id"] == "no-lookahead")
    assert check["passed"] is False
    assert check["detail"].startswith("tape goog read before submission 3"), check["detail"]
    runtime.shutdown()


def test_a_session_run_to_the_end_of_the_labelled_tape_is_seen_from_its_twin(
    catalog: Path, tmp_path: Path
) -> None:
    runtime = Runtime(tmp_path / "home", [catalog])
    scout = runtime.open_session("eve", "goog").session_id
    assert scout is not None
    runtime.submit("eve", scout, "advance 1000")
    proof = _traded_proof(runtime, TWIN["goog"], principal="eve", embed=False)
    check = next(c for c in proof["grade"]["conformance"]["checks"] if c["id"] == "no-lookahead")
    assert check["passed"] is False
    assert f"session {scout} on goog of the same principal had reached bar 1000" in check["detail"]
    runtime.shutdown()


def test_a_shipped_two_symbol_scenario_disguises_and_its_reveal_opens_it(tmp_path: Path) -> None:
    shipped = load_catalog([]).get("pairs-kx")
    assert shipped is not None
    made = disguise_scenario(shipped, "pair-t1", SECRET)
    made.write(tmp_path / "pair-t1")
    twin = load_catalog([tmp_path]).get("pair-t1")
    assert twin is not None
    renamed = {p["symbol"]: p["as"] for p in made.reveal["transform"]["symbols"]}
    assert sorted(renamed) == ["KAPPA", "XI"]
    assert sorted(twin.tape.symbols) == sorted(renamed.values())
    assert not {"KAPPA", "XI"} & set(twin.tape.symbols)
    check_reveal(twin, made.reveal, shipped)  # raises naming what differs, else opens it
    for symbol, disguised in renamed.items():
        src, dis = shipped.tape.columns[symbol].close, twin.tape.columns[disguised].close
        assert len(src) == len(dis)
