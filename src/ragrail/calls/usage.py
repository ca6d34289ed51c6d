"""What calls cost: one call's result and a batch's totals, and the reply cache's rows.

A call's cost is priced from the API's own usage fields (calls.prices): its cached
input tokens at the cached price, a call made in a provider batch at the batch price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragrail.calls.prices import Price, cost_usd
from ragrail.records.results import Usage


@dataclass
class CallResult:
    text: str | None
    error: str | None = None
    input_tokens: int | None = 0  # None: a reply came without usage counts (unknown)
    output_tokens: int | None = 0
    cost_usd: float | None = None
    cached: bool = False
    attempts: int = 0
    latency_ms: float = 0.0
    # of input_tokens, those the provider read from / wrote to its prompt cache
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # requests sent, when more than attempts (a JSON-mode ask refused with HTTP 400 and
    # sent again without it); 0: one per attempt
    requests: int = 0
    batch: bool = False  # made in a provider batch (priced at the batch price)


@dataclass
class UsageTotals:
    """What a batch of calls cost. ``calls`` counts requests sent to the API, failed
    ones and retries included; tokens and cost are the API's own counts."""

    calls: int = 0
    cached: int = 0
    errors: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached_cost_usd: float = 0.0  # what the cached replies cost when they were made
    priced: bool = True  # False once a call had no price: the cost is unknown
    unreported: int = 0  # replies that came without usage counts: tokens unknown
    cached_unreported: int = 0
    cache_read_tokens: int = 0  # of input_tokens, read from a provider's prompt cache
    cache_write_tokens: int = 0
    batched: int = 0  # calls made in a provider batch (at the batch price)

    def add(self, r: CallResult) -> None:
        if r.error is not None:
            self.errors += 1
        self.retries += max(r.attempts - 1, 0)
        known = r.input_tokens is not None and r.output_tokens is not None
        if r.cached:
            self.cached += 1
            if known:
                self.cached_cost_usd += r.cost_usd or 0.0
            else:
                self.cached_unreported += 1
        else:
            self.calls += max(r.requests, r.attempts)
            self.batched += r.attempts if r.batch else 0
            self.cache_read_tokens += r.cache_read_tokens
            self.cache_write_tokens += r.cache_write_tokens
            if known:
                self.input_tokens += r.input_tokens or 0
                self.output_tokens += r.output_tokens or 0
                self.cost_usd += r.cost_usd or 0.0
            else:
                self.unreported += 1
        if known and r.cost_usd is None:
            self.priced = False  # failed calls too: an unpriced model's cost is never $0

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
            "unreported",
            "cached_unreported",
            "cache_read_tokens",
            "cache_write_tokens",
            "batched",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.priced = self.priced and other.priced

    def summary(self) -> Usage:
        """The serialisable form; tokens and costs are None (unknown) when a server did
        not report usage or a model had no price: never shown as 0 or $0."""
        known = self.unreported == 0
        return Usage(
            calls=self.calls,
            cached=self.cached,
            errors=self.errors,
            retries=self.retries,
            input_tokens=self.input_tokens if known else None,
            output_tokens=self.output_tokens if known else None,
            cost_usd=self.cost_usd if self.priced and known else None,
            cached_cost_usd=(
                self.cached_cost_usd if self.priced and not self.cached_unreported else None
            ),
        )


def _count(value: Any) -> int | None:
    """A token count read back from the cache; None (unknown) unless a whole number >= 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def call_cost(
    price: Price | None,
    n_in: int | None,
    n_out: int | None,
    read: int = 0,
    write: int = 0,
    batch: bool = False,
) -> float | None:
    """The cost of known token counts; None when a count or the price is unknown."""
    if n_in is None or n_out is None:
        return None
    return cost_usd(price, n_in, n_out, read, write, batch)


def cache_row(result: CallResult) -> dict[str, Any]:
    """What the reply cache keeps of a good reply: its text and what it cost to make."""
    row: dict[str, Any] = {
        "text": result.text,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
    }
    if result.cache_read_tokens or result.cache_write_tokens:
        row["cache_read_tokens"] = result.cache_read_tokens
        row["cache_write_tokens"] = result.cache_write_tokens
    if result.batch:
        row["batch"] = True
    return row


def cached_result(hit: dict[str, Any], price: Price | None) -> CallResult:
    """A reply taken from the cache, with what it cost when it was made."""
    n_in, n_out = _count(hit.get("input_tokens")), _count(hit.get("output_tokens"))
    read = _count(hit.get("cache_read_tokens")) or 0
    write = _count(hit.get("cache_write_tokens")) or 0
    batch = hit.get("batch") is True
    return CallResult(
        text=hit["text"],
        input_tokens=n_in,
        output_tokens=n_out,
        cost_usd=call_cost(price, n_in, n_out, read, write, batch),
        cached=True,
        attempts=0,
        cache_read_tokens=read,
        cache_write_tokens=write,
        batch=batch,
    )
