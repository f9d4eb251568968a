"""``ProtocolModel.write`` and ``Wire.write``: a protocol object saved as its canonical bytes,
in one step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import Conformance, ConformanceCheck, Wire


def _conformance(passed: bool) -> Conformance:
    return Conformance.with_root(
        checks=[ConformanceCheck(id="flat-at-end", passed=passed, detail="flat")]
    )


def test_write_saves_the_canonical_bytes_and_reads_back_the_same_object(tmp_path: Path) -> None:
    made = _conformance(True)
    path = made.write(tmp_path / "conformance.json")
    assert path == tmp_path / "conformance.json"
    assert path.read_bytes() == made.canonical() + b"\n"
    assert Conformance.parse(path.read_bytes()) == made
    assert [p.name for p in tmp_path.iterdir()] == ["conformance.json"]  # nothing beside it


def test_write_replaces_a_file_whole_and_a_failed_write_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _conformance(True).write(tmp_path / "c.json")
    replacement = _conformance(False)
    replacement.write(str(path))  # a str path too
    assert Conformance.parse(path.read_bytes()) == replacement

    def full_disk(self: Path, data: bytes) -> int:
        with self.open("wb") as file:  # the disk fills after a few bytes
            file.write(data[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _conformance(True).write(path)
    monkeypatch.undo()
    assert Conformance.parse(path.read_bytes()) == replacement  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_a_wire_saves_its_objects_canonical_bytes_without_making_the_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _conformance(True)
    # a text in another member order (as a face splices one), and the canonical text
    reordered = json.dumps(dict(reversed(list(made.to_json().items()))), separators=(",", ":"))
    assert reordered.encode() != made.canonical()
    canonical = made.canonical().decode()

    def never(self: Wire[Any]) -> Any:
        raise AssertionError("the object was made to save its text")

    monkeypatch.setattr(Wire, "make", never)
    for name, wire in (
        ("reordered", Wire(Conformance, reordered)),
        ("canonical", Wire(Conformance, canonical, canonical=True)),
    ):
        path = wire.write(tmp_path / f"{name}.json")
        assert path.read_bytes() == made.canonical() + b"\n", name
    monkeypatch.undo()
    assert Conformance.parse((tmp_path / "reordered.json").read_bytes()) == made
