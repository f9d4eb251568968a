"""A sealed scenario's proof cannot embed its tape: the CLI says so, and a verifier
whose catalog lacks the scenario is told what does work (issue 50).

``acme-sealed`` is acme-trend's tape and terms, sealed in a user catalog. Its session's
``kestrel proof --embed-tape`` is refused naming the seal; the plain proof, verified in
an empty home without that catalog, is refused ``UNKNOWN_SCENARIO`` without suggesting
``--embed-tape`` (which the seal forbids) but the catalog that holds it. An unsealed
user scenario's proof still gets the ``--embed-tape`` advice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
TREND = ROOT / "examples" / "trend.kes"


def _catalog(root: Path, scenario: str, *, sealed: bool) -> Path:
    """A user catalog holding ``scenario``: acme-trend's tape and terms."""
    directory = root / scenario
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-trend" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', f'id = "{scenario}"')
    (directory / "scenario.toml").write_text(("sealed = true\n" if sealed else "") + toml)
    return root


def _kestrel(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def _session(home: Path, catalog: Path, scenario: str) -> str:
    ran = _kestrel(
        home, "--catalog-path", str(catalog), "run", str(TREND), "--scenario", scenario, "--json"
    )
    assert ran.exit_code == 0, ran.stderr
    return str(json.loads(ran.stdout)["session"])


def test_a_sealed_proof_refuses_embed_tape_and_its_verify_names_what_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    home, catalog = tmp_path / "home", _catalog(tmp_path / "cat", "acme-sealed", sealed=True)
    sid = _session(home, catalog, "acme-sealed")

    embedded = _kestrel(
        home, "--catalog-path", str(catalog), "proof", sid, "--embed-tape", "-o", "x.json"
    )
    assert embedded.exit_code == 3
    [line] = embedded.stderr.splitlines()
    assert line.startswith("kestrel: SCENARIO_SEALED: scenario 'acme-sealed' is sealed: ")
    assert "cannot embed its tape; make the proof without embedding it" in line

    out = tmp_path / "sealed.json"
    made = _kestrel(home, "--catalog-path", str(catalog), "proof", sid, "-o", str(out))
    assert made.exit_code == 0, made.stderr

    verified = _kestrel(tmp_path / "elsewhere", "verify", str(out))
    assert verified.exit_code == 3
    [line] = verified.stderr.splitlines()
    assert line.startswith("kestrel: UNKNOWN_SCENARIO: cannot verify the proof: its scenario ")
    assert "--embed-tape" not in line
    assert "the scenario is sealed, so no proof of it can embed its tape" in line
    assert "KESTREL_CATALOG_PATH" in line

    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    here = _kestrel(tmp_path / "elsewhere", "verify", str(out))
    assert here.exit_code == 0, here.stderr  # where the catalog holds it, it verifies


def test_an_unsealed_user_scenario_proof_is_still_told_to_embed_its_tape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    home, catalog = tmp_path / "home", _catalog(tmp_path / "cat", "acme-mine", sealed=False)
    sid = _session(home, catalog, "acme-mine")
    out = tmp_path / "mine.json"
    made = _kestrel(home, "--catalog-path", str(catalog), "proof", sid, "-o", str(out))
    assert made.exit_code == 0, made.stderr
    verified = _kestrel(tmp_path / "elsewhere", "verify", str(out))
    assert verified.exit_code == 3
    assert "make the proof with `kestrel proof SESSION --embed-tape`" in verified.stderr


def test_verify_takes_the_catalog_path_flag_like_every_other_verb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kestrel --catalog-path DIR verify P`` replays over DIR's scenarios, as
    ``KESTREL_CATALOG_PATH=DIR`` does (it used to read the variable only)."""
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    home, catalog = tmp_path / "home", _catalog(tmp_path / "cat", "acme-mine", sealed=False)
    sid = _session(home, catalog, "acme-mine")
    out = tmp_path / "mine.json"
    made = _kestrel(home, "--catalog-path", str(catalog), "proof", sid, "-o", str(out))
    assert made.exit_code == 0, made.stderr
    elsewhere = tmp_path / "elsewhere"
    assert _kestrel(elsewhere, "verify", str(out)).exit_code == 3  # not in the catalog
    verified = _kestrel(elsewhere, "--catalog-path", str(catalog), "verify", str(out))
    assert verified.exit_code == 0, verified.stderr
    assert "provenance: catalog: scenario acme-mine" in verified.stdout
    required = _kestrel(
        elsewhere, "--catalog-path", str(catalog), "verify", str(out), "--require-catalog"
    )
    assert required.exit_code == 0, required.stderr
