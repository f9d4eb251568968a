"""Grades, proofs and blotters as HTML for Jupyter (``_repr_html_``).

Each is one self-contained fragment: inline CSS scoped to ``.kestrel``, no script, no
link, no image, and every string escaped (a scenario's title, a check's detail, an
order's reason are text, never markup). Figures are the grade's own decimal strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from kestrel_protocol import Blotter, GradeResult, Proof
from kestrel_protocol.quoting import counted

__all__ = ["blotter_html", "grade_html", "proof_html"]

MAX_ROWS = 200  # a blotter shows its first rows; the frames hold them all

_STYLE = """<style>
.kestrel { font: 13px/1.4 system-ui, sans-serif; }
.kestrel table { border-collapse: collapse; margin: 4px 0 10px; }
.kestrel th, .kestrel td { text-align: left; padding: 2px 8px; border-bottom: 1px solid #d1d9e0; }
.kestrel td.num { text-align: right; font-variant-numeric: tabular-nums; }
.kestrel .pass { color: #1a7f37; font-weight: 600; }
.kestrel .fail { color: #cf222e; font-weight: 600; }
.kestrel code { font: 11px ui-monospace, monospace; word-break: break-all; }
</style>"""


def _cell(value: object, numeric: bool = False) -> str:
    text = "—" if value is None else str(value)
    return f'<td class="num">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def _table(
    table_id: str,
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    numeric: frozenset[int] = frozenset(),
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(_cell(v, i in numeric) for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table data-table="{escape(table_id)}"><tr>{head}</tr>{body}</table>'


def _verdict(passed: bool) -> str:
    return (
        '<span class="pass" data-passed="true">PASSED</span>'
        if passed
        else '<span class="fail" data-passed="false">FAILED</span>'
    )


def _grade_body(grade: GradeResult, title: str | None) -> str:
    metrics = grade.metrics.to_json()
    checks = [
        (c.id, "passed" if c.passed else "failed", c.detail) for c in grade.conformance.checks
    ]
    roots = [
        ("grade", grade.root),
        ("record", grade.record),
        ("head frame", grade.head),
        ("conformance", grade.conformance.root),
        ("scenario", grade.scenario.root),
    ]
    heading = escape(title or grade.scenario.id)
    return (
        f"<h3>{heading} {_verdict(grade.passed)}</h3>"
        f"<p>session <code>{escape(grade.session)}</code> · scenario "
        f"<code>{escape(grade.scenario.id)}</code></p>"
        + _table("metrics", ("metric", "value"), metrics.items(), frozenset({1}))
        + _table("checks", ("check", "result", "detail"), checks)
        + _table("roots", ("object", "root"), roots)
    )


def grade_html(grade: GradeResult, title: str | None = None) -> str:
    """A grade: verdict, metrics, conformance checks and roots."""
    return f'<div class="kestrel" data-kind="grade">{_STYLE}{_grade_body(grade, title)}</div>'


def proof_html(proof: Proof, title: str | None = None) -> str:
    """A proof: its root, whether a door signed it, then its grade."""
    signed = "signed by a door" if proof.attestation is not None else "not signed"
    title = title or (proof.embedded.scenario.title if proof.embedded is not None else None)
    return (
        f'<div class="kestrel" data-kind="proof">{_STYLE}'
        f"<p>proof <code>{escape(proof.root)}</code> · {counted(len(proof.pentads), 'pentad')} · "
        f"{escape(signed)} · verify anywhere with <code>kestrel verify</code></p>"
        f"{_grade_body(proof.grade, title)}</div>"
    )


def blotter_html(blotter: Blotter) -> str:
    """A blotter: its orders and fills (the first :data:`MAX_ROWS` of each)."""
    orders = {o.id: o for o in blotter.orders}
    order_rows = [
        [
            o.id,
            o.alias,
            o.side,
            o.qty,
            o.symbol,
            o.type,
            o.limit,
            o.stop,
            o.tif,
            o.status,
            o.filled,
            o.avg_price,
            o.submitted_bar,
            o.closed_bar,
            o.reason,
        ]
        for o in blotter.orders[:MAX_ROWS]
    ]
    fill_rows = [
        [
            f.id,
            f.order,
            f.bar,
            f.time,
            orders[f.order].side,
            orders[f.order].symbol,
            f.qty,
            f.price,
            f.fee,
        ]
        for f in blotter.fills[:MAX_ROWS]
    ]

    def more(kind: str, total: int) -> str:
        shown = min(total, MAX_ROWS)
        return (
            f"<p>{shown} of {total} {kind}"
            + (" (all in the frames)" if total > shown else "")
            + "</p>"
        )

    order_header = ["order", "alias", "side", "qty", "symbol", "type", "limit", "stop", "tif"]
    order_header += ["status", "filled", "avg price", "bar", "closed", "reason"]
    return (
        f'<div class="kestrel" data-kind="blotter">{_STYLE}'
        f"<p>blotter of <code>{escape(blotter.session)}</code></p>"
        + more("orders", len(blotter.orders))
        + _table("orders", order_header, order_rows, frozenset({3, 6, 7, 10, 11}))
        + more("fills", len(blotter.fills))
        + _table(
            "fills",
            ("fill", "order", "bar", "time", "side", "symbol", "qty", "price", "fee"),
            fill_rows,
            frozenset({2, 6, 7, 8}),
        )
        + "</div>"
    )
