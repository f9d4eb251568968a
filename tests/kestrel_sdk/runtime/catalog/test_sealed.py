"""Sealing: ``sealed = true`` in ``scenario.toml`` or a runtime's own list of ids."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, Scenario, SealedScenario
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog

MakeScenario = Callable[..., Path]


def test_sealed_true_in_scenario_toml_seals_it_and_keeps_its_root(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    make_scenario(tmp_path / "a", "foo-sealed", toml="sealed = true\n" + good_toml)
    make_scenario(tmp_path / "b", "foo-open")
    index = load_catalog([tmp_path / "a", tmp_path / "b"])
    assert index.problems == []
    entries = {e.id: e for e in index.catalog.scenarios}
    assert entries["foo-sealed"].sealed is True
    assert entries["foo-open"].sealed is False
    # the seal is a serving policy: the same terms and tape have the same roots either way
    assert entries["foo-sealed"].tape_root == entries["foo-open"].tape_root
    rt = Runtime(tmp_path / "home", [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(KestrelError) as caught:
        rt.tape("local", "foo-sealed")
    assert caught.value.code == "SCENARIO_SEALED"
    assert caught.value.detail["tapeRoot"] == entries["foo-sealed"].tape_root
    assert "2024-01-03" not in caught.value.message
    view = rt.scenario("local", "foo-sealed")
    assert isinstance(view, SealedScenario)
    assert view.root == entries["foo-sealed"].root
    assert "2024-01-03" not in str(view.to_json())
    assert "end" not in view.tape.to_json()
    assert isinstance(rt.scenario("local", "foo-open"), Scenario)
    assert rt.tape("local", "foo-open").startswith("time,symbol")
    rt.shutdown()


def test_sealed_must_be_a_boolean(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    make_scenario(tmp_path, "foo-bad", toml='sealed = "yes"\n' + good_toml)
    index = load_catalog([tmp_path])
    assert index.get("foo-bad") is None
    assert [p.reason for p in index.problems] == ["sealed must be true or false"]
    assert index.problems[0].line == 1


def test_a_runtime_seals_a_shipped_scenario_and_its_catalog_says_so(tmp_path: Path) -> None:
    plain = Runtime(tmp_path / "plain")
    rt = Runtime(tmp_path / "sealed", sealed=["acme-trend"])
    sealed = {e.id: e for e in rt.catalog().scenarios}
    unsealed = {e.id: e for e in plain.catalog().scenarios}
    assert sealed["acme-trend"].sealed is True
    assert sealed["acme-chop"].sealed is False
    assert unsealed["acme-trend"].sealed is False
    assert sealed["acme-trend"].root == unsealed["acme-trend"].root
    assert rt.catalog().root != plain.catalog().root  # the catalog commits to the seal
    with pytest.raises(KestrelError) as caught:
        rt.tape("local", "acme-trend")
    assert caught.value.code == "SCENARIO_SEALED"
    sid = rt.open_session("local", "acme-trend").session_id
    assert sid is not None
    with pytest.raises(KestrelError) as caught:
        rt.proof("local", sid, embed_tape=True)
    assert caught.value.code == "SCENARIO_SEALED"
    plain.shutdown()
    rt.shutdown()
