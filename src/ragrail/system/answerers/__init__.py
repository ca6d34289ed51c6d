"""Answerers: turn a prompt (and the chunks in it) into an answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragrail.calls.layer import CallSettings, ProgressFn
from ragrail.calls.prices import DEFAULT_PRICES, Price
from ragrail.errors import InputError
from ragrail.system.answerers.base import Answerer, AnswerRequest, AnswerResult
from ragrail.system.answerers.standin import StandinAnswerer

__all__ = [
    "MODEL_ANSWERERS",
    "AnswerRequest",
    "AnswerResult",
    "Answerer",
    "AnswererSpec",
    "StandinAnswerer",
    "build_answerer",
]

MODEL_ANSWERERS = ("anthropic", "openai")
RERUN_NAMESPACE = "rerun"  # the cache namespace of --rerun-failures calls


@dataclass
class AnswererSpec:
    """Which answerer to use and how to call it."""

    name: str = "standin"
    model: str | None = None
    base_url: str | None = None
    calls: CallSettings = field(default_factory=CallSettings)
    prices: dict[str, Price] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    cache_path: Path | None = None  # None: no cache

    @property
    def uses_model(self) -> bool:
        return self.name in MODEL_ANSWERERS

    def price(self, model: str | None) -> Price | None:
        return self.prices.get(model or "")


def build_answerer(spec: AnswererSpec, on_result: ProgressFn | None = None) -> Answerer:
    """The stand-in, or a model answerer wired to the shared call layer.

    Fails (InputError) before any work when a needed API key is missing.
    """
    if spec.name == "standin":
        return StandinAnswerer()
    if not spec.uses_model:
        raise InputError(f"unknown answerer {spec.name!r}; choose standin, anthropic or openai")
    from ragrail.calls.cache import ResponseCache
    from ragrail.calls.layer import CallLayer
    from ragrail.calls.providers import make_provider
    from ragrail.system.answerers.llm import ModelAnswerer

    provider = make_provider(spec.name, spec.model, spec.base_url, spec.calls.timeout)
    cache = ResponseCache(spec.cache_path) if spec.cache_path is not None else None
    layer = CallLayer(
        provider=provider,
        settings=spec.calls,
        cache=cache,
        price=spec.price(provider.model),
        on_result=on_result,
    )
    return ModelAnswerer(layer)


@dataclass(frozen=True)
class CallPlan:
    """What a run would send to a model: for --dry-run, which calls nothing."""

    provider: str
    model: str
    base_url: str | None
    calls: int  # requests that would go to the API
    cached: int  # requests the cache would answer
    input_tokens: int  # estimated from the prompts' length
    typical_output_tokens: int
    max_output_tokens: int
    price: Price | None
    rerun_times: int = 0  # --rerun-failures N
    rerun_cases: int = 0  # questions that could fail, and so be re-run
    rerun_calls: int = 0  # the most calls the re-runs can add (the cache answers the rest)
    rerun_input_tokens: int = 0
    rpm: float | None = None  # the rate limits the calls would run under
    tpm: float | None = None

    def min_seconds(self) -> float | None:
        """The least time the calls take under the rate limits (None: no limits):
        limiter.min_duration over the calls, each charged its prompt and max_tokens."""
        from ragrail.calls.limiter import min_duration

        if self.rpm is None and self.tpm is None:
            return None
        tokens = self.input_tokens + self.calls * self.max_output_tokens
        return min_duration(self.calls, tokens, self.rpm, self.tpm)

    def cost(self, output_tokens_each: int) -> float | None:
        from ragrail.calls.prices import cost_usd

        return cost_usd(self.price, self.input_tokens, output_tokens_each * self.calls)

    def rerun_cost_bound(self) -> float | None:
        """The re-runs' cost if every question failed and every answer ran to max_tokens."""
        from ragrail.calls.prices import cost_usd

        return cost_usd(
            self.price, self.rerun_input_tokens, self.max_output_tokens * self.rerun_calls
        )


TYPICAL_OUTPUT_TOKENS = (
    150  # a short help-center answer; the dry run also shows the max_tokens bound
)


def plan_calls(
    spec: AnswererSpec, prompts: list[tuple[str, int]], rerun_times: int = 0
) -> CallPlan:
    """Count the calls ``(prompt, repeat)`` pairs would make, and estimate their cost.

    With ``rerun_times`` (--rerun-failures N), also the most calls the re-runs can
    add: every question that reaches the model could fail, and each is then asked N
    more times under the rerun cache indexes. Needs no API key and sends nothing.
    """
    import os

    from ragrail.calls.cache import ResponseCache, cache_key
    from ragrail.calls.providers import BASE_URL_VARS, DEFAULT_MODELS
    from ragrail.system.prompt import estimate_tokens

    model = spec.model or DEFAULT_MODELS.get(spec.name)
    if not model:
        raise InputError(f"--answerer {spec.name} needs --model NAME")
    base_url = spec.base_url or os.environ.get(BASE_URL_VARS[spec.name])
    cache = None
    if spec.cache_path is not None and spec.cache_path.exists():
        cache = ResponseCache(spec.cache_path)

    def uncached(pairs: list[tuple[str, int]], namespace: str = "") -> list[str]:
        out = []
        for prompt, repeat in pairs:
            key = cache_key(
                spec.name, base_url, model, prompt, spec.calls.params(), repeat, namespace
            )
            if cache is None or cache.get(key) is None:
                out.append(prompt)
        return out

    to_call = uncached(prompts)
    cached = len(prompts) - len(to_call)
    first = [p for p, r in prompts if r == 0]  # one per question that reaches the model
    reruns = [(p, i) for p in first for i in range(rerun_times)]
    rerun_calls = uncached(reruns, RERUN_NAMESPACE)
    if cache is not None:
        cache.close()
    return CallPlan(
        provider=spec.name,
        model=model,
        base_url=base_url,
        calls=len(to_call),
        cached=cached,
        input_tokens=sum(estimate_tokens(p) for p in to_call),
        typical_output_tokens=min(TYPICAL_OUTPUT_TOKENS, spec.calls.max_tokens),
        max_output_tokens=spec.calls.max_tokens,
        price=spec.price(model),
        rerun_times=rerun_times,
        rerun_cases=len(first) if rerun_times else 0,
        rerun_calls=len(rerun_calls),
        rerun_input_tokens=sum(estimate_tokens(p) for p in rerun_calls),
        rpm=spec.calls.rpm,
        tpm=spec.calls.tpm,
    )
