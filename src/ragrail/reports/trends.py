"""The HTML report's "Over time" section: one chart per total over the recorded runs
(oldest first), each run a point with its 95% interval as a band, and a marker at every
run whose configuration differs from the run before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragrail.reports.charts import Point, Series, line_chart
from ragrail.store.history import RunRow

# (stats key, title, shown as a percentage); the first three are always charted (an
# empty chart says there is nothing yet), the others once a recorded run has them.
METRICS = (
    ("hit_rate", "hit rate", True),
    ("recall", "recall", True),
    ("answer_pass_rate", "answers pass", True),
    ("context_precision", "context precision", False),
    ("mrr", "MRR", False),
    ("faithfulness", "faithfulness", False),
    ("correctness", "correctness", False),
)
ALWAYS = 3
# The settings a run records that make it a different system (``ragrail.diff.lines.
# config_changes`` compares the same on a RunConfig), with the value a run that did not
# record one had.
SETTINGS: tuple[tuple[str, Any], ...] = (
    ("chunking", None),
    ("chunk_words", None),
    ("top_k", None),
    ("min_score", None),
    ("retriever", None),
    ("answerer", None),
    ("model", None),
    ("repeats", 1),
    ("citations", "required"),
)


def config_change(before: dict, after: dict) -> str:
    """What differs between two recorded runs' configurations (``top_k 3 -> 1; model a
    -> b``); empty when nothing does."""
    out = []
    for name, default in SETTINGS:
        old, new = before.get(name, default), after.get(name, default)
        if old != new:
            out.append(f"{name} {old} -> {new}")
    a, b = before.get("settings") or {}, after.get("settings") or {}
    if isinstance(a, dict) and isinstance(b, dict):
        for name in sorted(a.keys() | b.keys()):
            line = f"{name} {a.get(name, '-')} -> {b.get(name, '-')}"
            if a.get(name, "-") != b.get(name, "-") and line not in out:
                out.append(line)
    return "; ".join(out)


def _figure(row: RunRow, key: str) -> tuple[float | None, float | None, float | None]:
    stat = row.totals.get("stats", {}).get(key) or {}
    value = stat.get("value")
    if key == "answer_pass_rate":  # older runs stored a rate over the survivors
        from ragrail.run import recorded_answer_rate

        value = recorded_answer_rate(row.totals, row.config.get("repeats", 1))
    return value, stat.get("low"), stat.get("high")


def _fmt(as_pct: bool) -> Callable[[float], str]:
    return (lambda v: f"{round(v * 100)}%") if as_pct else (lambda v: f"{v:.2f}")


def trend_charts(history: Sequence[RunRow]) -> str:
    """Every chart of the section, in METRICS order."""
    changes = [
        config_change(history[i - 1].config, row.config) if i else ""
        for i, row in enumerate(history)
    ]
    out = []
    for n, (key, title, as_pct) in enumerate(METRICS):
        fmt = _fmt(as_pct)
        points, pending = [], []
        for row, change in zip(history, changes, strict=True):
            value, low, high = _figure(row, key)
            pending += [change] if change else []
            if value is None:  # its change is marked at the next run that has the total
                continue
            points.append(
                Point(
                    f"#{row.id}",
                    value,
                    low,
                    high,
                    title=f"run {row.id} ({row.created_at}, {row.describe()})",
                    change="; ".join(pending),
                )
            )
            pending = []
        if not points and n >= ALWAYS:
            continue
        caption = ""
        if points:
            last = points[-1]
            interval = (
                f" [{fmt(last.low)}, {fmt(last.high)}]"
                if last.low is not None and last.high is not None
                else ""
            )
            runs = f"{len(points)} run{'s' if len(points) != 1 else ''}"
            caption = f"{runs}; latest {fmt(last.value or 0.0)}{interval}"
        out.append(line_chart(title, key, [Series(title, points)], fmt, y_max=1.0, caption=caption))
    return "".join(out)
