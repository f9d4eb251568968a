"""``kestrel verify`` says where a proof's scenario came from (issue 32).

The forgery: a proof that names ``acme-trend`` but embeds a tape with every price
tripled, every root consistent (made by a runtime whose catalog is the forged one). A
replay in an empty home verifies its arithmetic, and says the scenario is embedded and
unknown here (naming this machine's acme-trend root); ``--require-catalog`` fails it.
An honest proof of the shipped scenario says ``catalog``, embedded or not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from kestrel_protocol import GradeResult, canonical_json
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog, load_embedded, tape_csv
from kestrel_sdk.runtime.catalog.model import CatalogIndex
from kestrel_sdk.runtime.catalog.objects import catalog_object

from tests.kestrel_sdk.board.proofs import tripled

SCENARIO = "acme-trend"
TRADE = ["buy 100 ACME\nadvance 400", "sell 100 ACME\nadvance 1"]


def _proof(runtime: Runtime, path: Path) -> dict[str, object]:
    sid = runtime.open_session("mallory", SCENARIO).session_id
    assert sid is not None
    for source in TRADE:
        runtime.submit("mallory", sid, source)
    assert isinstance(runtime.grade("mallory", sid), GradeResult)
    data = runtime.proof("mallory", sid, embed_tape=True).to_json()
    path.write_bytes(canonical_json(data) + b"\n")
    runtime.shutdown()
    return data


def _verify(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` in a new, empty home."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    env.pop("KESTREL_CATALOG_PATH", None)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify", *args]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_tripled_tape_forgery_is_named_embedded_and_fails_require_catalog(
    tmp_path: Path,
) -> None:
    shipped = load_catalog([]).get(SCENARIO)
    assert shipped is not None
    forged = load_embedded(shipped.scenario.to_json(), tripled(tape_csv(shipped)))
    index = CatalogIndex(catalog_object([forged.scenario]), {SCENARIO: forged}, [])
    honest_pnl = _proof(Runtime(tmp_path / "honest"), tmp_path / "honest.json")["grade"]
    proof = _proof(Runtime(tmp_path / "forger", catalog=index), tmp_path / "forged.json")
    assert proof["scenario"]["id"] == SCENARIO  # type: ignore[index]
    forged_pnl = Decimal(proof["grade"]["metrics"]["pnl"])  # type: ignore[index]
    assert forged_pnl > 2 * Decimal(honest_pnl["metrics"]["pnl"])  # type: ignore[index]

    plain = _verify(tmp_path, str(tmp_path / "forged.json"))
    assert plain.returncode == 0, plain.stderr
    assert "verified by replay" in plain.stdout
    assert (
        f"provenance: embedded: scenario {SCENARIO} {forged.scenario.root} embedded in the "
        f"proof and unknown here (this machine's {SCENARIO} is {shipped.scenario.root})"
    ) in plain.stdout

    required = _verify(tmp_path, str(tmp_path / "forged.json"), "--require-catalog")
    assert required.returncode != 0
    assert "verification failed: scenario: expected a scenario of this machine's catalog" in (
        required.stderr
    )
    assert "unknown here" in required.stderr
    report = json.loads(_verify(tmp_path, str(tmp_path / "forged.json"), "--json").stdout)
    assert report["provenance"]["source"] == "embedded"

    honest = _verify(tmp_path, str(tmp_path / "honest.json"), "--require-catalog")
    assert honest.returncode == 0, honest.stderr
    assert (
        f"provenance: catalog: scenario {SCENARIO} {shipped.scenario.root} embedded in the "
        "proof, identical to this machine's catalog"
    ) in honest.stdout


def test_a_proof_embedding_terms_or_news_past_what_parsers_take_fails_naming_it(
    tmp_path: Path,
) -> None:
    honest = _proof(Runtime(tmp_path / "honest"), tmp_path / "honest.json")
    embedded = honest["embedded"]
    assert isinstance(embedded, dict)
    cases = {
        "deep-news": (
            {**embedded, "news": "[" * 100_000 + "]" * 100_000 + "\n"},
            "the embedded news: line 1: not a JSON object: nested too deeply",
        ),
        "long-cash": (
            {
                **embedded,
                "scenario": {
                    **embedded["scenario"],
                    "account": {**embedded["scenario"]["account"], "cash": "9" * 5000},
                },
            },
            "the embedded scenario's terms: account.cash is too large (999",
        ),
    }
    for name, (hostile, reason) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(canonical_json({**honest, "embedded": hostile}) + b"\n")
        result = _verify(tmp_path, str(path))
        assert result.returncode == 1, (name, result.stderr)
        assert result.stderr.startswith(
            "kestrel: CHECK_FAILED: verification failed: embedded: expected a scenario the "
            f"catalog would accept, found {reason}"
        ), (name, result.stderr)
