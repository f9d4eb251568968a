"""``kestrel --catalog-path DIR`` names the catalog of every verb, never only the runtime's.

A user scenario lives only in DIR, never on ``KESTREL_CATALOG_PATH``: it is imported with
``kestrel --catalog-path DIR scenario new``, a session runs on it and its proof is made.
Then every verb that reads the catalog judges by DIR: ``verify``, ``board`` (replay, the
whole-window check, the baseline), ``catalog --check``, ``scenario new`` (where it
writes, which ids are taken), ``scenario disguise`` (its source; its reveal kept in the
``--home`` given) and ``door board publish``.

Was: ``board``, ``catalog --check``, ``scenario new``/``disguise`` and ``door`` read
``KESTREL_CATALOG_PATH`` alone (and ``disguise`` kept its reveal in ``$KESTREL_HOME``):
the board failed the proof as ``UNKNOWN_SCENARIO``, the check said "catalog ok" of a
broken scenario, the import went to ``./ID``, the disguise found no source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli

BARS = """Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.149994,188.440002,183.889999,185.639999,184.938217,82488700
2024-01-03,184.220001,185.880005,183.429993,184.250000,183.553467,58414500
2024-01-04,182.149994,183.089996,180.880005,181.910004,181.222336,71983600
2024-01-05,181.990005,182.759995,180.169998,181.179993,180.495087,62303300
2024-01-08,182.089996,185.600006,181.500000,185.559998,184.864929,59144500
"""
HOLD = "buy 10 BARS\nadvance 4\n"  # the whole window of five bars


@pytest.fixture(autouse=True)
def _no_catalog_in_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "environment-home"))
    monkeypatch.chdir(tmp_path)


def _kestrel(home: Path, catalog: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "--catalog-path", str(catalog), *args])


def _imported(tmp_path: Path) -> Path:
    """The catalog directory scenario ``mine`` was imported into (``--out`` says where)."""
    bars = tmp_path / "bars.csv"
    bars.write_text(BARS)
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    out = str(catalog / "mine")
    made = _kestrel(
        tmp_path / "home", catalog, "scenario", "new", "mine", "--from", str(bars), "--out", out
    )
    assert made.exit_code == 0, made.output
    return catalog


def _session(tmp_path: Path, catalog: Path) -> str:
    """A session on ``mine`` run by ``kestrel run`` in ``tmp_path / "home"``: its id."""
    program = tmp_path / "hold.kes"
    program.write_text(HOLD)
    ran = _kestrel(tmp_path / "home", catalog, "run", str(program), "--scenario", "mine", "--json")
    assert ran.exit_code == 0, ran.output
    session: str = json.loads(ran.stdout)["session"]
    return session


def _proof(tmp_path: Path, catalog: Path) -> Path:
    """A proof (not embedding its scenario) of a session on ``mine``, in a folder ``alice``."""
    home = tmp_path / "home"
    session = _session(tmp_path, catalog)
    proof = tmp_path / "proofs" / "alice" / "mine.json"
    proof.parent.mkdir(parents=True)
    made = _kestrel(home, catalog, "proof", session, "-o", str(proof))
    assert made.exit_code == 0, made.output
    return proof


def test_scenario_new_writes_into_the_named_catalog_and_refuses_an_id_it_holds(
    tmp_path: Path,
) -> None:
    bars = tmp_path / "bars.csv"
    bars.write_text(BARS)
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    home = tmp_path / "home"
    made = _kestrel(home, catalog, "scenario", "new", "mine", "--from", str(bars))
    assert made.exit_code == 0, made.output
    assert (catalog / "mine" / "scenario.toml").is_file()  # was: ./mine
    named = f"--catalog-path names {catalog.resolve()}: the scenario is in the catalog now"
    assert named in made.stdout

    out = str(tmp_path / "second")
    again = _kestrel(home, catalog, "scenario", "new", "mine", "--from", str(bars), "--out", out)
    assert again.exit_code == 1
    assert f"id 'mine' is already taken by {catalog / 'mine'}" in again.stderr


def test_verify_and_board_judge_a_proof_by_the_named_catalog(tmp_path: Path) -> None:
    catalog = _imported(tmp_path)
    proof = _proof(tmp_path, catalog)
    elsewhere = tmp_path / "elsewhere"

    verified = _kestrel(elsewhere, catalog, "verify", str(proof))
    assert verified.exit_code == 0, verified.output
    assert "from this machine's catalog" in verified.stdout

    board = _kestrel(
        elsewhere, catalog, "board", str(tmp_path / "proofs"), "--json", "-o", "board.html"
    )
    assert board.exit_code == 0, board.output  # was: 1, UNKNOWN_SCENARIO
    table = json.loads(board.stdout)
    [row] = table["rows"]
    assert (row["badge"], row["provenance"], row["scenario"]) == (
        "replayed-only",
        "catalog",
        "mine",
    )
    assert row["window"] == [4, 4]  # the whole window, by the catalog's terms
    [ranked] = table["scenarios"]
    assert ranked["baseline"]["metrics"] is not None, ranked["baseline"]  # traded on DIR's tape


def test_catalog_check_checks_the_named_catalog(tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "half"
    broken.mkdir(parents=True)
    (broken / "scenario.toml").write_text('id = "half"\n')
    checked = _kestrel(tmp_path / "home", broken.parent, "catalog", "--check")
    assert checked.exit_code == 1, checked.output  # was: 0, "catalog ok"
    assert "missing tape" in checked.stdout


def test_a_disguise_takes_its_source_from_the_named_catalog_and_keeps_its_reveal_in_home(
    tmp_path: Path,
) -> None:
    catalog = _imported(tmp_path)
    home = tmp_path / "home"
    made = _kestrel(home, catalog, "scenario", "disguise", "mine", "--as", "tape-q1", "--json")
    assert made.exit_code == 0, made.output  # was: UNKNOWN_SCENARIO
    assert (catalog / "tape-q1" / "scenario.toml").is_file()
    assert len(list((home / "reveals").glob("*.json"))) == 1
    assert not (tmp_path / "environment-home" / "reveals").exists()


def test_door_board_publish_checks_a_session_by_the_named_catalog(tmp_path: Path) -> None:
    catalog = _imported(tmp_path)
    home = tmp_path / "home"
    session = _session(tmp_path, catalog)
    published = _kestrel(home, catalog, "door", "board", "publish", session, "--agent", "bob")
    assert published.exit_code == 0, published.output  # was: UNKNOWN_SCENARIO
    assert "(mine, agent bob)" in published.stdout
