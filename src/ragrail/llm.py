"""The shared model-call layer: every caller (answerers now, judges later) goes through it.

It runs calls concurrently (asyncio, at most ``concurrency`` in flight),
retries what is worth retrying (429, 529/overloaded, 5xx, timeouts, dropped
connections, malformed replies) with exponential backoff and jitter,
honouring ``retry-after``, caches replies, and counts tokens and cost from
the API's own usage fields. A call that still fails is returned as an error
result; it is never dropped and never turned into a pass.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragrail.cache import ResponseCache, cache_key
from ragrail.pricing import Price, cost_usd
from ragrail.providers import Provider
from ragrail.results import Usage


@dataclass(frozen=True)
class CallSettings:
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    max_tokens: int = 512
    temperature: float | None = None
    backoff_base: float = 1.0  # seconds before the first retry (before jitter)
    backoff_max: float = 30.0
    retry_after_max: float = 60.0  # a server asking for longer than this is capped

    def params(self) -> dict[str, Any]:
        """The parameters that change a reply, and so belong in the cache key."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}


@dataclass(frozen=True)
class CallRequest:
    prompt: str
    repeat: int = 0
    tag: str = ""  # what the call is for (a case id), for progress and errors


@dataclass
class CallResult:
    text: str | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False
    attempts: int = 0
    latency_ms: float = 0.0


@dataclass
class UsageTotals:
    """What a batch of calls cost. ``calls`` counts requests sent to the API."""

    calls: int = 0
    cached: int = 0
    errors: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached_cost_usd: float = 0.0  # what the cached replies cost when they were made
    priced: bool = True

    def add(self, r: CallResult) -> None:
        if r.error is not None:
            self.errors += 1
        self.retries += max(r.attempts - 1, 0)
        if r.cached:
            self.cached += 1
            self.cached_cost_usd += r.cost_usd or 0.0
        else:
            self.calls += r.attempts
            self.input_tokens += r.input_tokens
            self.output_tokens += r.output_tokens
            self.cost_usd += r.cost_usd or 0.0
        if r.error is None and r.cost_usd is None:
            self.priced = False

    def absorb(self, other: UsageTotals) -> None:
        """Add another batch's totals (the judge sums its claims and rubric layers)."""
        for name in (
            "calls",
            "cached",
            "errors",
            "retries",
            "input_tokens",
            "output_tokens",
            "cost_usd",
            "cached_cost_usd",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.priced = self.priced and other.priced

    def summary(self) -> Usage:
        """The serialisable form; costs are None (unknown) when a model had no price."""
        return Usage(
            calls=self.calls,
            cached=self.cached,
            errors=self.errors,
            retries=self.retries,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd if self.priced else None,
            cached_cost_usd=self.cached_cost_usd if self.priced else None,
        )


ProgressFn = Callable[[CallResult, UsageTotals], None]


@dataclass
class CallLayer:
    provider: Provider
    settings: CallSettings = field(default_factory=CallSettings)
    cache: ResponseCache | None = None
    price: Price | None = None
    on_result: ProgressFn | None = None
    # A reply this rejects (returns an error message) is retried at once and never
    # cached: a judge's unparseable JSON is a failed call, not an answer.
    validate: Callable[[str], str | None] | None = None
    usage: UsageTotals = field(default_factory=UsageTotals)
    sleep: Callable[[float], Any] = asyncio.sleep  # tests replace it to skip real waits

    def key(self, req: CallRequest) -> str:
        p = self.provider
        return cache_key(
            p.name, p.base_url, p.model, req.prompt, self.settings.params(), req.repeat
        )

    def run(self, requests: Sequence[CallRequest]) -> list[CallResult]:
        """Make every call (or take it from the cache); results are in request order."""
        return asyncio.run(self._run_all(requests))

    async def _run_all(self, requests: Sequence[CallRequest]) -> list[CallResult]:
        sem = asyncio.Semaphore(max(1, self.settings.concurrency))
        try:
            return list(await asyncio.gather(*(self._one(r, sem) for r in requests)))
        finally:
            await self.provider.aclose()

    async def _one(self, req: CallRequest, sem: asyncio.Semaphore) -> CallResult:
        key = self.key(req)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and self.validate is not None and self.validate(hit["text"]):
                hit = None  # cached under an older schema: ask again
            if hit is not None:
                result = CallResult(
                    text=hit["text"],
                    input_tokens=hit["input_tokens"],
                    output_tokens=hit["output_tokens"],
                    cost_usd=cost_usd(self.price, hit["input_tokens"], hit["output_tokens"]),
                    cached=True,
                    attempts=0,
                )
                self._done(result)
                return result
        async with sem:
            result = await self._call(req)
        if result.error is None and self.cache is not None:
            self.cache.put(
                key,
                self.provider.name,
                self.provider.model,
                {
                    "text": result.text,
                    "input_tokens": result.input_tokens,
                    "output_tokens": result.output_tokens,
                },
            )
        self._done(result)
        return result

    async def _call(self, req: CallRequest) -> CallResult:
        s = self.settings
        started = time.perf_counter()
        last = "no attempt made"
        spent_in = spent_out = 0  # tokens of rejected (unparseable) replies are paid for too
        for attempt in range(1, s.max_retries + 2):
            try:
                done = await asyncio.wait_for(
                    self.provider.complete(req.prompt, s.max_tokens, s.temperature),
                    timeout=s.timeout + 5,  # the SDK's own timeout should fire first
                )
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:  # classified below; anything unknown is not retried
                failure = self.provider.classify(exc)
                last = failure.message
                if not failure.retryable or attempt > s.max_retries:
                    return CallResult(
                        text=None,
                        error=f"{last} (after {attempt} attempt{'s' if attempt > 1 else ''})",
                        attempts=attempt,
                        latency_ms=(time.perf_counter() - started) * 1000,
                    )
                await self.sleep(self.backoff(attempt, failure.retry_after))
                continue
            problem = self.validate(done.text) if self.validate is not None else None
            spent_in += done.input_tokens
            spent_out += done.output_tokens
            if problem is not None:
                last = f"unparseable reply: {problem}"
                if attempt > s.max_retries:
                    return CallResult(
                        text=done.text,
                        error=f"{last} (after {attempt} attempts)",
                        input_tokens=spent_in,
                        output_tokens=spent_out,
                        cost_usd=cost_usd(self.price, spent_in, spent_out),
                        attempts=attempt,
                        latency_ms=(time.perf_counter() - started) * 1000,
                    )
                continue
            return CallResult(
                text=done.text,
                input_tokens=spent_in,
                output_tokens=spent_out,
                cost_usd=cost_usd(self.price, spent_in, spent_out),
                attempts=attempt,
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt``.

        delay = retry-after (capped at retry_after_max) when the server sent one;
        otherwise min(backoff_max, backoff_base * 2**(attempt-1)) * U(0.5, 1)
        (exponential backoff with jitter, so parallel callers spread out).
        """
        s = self.settings
        if retry_after is not None:
            return min(retry_after, s.retry_after_max)
        return min(s.backoff_max, s.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)

    def _done(self, result: CallResult) -> None:
        self.usage.add(result)
        if self.on_result is not None:
            self.on_result(result, self.usage)
