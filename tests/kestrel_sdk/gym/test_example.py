from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "gym_policies.py"


@pytest.mark.parametrize("scenario", ["zig", "pairs-kx"])
def test_gym_example_runs_both_policies_and_prints_their_grades(
    scenario: str,
    catalog: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    spec = importlib.util.spec_from_file_location("gym_policies_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    results = module.main(scenario, 2)
    out = capsys.readouterr().out
    assert list(results) == ["random", "mean-reversion"]
    for grades in results.values():
        assert len(grades) == 2
        assert {grade.scenario.id for grade in grades} == {scenario}
        assert grades[0].passed  # seeded: a store of its own, whose principal saw nothing
        # every episode after the first is behind the principal's horizon (the earlier
        # episodes showed it the whole tape): only no-lookahead fails there
        assert all(
            c.passed or c.id == "no-lookahead" for grade in grades for c in grade.conformance.checks
        )
        for grade in grades:
            assert grade.root in out
    # each policy's second episode fails, and says which check failed, not only that it did
    assert out.count("passed False (failed no-lookahead)") == 2
    # the simple policy is deterministic: its two episodes trade alike, in two sessions
    first, second = results["mean-reversion"]
    assert first.metrics == second.metrics
    assert first.session != second.session
    assert first.metrics.fills > 0
    assert out.count("end-of-tape") == 4
