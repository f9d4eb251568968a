"""The memorisation gap's section of the board's page (only when the board knows a pair)."""

from __future__ import annotations

from html import escape

from .gaps import GAP_KEYS, GAP_METHOD, Gaps
from .stats import Interval, eight_places

__all__ = ["render_gaps"]

_READ = (
    "How to read it: a large positive gap (the interval above zero) means the agent does "
    "better on tapes it can recognise than on the same returns disguised: it uses what "
    "it remembers. A gap whose interval holds zero says nothing either way; with N = 1 "
    "there is no interval."
)


def _figure(stats: Interval, key: str) -> str:
    shown = (
        "N = 1: no interval"
        if stats.half is None
        else f"[{eight_places(stats.low)}, {eight_places(stats.high)}]"
    )
    return (
        f'<td class="num" data-gap-mean="{key}">{eight_places(stats.mean)}</td>'
        f'<td class="num" data-gap-interval="{key}">{escape(shown)}</td>'
    )


def render_gaps(gaps: Gaps) -> str:
    """The section: each agent's gap, then every pair, its status and each agent's runs."""
    if not gaps.pairs:
        return ""
    agents = "".join(
        f'<tr data-gap-agent="{escape(gap.agent)}"><td>{escape(gap.agent)}</td>'
        f'<td class="num" data-gap-pairs>{gap.stats["return"].n}</td>'
        + "".join(_figure(gap.stats[key], key) for key in GAP_KEYS)
        + "</tr>"
        for gap in gaps.agents
    )
    pairs = []
    for twins, runs in gaps.pairs:
        shown = "".join(
            f'<tr data-gap-run="{escape(run.agent)}"><td></td><td>{escape(run.agent)}</td>'
            f'<td class="num">{run.labelled_runs}</td><td class="num">{run.disguised_runs}</td>'
            + "".join(
                f'<td class="num">{"—" if run.gaps is None else eight_places(run.gaps[k])}</td>'
                for k in GAP_KEYS
            )
            + f"<td>{'counted' if run.counted else 'not counted'}</td></tr>"
            for run in runs
        )
        pairs.append(
            f'<tr data-pair="{escape(twins.labelled)},{escape(twins.disguised)}" '
            f'data-pair-status="{twins.status}"><td>{escape(twins.labelled)} / '
            f"{escape(twins.disguised)}</td>"
            f'<td colspan="6"><b>{twins.status}</b>: '
            f'<span class="reason">{escape(twins.why)}</span></td></tr>{shown}'
        )
    return f"""<h2 id="gaps">Memorisation gap</h2>
<p class="sub">{escape(GAP_METHOD)}.</p>
<p class="sub">{escape(_READ)}</p>
<table id="gap-agents"><tr><th>agent</th><th class="num">pairs</th>
<th class="num">return gap</th><th class="num">95% interval</th>
<th class="num">Sharpe gap</th><th class="num">95% interval</th>
</tr>{agents}</table>
<table id="gap-pairs"><tr><th>labelled / disguised</th><th>agent</th>
<th class="num">labelled runs</th><th class="num">disguised runs</th>
<th class="num">return gap</th><th class="num">Sharpe gap</th><th>in the gap</th></tr>
{"".join(pairs)}</table>
"""
