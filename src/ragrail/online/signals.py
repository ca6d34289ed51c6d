"""Online signals per version and per period (ISO week "2026-W48" or day "2026-11-27", UTC).

Each signal is reported with its value, its n (the conversations it is computed over:
those where the app logged the field) and a 95% interval (formulas in
ragrail.online.inference):

==============  ==================================================  ====================
signal          value                                               interval
==============  ==================================================  ====================
escalation      escalated / conversations with ``escalated`` logged  Wilson
thumbs_down     down votes / conversations with a vote (up or        Wilson
                down): the share of voters who were unhappy, not of
                all conversations, since most users never vote
reask           re-asked / all conversations (ragrail.online.reask;  Wilson
                it needs no logged field)
resolution      resolved / conversations with ``resolved`` logged    Wilson
cost            mean cost (USD) per conversation with a cost logged  Student's t
latency_p50     median latency (ms), latencies logged                order statistics
latency_p95     95th percentile latency (ms)                         order statistics
==============  ==================================================  ====================

A period **moved** when, against the version's previous period with data, a test says
so after Holm's correction over the signals tested in that period (family of up to six:
the four rates by the two-proportion test, cost and latency by Mann-Whitney U), at
adjusted p < 0.05. Its direction is the sign of the change in the rate, the mean cost
or the median latency.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from ragrail.online import inference
from ragrail.online.record import Conversation
from ragrail.stats import wilson

SIGNALS = (
    "escalation",
    "thumbs_down",
    "reask",
    "resolution",
    "cost",
    "latency_p50",
    "latency_p95",
)
RATES = ("escalation", "thumbs_down", "reask", "resolution")
TESTED = (*RATES, "cost", "latency")  # latency: one test of the whole distribution
Period = Literal["week", "day"]
Direction = Literal["up", "down", "none"]  # a signal's move against its previous period


@dataclass(frozen=True)
class Figure:
    """A signal's value over n conversations with its 95% interval (None: no data, or an
    end the data cannot bound)."""

    value: float | None
    n: int
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Move:
    """One signal's test against the previous period."""

    signal: str
    previous: str
    direction: Direction
    p_value: float
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return self.p_adjusted < inference.ALPHA


@dataclass(frozen=True)
class PeriodSignals:
    version: str
    period: str
    n: int
    figures: dict[str, Figure]
    moves: tuple[Move, ...] = ()

    @property
    def flagged(self) -> tuple[Move, ...]:
        return tuple(m for m in self.moves if m.significant)


@dataclass
class Tally:
    """The counts and values a group of conversations' signals are computed from."""

    n: int = 0
    counts: dict[str, list[int]] = field(
        default_factory=lambda: {name: [0, 0] for name in RATES}  # [successes, n]
    )
    costs: array = field(default_factory=lambda: array("d"))
    latencies: array = field(default_factory=lambda: array("d"))

    def add(self, c: Conversation, reasked: bool) -> None:
        self.n += 1
        for name, outcome in (
            ("escalation", c.escalated),
            ("thumbs_down", None if c.thumbs is None else c.thumbs < 0),
            ("reask", reasked),
            ("resolution", c.resolved),
        ):
            if outcome is not None:
                pair = self.counts[name]
                pair[0] += int(outcome)
                pair[1] += 1
        if c.cost is not None:
            self.costs.append(c.cost)
        if c.latency_ms is not None:
            self.latencies.append(c.latency_ms)

    def figures(self) -> dict[str, Figure]:
        out = {name: rate_figure(*self.counts[name]) for name in RATES}
        out["cost"] = mean_figure(self.costs)
        ordered = sorted(self.latencies)
        out["latency_p50"] = quantile_figure(ordered, 0.5)
        out["latency_p95"] = quantile_figure(ordered, 0.95)
        return {name: out[name] for name in SIGNALS}


def rate_figure(successes: int, n: int) -> Figure:
    interval = wilson(successes, n)
    if interval is None:
        return Figure(None, 0, None, None)
    return Figure(successes / n, n, interval.low, interval.high)


def mean_figure(values: array | list[float]) -> Figure:
    if not len(values):
        return Figure(None, 0, None, None)
    interval = inference.mean_ci(values)  # None for one value: nothing bounds the mean
    low, high = (None, None) if interval is None else (interval.low, interval.high)
    return Figure(sum(values) / len(values), len(values), low, high)


def quantile_figure(sorted_values: list[float], q: float) -> Figure:
    if not sorted_values:
        return Figure(None, 0, None, None)
    low, high = inference.quantile_ci(sorted_values, q)
    value = inference.quantile(sorted_values, q)
    return Figure(value, len(sorted_values), low, high)


def period_key(at: float, by: Period) -> str:
    """The UTC ISO week ("2026-W48") or day ("2026-11-27") of a time in epoch seconds."""
    when = datetime.fromtimestamp(at, UTC)
    if by == "day":
        return when.date().isoformat()
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def tally(
    conversations: Iterable[Conversation],
    reasked: set[str],
    by: Period | None = "week",
    versions: Iterable[str] | None = None,
) -> dict[tuple[str, str], Tally]:
    """(version, period) -> Tally, streaming once; ``by=None`` gives one period "all"
    per version. ``versions`` keeps only those."""
    keep = set(versions) if versions is not None else None
    groups: dict[tuple[str, str], Tally] = {}
    for c in conversations:
        if keep is not None and c.version not in keep:
            continue
        key = (c.version, "all" if by is None else period_key(c.at, by))
        group = groups.get(key)
        if group is None:
            group = groups[key] = Tally()
        group.add(c, c.id in reasked)
    return groups


def compute_signals(
    conversations: Iterable[Conversation],
    reasked: set[str],
    by: Period = "week",
    versions: Iterable[str] | None = None,
) -> list[PeriodSignals]:
    """Every version's signals per period, oldest period first, each with its moves
    against the version's previous period (module docstring)."""
    groups = tally(conversations, reasked, by, versions)
    out: list[PeriodSignals] = []
    previous: tuple[str, str] | None = None  # (version, period)
    for version, period in sorted(groups):
        current = groups[(version, period)]
        moves: tuple[Move, ...] = ()
        if previous is not None and previous[0] == version:
            moves = test_moves(groups[previous], current, previous[1])
        out.append(PeriodSignals(version, period, current.n, current.figures(), moves))
        previous = (version, period)
    return out


def test_moves(before: Tally, after: Tally, previous: str) -> tuple[Move, ...]:
    """Each signal with data on both sides tested before -> after, Holm-adjusted."""
    found: list[tuple[str, Direction, float]] = []
    for name in RATES:
        (x1, n1), (x2, n2) = before.counts[name], after.counts[name]
        if n1 and n2:
            diff = x2 / n2 - x1 / n1
            found.append((name, _direction(diff), inference.two_proportion_p(x1, n1, x2, n2)))
    for name, a, b, centre in (
        ("cost", before.costs, after.costs, _mean),
        ("latency", before.latencies, after.latencies, _median),
    ):
        if len(a) and len(b):
            diff = centre(b) - centre(a)
            found.append((name, _direction(diff), inference.mann_whitney_p(a, b)))
    adjusted = inference.holm([p for _, _, p in found])
    return tuple(
        Move(name, previous, direction, p, q)
        for (name, direction, p), q in zip(found, adjusted, strict=True)
    )


def _direction(diff: float) -> Direction:
    return "up" if diff > 0 else "down" if diff < 0 else "none"


def _mean(values: array) -> float:
    return sum(values) / len(values)


def _median(values: array) -> float:
    return inference.quantile(sorted(values), 0.5)
