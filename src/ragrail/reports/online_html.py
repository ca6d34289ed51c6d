"""The online page: signals over time per version, the A/B table, flagged conversations.

One self-contained file (the run report's style, no script). Every string from the
logs (versions, ids, questions, flags) is made visible and escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragrail.online.ab import ABResult
from ragrail.online.signals import SIGNALS, PeriodSignals
from ragrail.reports.html import CSS
from ragrail.reports.online import (
    LABELS,
    NOTES,
    Flagged,
    difference_text,
    figure_text,
    iso_time,
    p_text,
    tested_text,
    value_text,
)
from ragrail.text.guard import escape


def _signals_tables(periods: Sequence[PeriodSignals], by: str) -> str:
    parts: list[str] = []
    versions = list(dict.fromkeys(p.version for p in periods))
    head = "".join(
        f"<th>{escape(LABELS[s])}{'<br><span class=muted>' + escape(NOTES[s]) + '</span>' if s in NOTES else ''}</th>"
        for s in SIGNALS
    )
    for version in versions:
        rows = []
        for p in (p for p in periods if p.version == version):
            moved = {("latency_p50" if m.signal == "latency" else m.signal): m for m in p.flagged}
            cells = []
            for s in SIGNALS:
                f = p.figures[s]
                mark = ""
                if s in moved:
                    m = moved[s]
                    tested = tested_text(m.test, m.p_value, m.p_adjusted, m.family)
                    mark = (
                        f"<br><span class=worse>MOVED {escape(m.direction)} "
                        f"({escape(tested)})</span>"
                    )
                cells.append(f"<td class=num>{escape(figure_text(s, f))}{mark}</td>")
            rows.append(
                f"<tr><td>{escape(p.period)}</td><td class=num>{p.n:,}</td>{''.join(cells)}</tr>"
            )
        parts.append(
            f"<h3>{escape(version)}</h3><table><thead><tr><th>{escape(by)}</th><th>n</th>"
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    if not parts:
        return "<p class=muted>No conversations to report.</p>"
    return "".join(parts)


def _in_unit(signal: str) -> Callable[[float], str]:
    return lambda v: value_text(signal, v)


def _signal_charts(periods: Sequence[PeriodSignals], by: str) -> str:
    """One chart per signal: a line per version, a point per period with its interval as
    a band (the tables below hold the same figures)."""
    from ragrail.reports.charts import Point, Series, line_chart

    if not periods:
        return ""
    versions = list(dict.fromkeys(p.version for p in periods))
    order = sorted({p.period for p in periods})  # ISO weeks and days sort as text
    charts = []
    for s in SIGNALS:
        series = []
        for version in versions:
            mine = {p.period: p for p in periods if p.version == version}
            points = []
            for period in order:
                if period not in mine:
                    continue
                p, f = mine[period], mine[period].figures[s]
                moved = [m for m in p.flagged if s in (m.signal, f"{m.signal}_p50")]
                note = f", MOVED {moved[0].direction}" if moved else ""
                title = f"{version}, {by} {period}, n={f.n:,}{note}"
                points.append(Point(period, f.value, f.low, f.high, title=title))
            series.append(Series(version, points))
        charts.append(
            line_chart(
                LABELS[s],
                s,
                series,
                _in_unit(s),
                caption=NOTES.get(s, ""),
            )
        )
    return f"<div class='charts' id='signal-charts'>{''.join(charts)}</div>"


def _ab_bars(result: ABResult) -> str:
    """Per signal, A's and B's figure as bars with their intervals, and B - A beneath."""
    from ragrail.reports.charts import Bar, bar_chart

    charts = []
    for r in result.rows:
        interval = (
            ""
            if r.low is None or r.high is None
            else f" [{difference_text(r.signal, r.low)}, {difference_text(r.signal, r.high)}]"
        )
        verdict = "significant" if r.significant else "not significant"
        bars = [
            Bar(f"A {result.a}", r.a.value, r.a.low, r.a.high, title=f"A = {result.a}"),
            Bar(f"B {result.b}", r.b.value, r.b.low, r.b.high, title=f"B = {result.b}"),
        ]
        charts.append(
            bar_chart(
                LABELS[r.signal],
                f"ab-{r.signal}",
                bars,
                _in_unit(r.signal),
                caption=f"B - A {difference_text(r.signal, r.difference)}{interval}, {verdict}",
            )
        )
    return f"<div class='charts' id='ab-charts'>{''.join(charts)}</div>"


def _ab_table(result: ABResult | None) -> str:
    if result is None:
        return "<p class=muted>No comparison (run <code>ragrail online --compare A B</code>).</p>"
    rows = []
    for r in result.rows:
        interval = (
            "-"
            if r.low is None or r.high is None
            else f"[{difference_text(r.signal, r.low)}, {difference_text(r.signal, r.high)}]"
        )
        p = "-" if r.p_value is None else p_text(r.p_value)
        q = "-" if r.p_adjusted is None else f"{p_text(r.p_adjusted)} (of {r.family})"
        verdict = "<span class=worse>significant</span>" if r.significant else "no"
        need = "-" if r.n_needed is None else f"{r.n_needed:,} ({r.n_more or 0:,} more)"
        rows.append(
            f"<tr><td>{escape(LABELS[r.signal])}</td>"
            f"<td class=num>{escape(figure_text(r.signal, r.a))}</td>"
            f"<td class=num>{escape(figure_text(r.signal, r.b))}</td>"
            f"<td class=num>{escape(difference_text(r.signal, r.difference))}</td>"
            f"<td class=num>{escape(interval)}</td><td>{escape(r.test or '-')}</td>"
            f"<td class=num>{escape(p)}</td><td class=num>{escape(q)}</td>"
            f"<td>{verdict}</td><td class=num>{escape(need)}</td></tr>"
        )
    return _ab_bars(result) + (
        f"<p>B = {escape(result.b)} ({result.n_b:,} conversations) against A = "
        f"{escape(result.a)} ({result.n_a:,}).</p>"
        "<table><thead><tr><th>signal</th><th>A</th><th>B</th><th>B - A</th><th>95% interval</th>"
        "<th>test</th><th>p</th><th>Holm-adjusted p</th><th>significant</th>"
        "<th>n per arm for 80% power</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _flagged_table(flagged: Flagged) -> str:
    if not flagged.total:
        return "<p class=muted>No flagged conversations (run <code>ragrail logs score</code>).</p>"
    rows = "".join(
        f"<tr><td>{escape(c.id)}</td><td>{escape(iso_time(c.at))}</td><td>{escape(c.version)}</td>"
        f"<td>{escape(', '.join(c.flags))}</td><td>{escape(c.question)}</td>"
        f"<td>{escape(value_text('latency_p50', c.latency_ms))}</td></tr>"
        for c in flagged.conversations
    )
    shown = len(flagged.conversations)
    note = f" (the first {shown:,} listed)" if shown < flagged.total else ""
    return (
        f"<p>{flagged.total:,} flagged{note}.</p><table><thead><tr><th>id</th><th>when (UTC)</th>"
        "<th>version</th><th>flags</th><th>question</th><th>latency</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def online_html(
    periods: Sequence[PeriodSignals],
    result: ABResult | None,
    flagged: Flagged,
    *,
    database: str,
    by: str,
) -> str:
    """The whole page."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>ragrail online signals</title><style>{CSS}</style></head><body>"
        f"<h1>Online signals</h1><p class=muted>{escape(database)}: per {escape(by)}, "
        "each figure with its 95% interval and n.</p>"
        f"<h2>Signals over time</h2>{_signal_charts(periods, by)}{_signals_tables(periods, by)}"
        f"<h2>A/B</h2>{_ab_table(result)}"
        f"<h2>Flagged conversations</h2>{_flagged_table(flagged)}"
        "</body></html>\n"
    )
