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
cost            mean cost (USD) per conversation with a cost logged  Student's t, its low
                                                                    end clipped at $0
latency_p50     median latency (ms), latencies logged                order statistics
latency_p95     95th percentile latency (ms)                         order statistics
==============  ==================================================  ====================

**By user.** A user's conversations are one cluster: when a user logged more than one,
every interval and test uses the users as the sample (inference's module docstring: the
cluster-robust variance, never narrower than the textbook interval); a conversation with
no user is its own cluster. ``Figure.n_eff`` is then the effective n. A cost interval's
low end below $0 (a cost cannot be negative) is clipped at $0, marked ``clipped``.

A period **moved** when, against the version's previous period with data, its test says
so after Holm's correction, at adjusted p < 0.05. Each signal is tested for what is shown:
the four rates by the two-proportion test (Fisher's exact for small counts), the mean
cost by Welch's t-test, the median latency by Mood's median test (the p95 is not tested).
**The family is the whole report**: every signal of every period of every version tested
in it (``compute_signals``), not one period's six, so the more periods a report covers
the more evidence a move needs; a narrower report (``--version``, fewer weeks) asks
less. Its direction is the sign of the change in the rate, the mean cost or the median
latency.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from ragrail.online import inference
from ragrail.online.record import Conversation
from ragrail.stats import Interval

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
    end the data cannot bound); ``n_eff`` the effective n when a user logged more than
    one (module docstring), ``clipped`` when the low end was raised to 0."""

    value: float | None
    n: int
    low: float | None
    high: float | None
    n_eff: float | None = None
    clipped: bool = False


@dataclass(frozen=True)
class Move:
    """One signal's test against the previous period, Holm-adjusted over the ``family``
    tests of the report."""

    signal: str
    previous: str
    direction: Direction
    p_value: float
    p_adjusted: float
    test: str = ""
    family: int = 1

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


def _clusters() -> array:
    return array("q")


@dataclass
class Tally:
    """The counts and values a group of conversations' signals are computed from, each
    value with its cluster: the user's number in this group, or a number of its own for
    a conversation with no user."""

    n: int = 0
    counts: dict[str, list[int]] = field(
        default_factory=lambda: {name: [0, 0] for name in RATES}  # [successes, n]
    )
    outcomes: dict[str, array] = field(default_factory=lambda: {n: array("d") for n in RATES})
    outcome_users: dict[str, array] = field(default_factory=lambda: {n: _clusters() for n in RATES})
    costs: array = field(default_factory=lambda: array("d"))
    cost_users: array = field(default_factory=_clusters)
    latencies: array = field(default_factory=lambda: array("d"))
    latency_users: array = field(default_factory=_clusters)
    users: dict[str, int] = field(default_factory=dict)
    shared: bool = False  # a user logged more than one conversation

    def add(self, c: Conversation, reasked: bool) -> None:
        self.n += 1
        if c.user is None:
            who = -self.n  # its own cluster (users are numbered from 0 up)
        else:
            known = self.users.get(c.user)
            if known is None:
                who = self.users[c.user] = len(self.users)
            else:
                who, self.shared = known, True
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
                self.outcomes[name].append(float(outcome))
                self.outcome_users[name].append(who)
        if c.cost is not None:
            self.costs.append(c.cost)
            self.cost_users.append(who)
        if c.latency_ms is not None:
            self.latencies.append(c.latency_ms)
            self.latency_users.append(who)

    def clusters(self, users: array) -> array | None:
        """``users`` when a user logged more than one conversation here, else None (every
        conversation its own cluster: the textbook formulas)."""
        return users if self.shared else None

    def rate_deff(self, name: str) -> float:
        """The rate's design effect by user (1 when no user logged it twice)."""
        return inference.design_effect(self.outcomes[name], self.clusters(self.outcome_users[name]))

    def figures(self) -> dict[str, Figure]:
        out = {
            name: rate_figure(self.counts[name][0], self.counts[name][1], self.rate_deff(name))
            for name in RATES
        }
        out["cost"] = mean_figure(self.costs, self.clusters(self.cost_users))
        ordered = sorted(self.latencies)
        for name, q in (("latency_p50", 0.5), ("latency_p95", 0.95)):
            out[name] = quantile_figure(ordered, q, self.latency_deff(ordered, q))
        return {name: out[name] for name in SIGNALS}

    def latency_deff(self, ordered: list[float], q: float) -> float:
        """The design effect of "latency <= the sample q-quantile" by user (``ordered``:
        the latencies sorted)."""
        if len(ordered) < 2 or not self.shared:
            return 1.0
        import numpy as np

        below = np.asarray(self.latencies) <= inference.quantile(ordered, q)
        return inference.design_effect(below.astype(float), self.latency_users)


def rate_figure(successes: int, n: int, deff: float = 1.0) -> Figure:
    interval = inference.rate_ci(successes, n, deff)
    if interval is None:
        return Figure(None, 0, None, None)
    return Figure(successes / n, n, interval.low, interval.high, _n_eff(n, deff))


def _n_eff(n: int, deff: float) -> float | None:
    return None if deff <= 1.0 else n / deff


def mean_figure(values: array | list[float], clusters: array | None = None) -> Figure:
    """The mean cost with Student's t interval (by user), its low end clipped at 0."""
    if not len(values):
        return Figure(None, 0, None, None)
    found = inference.spread(values, clusters)
    interval = inference.mean_ci(values, clusters)  # None for one value or one user
    low, high = (None, None) if interval is None else (interval.low, interval.high)
    clipped = low is not None and low < 0.0
    n = len(values)
    return Figure(
        sum(values) / n,
        n,
        0.0 if clipped else low,
        high,
        None if found is None else _n_eff(n, found.deff),
        clipped,
    )


def quantile_figure(sorted_values: list[float], q: float, deff: float = 1.0) -> Figure:
    if not sorted_values:
        return Figure(None, 0, None, None)
    low, high = inference.quantile_ci(sorted_values, q, deff)
    value = inference.quantile(sorted_values, q)
    n = len(sorted_values)
    return Figure(value, n, low, high, _n_eff(n, deff))


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
    by: Period | None = "week",
    versions: Iterable[str] | None = None,
) -> list[PeriodSignals]:
    """Every version's signals per period, oldest period first, each with its moves
    against the version's previous period, Holm-adjusted over every move tested in
    the report (module docstring)."""
    groups = tally(conversations, reasked, by, versions)
    keys = sorted(groups)
    found: list[list[tuple[str, str, Direction, inference.Tested]]] = []
    for i, (version, _) in enumerate(keys):
        before = keys[i - 1] if i and keys[i - 1][0] == version else None
        found.append(
            [] if before is None else test_moves(groups[before], groups[keys[i]], before[1])
        )
    family = [t.p_value for moves in found for _, _, _, t in moves]
    adjusted = iter(inference.holm(family))
    out: list[PeriodSignals] = []
    for key, moves in zip(keys, found, strict=True):
        current = groups[key]
        done = tuple(
            Move(name, prev, direction, t.p_value, next(adjusted), t.test, len(family))
            for name, prev, direction, t in moves
        )
        out.append(PeriodSignals(key[0], key[1], current.n, current.figures(), done))
    return out


def compare_rate(before: Tally, after: Tally, name: str) -> inference.Tested | None:
    """The two-proportion test of a rate, by user; None when a side has no data."""
    (x1, n1), (x2, n2) = before.counts[name], after.counts[name]
    if not n1 or not n2:
        return None
    return inference.rate_test(x1, n1, x2, n2, before.rate_deff(name), after.rate_deff(name))


def compare_cost(before: Tally, after: Tally) -> tuple[Interval, inference.Tested] | None:
    """Welch's interval and t-test of the mean cost's change, by user."""
    return inference.welch(
        before.costs,
        after.costs,
        before.clusters(before.cost_users),
        after.clusters(after.cost_users),
    )


def compare_latency(before: Tally, after: Tally) -> inference.Tested | None:
    """Mood's median test of the median latency's change, by user."""
    return inference.median_test(
        before.latencies,
        after.latencies,
        before.clusters(before.latency_users),
        after.clusters(after.latency_users),
    )


def test_moves(
    before: Tally, after: Tally, previous: str
) -> list[tuple[str, str, Direction, inference.Tested]]:
    """Each signal with data on both sides tested before -> after (module docstring),
    unadjusted: (signal, previous period, direction, test)."""
    found: list[tuple[str, str, Direction, inference.Tested]] = []
    for name in RATES:
        tested = compare_rate(before, after, name)
        if tested is not None:
            (x1, n1), (x2, n2) = before.counts[name], after.counts[name]
            found.append((name, previous, _direction(x2 / n2 - x1 / n1), tested))
    cost = compare_cost(before, after)
    if cost is not None:
        diff = _mean(after.costs) - _mean(before.costs)
        found.append(("cost", previous, _direction(diff), cost[1]))
    latency = compare_latency(before, after)
    if latency is not None:
        diff = _median(after.latencies) - _median(before.latencies)
        found.append(("latency", previous, _direction(diff), latency))
    return found


def _direction(diff: float) -> Direction:
    return "up" if diff > 0 else "down" if diff < 0 else "none"


def _mean(values: array) -> float:
    return sum(values) / len(values)


def _median(values: array) -> float:
    return inference.quantile(sorted(values), 0.5)
