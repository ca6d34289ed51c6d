"""Prices per million tokens, and the cost of a call.

cost = input_tokens * input_price / 1e6 + output_tokens * output_price / 1e6

The table covers the models ragrail names by default; a project's config
adds or overrides entries (``[prices.MODEL] input = ..., output = ...``).
A model with no price has an unknown cost, shown as such, never as $0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float


DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-5": Price(5.0, 25.0),
}


def cost_usd(price: Price | None, input_tokens: int, output_tokens: int) -> float | None:
    if price is None:
        return None
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6
