"""kestrel-protocol installs alone into an empty venv and works there: pydantic is all it needs.

A client in any language-neutral setting (a notebook, another agent framework) should be
able to speak Kestrel without pulling in the runtime. The install is ``uv sync --package
kestrel-protocol --no-editable`` into a new, empty venv: the package built as a wheel plus
exactly what the lockfile says it needs, offline, from the wheels the workspace's own
``uv sync --frozen`` put in the uv cache — so it holds on a new machine with a cold cache
and needs no network. The installed wheel's own metadata then has to declare pydantic and
nothing else, and the venv has to hold nothing but pydantic's closure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.started_home import STARTED_HOME

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "packages" / "kestrel-protocol"
UV = shutil.which("uv")
# The operator's (tests/conftest.py points HOME, and so uv's default cache, at an empty
# temp dir).
UV_CACHE = (
    subprocess.run(
        [UV, "cache", "dir"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HOME": STARTED_HOME},
    ).stdout.strip()
    if UV
    else ""
)

PROBE = r"""
import json, sys
from importlib import metadata

import kestrel_protocol
from kestrel_protocol import Offer, RefusalCode, canonical_json, root_of

offer = Offer.with_root(
    offer_id="of_1", scenario="acme", amount="0.50", currency="USD",
    description="one more session", expires_at="2026-12-01T00:00:00Z", accepts=["voucher"],
)
parsed = Offer.parse(canonical_json(offer))
assert parsed == offer and parsed.root == root_of(offer.to_json())
try:
    Offer.parse({**offer.to_json(), "amount": "0.75"})
except ValueError as exc:
    assert "root does not verify" in str(exc)
else:
    raise AssertionError("a tampered offer parsed")


def name(dist):
    return dist.metadata["Name"].lower().replace("_", "-")


def requirement_names(dist_name):
    out = []
    for req in metadata.requires(dist_name) or []:
        if "extra ==" in req:
            continue
        bare = req.split(";")[0]
        for stop in "<>=!~[ (":
            bare = bare.split(stop)[0]
        out.append(bare.strip().lower().replace("_", "-"))
    return out


closure, todo = set(), ["pydantic"]
while todo:
    current = todo.pop()
    if current not in closure:
        closure.add(current)
        todo.extend(requirement_names(current))

print(json.dumps({
    "file": kestrel_protocol.__file__,
    "root": offer.root,
    "codes": len(RefusalCode),
    "installed": sorted(name(d) for d in metadata.distributions()),
    "requires": requirement_names("kestrel-protocol"),
    "pydantic_closure": sorted(closure),
}))
"""


def _uv(*args: str, **env: str) -> None:
    assert UV, "uv is not on PATH"
    subprocess.run(
        [UV, *args, "--offline", "--cache-dir", UV_CACHE, "--quiet"],
        check=True,
        timeout=300,
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))},
            **env,
        },
    )


def test_protocol_alone_installs_into_an_empty_venv_and_works(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _uv("venv", str(venv), "--python", sys.executable)
    python = venv / "bin" / "python"
    _uv(
        *("sync", "--frozen", "--package", "kestrel-protocol", "--no-editable"),
        *("--no-default-groups", "--python", str(python)),
        UV_PROJECT_ENVIRONMENT=str(venv),
    )

    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    result = subprocess.run(
        [str(python), "-I", "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)

    assert Path(report["file"]).is_relative_to(venv)  # the venv's copy, not the workspace's
    assert report["root"].startswith("sha256:")
    assert report["codes"] == 18
    assert report["requires"] == ["pydantic"]
    kestrel = [name for name in report["installed"] if name.startswith("kestrel")]
    assert kestrel == ["kestrel-protocol"]
    others = set(report["installed"]) - {"kestrel-protocol"}
    assert others == set(report["pydantic_closure"]), report
    assert "pydantic-core" in others  # pydantic and its own deps, nothing else
