"""Inline SVG charts for the HTML pages: the report's history trends, the online page's
signals per week and A/B bars, the judge validation's confusion matrix.

Pure functions from figures and text to one HTML string each. What keeps them safe and
readable wherever the page is opened:

- no script, no external asset, no element id (two charts on one page never collide):
  a chart reads the same from file://, under the report's Content-Security-Policy, and
  printed;
- every string not written here (run ids, versions, metric names, what changed) goes
  through ``ragrail.text.guard.escape``, the reports' guard, into single-quoted
  attributes or text (the guard escapes both quotes);
- nothing is said by colour alone: series differ by marker shape and dash pattern and
  are named in text, every point carries a <title> with its figure and interval, and
  the latest figure and each configuration change are written out beneath the chart;
- strokes, fills and text use ``currentColor`` and the page's CSS variables, so the dark
  page of ``prefers-color-scheme: dark`` gives a light chart with no second palette.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from ragrail.text.guard import escape

Fmt = Callable[[float], str]

# (dash pattern, filled) per series: told apart in grey, in print and by a colour-blind
# reader; a fifth series reuses the first look (its legend still names it).
LOOKS = (("", True), ("6 3", False), ("2 3", True), ("8 3 2 3", False))
SHAPES = ("circle", "square", "triangle", "diamond")


@dataclass(frozen=True)
class Point:
    """One figure on the x axis ``label`` (a run "#12", a week "2026-W45"); ``title`` is
    what the point is, ``change`` (non-empty) what changed in the configuration here."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    title: str = ""
    change: str = ""


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[Point]


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    title: str = ""


def _finite(v: float | None) -> TypeGuard[float]:
    return v is not None and math.isfinite(v)


def _n(v: float) -> str:
    return f"{v:.1f}"


def _marker(
    shape: str, x: float, y: float, filled: bool, attrs: str, title: str, k: float = 1.0
) -> str:
    """A point's marker; ``k`` scales it (smaller when many points share the axis)."""
    fill = "currentColor" if filled else "none"
    common = f"class='point' fill='{fill}' stroke='currentColor' stroke-width='1.5' {attrs}"
    tip = f"<title>{escape(title)}</title>" if title else ""
    if shape == "circle":
        return f"<circle cx='{_n(x)}' cy='{_n(y)}' r='{3.5 * k:.1f}' {common}>{tip}</circle>"
    if shape == "square":
        return f"<rect x='{_n(x - 3.5 * k)}' y='{_n(y - 3.5 * k)}' width='{7 * k:.1f}' height='{7 * k:.1f}' {common}>{tip}</rect>"
    if shape == "triangle":
        pts = f"{_n(x)},{_n(y - 4.5 * k)} {_n(x + 4 * k)},{_n(y + 3 * k)} {_n(x - 4 * k)},{_n(y + 3 * k)}"
    else:
        d = 4.5 * k
        pts = f"{_n(x)},{_n(y - d)} {_n(x + d)},{_n(y)} {_n(x)},{_n(y + d)} {_n(x - d)},{_n(y)}"
    return f"<polygon points='{pts}' {common}>{tip}</polygon>"


def _stretches(points: Sequence[tuple[float, Point]], ok: Callable[[Point], bool]) -> list:
    """Runs of consecutive points for which ``ok`` holds: a gap breaks a line or a band."""
    out: list[list[tuple[float, Point]]] = [[]]
    for x, p in points:
        if ok(p):
            out[-1].append((x, p))
        elif out[-1]:
            out.append([])
    return [s for s in out if s]


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above ``value`` (the axis
    top, so its half reads as a round figure too); 1 for nothing positive."""
    if not value > 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10.0 * power


def _legend(series: Sequence[Series]) -> str:
    items = []
    for i, s in enumerate(series):
        dash, filled = LOOKS[i % len(LOOKS)]
        dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
        sample = (
            "<svg xmlns='http://www.w3.org/2000/svg' width='34' height='12' viewBox='0 0 34 12' aria-hidden='true'>"
            f"<line x1='1' y1='6' x2='33' y2='6' stroke='currentColor' stroke-width='1.5'{dash_attr}/>"
            + _marker(SHAPES[i % len(SHAPES)], 17, 6, filled, "", "")
            + "</svg>"
        )
        items.append(f"<span class='legend-item'>{sample} {escape(s.name)}</span>")
    return f"<div class='legend'>{' '.join(items)}</div>"


def line_chart(
    title: str,
    key: str,
    series: Sequence[Series],
    fmt: Fmt,
    *,
    y_max: float | None = None,
    caption: str = "",
    width: int = 320,
    height: int = 150,
) -> str:
    """A line per series over the shared x labels (in order of first appearance), each
    point a marker, each 95% interval a shaded band, each configuration change a dashed
    vertical line marked with a delta and listed beneath. y runs from 0 to ``y_max``
    (default: the largest value or interval end)."""
    labels = list(dict.fromkeys(p.label for s in series for p in s.points))
    head = f"<div class='chart' data-series='{escape(key)}'><b>{escape(title)}</b><br>"
    if not any(_finite(p.value) for s in series for p in s.points):
        return head + "<p class='muted'>no figures yet</p></div>"
    left, right, top, bottom = 58, 10, 16, 22
    pw, ph = width - left - right, height - top - bottom
    top_value = y_max
    if top_value is None:
        ends = [v for s in series for p in s.points for v in (p.value, p.high) if _finite(v)]
        top_value = max(ends) if ends else 1.0
    top_value = nice_ceiling(top_value)
    where = {label: i for i, label in enumerate(labels)}

    k = 1.0 if len(labels) <= 20 else 0.6  # 40 full-size markers hide their line
    inset = 16  # the first and last x labels stay inside the picture

    def x_of(label: str) -> float:
        frac = where[label] / (len(labels) - 1) if len(labels) > 1 else 0.5
        return left + inset + (pw - 2 * inset) * frac

    def y_of(v: float) -> float:
        return top + ph * (1 - min(max(v / top_value, 0.0), 1.0))

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"role='img' aria-label='{escape(title)}'>"
    ]
    for frac in (0.0, 0.5, 1.0):
        y = y_of(top_value * frac)
        parts.append(
            f"<line x1='{left}' y1='{_n(y)}' x2='{width - right}' y2='{_n(y)}' "
            "stroke='var(--line, #ccc)'/>"
            f"<text x='{left - 4}' y='{_n(y + 3)}' text-anchor='end'>{escape(fmt(top_value * frac))}</text>"
        )
    longest = max(len(label) for label in labels)
    room = max(2, int(pw // (6 * longest + 8)))
    step = max(1, math.ceil(len(labels) / room))
    for i, label in enumerate(labels):
        if i % step == 0 or (i == len(labels) - 1 and (i % step) * 2 >= step):
            parts.append(
                f"<text x='{_n(x_of(label))}' y='{height - 6}' text-anchor='middle'>{escape(label)}</text>"
            )
    notes = []
    for s in series:
        for p in s.points:
            if p.change:
                x = x_of(p.label)
                parts.append(
                    f"<g class='change'><line x1='{_n(x)}' y1='{top}' x2='{_n(x)}' y2='{top + ph}' "
                    "stroke='currentColor' stroke-dasharray='3 3' stroke-opacity='0.6'/>"
                    f"<text x='{_n(x)}' y='{top - 4}' text-anchor='middle'>&#916;"
                    f"<title>{escape(f'configuration changed at {p.label}: {p.change}')}</title>"
                    "</text></g>"
                )
                notes.append(f"<li>&#916; {escape(p.label)}: {escape(p.change)}</li>")
    for i, s in enumerate(series):
        dash, filled = LOOKS[i % len(LOOKS)]
        placed = [(x_of(p.label), p) for p in s.points]
        out = [f"<g class='series' data-name='{escape(s.name)}'>"]
        for run in _stretches(placed, lambda p: _finite(p.low) and _finite(p.high)):
            if len(run) == 1:
                x, p = run[0]
                hi, lo = y_of(p.high or 0.0), y_of(p.low or 0.0)
                out.append(
                    f"<rect class='band' x='{_n(x - 4)}' y='{_n(hi)}' width='8' "
                    f"height='{_n(lo - hi)}' fill='currentColor' fill-opacity='0.12'/>"
                )
                continue
            upper = [f"{_n(x)},{_n(y_of(p.high or 0.0))}" for x, p in run]
            lower = [f"{_n(x)},{_n(y_of(p.low or 0.0))}" for x, p in reversed(run)]
            out.append(
                f"<polygon class='band' points='{' '.join(upper + lower)}' "
                "fill='currentColor' fill-opacity='0.12'/>"
            )
        dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
        for run in _stretches(placed, lambda p: _finite(p.value)):
            if len(run) > 1:
                line = " ".join(f"{_n(x)},{_n(y_of(p.value or 0.0))}" for x, p in run)
                out.append(
                    f"<polyline points='{line}' fill='none' stroke='currentColor' "
                    f"stroke-width='1.5'{dash_attr}/>"
                )
        for x, p in placed:
            if _finite(p.value):
                v = p.value or 0.0
                shown = fmt(v)
                if _finite(p.low) and _finite(p.high):
                    shown += f" [{fmt(p.low or 0.0)}, {fmt(p.high or 0.0)}]"
                tip = f"{p.title or p.label}: {shown}"
                attrs = f"data-x='{escape(p.label)}' data-value='{v:.6g}'"
                out.append(_marker(SHAPES[i % len(SHAPES)], x, y_of(v), filled, attrs, tip, k))
        out.append("</g>")
        parts.append("".join(out))
    parts.append("</svg>")
    legend = _legend(series) if len(series) > 1 else ""
    cap = f"<div class='muted'>{escape(caption)}</div>" if caption else ""
    listed = f"<ul class='chart-notes muted'>{''.join(notes)}</ul>" if notes else ""
    return head + "".join(parts) + legend + cap + listed + "</div>"


def bar_chart(
    title: str, key: str, bars: Sequence[Bar], fmt: Fmt, *, caption: str = "", width: int = 320
) -> str:
    """Horizontal bars from 0, one per arm, each with its 95% interval as a whisker and its
    figure written at the end; the first bar filled, the next outlined and dashed."""
    head = f"<div class='chart' data-series='{escape(key)}'><b>{escape(title)}</b><br>"
    shown = [b for b in bars if _finite(b.value)]
    if not shown:
        return head + "<p class='muted'>no figures</p></div>"
    ends = [v for b in shown for v in (b.value, b.low, b.high) if _finite(v)]
    lo, hi = min(0.0, *ends), max(0.0, *ends)
    hi = hi if hi > lo else lo + 1.0
    left, right, row = 80, 70, 24
    pw = width - left - right
    height = row * len(bars) + 8

    def x_of(v: float) -> float:
        return left + pw * (v - lo) / (hi - lo)

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"role='img' aria-label='{escape(title)}'>",
        f"<line x1='{_n(x_of(0))}' y1='2' x2='{_n(x_of(0))}' y2='{height - 2}' "
        "stroke='var(--line, #ccc)'/>",
    ]
    for i, b in enumerate(bars):
        y = 4 + i * row
        name = b.label if len(b.label) <= 13 else b.label[:12] + "\u2026"  # whole in the title
        parts.append(f"<text x='{left - 6}' y='{y + 13}' text-anchor='end'>{escape(name)}</text>")
        if not _finite(b.value):
            parts.append(f"<text x='{left + 2}' y='{y + 13}'>no data</text>")
            continue
        v = b.value or 0.0
        x0, x1 = sorted((x_of(0), x_of(v)))
        filled = LOOKS[i % len(LOOKS)][1]
        style = (
            "fill='currentColor' fill-opacity='0.35'"
            if filled
            else "fill='none' stroke-dasharray='4 2'"
        )
        interval = ""
        whisker = ""
        if _finite(b.low) and _finite(b.high):
            a, c = x_of(b.low or 0.0), x_of(b.high or 0.0)
            m = y + 8
            interval = f" [{fmt(b.low or 0.0)}, {fmt(b.high or 0.0)}]"
            whisker = (
                f"<path class='whisker' d='M{_n(a)} {m} H{_n(c)} M{_n(a)} {m - 4} V{m + 4} "
                f"M{_n(c)} {m - 4} V{m + 4}' stroke='currentColor' fill='none'/>"
            )
        tip = f"{b.title or b.label}: {fmt(v)}{interval}"
        parts.append(
            f"<rect class='bar' data-arm='{escape(b.label)}' data-value='{v:.6g}' x='{_n(x0)}' "
            f"y='{y + 2}' width='{_n(max(x1 - x0, 1.0))}' height='12' stroke='currentColor' "
            f"{style}><title>{escape(tip)}</title></rect>{whisker}"
            f"<text x='{width - right + 4}' y='{y + 13}'>{escape(fmt(v))}</text>"
        )
    parts.append("</svg>")
    cap = f"<div class='muted'>{escape(caption)}</div>" if caption else ""
    return head + "".join(parts) + cap + "</div>"


def confusion_chart(
    title: str,
    key: str,
    counts: Sequence[Sequence[int]],
    rows: Sequence[str] = ("people pass", "people fail"),
    cols: Sequence[str] = ("judge pass", "judge fail"),
) -> str:
    """A 2x2 (or n x n) confusion matrix: people's verdicts in rows, the judge's in
    columns, each cell's count and share written in it and shaded by share; the cells
    where they agree framed solid, where they disagree dashed and marked so."""
    total = sum(sum(r) for r in counts)
    big = max((c for r in counts for c in r), default=0) or 1
    left, top, cw, ch = 84, 18, 84, 40
    width, height = left + cw * len(cols) + 4, top + ch * len(rows) + 4
    parts = [
        f"<div class='chart' data-series='{escape(key)}'><b>{escape(title)}</b><br>"
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot confusion' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(title)}'>"
    ]
    for j, col in enumerate(cols):
        x = left + cw * j + cw / 2
        parts.append(f"<text x='{_n(x)}' y='12' text-anchor='middle'>{escape(col)}</text>")
    for i, (name, row) in enumerate(zip(rows, counts, strict=True)):
        y = top + ch * i
        parts.append(
            f"<text x='{left - 6}' y='{_n(y + ch / 2 + 3)}' text-anchor='end'>{escape(name)}</text>"
        )
        for j, n in enumerate(row):
            x = left + cw * j
            agree = i == j
            share = f"{n / total * 100:.0f}%" if total else "-"
            frame = "" if agree else " stroke-dasharray='4 3'"
            word = "agree" if agree else "disagree"
            parts.append(
                f"<g class='cell' data-row='{i}' data-col='{j}' data-count='{n}'>"
                f"<rect x='{x + 2}' y='{y + 2}' width='{cw - 4}' height='{ch - 4}' "
                f"fill='currentColor' fill-opacity='{0.04 + 0.26 * n / big:.3f}' "
                f"stroke='currentColor'{frame}><title>{escape(f'{name}, {cols[j]}: {n} ({share}), {word}')}"
                f"</title></rect><text class='count' x='{x + cw / 2:.1f}' y='{y + 18}' "
                f"text-anchor='middle'>{n} ({share})</text>"
                f"<text x='{x + cw / 2:.1f}' y='{y + 31}' text-anchor='middle'>{word}</text></g>"
            )
    parts.append("</svg>")
    parts.append(f"<div class='muted'>{total} labelled answer{'' if total == 1 else 's'}</div>")
    return "".join(parts) + "</div>"
