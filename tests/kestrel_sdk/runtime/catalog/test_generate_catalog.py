"""The generator script reproduces the committed shipped scenarios byte for byte."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[4]
SCRIPT = REPO / "packages/kestrel-sdk/scripts/generate_catalog.py"
DATA = REPO / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_catalog", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_generator_output_is_byte_identical_to_the_committed_catalog(tmp_path: Path) -> None:
    """Tapes and scenario files compare byte for byte. A gzip container's deflate bytes
    depend on the zlib build, so a ``.gz`` tape compares by its content; its header
    must still carry mtime 0 (no wall clock in the output)."""
    script = load_script()
    written = script.generate(tmp_path)
    names = sorted(str(path.relative_to(tmp_path)) for path in written)
    assert names == sorted(
        [f"{sid}/scenario.toml" for sid in script.SCENARIO_IDS]
        + [f"{sid}/tape.csv" for sid in script.SCENARIO_IDS if sid != "minute-200k"]
        + ["minute-200k/tape.csv.gz", "basket-20/news.jsonl"]
    )
    for name in names:
        fresh, committed = (tmp_path / name).read_bytes(), (DATA / name).read_bytes()
        if name.endswith(".gz"):
            assert fresh[4:8] == b"\0\0\0\0"
            assert committed[4:8] == b"\0\0\0\0"
            fresh, committed = gzip.decompress(fresh), gzip.decompress(committed)
        assert fresh == committed, name
