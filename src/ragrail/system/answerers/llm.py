"""Real answers from a model, through the shared call layer."""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.calls.layer import CallLayer, CallRequest, UsageTotals
from ragrail.records.results import CallUsage
from ragrail.system.answerers.base import AnswerRequest, AnswerResult

LABELS = {
    "anthropic": "Claude (Anthropic Messages API)",
    "openai": "OpenAI-compatible server",
}


class ModelAnswerer:
    """Sends the bot's prompt to a model; one call per prompt and repeat. A turn of a
    conversation goes as a chat: each earlier turn's question (a user message) and the
    answer the bot gave (an assistant message), then the prompt with this turn's
    excerpts and question. The earlier prompts' excerpts are not re-sent."""

    def __init__(self, layer: CallLayer) -> None:
        self.layer = layer
        self.name = layer.provider.name
        self.label = LABELS.get(self.name, self.name)
        self.model: str | None = layer.provider.model

    @property
    def usage(self) -> UsageTotals:
        return self.layer.usage

    def answer_all(self, requests: Sequence[AnswerRequest]) -> list[AnswerResult]:
        calls = [
            CallRequest(
                prompt=r.prompt,
                repeat=r.repeat,
                tag=r.case_id,
                namespace=r.namespace,
                history=r.history,
            )
            for r in requests
        ]
        out = []
        for res in self.layer.run(calls):
            usage = CallUsage(
                input_tokens=res.input_tokens,
                output_tokens=res.output_tokens,
                cost_usd=res.cost_usd,
                cached=res.cached,
                attempts=res.attempts,
            )
            out.append(
                AnswerResult(
                    answer=res.text, error=res.error, latency_ms=res.latency_ms, usage=usage
                )
            )
        return out
