"""``examples/notebook.ipynb`` runs top to bottom in a real Jupyter kernel (whose event
loop is running, as in Jupyter), reproduces the demo's fills and metrics (its own grade root:
it trades as ``local``, the demo as ``demo``) and shows the grade as HTML."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[3] / "examples" / "notebook.ipynb"
NOTEBOOK_ROOT = "sha256:03d5e42b1dc62323ed5cef59aebf777827dfe307ee7606367e8b28ae48b61d66"


def _outputs(cell: Any, mime: str) -> str:
    return "".join(
        str(o.get("data", {}).get(mime, "")) + str(o.get("text", ""))
        for o in cell.get("outputs", [])
    )


def test_the_example_notebook_runs_in_a_kernel_and_shows_its_grade(
    tmp_path: Path,
) -> None:
    home = Path(os.environ["HOME"])
    assert not (home / ".jupyter").exists()  # an empty home, as in CI
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert not errors, json.dumps(errors, indent=1)[:3000]
    grade_html = next(
        _outputs(c, "text/html") for c in cells if c.source.startswith("grade = session.grade()")
    )
    assert 'data-kind="grade"' in grade_html
    assert 'data-passed="true"' in grade_html
    assert NOTEBOOK_ROOT in grade_html
    texts = "".join(_outputs(c, "text/plain") for c in cells)
    assert NOTEBOOK_ROOT in texts  # the root the cell printed
    stats = next(_outputs(c, "text/plain") for c in cells if "stats = frames.metrics" in c.source)
    assert re.search(r"sharpe\s+0\.761169", stats), stats  # the README's demo: 0.76116925
    assert re.search(r"fills\s+92\.0", stats), stats
    blotter = _outputs(cells[-2], "text/html")
    assert 'data-kind="blotter"' in blotter
    assert "<td>buy</td><td>ACME</td>" in blotter
    assert not list(tmp_path.iterdir())  # store="memory:": nothing written
    assert not (home / ".kestrel" / "kestrel.db").exists()
