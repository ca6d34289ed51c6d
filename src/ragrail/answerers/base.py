"""The answerer interface shared by the stand-in and the real models."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ragrail.corpus import Chunk

NO_CONTEXT_ANSWER = "I don't know: the help center doesn't cover this. Please contact support."


@dataclass(frozen=True)
class AnswerRequest:
    case_id: str
    question: str
    prompt: str
    chunks: Sequence[Chunk]


@dataclass
class AnswerResult:
    answer: str | None
    error: str | None = None
    latency_ms: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)


class Answerer(Protocol):
    name: str  # what baselines record and compare: "standin", "anthropic", "openai"
    label: str  # what the scorecard prints
    model: str | None

    def answer_all(self, requests: Sequence[AnswerRequest]) -> list[AnswerResult]: ...
