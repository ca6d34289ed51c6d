"""``ragrail online`` for people (plain text) and machines (JSON, ``"schema": 1``).

Every figure is printed with its n and 95% interval (and its effective n when a user
logged more than one conversation; a cost interval clipped at $0 says so); a period that
moved significantly from the one before (ragrail.online.signals) is marked ``MOVED up`` /
``MOVED down``. Every p-value is printed with the name of its test, and Holm's adjusted
value is labelled ``Holm-adjusted`` with the size of its family; p-values under 0.001
print in scientific notation (``p=3.6e-89``), never as 0.00. The JSON keeps the numbers
with a ``test`` field naming the test and ``adjustment`` naming the correction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ragrail.online.ab import ABResult, ABRow
from ragrail.online.record import Conversation
from ragrail.online.signals import Figure, PeriodSignals
from ragrail.text.guard import visible

SCHEMA = 1
FLAGGED_LIMIT = 1000  # flagged conversations listed (all are counted)
LABELS = {
    "escalation": "escalation",
    "thumbs_down": "thumbs-down",
    "reask": "re-ask",
    "resolution": "resolution",
    "cost": "cost / conv.",
    "latency_p50": "latency p50",
    "latency_p95": "latency p95",
    "latency": "latency",
}
NOTES = {
    "thumbs_down": "of conversations with a vote",
    "cost": "mean, USD",
}


@dataclass(frozen=True)
class Flagged:
    """Conversations with label-free flags (``ragrail logs score``): the first
    FLAGGED_LIMIT, oldest first, and how many there are."""

    total: int
    conversations: tuple[Conversation, ...]


def collect_flagged(
    conversations: Iterable[Conversation],
    versions: Sequence[str] | None = None,
    limit: int = FLAGGED_LIMIT,
) -> Flagged:
    keep = set(versions) if versions else None
    total = 0
    listed: list[Conversation] = []
    for c in conversations:
        if c.flags and (keep is None or c.version in keep):
            total += 1
            if len(listed) < limit:
                listed.append(c)
    return Flagged(total, tuple(listed))


def value_text(signal: str, value: float | None) -> str:
    """A figure in its unit: rates in %, cost in USD, latency in ms; '-' for none and
    'inf' for an end the data cannot bound."""
    if value is None:
        return "-"
    if signal.startswith("latency"):
        return f"{value:,.0f} ms"
    if signal == "cost":
        return f"${value:.4f}" if abs(value) >= 0.001 or value == 0 else f"${value:.6f}"
    return f"{value * 100:.1f}%"


def p_text(p: float) -> str:
    """``p=0.012``; under 0.001 in scientific notation (``p=3.6e-89``); a p-value that
    underflowed to 0 as ``p<1e-300``."""
    if p <= 0.0:
        return "p<1e-300"
    return f"p={p:.1e}" if p < 0.001 else f"p={p:.2g}"


def tested_text(test: str | None, p: float | None, adjusted: float | None, family: int) -> str:
    """``Welch t-test p=0.012, Holm-adjusted p=0.036 (of 5)``."""
    if p is None:
        return "not tested"
    text = f"{test or 'test'} {p_text(p)}"
    if adjusted is not None:
        text += f", Holm-adjusted {p_text(adjusted)} (of {family})"
    return text


def figure_text(signal: str, f: Figure) -> str:
    """``value [low, high] n=N`` (an unbounded end shows as ?), then the effective n by
    user and the clipping when there are."""
    if f.n == 0 or f.value is None:
        return "-  n=0"

    def end(x: float | None) -> str:
        return "?" if x is None else value_text(signal, x)

    text = f"{value_text(signal, f.value)} [{end(f.low)}, {end(f.high)}] n={f.n:,}"
    notes = []
    if f.n_eff is not None:
        notes.append(f"effective n {f.n_eff:,.1f} by user")
    if f.clipped:
        notes.append("low end clipped at $0")
    return text + (f" ({'; '.join(notes)})" if notes else "")


def difference_text(signal: str, value: float | None) -> str:
    if value is None:
        return "-"
    if signal.startswith("latency"):
        return f"{value:+,.0f} ms"
    if signal == "cost":
        return ("+" if value >= 0 else "-") + value_text("cost", abs(value))
    return f"{value * 100:+.1f} pts"


def signals_text(periods: Sequence[PeriodSignals], by: str) -> str:
    """One block per version and period: each signal with its interval and n, moves
    marked."""
    lines: list[str] = []
    for p in periods:
        moved = {("latency_p50" if m.signal == "latency" else m.signal): m for m in p.flagged}
        lines.append(
            f"{visible(p.version)}  {p.period}  {p.n:,} conversation{'' if p.n == 1 else 's'}"
        )
        for signal, f in p.figures.items():
            note = NOTES.get(signal, "")
            line = f"  {LABELS[signal]:<14}{figure_text(signal, f)}"
            if note:
                line += f"  ({note})"
            m = moved.get(signal)
            if m is not None:
                line += (
                    f"  MOVED {m.direction} vs {m.previous} "
                    f"({tested_text(m.test, m.p_value, m.p_adjusted, m.family)})"
                )
            lines.append(line)
        lines.append("")
    if not periods:
        lines.append(f"No conversations to report (per {by}).")
    return "\n".join(lines).rstrip("\n")


def ab_text(result: ABResult) -> str:
    """The A/B table: each signal's A and B figures, B - A with its interval, p-values
    and the conversations per arm needed to detect the difference."""
    a, b = visible(result.a), visible(result.b)
    lines = [
        f"A/B: {b} (B, {result.n_b:,} conversations) against {a} (A, {result.n_a:,})",
    ]
    for row in result.rows:
        lines.append(f"  {LABELS[row.signal]:<14}A {figure_text(row.signal, row.a)}")
        lines.append(f"  {'':<14}B {figure_text(row.signal, row.b)}")
        lines.append(f"  {'':<14}{_difference_line(row)}")
        lines.append(f"  {'':<14}{_power_line(row)}")
    lines.append(
        "  (rates: Newcombe's interval; cost: Welch's interval and t-test of the means;\n"
        "   latency: bootstrap interval and Mood's median test of the medians;\n"
        "   Holm-adjusted over the signals compared; power: alpha 0.05, power 0.8)"
    )
    return "\n".join(lines)


def _difference_line(row: ABRow) -> str:
    if row.difference is None:
        return "B - A  - (a variant has no data)"
    low = difference_text(row.signal, row.low) if row.low is not None else "?"
    high = difference_text(row.signal, row.high) if row.high is not None else "?"
    verdict = "SIGNIFICANT" if row.significant else "not significant"
    tested = tested_text(row.test, row.p_value, row.p_adjusted, row.family)
    return (
        f"B - A {difference_text(row.signal, row.difference)} [{low}, {high}]  {tested}: {verdict}"
    )


def _power_line(row: ABRow) -> str:
    if row.n_needed is None:
        return "power: no difference to detect"
    more = "enough already" if row.n_more == 0 else f"{row.n_more:,} more per arm"
    return f"to detect {difference_text(row.signal, row.mde)}: {row.n_needed:,} per arm ({more})"


def verdict_line(periods: Sequence[PeriodSignals], result: ABResult | None) -> str:
    moves = sum(len(p.flagged) for p in periods)
    text = f"{len(periods)} version-period(s), {moves} significant move(s)"
    if result is not None:
        hits = [LABELS[r.signal] for r in result.rows if r.significant]
        text += "; A/B significant: " + (", ".join(hits) if hits else "none")
    return text


def _figure_json(f: Figure) -> dict[str, object]:
    return {
        "value": f.value,
        "n": f.n,
        "low": f.low,
        "high": f.high,
        "n_eff": f.n_eff,
        "clipped": f.clipped,
    }


def online_json(
    periods: Sequence[PeriodSignals],
    result: ABResult | None,
    flagged: Flagged,
    *,
    database: str,
    by: str,
    reask_minutes: float,
    reask_similarity: float,
) -> dict[str, object]:
    """The figures for machines, fields in a fixed order."""
    return {
        "schema": SCHEMA,
        "database": database,
        "by": by,
        "reask": {"window_minutes": reask_minutes, "min_similarity": reask_similarity},
        "periods": [
            {
                "version": p.version,
                "period": p.period,
                "n": p.n,
                "signals": {name: _figure_json(f) for name, f in p.figures.items()},
                "moves": [
                    {
                        "signal": m.signal,
                        "previous": m.previous,
                        "direction": m.direction,
                        "test": m.test,
                        "p_value": m.p_value,
                        "adjustment": "Holm",
                        "family": m.family,
                        "p_adjusted": m.p_adjusted,
                        "significant": m.significant,
                    }
                    for m in p.moves
                ],
            }
            for p in periods
        ],
        "compare": None if result is None else _ab_json(result),
        "flagged": {
            "total": flagged.total,
            "conversations": [
                {
                    "id": c.id,
                    "at": iso_time(c.at),
                    "version": c.version,
                    "flags": list(c.flags),
                    "question": c.question,
                }
                for c in flagged.conversations
            ],
        },
    }


def _ab_json(result: ABResult) -> dict[str, object]:
    return {
        "a": result.a,
        "b": result.b,
        "n_a": result.n_a,
        "n_b": result.n_b,
        "alpha": 0.05,
        "power": 0.8,
        "rows": [
            {
                "signal": r.signal,
                "a": _figure_json(r.a),
                "b": _figure_json(r.b),
                "difference": r.difference,
                "low": r.low,
                "high": r.high,
                "test": r.test,
                "p_value": r.p_value,
                "adjustment": "Holm",
                "family": r.family,
                "p_adjusted": r.p_adjusted,
                "significant": r.significant,
                "mde": r.mde,
                "n_needed": r.n_needed,
                "n_more": r.n_more,
            }
            for r in result.rows
        ],
    }


def iso_time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")
