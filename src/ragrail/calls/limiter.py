"""Rate limits for model calls: requests per minute (rpm) and tokens per minute (tpm).

Each limit is a token bucket that refills continuously at ``limit / 60`` units a
second, as providers' own limiters do, so a run stays under a provider's limits
instead of bouncing off 429s. Every request sent takes its units *before* it is
sent: first attempts, retries and re-asks alike; a reply from the call cache
sends nothing and takes nothing.

The buckets:

- rpm: capacity 1 request, refill ``rpm / 60`` a second. The first request goes at
  once and each later one starts ``60 / rpm`` seconds after the one before it: no
  burst, so ``n`` calls take at least ``(n - 1) * 60 / rpm`` seconds (at --rpm 600,
  100 calls start over 9.9 s).
- tpm: capacity ``tpm / 60`` tokens (one second's worth), refill ``tpm / 60`` a
  second. A request's cost is estimated before it is sent as
  ``ceil(characters of its messages / 4) + max_tokens`` (the prompt, plus the
  follow-up of a re-ask, and the longest reply it may get). Once the reply reports
  its usage, the bucket is reconciled: it gets back ``estimate - (input + output
  tokens)`` (or gives up the difference when the estimate was low). A reply or a
  failure without both counts keeps the estimate (the provider may have counted it).

A request may start when every bucket holds what it needs, ``min(cost, capacity)``:
a request larger than the capacity starts from a full bucket and leaves it in debt,
which the next requests wait out. Requests take their turn in the order they ask
(FIFO): one at a time waits on the buckets, and takes its share when it is let
through. A request that wakes at most ``LATE_CREDIT_S`` after its due time (the event
loop's timers are a few milliseconds late, more on a busy machine) is counted at its
due time, so timer lateness does not add up into a slower rate over a long run; one
that wakes later (a loop stalled by a slow import or a busy callback) is counted when
it goes, so a stall never releases a backlog at once. The turn-taking lock is made per event loop, so one
limiter serves successive loops (the judge's claim and rubric batches share one).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[Any]]


# Waits shorter than this count as none: float noise in level arithmetic must never
# send a request into an endless round of zero-length sleeps.
EPSILON_S = 1e-9
# A request woken this late after its due time is counted at its due time (see above).
LATE_CREDIT_S = 0.02


@dataclass
class TokenBucket:
    """A token bucket: ``level`` units at time ``stamp``; at a later time t it holds
    ``min(capacity, level + (t - stamp) * rate)``. ``level`` may be negative: the debt
    a request larger than the capacity leaves, or an estimate that came in low."""

    rate: float  # units a second
    capacity: float
    level: float
    stamp: float

    @classmethod
    def full(cls, rate: float, capacity: float, now: float) -> TokenBucket:
        if not (math.isfinite(rate) and rate > 0 and math.isfinite(capacity) and capacity > 0):
            raise ValueError(
                f"a bucket needs a positive finite rate and capacity: {rate}, {capacity}"
            )
        return cls(rate=rate, capacity=capacity, level=capacity, stamp=now)

    def level_at(self, t: float) -> float:
        """``min(capacity, level + (t - stamp) * rate)``, for t at or after ``stamp``."""
        return min(self.capacity, self.level + max(0.0, t - self.stamp) * self.rate)

    def wait(self, cost: float, now: float) -> float:
        """Seconds until the bucket holds what a request of ``cost`` needs:
        ``max(0, (min(cost, capacity) - level_at(now)) / rate)``."""
        return max(0.0, (min(cost, self.capacity) - self.level_at(now)) / self.rate)

    def take(self, cost: float, now: float) -> None:
        """Take ``cost`` units at ``now`` (the level may go below 0)."""
        self.level, self.stamp = self.level_at(now) - cost, max(self.stamp, now)

    def give(self, amount: float, now: float) -> None:
        """Give back ``amount`` units (take more when negative), capped at the capacity:
        how an estimate is reconciled with the reported count."""
        self.level = min(self.capacity, self.level_at(now) + amount)
        self.stamp = max(self.stamp, now)


def estimate_tokens(messages: list[str], max_tokens: int) -> int:
    """A request's tokens before it is sent: ``ceil(characters / 4)`` of its
    messages (the prompt's own estimate, see system.prompt) ``+ max_tokens``."""
    from ragrail.system.prompt import estimate_tokens as estimate_text

    return sum(estimate_text(m) for m in messages) + max_tokens


class Limiter(Protocol):
    """What the call layer asks of a limiter: a :class:`RateLimiter` in this process, or
    one held for a whole cluster (``ragrail.backends.work.RemoteLimiter``)."""

    @property
    def counts_tokens(self) -> bool: ...

    async def acquire(self, tokens: int = 0) -> float: ...

    def settle(
        self, estimate: int, input_tokens: int | None, output_tokens: int | None
    ) -> None: ...


@dataclass
class RateLimiter:
    """Requests-per-minute and tokens-per-minute buckets; either may be None (no limit).

    ``clock`` and ``sleep`` are injectable so tests run on a fake clock.
    """

    rpm: float | None = None
    tpm: float | None = None
    clock: Clock = time.monotonic
    sleep: Sleep = asyncio.sleep
    waited: float = 0.0  # seconds spent waiting for the buckets, all requests together
    requests: TokenBucket | None = field(default=None, init=False)  # the rpm bucket
    tokens: TokenBucket | None = field(default=None, init=False)  # the tpm bucket
    _lock: asyncio.Lock | None = field(default=None, init=False, repr=False)
    _lock_loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        for name, limit in (("rpm", self.rpm), ("tpm", self.tpm)):
            # positive and finite passes every setting's check, yet 5e-324 / 60 is 0.0
            if limit is not None and not limit / 60.0 > 0.0:
                from ragrail.errors import InputError

                raise InputError(
                    f"{name} {limit:g} is too small to count in: a rate limit is how many a "
                    f"minute may go, such as {name} = 60"
                )
        now = self.clock()
        if self.rpm is not None:
            self.requests = TokenBucket.full(self.rpm / 60.0, 1.0, now)
        if self.tpm is not None:
            per_second = self.tpm / 60.0
            self.tokens = TokenBucket.full(per_second, per_second, now)

    @classmethod
    def of(cls, rpm: float | None, tpm: float | None) -> RateLimiter | None:
        """A limiter for these limits, or None when there are none."""
        return None if rpm is None and tpm is None else cls(rpm=rpm, tpm=tpm)

    @property
    def counts_tokens(self) -> bool:
        return self.tokens is not None

    def try_take(self, tokens: int = 0, due: float | None = None) -> float:
        """Take one request of ``tokens`` estimated tokens from every bucket if all of
        them hold what it needs, returning 0; else take nothing and return the seconds
        until they will (the longest of the buckets' waits).

        ``due``: when a previous wait said they would; a request at most
        LATE_CREDIT_S past it is counted at ``due``, else at the clock's time."""
        now = self.clock()
        at = due if due is not None and 0.0 <= now - due <= LATE_CREDIT_S else now
        buckets = [(b, c) for b, c in ((self.requests, 1.0), (self.tokens, tokens)) if b]
        wait = max((b.wait(c, at) for b, c in buckets), default=0.0) - (now - at)
        if wait > EPSILON_S:
            return wait
        for bucket, cost in buckets:
            bucket.take(cost, at)
        return 0.0

    async def acquire(self, tokens: int = 0) -> float:
        """Wait for this request's turn and its share of every bucket; returns the
        seconds waited (behind earlier requests included)."""
        started = self.clock()
        async with self._turn():
            due = None
            while (wait := self.try_take(tokens, due)) > 0:
                due = self.clock() + wait
                await self.sleep(wait)
        waited = self.clock() - started
        self.waited += waited
        return waited

    def _turn(self) -> asyncio.Lock:
        """The FIFO lock of the running event loop (an asyncio lock belongs to one)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    def settle(self, estimate: int, input_tokens: int | None, output_tokens: int | None) -> None:
        """Reconcile a request's estimate with the usage its reply reported:
        the token bucket gets back ``estimate - (input + output)``. Unknown counts
        keep the estimate."""
        if self.tokens is None or input_tokens is None or output_tokens is None:
            return
        self.tokens.give(estimate - (input_tokens + output_tokens), self.clock())


def min_duration(calls: int, tokens: int, rpm: float | None, tpm: float | None) -> float:
    """How long ``calls`` requests totalling ``tokens`` estimated tokens take under these
    limits, from the buckets' refill alone (the replies' own time not counted):
    ``max((calls - 1) * 60 / rpm, (tokens - tpm / 60) * 60 / tpm, 0)``.

    The rpm term is exact; the tpm term is a guide (estimates count each reply at
    max_tokens until its usage comes back, and a request larger than one second's
    tokens starts from a full bucket, so a run can be quicker)."""
    if calls <= 0:
        return 0.0
    bounds = [0.0]
    if rpm is not None:
        bounds.append((calls - 1) * 60.0 / rpm)
    if tpm is not None:
        bounds.append((tokens - tpm / 60.0) * 60.0 / tpm)
    return max(bounds)
