"""Prices per million tokens, and the cost of a call.

cost = factor * ( (input_tokens - cache_read - cache_write) * input_price
                + cache_read * cached_input_price
                + cache_write * cache_write_price
                + output_tokens * output_price ) / 1e6

``input_tokens`` is every prompt token the provider counted, cached ones included
(Anthropic reports cache reads and writes beside ``input_tokens``; the providers
add them in, as OpenAI's ``prompt_tokens`` already does). ``factor`` is 1 for a
direct call and ``batch_factor`` (0.5: both Anthropic's Message Batches and
OpenAI's Batch API bill half) for a call sent in a provider batch.

A price without a cached-input or cache-write price bills those tokens at the
input price: never less than the provider could charge. The table covers the
models ragrail names by default; a project's config adds or overrides entries
(``[prices.MODEL] input = ..., output = ...``). A model with no price has an
unknown cost, shown as such, never as $0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None  # a prompt-cache read; None: the input price
    cache_write_per_mtok: float | None = None  # a prompt-cache write; None: the input price
    batch_factor: float = 0.5  # what a provider batch bills, as a share of the direct price


# Anthropic bills a cache read at 0.1x and a (5-minute) cache write at 1.25x the input price.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-5": Price(5.0, 25.0, cached_input_per_mtok=0.5, cache_write_per_mtok=6.25),
}


def cost_usd(
    price: Price | None,
    input_tokens: int,
    output_tokens: int,
    cache_read: int = 0,
    cache_write: int = 0,
    batch: bool = False,
) -> float | None:
    if price is None:
        return None
    cached = price.cached_input_per_mtok
    write = price.cache_write_per_mtok
    plain = max(input_tokens - cache_read - cache_write, 0)
    total = (
        plain * price.input_per_mtok
        + cache_read * (price.input_per_mtok if cached is None else cached)
        + cache_write * (price.input_per_mtok if write is None else write)
        + output_tokens * price.output_per_mtok
    ) / 1e6
    return total * price.batch_factor if batch else total
