"""The grade report as one self-contained HTML file (inline CSS and SVG, no network)."""

from __future__ import annotations

from html import escape

from .data import ReportData
from .svg import Chart, Marker, line_chart

__all__ = ["render_report"]

_CSS = """
:root { color-scheme: light; --ink:#1f2328; --muted:#59636e; --line:#d1d9e0;
        --ok:#1a7f37; --bad:#cf222e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1000px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px;
           font-weight: 600; color: #fff; }
.verdict.pass { background: var(--ok); } .verdict.fail { background: var(--bad); }
.tiles { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 16px 0; }
.tile { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.tile .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.tile .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); }
td.num { text-align: right; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
.chart { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 8px; }
.axis { font-size: 11px; fill: var(--muted); }
.ok { color: var(--ok); font-weight: 600; } .bad { color: var(--bad); font-weight: 600; }
"""


def _tile(key: str, label: str, value: str) -> str:
    return (
        f'<div class="tile"><div class="k">{escape(label)}</div>'
        f'<div class="v" data-metric="{key}">{escape(value)}</div></div>'
    )


def _rows(*rows: tuple[str, str, str | None]) -> str:
    """Table rows of grade figures; an undefined (``null``) one shows as an em dash."""
    return "".join(
        f"<tr><th>{escape(label)}</th>"
        f'<td class="num" data-metric-row="{key}">{"—" if value is None else escape(value)}</td>'
        "</tr>"
        for key, label, value in rows
    )


def render_report(data: ReportData) -> str:
    """Render the page; every figure shown as text is the grade's own decimal string."""
    grade, scenario = data.grade, data.scenario
    m = grade.metrics
    chart = Chart()
    span = (data.times[0], data.times[-1]) if data.times else None
    peak = 0.0
    drawdown: list[float] = []
    for e in data.equity:
        peak = max(peak, e)
        drawdown.append((e - peak) / peak * 100 if peak else 0.0)
    verdict = "pass" if grade.passed else "fail"
    price_charts = []
    for symbol, closes in data.closes.items():
        markers = [
            Marker(
                f.bar,
                f.price,
                f.side == "buy",
                f"{f.order} {f.side} {f.qty} {symbol} @ {f.price:.2f} (bar {f.bar}, {f.time})",
            )
            for f in data.fills
            if f.symbol == symbol
        ]
        price_charts.append(
            f"<h3>{escape(symbol)} close, fills marked "
            f'(<span data-fill-count="{escape(symbol)}">{len(markers)}</span>)</h3>'
            + line_chart(
                closes,
                chart=chart,
                color="#0969da",
                label=f"{symbol} close with fills",
                css_id=f"price-{symbol}",
                markers=markers,
                span_labels=span,
            )
        )
    metric_rows = _rows(
        ("pnl", "P&L", m.pnl),
        ("return", "Return", m.return_),
        ("buyAndHold", "Buy & hold return (first symbol)", m.buy_and_hold),
        ("maxDrawdown", "Max drawdown", m.max_drawdown),
        ("sharpe", "Sharpe", m.sharpe),
        ("sortino", "Sortino", m.sortino),
        ("calmar", "Calmar", m.calmar),
        ("fills", "Fills", str(m.fills)),
        ("fees", "Fees", m.fees),
        ("exposure", "Exposure", m.exposure),
        ("turnover", "Turnover", m.turnover),
    )
    trade_rows = _rows(
        ("trades", "Trades (round trips)", str(m.trades)),
        ("winRate", "Win rate", m.win_rate),
        ("bestTrade", "Best trade", m.best_trade),
        ("worstTrade", "Worst trade", m.worst_trade),
        ("avgTrade", "Average trade (geometric)", m.avg_trade),
        ("profitFactor", "Profit factor", m.profit_factor),
        ("expectancy", "Expectancy (mean trade return)", m.expectancy),
    )
    check_rows = "".join(
        f'<tr data-check="{escape(c.id)}"><td><code>{escape(c.id)}</code></td>'
        f'<td class="{"ok" if c.passed else "bad"}">{"passed" if c.passed else "failed"}</td>'
        f"<td>{escape(c.detail)}</td></tr>"
        for c in grade.conformance.checks
    )
    roots = "".join(
        f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>"
        for k, v in (
            ("grade", grade.root),
            ("record", data.record_root),
            ("head frame", grade.head),
            ("blotter", data.blotter_root),
            ("conformance", grade.conformance.root),
            ("scenario", scenario.root),
            ("tape", scenario.tape.root),
        )
    )
    acct, fees, fill = scenario.account, scenario.fees, scenario.fill
    scenario_rows = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
        for k, v in (
            ("id", scenario.id),
            ("symbols", ", ".join(i.symbol for i in scenario.instruments)),
            (
                "tape",
                f"{scenario.tape.bars} × {scenario.tape.interval} bars, "
                f"{scenario.tape.start} → {scenario.tape.end}",
            ),
            ("bars processed", str(len(data.equity))),
            ("cash", acct.cash),
            ("shortable", "yes" if acct.shortable else "no"),
            ("max position", str(acct.max_position)),
            ("max drawdown", acct.max_drawdown),
            ("fees", f"{fees.bps} bps, minimum {fees.minimum}"),
            ("fill", f"participation {fill.participation}, slippage {fill.slippage_bps} bps"),
        )
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kestrel grade — {escape(grade.session)} on {escape(scenario.id)}</title>
<style>{_CSS}</style></head>
<body data-grade-root="{escape(grade.root)}">
<h1>{escape(scenario.title)} <span class="verdict {verdict}" data-passed="{
        str(grade.passed).lower()
    }">{"PASSED" if grade.passed else "FAILED"}</span></h1>
<p class="sub">Session <code data-session>{escape(grade.session)}</code> · scenario
<code>{escape(scenario.id)}</code> · {escape(scenario.description)}</p>
<div class="tiles">{_tile("pnl", "P&L", m.pnl)}{_tile("return", "Return", m.return_)}{
        _tile("maxDrawdown", "Max drawdown", m.max_drawdown)
    }{_tile("sharpe", "Sharpe", m.sharpe)}</div>
<h2>Equity</h2>
{
        line_chart(
            data.equity,
            chart=chart,
            color="#8250df",
            label="equity",
            css_id="equity",
            fill_below=True,
            span_labels=span,
        )
    }
<h2>Drawdown (%)</h2>
{
        line_chart(
            drawdown,
            chart=Chart(height=160),
            color="#cf222e",
            label="drawdown",
            css_id="drawdown",
            fill_below=False,
            value_format="{:.2f}%",
            span_labels=span,
        )
    }
<h2>Prices</h2>
{"".join(price_charts)}
<h2>Metrics</h2>
<table id="metrics">{metric_rows}</table>
<h2>Trades</h2>
<p class="sub">Round trips: a trade opens when a position leaves zero and closes when it
returns to zero; returns are net of fees over the entry notional.</p>
<table id="trades">{trade_rows}</table>
<h2>Conformance</h2>
<table id="conformance"><tr><th>check</th><th>result</th><th>detail</th></tr>{check_rows}</table>
<h2>Roots</h2>
<p class="sub">Re-verify with <code>kestrel verify grade.json</code>: every root below is the
sha256 of the object's canonical JSON (RFC 8785).</p>
<table id="roots">{roots}</table>
<h2>Scenario</h2>
<table id="scenario">{scenario_rows}</table>
<script>
// Marks the page as rendered once every chart is in the DOM (the browser test reads it).
(function () {{
  var charts = document.querySelectorAll("svg.chart polyline").length;
  document.body.setAttribute("data-rendered", charts >= 2 ? "ok" : "missing-charts");
}})();
</script>
</body></html>
"""
