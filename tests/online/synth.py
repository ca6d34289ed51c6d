"""Synthetic production logs with known true rates, for the online signals' tests.

``synth({"v1": (n, Truth(...))}, seed)`` draws n conversations per version from a seeded
numpy Generator. Every conversation's outcomes are independent draws from its version's
``Truth`` (or, given a list of Truths, from the one of its week since ``start``):

- escalated: logged with probability ``escalation_logged``, then Bernoulli(escalation)
- thumbs: a vote with probability ``vote``, then down (-1) with probability ``thumbs_down``
- resolved: logged with probability ``resolution_logged``, then Bernoulli(resolution)
- latency_ms: log-normal with median ``latency_median`` and log-sd ``latency_sigma``, so
  the true p95 is median · exp(1.6448536 · sigma)
- cost: logged with probability ``cost_logged``, then Gamma(shape 2) with mean ``cost_mean``
- re-asked with probability ``reask``: the next question of the same user, 1 to 20
  minutes later, is the question with one of its six words changed (Jaccard 5/7); that
  question is a follow-up turn, or (``cross_share`` of the time, when the user asks
  again) the first question of the user's next conversation. A user's other
  conversations come 2 to 72 hours apart, and every question is six random words of a
  5,000-word vocabulary, so nothing else is a paraphrase.

Users belong to one version (A/B split by user), each with 1 to 6 conversations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragrail.online.record import Conversation, Turn

START = 1_793_577_600.0  # 2026-11-02 00:00 UTC, a Monday (ISO week 2026-W45)
WEEK = 7 * 86400.0
Z95_ONE_SIDED = 1.6448536269514722
VOCABULARY = 5000


@dataclass(frozen=True)
class Truth:
    escalation: float = 0.10
    escalation_logged: float = 1.0
    vote: float = 0.3
    thumbs_down: float = 0.25
    reask: float = 0.08
    resolution: float = 0.7
    resolution_logged: float = 0.8
    latency_median: float = 1200.0
    latency_sigma: float = 0.5
    cost_mean: float = 0.004
    cost_logged: float = 0.9

    def expected(self) -> dict[str, float]:
        """The true value of each signal, keyed as ragrail.online.signals.SIGNALS."""
        return {
            "escalation": self.escalation,
            "thumbs_down": self.thumbs_down,
            "reask": self.reask,
            "resolution": self.resolution,
            "cost": self.cost_mean,
            "latency_p50": self.latency_median,
            "latency_p95": self.latency_median * math.exp(Z95_ONE_SIDED * self.latency_sigma),
        }


def _words(rng, count: int) -> list[str]:
    return [f"w{int(i)}" for i in rng.integers(0, VOCABULARY, size=count)]


def synth(
    versions: Mapping[str, tuple[int, Truth | Sequence[Truth]]],
    seed: int = 0,
    weeks: int = 4,
    start: float = START,
    cross_share: float = 0.5,
) -> list[Conversation]:
    """n conversations per version (module docstring), oldest first."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out: list[Conversation] = []
    span = weeks * WEEK
    for version, (n, truths) in versions.items():
        made = 0
        user = 0
        while made < n:
            length = int(min(n - made, rng.integers(1, 7)))
            user += 1
            at = start + float(rng.uniform(0, span * 0.9))
            words = _words(rng, 6)
            for k in range(length):
                truth = _truth_at(truths, at, start)
                cid = f"{version}-{made:06d}"
                reask = bool(rng.random() < truth.reask)
                cross = reask and k + 1 < length and bool(rng.random() < cross_share)
                next_words = words.copy()
                if reask:
                    next_words[int(rng.integers(0, 6))] = f"x{int(rng.integers(0, 10**9))}"
                gap = float(rng.uniform(60, 1200))
                turns = () if not reask or cross else (Turn(" ".join(next_words), at + gap),)
                out.append(
                    _conversation(
                        rng, truth, cid, at, version, f"{version}-u{user}", " ".join(words), turns
                    )
                )
                made += 1
                if cross:
                    at, words = at + gap, next_words
                else:
                    at, words = at + float(rng.uniform(2, 72)) * 3600, _words(rng, 6)
    out.sort(key=lambda c: (c.at, c.id))
    return out


def _truth_at(truths: Truth | Sequence[Truth], at: float, start: float) -> Truth:
    if isinstance(truths, Truth):
        return truths
    week = max(0, int((at - start) // WEEK))
    return truths[min(week, len(truths) - 1)]


def _conversation(
    rng,
    t: Truth,
    cid: str,
    at: float,
    version: str,
    user: str,
    question: str,
    turns: tuple[Turn, ...],
) -> Conversation:
    escalated = bool(rng.random() < t.escalation) if rng.random() < t.escalation_logged else None
    thumbs = (-1 if rng.random() < t.thumbs_down else 1) if rng.random() < t.vote else None
    resolved = bool(rng.random() < t.resolution) if rng.random() < t.resolution_logged else None
    latency = float(t.latency_median * math.exp(t.latency_sigma * rng.standard_normal()))
    cost = float(rng.gamma(2.0, t.cost_mean / 2.0)) if rng.random() < t.cost_logged else None
    return Conversation(
        id=cid,
        at=at,
        version=version,
        question=question,
        answer="An answer.",
        user=user,
        turns=turns,
        thumbs=thumbs,
        escalated=escalated,
        resolved=resolved,
        latency_ms=latency,
        tokens_in=int(rng.integers(200, 2000)),
        tokens_out=int(rng.integers(20, 400)),
        cost=cost,
    )
