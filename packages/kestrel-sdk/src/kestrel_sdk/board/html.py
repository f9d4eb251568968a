"""The board as one self-contained HTML page (inline CSS, no script from elsewhere)."""

from __future__ import annotations

from decimal import Decimal, localcontext
from html import escape

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, counted

from .baseline import BASELINE
from .build import METHOD, Board
from .gaps_html import render_gaps
from .rank import ScenarioRanking
from .rows import METRICS, BoardRow
from .stats import Interval, eight_places
from .trials import TrialsShown

__all__ = ["render_board"]

_CSS = """
:root { color-scheme: light; --ink:#1f2328; --muted:#59636e; --line:#d1d9e0;
        --ok:#1a7f37; --warn:#9a6700; --bad:#cf222e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1280px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
         vertical-align: top; }
td.num { text-align: right; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
         color: #fff; white-space: nowrap; font-size: 12px; }
.badge.attested-and-sealed { background: var(--ok); }
.badge.replayed-only { background: var(--warn); }
.badge.failed { background: var(--bad); }
.badge.baseline { background: var(--muted); }
tr.baseline td { font-style: italic; }
tr.failed td { color: var(--muted); }
.reason { max-width: 420px; overflow-wrap: anywhere; }
tr[data-row] td { border-bottom: 0; }
tr.detail td { color: var(--muted); font-size: 12px; padding-top: 0; }
th.num { text-align: right; }
"""

_LEGEND = (
    (
        "attested-and-sealed",
        "replayed here, and its grade signed by a door you trust, on a sealed scenario",
    ),
    (
        "replayed-only",
        "every root re-derived by replay on this machine; what the agent "
        "could see is the runtime's word, not signed",
    ),
    (
        "failed",
        "did not verify, is not a proof, did not pass a check of its grade or stopped "
        "before its window ended (the reason is given): never ranked",
    ),
)


def _badge(badge: str) -> str:
    return f'<span class="badge {escape(badge)}">{escape(badge)}</span>'


def _metric(row: BoardRow, key: str) -> str:
    value = (row.metrics or {}).get(key)
    shown = "—" if value is None else str(value)
    return f'<td class="num" data-metric="{key}">{escape(shown)}</td>'


def _roots(row: BoardRow) -> str:
    """The source and every root, on a line of their own under the row (whole, never cut)."""
    roots = " · ".join(
        f'{escape(k)} <code data-root="{escape(k)}">{escape(v)}</code>'
        for k, v in row.roots.items()
    )
    return (
        f'<tr class="detail {escape(row.badge)}"><td></td><td colspan="{_COLUMNS - 1}">'
        f"<code>{escape(row.source)}</code>{'<br>' + roots if roots else ''}</td></tr>"
    )


def _row(row: BoardRow) -> str:
    rank = "—" if row.rank is None else str(row.rank)
    passed = {True: "yes", False: "no", None: "—"}[row.passed]
    reason = row.reason
    if row.duplicates:
        reason += f" · appeared {len(row.duplicates)} times: " + ", ".join(row.duplicates)
    agent = row.agent + (
        f" (filed under {row.filed_under})" if row.filed_under != row.agent else ""
    )
    if row.identity is not None and row.identity not in row.agent:  # a name is a claim
        agent += f" (signed identity {row.identity})"
    return (
        f'<tr class="{escape(row.badge)}" data-row data-badge="{escape(row.badge)}" '
        f'data-rank="{escape(rank)}" data-source="{escape(row.source)}">'
        f'<td class="num" data-rank-cell>{escape(rank)}</td>'
        f"<td>{escape(agent)}</td><td>{_badge(row.badge)}</td>"
        f"<td>{escape(row.scenario or '—')}</td>"
        f"<td>{escape(passed)}</td>"
        + "".join(_metric(row, k) for k in ("return", "sharpe", "maxDrawdown", "pnl", "fills"))
        + f"<td>{escape(row.provenance or '—')}</td>"
        f'<td class="reason" data-reason>{escape(reason)}</td></tr>' + _roots(row)
    )


_HEAD = (
    "<tr><th>rank</th><th>agent</th><th>badge</th><th>scenario</th><th>passed</th>"
    '<th class="num">return</th><th class="num">sharpe</th><th class="num">max drawdown</th>'
    '<th class="num">pnl</th><th class="num">fills</th><th>provenance</th><th>verification</th>'
    "</tr>"
)
_COLUMNS = _HEAD.count("<th")
_NOT_COUNTED = ' <span class="sub">embedded, not in this catalog: not counted overall</span>'
_FORWARD = (
    ' <span class="sub" data-forward>forward: traded while its tape grew, ranked apart '
    "from replays of the fixed tape, not counted overall</span>"
)
_UNSEALED = (
    ' <span class="sub" data-unsealed>not sealed: graded while the scenario was not sealed, '
    "ranked apart from the runs graded sealed, not counted overall</span>"
)


def _figures(stats: Interval) -> str:
    shown = (
        "N = 1: no interval"
        if stats.half is None and stats.low == stats.high
        else f"[{eight_places(stats.low)}, {eight_places(stats.high)}]"
    )
    return (
        f'<td class="num" data-n>{stats.n}</td>'
        f'<td class="num" data-mean>{eight_places(stats.mean)}</td>'
        f'<td class="num" data-interval>{escape(shown)}</td>'
    )


_CELLS_HEAD = (
    '<tr><th>rank</th><th>agent</th><th class="num">N</th><th class="num">mean</th>'
    '<th class="num">95% interval</th></tr>'
)


def _baseline_row(value: object, why: str | None, colspan: int = 2) -> str:
    shown = why if value is None else f"{value}"
    return (
        f'<tr class="baseline" data-baseline><td>{_badge("baseline")}</td>'
        f"<td>{escape(BASELINE)} (baseline, not ranked)</td>"
        f'<td class="num" colspan="{colspan}">{escape(str(shown))}</td><td></td></tr>'
    )


def _apart(r: ScenarioRanking) -> str:
    """Why a scenario's ranking stands apart or does not count overall (else nothing)."""
    if r.forward:
        return _FORWARD
    if r.unsealed:
        return _UNSEALED
    return "" if r.counted else _NOT_COUNTED


def _scenario(board: Board, r: ScenarioRanking) -> str:
    cells = "".join(
        f'<tr data-cell="{escape(c.agent)}"><td class="num">{c.rank}</td>'
        f"<td>{escape(c.agent)}</td>{_figures(c.stats)}</tr>"
        for c in r.cells
    )
    found = board.baseline(r)
    value = board.baseline_value(r)
    baseline = _baseline_row(
        None if value is None else eight_places(value), found.why if found else "none"
    )
    return (
        f'<h3 data-scenario="{escape(r.scenario)}">{escape(r.scenario)} '
        f"<code>{escape(r.root)}</code>"
        f"{_apart(r)}</h3>"
        f'<table class="cells">{_CELLS_HEAD}{cells}{baseline}</table>'
        f'<table class="ranking">{_HEAD}' + "".join(_row(row) for row in r.rows) + "</table>"
    )


def _overall_baseline(board: Board) -> str:
    values = [board.baseline_value(r) for r in board.scenarios if r.counted]
    if not values or any(v is None for v in values):
        return ""
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        mean = sum((v for v in values if v is not None), Decimal(0)) / len(values)
    return _baseline_row(eight_places(mean), None, colspan=3)


def _trials(found: list[TrialsShown]) -> str:
    """Per parent of attested trial rows, the trials shown and missing, as of the door's
    count, with where to ask the door again (else nothing)."""
    if not found:
        return ""
    rows = "".join(
        f'<tr data-trials="{escape(t.parent)}"><td>{escape(", ".join(t.agents))}</td>'
        f"<td><code>{escape(t.parent)}</code> at {escape(t.issuer)}</td>"
        f"<td data-shown>{escape(', '.join(map(str, t.shown)) or '—')}</td>"
        f'<td data-missing="{escape(" ".join(map(str, t.missing)))}" '
        f'data-all-shown="{"yes" if t.all_shown else "no"}">{escape(str(t))}</td>'
        f'<td><a href="{escape(t.url)}" data-count-url>{escape(t.url)}</a></td></tr>'
        for t in found
    )
    return (
        '<h2>Trials</h2><p class="sub">A door numbers the trials each evaluator mints (1, 2, '
        "3 ... in mint order) and signs the number and how many it had minted: a trial up to "
        "the most minted that no proof here shows was minted and not published (or crashed). "
        "The door also signs each evaluator's count: the board states it as of when the door "
        "signed it, or why it has none (then trials minted since are unseen); the link asks "
        "the door again. Nothing is ranked differently for it.</p>"
        '<table id="trials"><tr><th>agent</th><th>trials of</th><th>shown</th><th>what the '
        f"board sees</th><th>the door's count now</th></tr>{rows}</table>"
    )


def render_board(board: Board) -> str:
    """Render the page: the overall standings, each scenario's cells and proofs, every
    proof, with the buy-and-hold baseline beside the agents."""
    label = board.metric
    key, higher = METRICS[board.metric]
    overall = "".join(
        f'<tr data-agent="{escape(s.agent)}"><td class="num">{s.rank}</td>'
        f'<td>{escape(s.agent)}</td><td class="num">{s.scenarios}</td>'
        f"{_figures(s.stats)}</tr>"
        for s in board.overall
    ) + _overall_baseline(board)
    scenarios = "".join(_scenario(board, r) for r in board.scenarios)
    unranked = "".join(
        f'<tr data-unranked="{escape(row.source)}"><td>{escape(row.agent)}</td>'
        f"<td>{_badge(row.badge)}</td><td><code>{escape(row.source)}</code></td>"
        f'<td class="reason">{escape(row.unranked or "")}</td></tr>'
        for row in board.unranked
    )
    ranks = (
        "only proofs whose grade a trusted door signed are ranked (--trust)"
        if board.attested_only
        else "proofs that verified by replay and passed are ranked"
    )
    legend = "".join(f"<li>{_badge(b)} {escape(text)}</li>" for b, text in _LEGEND)
    counts = " · ".join(f"{board.count(b)} {b}" for b, _ in _LEGEND)
    ranked = sum(1 for row in board.rows if row.rank is not None)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kestrel board — {counted(len(board.rows), "proof")} ranked by {escape(label)}</title>
<style>{_CSS}</style></head>
<body data-metric="{escape(label)}">
<h1>Kestrel board</h1>
<p class="sub"><span data-count="proofs">{len(board.rows)}</span> proofs ·
<span data-count="ranked">{ranked}</span> ranked by {escape(label)}
({"higher" if higher else "lower"} is better; grade metric <code>{escape(key)}</code>) ·
{escape(counts)}</p>
<ul class="sub">{legend}</ul>
<p class="sub">Anyone can check a row: <code>kestrel verify PROOF.json</code> replays it
and re-derives every root below on any machine, with an empty home and no network.</p>
<p class="sub">{escape(ranks)}; a grade, session or proof that appears more than once
is ranked once and every place it appeared is named.</p>
<p class="sub" id="method">How to read it: {escape(METHOD)}. The buy-and-hold row is
the board's own session on the same tape (half the equity bought at bar 0 and held to
the end): a baseline, never ranked or credited to anyone.</p>
<h2>Overall</h2>
<p class="sub">Only scenarios of this machine's catalog count here: a scenario a proof
embeds is ranked on its own, never overall.</p>
<table id="overall"><tr><th>rank</th><th>agent</th><th class="num">scenarios</th>
<th class="num">N</th><th class="num">mean {escape(label)}</th>
<th class="num">95% interval</th></tr>{overall}</table>
<h2>By scenario</h2>
{scenarios or '<p class="sub">No proof verified.</p>'}
{render_gaps(board.gaps)}{_trials(board.trials)}<h2>Not ranked</h2>
<table id="unranked"><tr><th>agent</th><th>badge</th><th>source</th><th>why</th></tr>
{unranked}</table>
<h2>Every proof</h2>
<table id="proofs">{_HEAD}{"".join(_row(row) for row in board.rows)}</table>
<script>
// Marks the page rendered once every proof's row is in the DOM (the browser test reads it).
(function () {{
  var rows = document.querySelectorAll("#proofs tr[data-row]").length;
  document.body.setAttribute("data-rendered", rows === {len(board.rows)} ? "ok" : "missing-rows");
}})();
</script>
</body></html>
"""
