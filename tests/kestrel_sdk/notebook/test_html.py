"""Grades, proofs and blotters as HTML in Jupyter: self-contained, every string escaped
(a scenario titled with a script shows the script as text), checked in a real browser."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import kestrel_sdk
import pytest
from kestrel_sdk import GradeView, Kestrel, ProofView, SyncSession

from tests.browser import dump_dom
from tests.peers import INSTALL_SERVICES, chromium, require_peer

SHIPPED = Path(kestrel_sdk.__file__).parent / "catalog_data" / "acme-trend"
TITLE = "Trend <script>document.body.setAttribute('data-pwned', 'yes')</script><b>bold</b>"
STEPS = "buy 100 ACME\nadvance 40\nsell 100 ACME\nadvance 10\nbuy 30 ACME\nadvance 5"


@pytest.fixture(scope="module")
def hostile(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SyncSession, GradeView, ProofView]]:
    """A user scenario (a copy of acme-trend) whose title is markup, traded and graded."""
    catalog = tmp_path_factory.mktemp("catalog")
    directory = catalog / "hostile"
    shutil.copytree(SHIPPED, directory)
    toml = (directory / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "hostile"')
    toml = toml.replace('title = "ACME daily, trending up"', f'title = "{TITLE}"')
    (directory / "scenario.toml").write_text(toml, "utf-8")
    with Kestrel(store="memory:", catalog_paths=[catalog]) as kestrel:
        session = kestrel.open("hostile")
        session.submit(STEPS)
        session.close()
        yield session, session.grade(), session.proof(embed_tape=True)


def test_a_scenario_title_with_a_script_renders_as_text(
    hostile: tuple[SyncSession, GradeView, ProofView],
) -> None:
    _, grade, proof = hostile
    assert grade.title == TITLE
    for html in (grade._repr_html_(), proof._repr_html_()):
        assert "<script" not in html
        assert "<b>" not in html
        assert "Trend &lt;script&gt;document.body.setAttribute(&#x27;data-pwned&#x27;" in html
        assert f">{grade.metrics.pnl}</td>" in html
        assert grade.root in html
    assert proof.proof.root in proof._repr_html_()


def test_a_blotter_renders_every_order_and_fill_with_side_and_symbol(
    hostile: tuple[SyncSession, GradeView, ProofView],
) -> None:
    session, _, _ = hostile
    view = session.blotter()
    html = view._repr_html_()
    assert "<script" not in html
    for fill in view.blotter.fills:
        assert f"<td>{fill.id}</td><td>{fill.order}</td>" in html
        assert f'<td class="num">{fill.price}</td>' in html
    assert html.count("<td>buy</td><td>ACME</td>") == 2
    assert html.count("<td>sell</td><td>ACME</td>") == 1


def test_a_grades_html_in_chromium_shows_its_tables_and_runs_no_script(
    hostile: tuple[SyncSession, GradeView, ProofView], tmp_path: Path
) -> None:
    browser = require_peer(chromium(), what="Chromium", install=INSTALL_SERVICES)
    _, grade, _ = hostile
    page = tmp_path / "cell.html"
    page.write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>cell</title></head>'
        f"<body>{grade._repr_html_()}</body></html>",
        encoding="utf-8",
    )
    dom = dump_dom(browser, page, tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'data-table="metrics"' in html
    assert re.search(r"<body[^>]*data-pwned", html) is None  # the title's script never ran
    # The title is shown as its text, tags and all, never parsed into elements.
    assert "<h3>Trend &lt;script&gt;document.body.setAttribute('data-pwned', 'yes')" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html
    assert f'<td class="num">{grade.metrics.pnl}</td>' in html
    assert f"<td>{grade.root}</td>" in html
    for check in grade.grade.conformance.checks:
        assert f"<td>{check.id}</td>" in html
