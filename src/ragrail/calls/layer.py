"""The shared model-call layer: every caller (answerers now, judges later) goes through it.

It runs calls concurrently (asyncio, at most ``concurrency`` in flight), under
optional rate limits (``rpm``, ``tpm``: see calls.limiter; every attempt sent takes
its share, a cached reply none, and the wait is not counted in a call's latency),
retries what is worth retrying (429, 529/overloaded, 5xx, timeouts, dropped
connections, malformed, empty or HTML replies) with exponential backoff and
jitter, honouring ``retry-after`` (capped, with a warning), caches replies,
and counts every request sent, failed ones included, with the tokens and cost
from the API's own usage fields (unknown when the server does not report them
or the model has no price: never 0). A reply the caller rejects is re-asked
with the problem in a follow-up message. A call that still fails is returned
as an error result; it is never dropped and never turned into a pass.
"""

from __future__ import annotations

import asyncio
import random
import time
import warnings
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ragrail.calls.cache import ResponseCache, cache_key
from ragrail.calls.limiter import Limiter, RateLimiter, estimate_tokens
from ragrail.calls.prices import Price
from ragrail.calls.providers import Followup, Provider, correction
from ragrail.calls.usage import CallResult, UsageTotals, cache_row, cached_result, call_cost

T = TypeVar("T")
BATCHABLE = ("anthropic", "openai")  # providers with a batch API (calls.batch)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, where SIGTERM stops it as Ctrl-C does.

    asyncio.run turns Ctrl-C into a cancellation of its tasks, raised as
    KeyboardInterrupt once they have ended. A Python SIGTERM handler (the CLI's raises
    KeyboardInterrupt) would instead raise inside whichever task was running, leaving
    the others to be destroyed pending, each printing a "Task exception was never
    retrieved" traceback. Here the handler runs as before; what it raises cancels the
    tasks and is raised when they have ended. A second SIGTERM raises at once."""
    import signal
    import threading

    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        return asyncio.run(coro)
    raised: list[BaseException] = []

    async def main() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def on_sigterm(signum: int, frame: Any) -> None:
            try:
                previous(signum, frame)
            except BaseException as exc:
                if raised or task is None:
                    raise
                raised.append(exc)
                loop.call_soon_threadsafe(task.cancel)

        signal.signal(signal.SIGTERM, on_sigterm)
        try:
            return await coro
        finally:
            signal.signal(signal.SIGTERM, previous)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if raised:
            raise raised[0] from None
        raise


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
    rpm: float | None = None  # requests per minute (calls.limiter); None: no limit
    tpm: float | None = None  # tokens per minute, estimated then reconciled; None: no limit
    batch: bool = False  # send the calls as one provider batch (calls.batch), at its price
    batch_poll: float = 5.0  # seconds before the first look at a batch, doubling ...
    batch_poll_max: float = 60.0  # ... to this

    def params(self) -> dict[str, Any]:
        """The parameters that change a reply, and so belong in the cache key."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}


@dataclass(frozen=True)
class CallRequest:
    prompt: str
    repeat: int = 0
    tag: str = ""  # what the call is for (a case id), for progress and errors
    namespace: str = ""  # a family of calls with its own cache indexes ("rerun")
    # A turn of a conversation: the earlier turns' (question, answer), sent before the
    # prompt (as chat messages, or an endpoint's history field); None: not a turn.
    history: tuple[tuple[str, str], ...] | None = None


ProgressFn = Callable[[CallResult, UsageTotals], None]


@dataclass
class CallLayer:
    provider: Provider
    settings: CallSettings = field(default_factory=CallSettings)
    cache: ResponseCache | None = None
    price: Price | None = None
    on_result: ProgressFn | None = None
    # A reply this rejects (returns an error message) is re-asked at once, with the
    # problem in a follow-up message, and never cached: a judge's unparseable JSON is
    # a failed call, not an answer.
    validate: Callable[[str], str | None] | None = None
    json_replies: bool = False  # re-asks request structured JSON output where supported
    usage: UsageTotals = field(default_factory=UsageTotals)
    sleep: Callable[[float], Any] = asyncio.sleep  # tests replace it to skip real waits
    # None: one from settings.rpm / settings.tpm (if set); pass one to share it between
    # layers that call the same account (the judge's claim and rubric batches)
    limiter: Limiter | None = None
    on_wait: Callable[[str], None] | None = None  # a batch's progress line (default: stderr)
    state_dir: Path | None = None  # where a batch is remembered (default: beside the cache)
    batch_state: Path | None = field(default=None, init=False, repr=False)
    _capped_warned: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.limiter is None:
            self.limiter = RateLimiter.of(self.settings.rpm, self.settings.tpm)

    def key(self, req: CallRequest) -> str:
        p = self.provider
        return cache_key(
            p.name,
            p.base_url,
            p.model,
            req.prompt,
            self.settings.params(),
            req.repeat,
            req.namespace,
            req.history or (),
        )

    def run(self, requests: Sequence[CallRequest]) -> list[CallResult]:
        """Make every call (or take it from the cache); results are in request order."""
        return run_async(self._run_all(requests))

    async def _run_all(self, requests: Sequence[CallRequest]) -> list[CallResult]:
        sem = asyncio.Semaphore(max(1, self.settings.concurrency))
        try:
            if self.settings.batch and self.provider.name in BATCHABLE and requests:
                from ragrail.calls.batch import run_batch

                return await run_batch(self, requests)
            return list(await asyncio.gather(*(self._one(r, sem) for r in requests)))
        finally:
            await self.provider.aclose()

    def batch_dir(self) -> Path | None:
        """Where batches are remembered: ``state_dir``, else ``batches/`` beside the cache;
        None (no resuming) without either."""
        if self.state_dir is not None:
            return self.state_dir
        path = getattr(self.cache, "path", None)
        return path.parent / "batches" if isinstance(path, Path) else None

    def from_cache(self, key: str) -> CallResult | None:
        """The cached reply for ``key`` (counted when used: see ``done``), or None."""
        if self.cache is None:
            return None
        hit = self.cache.get(key)
        text = hit.get("text") if isinstance(hit, dict) else None
        if not isinstance(text, str) or not text.strip():
            return None  # an empty reply cached before empty replies were failed calls
        if self.validate is not None and self.validate(text):
            return None  # cached under an older schema: ask again
        assert hit is not None
        return cached_result(hit, self.price)

    async def call_direct(self, req: CallRequest, followup: Followup | None = None) -> CallResult:
        """One call made directly, with its retries; ``followup``: a re-ask of a reply that
        could not be used."""
        return await self._call(req, followup)

    def done(self, result: CallResult) -> None:
        self._done(result)

    async def _one(self, req: CallRequest, sem: asyncio.Semaphore) -> CallResult:
        key = self.key(req)
        hit = self.from_cache(key)
        if hit is not None:
            self._done(hit)
            return hit
        async with sem:
            result = await self._call(req)
        if result.error is None and self.cache is not None:
            self.cache.put(key, self.provider.name, self.provider.model, cache_row(result))
        self._done(result)
        return result

    async def _call(self, req: CallRequest, followup: Followup | None = None) -> CallResult:
        s = self.settings
        started = time.perf_counter()
        spent = _Spent()  # every attempt's reported tokens: failed replies are paid for too
        if self.limiter is not None:
            # Build the client (import the SDK: seconds, blocking the loop) before the
            # first turn is taken, or that request would go out late beside the next.
            _ = self.provider.client
        for attempt in range(1, s.max_retries + 2):
            estimate = 0
            if self.limiter is not None:  # every attempt sent takes its share, retries too
                if self.limiter.counts_tokens:
                    estimate = _estimate(req, followup, s.max_tokens)
                started += await self.limiter.acquire(estimate)  # waiting is not latency
            try:
                # a provider is asked for a history only with one: older ones take none
                turns = {} if req.history is None else {"history": req.history}
                done = await asyncio.wait_for(
                    self.provider.complete(
                        req.prompt, s.max_tokens, s.temperature, followup, **turns
                    ),
                    timeout=s.timeout + 5,  # the SDK's own timeout should fire first
                )
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:  # classified below; anything unknown is not retried
                failure = self.provider.classify(exc)
                spent.requests += failure.requests
                spent.add_failed(failure.input_tokens, failure.output_tokens)
                if self.limiter is not None:
                    self.limiter.settle(estimate, failure.input_tokens, failure.output_tokens)
                if not failure.retryable or attempt > s.max_retries:
                    plural = "s" if attempt > 1 else ""
                    return self._result(
                        None,
                        f"{failure.message} (after {attempt} attempt{plural})",
                        spent,
                        attempt,
                        started,
                    )
                await self.sleep(self.backoff(attempt, failure.retry_after))
                continue
            spent.requests += done.requests
            spent.cache_read += done.cache_read
            spent.cache_write += done.cache_write
            spent.add_reply(done.input_tokens, done.output_tokens)
            if self.limiter is not None:
                self.limiter.settle(estimate, done.input_tokens, done.output_tokens)
            problem = self.validate(done.text) if self.validate is not None else None
            if problem is None:
                return self._result(done.text, None, spent, attempt, started)
            if attempt > s.max_retries:
                error = f"unparseable reply: {problem} (after {attempt} attempts)"
                return self._result(done.text, error, spent, attempt, started)
            followup = Followup(
                previous=done.text,
                correction=correction(problem),
                json_mode=self.json_replies,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _result(
        self, text: str | None, error: str | None, spent: _Spent, attempts: int, started: float
    ) -> CallResult:
        return CallResult(
            text=self.provider.redact(text),
            error=self.provider.redact(error),
            input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens,
            cost_usd=call_cost(
                self.price,
                spent.input_tokens,
                spent.output_tokens,
                spent.cache_read,
                spent.cache_write,
            ),
            attempts=attempts,
            latency_ms=(time.perf_counter() - started) * 1000,
            cache_read_tokens=spent.cache_read,
            cache_write_tokens=spent.cache_write,
            requests=spent.requests if spent.requests > attempts else 0,
        )

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt``.

        delay = retry-after (capped at retry_after_max, with one warning per batch)
        when the server sent one; otherwise
        min(backoff_max, backoff_base * 2**(attempt-1)) * U(0.5, 1)
        (exponential backoff with jitter, so parallel callers spread out).
        """
        s = self.settings
        if retry_after is not None:
            if retry_after > s.retry_after_max and not self._capped_warned:
                self._capped_warned = True
                warnings.warn(
                    f"server asked to wait {retry_after:.0f}s; capped at {s.retry_after_max:g}s",
                    stacklevel=2,
                )
            return min(retry_after, s.retry_after_max)
        return min(s.backoff_max, s.backoff_base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)

    def _done(self, result: CallResult) -> None:
        self.usage.add(result)
        if self.on_result is not None:
            self.on_result(result, self.usage)


@dataclass
class _Spent:
    """Tokens over a call's attempts; None once a reply came without usage counts."""

    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cache_read: int = 0
    cache_write: int = 0
    requests: int = 0

    def add_reply(self, n_in: int | None, n_out: int | None) -> None:
        # A reply the model produced but did not count: what it cost is unknown.
        self.input_tokens = (
            None if n_in is None or self.input_tokens is None else self.input_tokens + n_in
        )
        self.output_tokens = (
            None if n_out is None or self.output_tokens is None else self.output_tokens + n_out
        )

    def add_failed(self, n_in: int | None, n_out: int | None) -> None:
        # A failed attempt is counted when the server said what it used, else not billed.
        if self.input_tokens is not None:
            self.input_tokens += n_in or 0
        if self.output_tokens is not None:
            self.output_tokens += n_out or 0


def _estimate(req: CallRequest, followup: Followup | None, max_tokens: int) -> int:
    """The tokens an attempt is charged before it is sent: its messages (a conversation's
    earlier turns, the prompt; a re-ask adds the rejected reply and the correction) at
    ceil(characters / 4), plus max_tokens."""
    messages = [text for turn in req.history or () for text in turn]
    messages.append(req.prompt)
    if followup is not None:
        messages += [followup.previous, followup.correction]
    return estimate_tokens(messages, max_tokens)
