"""The inline SVG charts (ragrail.reports.charts) and where the pages use them: coordinates
computed by hand, one point per run / week, escaping, nothing that could run."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from ragrail.online.ab import ABResult, ABRow
from ragrail.online.signals import SIGNALS, Figure, PeriodSignals
from ragrail.reports.charts import (
    Bar,
    Point,
    Series,
    bar_chart,
    confusion_chart,
    line_chart,
    nice_ceiling,
)
from ragrail.reports.online import Flagged
from ragrail.reports.online_html import online_html
from ragrail.reports.trends import config_change, trend_charts
from ragrail.store.history import RunRow

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>window.__xss=1</script>' onmouseover='x' \u202e"
PCT = lambda v: f"{round(v * 100)}%"  # noqa: E731


def svgs(html: str) -> list[ET.Element]:
    """Every <svg> of a page, parsed as XML: each must be well-formed on its own."""
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, flags=re.S)]


def points(svg: ET.Element, series: str | None = None) -> list[ET.Element]:
    return [
        el
        for g in svg.iter(f"{SVG}g")
        if g.get("class") == "series" and series in (None, g.get("data-name"))
        for el in g
        if el.get("class") == "point"
    ]


def assert_inert(html: str) -> None:
    """No script, handler, link or outside resource anywhere in the charts."""
    low = html.lower()
    assert "<script" not in low and "javascript:" not in low and "url(" not in low
    assert "href" not in low and "<image" not in low and "<foreignobject" not in low
    for svg in svgs(html):
        for el in svg.iter():
            assert not [a for a in el.attrib if a.lower().startswith("on")], el.attrib


def test_nice_ceiling_rounds_the_axis_top_up():
    assert [nice_ceiling(v) for v in (0.451, 1443, 0.0056, 1.0, 2.5, 0.3, 7)] == pytest.approx(
        [0.5, 2000, 0.01, 1.0, 2.5, 0.5, 10]
    )
    assert nice_ceiling(0) == 1.0 and nice_ceiling(float("nan")) == 1.0


def test_line_chart_places_points_and_bands_by_hand():
    # plot area: x from 58 + 16 to 310 - 16, y from 16 (top, 100%) to 128 (0%)
    pts = [Point("#1", 0.0, 0.0, 0.25), Point("#2", 0.5, 0.25, 0.75), Point("#3", 1.0, 0.75, 1.0)]
    html = line_chart("hit rate", "hit_rate", [Series("hit rate", pts)], PCT, y_max=1.0)
    (svg,) = svgs(html)
    got = [(float(c.get("cx")), float(c.get("cy"))) for c in points(svg)]
    assert got == [(74.0, 128.0), (184.0, 72.0), (294.0, 16.0)]
    (band,) = [el for el in svg.iter(f"{SVG}polygon") if el.get("class") == "band"]
    assert band.get("points") == (
        "74.0,100.0 184.0,44.0 294.0,16.0 294.0,44.0 184.0,100.0 74.0,128.0"
    )
    (line,) = svg.iter(f"{SVG}polyline")
    assert line.get("points") == "74.0,128.0 184.0,72.0 294.0,16.0"
    ticks = [t.text for t in svg.iter(f"{SVG}text")]
    assert ticks[:3] == ["0%", "50%", "100%"] and "#2" in ticks
    assert [c.find(f"{SVG}title").text for c in points(svg)][1] == "#2: 50% [25%, 75%]"


def test_a_missing_figure_breaks_the_line_and_has_no_point():
    pts = [Point("w1", 0.2), Point("w2", None), Point("w3", 0.3), Point("w4", 0.4, 0.3, 0.5)]
    (svg,) = svgs(line_chart("t", "k", [Series("s", pts)], PCT, y_max=1.0))
    assert [p.get("data-x") for p in points(svg)] == ["w1", "w3", "w4"]
    assert len(list(svg.iter(f"{SVG}polyline"))) == 1  # w3-w4; w1 stands alone
    # one interval, on one point: a narrow band rather than a polygon of one column
    (band,) = [el for el in svg.iter() if el.get("class") == "band"]
    assert band.tag == f"{SVG}rect" and float(band.get("height")) == pytest.approx(22.4)


def test_series_differ_by_shape_and_dash_and_are_named_in_text():
    a = Series("v1", [Point("2026-W45", 0.1), Point("2026-W46", 0.2)])
    b = Series("v2", [Point("2026-W46", 0.3), Point("2026-W47", 0.25)])
    html = line_chart("escalation", "escalation", [a, b], PCT)
    (svg, *legend) = svgs(html)
    assert [p.tag for p in points(svg, "v1")] == [f"{SVG}circle"] * 2
    assert [p.tag for p in points(svg, "v2")] == [f"{SVG}rect"] * 2
    dashes = [line.get("stroke-dasharray") for line in svg.iter(f"{SVG}polyline")]
    assert dashes == [None, "6 3"]
    # the x axis is the weeks of either version, in order; the top is rounded up to 50%
    xs = {p.get("data-x"): float(p.get("cx") or p.get("x")) for p in points(svg)}
    assert xs["2026-W45"] < xs["2026-W47"]
    assert [t.text for t in svg.iter(f"{SVG}text")][:3] == ["0%", "25%", "50%"]
    assert len(legend) == 2 and "</svg> v1</span>" in html and "</svg> v2</span>" in html
    assert all(el.get("fill") in (None, "none", "currentColor") for el in svg.iter())


def test_a_configuration_change_is_marked_and_written_out():
    pts = [Point("#1", 0.5), Point("#2", 0.6, change="top_k 3 -> 1"), Point("#3", 0.6)]
    html = line_chart("recall", "recall", [Series("recall", pts)], PCT, y_max=1.0)
    (svg,) = svgs(html)
    (mark,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "change"]
    assert mark.find(f"{SVG}line").get("x1") == "184.0"
    assert mark.find(f"{SVG}line").get("stroke-dasharray") == "3 3"
    assert "configuration changed at #2: top_k 3 -&gt; 1" in html
    assert "<li>&#916; #2: top_k 3 -&gt; 1</li>" in html


def test_hostile_text_is_escaped_everywhere():
    pts = [Point(HOSTILE, 0.5, 0.4, 0.6, title=HOSTILE, change=HOSTILE)]
    pages = [
        line_chart(
            HOSTILE, HOSTILE, [Series(HOSTILE, pts), Series("b", pts)], PCT, caption=HOSTILE
        ),
        bar_chart(HOSTILE, HOSTILE, [Bar(HOSTILE, 0.5, 0.4, 0.6, HOSTILE)], PCT, caption=HOSTILE),
        confusion_chart(HOSTILE, HOSTILE, [[1, 2], [3, 4]], (HOSTILE, "x"), (HOSTILE, "y")),
    ]
    for html in pages:
        assert "<script>" not in html and "' onmouseover" not in html and "\u202e" not in html
        assert "&lt;script&gt;" in html and "&#x27; onmouseover=&#x27;x&#x27;" in html
        assert "&lt;U+202E&gt;" in html
        assert_inert(html)


def test_bar_chart_by_hand():
    bars = [Bar("A v1", 0.1, 0.05, 0.15), Bar("B v2", 0.3, 0.2, 0.4)]
    html = bar_chart("escalation", "ab-escalation", bars, PCT, caption="B - A +20 pts")
    (svg,) = svgs(html)
    drawn = [el for el in svg.iter(f"{SVG}rect") if el.get("class") == "bar"]
    # x runs from 80 (0) to 250 (0.4, the widest interval end): 425 px per unit
    assert [(b.get("data-arm"), b.get("x"), b.get("width")) for b in drawn] == [
        ("A v1", "80.0", "42.5"),
        ("B v2", "80.0", "127.5"),
    ]
    assert drawn[0].get("fill-opacity") == "0.35" and drawn[1].get("stroke-dasharray") == "4 2"
    whiskers = [el.get("d") for el in svg.iter(f"{SVG}path")]
    assert whiskers[1] == "M165.0 36 H250.0 M165.0 32 V40 M250.0 32 V40"
    assert drawn[1].find(f"{SVG}title").text == "B v2: 30% [20%, 40%]"
    assert "B - A +20 pts" in html
    assert_inert(html)


def test_confusion_chart_counts_and_shares():
    html = confusion_chart("polite", "confusion-polite", [[4, 0], [2, 2]])
    (svg,) = svgs(html)
    cells = {
        (g.get("data-row"), g.get("data-col")): g
        for g in svg.iter(f"{SVG}g")
        if g.get("class") == "cell"
    }
    count = {k: [t.text for t in g.iter(f"{SVG}text")] for k, g in cells.items()}
    assert count == {
        ("0", "0"): ["4 (50%)", "agree"],
        ("0", "1"): ["0 (0%)", "disagree"],
        ("1", "0"): ["2 (25%)", "disagree"],
        ("1", "1"): ["2 (25%)", "agree"],
    }
    frames = {k: g.find(f"{SVG}rect").get("stroke-dasharray") for k, g in cells.items()}
    assert frames[("0", "0")] is None and frames[("1", "0")] == "4 3"
    assert "8 labelled answers" in html


def row(rid: int, config: dict, stats: dict, **totals) -> RunRow:
    base = {"chunking": "by section", "top_k": 3, "retriever": "r", "answerer": "a"}
    return RunRow(rid, f"2026-12-0{rid}", "n", None, False, {**base, **config},
                  {"stats": stats, **totals}, None)  # fmt: skip


def stat(v: float) -> dict:
    return {"value": v, "low": v - 0.1, "high": v + 0.1, "n": 10}


def test_config_change_names_what_differs():
    assert config_change({"top_k": 3}, {"top_k": 3}) == ""
    assert config_change({"top_k": 3}, {"top_k": 1, "model": "m"}) == (
        "top_k 3 -> 1; model None -> m"
    )
    assert config_change({}, {"citations": "required", "repeats": 1}) == ""
    assert config_change({"settings": {"x": 1}}, {"settings": {"x": 2, "y": 3}}) == (
        "x 1 -> 2; y - -> 3"
    )
    # a different golden set or name is not a different system
    assert config_change({"n_cases": 1, "name": "a"}, {"n_cases": 2, "name": "b"}) == ""


def test_trends_one_point_per_run_a_marker_per_change():
    history = [
        row(1, {}, {"hit_rate": stat(0.5)}, answers_passed=1, n_answers=2, n_answer_errors=0),
        row(2, {"top_k": 1}, {"hit_rate": stat(0.4), "mrr": stat(0.3)}),
        row(3, {"top_k": 1}, {"hit_rate": stat(0.6)}, answers_passed=2, n_answers=4, n_errors=1),
        row(4, {"top_k": 1, "model": HOSTILE}, {}, answers_passed=3, n_answers=4),
    ]
    html = trend_charts(history)
    keys = re.findall(r"data-series='(\w+)'", html)
    assert keys == ["hit_rate", "recall", "answer_pass_rate", "mrr"]  # others: no run has them
    charts = dict(zip(keys, svgs(html.replace("no figures yet", "<svg></svg>")), strict=True))
    assert [p.get("data-x") for p in points(charts["hit_rate"])] == ["#1", "#2", "#3"]
    assert points(charts["recall"]) == []
    # run 2 has no answers total; run 3 (recorded before n_answer_errors) lost one answer
    rates = [float(p.get("data-value")) for p in points(charts["answer_pass_rate"])]
    assert rates == pytest.approx([0.5, 0.4, 0.75])
    assert "<li>&#916; #2: top_k 3 -&gt; 1</li>" in html
    # run 4's model change is marked on the answers chart (run 4 has an answers total) only
    assert html.count("model None -&gt; &lt;script&gt;") == 2  # its <title> and its line
    assert "<script>" not in html
    assert_inert(html)


def figures(v: float) -> dict[str, Figure]:
    return {s: Figure(v, 100, v / 2, v * 1.5) for s in SIGNALS}


def test_online_page_charts_a_point_per_week_and_two_bars_per_signal():
    periods = [
        PeriodSignals("v1", "2026-W45", 100, figures(0.1)),
        PeriodSignals("v1", "2026-W46", 100, figures(0.2)),
        PeriodSignals("v1", "2026-W47", 100, figures(0.1)),
        PeriodSignals(HOSTILE, "2026-W46", 100, figures(0.3)),
        PeriodSignals(HOSTILE, "2026-W47", 100, figures(0.3)),
    ]
    f = Figure(0.1, 100, 0.05, 0.15)
    ab = ABResult("v1", HOSTILE, 300, 200, (ABRow("escalation", f, f, 0.0, -0.1, 0.1, 0.5,
                  0.5, None, None, None, "z", 1),))  # fmt: skip
    page = online_html(periods, ab, Flagged(0, ()), database="db", by="week")
    charts = page.split("id='signal-charts'")[1].split("<h3>")[0]
    per_signal = svgs(charts.split("<div class='legend'>")[0])
    assert len(re.findall(r"<div class='chart' data-series=", charts)) == len(SIGNALS)
    (esc,) = per_signal[:1]
    assert len(points(esc, "v1")) == 3 and len(points(esc)) == 5
    ab_part = page.split("id='ab-charts'")[1]
    (bars,) = svgs(ab_part.split("</div></div>")[0])
    # the parsed attribute: the guard's text, back from its entities, bidi override shown
    shown = "B " + HOSTILE.replace("\u202e", "<U+202E>")
    assert [b.get("data-arm") for b in bars.iter(f"{SVG}rect")] == ["A v1", shown]
    assert "<script>" not in page and "\u202e" not in page
    assert "B - A +0.0 pts [-10.0 pts, +10.0 pts], not significant" in page
    assert_inert(page)


def test_the_report_judge_section_draws_the_labels_confusion_matrix():
    from ragrail.judge.config import CriterionConfig
    from ragrail.judge.core import judge_totals
    from ragrail.judge.correct import Target, correct_totals
    from ragrail.reports.html import html_report
    from tests.judge.test_correct import PAIRS, RUN, run_of, stored

    run = run_of(RUN)
    assert html_report(run).count("judge-confusion") == 0  # no validation, no matrix
    run.judge_stats = judge_totals(run)
    target = Target("polite", CriterionConfig(name="polite", description="d"), "k")
    run.judge_corrected = correct_totals(run, [target], {("k", "polite"): stored(PAIRS)})
    page = html_report(run)
    part = page.split("id='judge-confusion'")[1]
    (svg,) = svgs(part.split("</svg>")[0] + "</svg>")
    # PAIRS (judge, human): (1, 1) x4, (1, 0) x2, (0, 0) x2
    counts = [int(g.get("data-count")) for g in svg.iter(f"{SVG}g") if g.get("class") == "cell"]
    assert counts == [4, 0, 2, 2]
    assert "polite: people vs judge, validation 1" in part
