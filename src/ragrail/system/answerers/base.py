"""The answerer interface shared by the stand-in and the real models."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragrail.records.results import CallUsage
from ragrail.system.corpus import Chunk

NO_CONTEXT_ANSWER = "I don't know: the help center doesn't cover this. Please contact support."


@dataclass(frozen=True)
class AnswerRequest:
    case_id: str
    question: str
    prompt: str
    chunks: Sequence[Chunk]
    repeat: int = 0  # 0 for the first answer; 1..N-1 for --repeats
    namespace: str = ""  # "rerun" for --rerun-failures: its own cache indexes 0..N-1
    # A turn of a conversation: the earlier turns' (question, answer), this repeat's own
    # answers; a model answerer sends them as chat messages before the prompt.
    history: tuple[tuple[str, str], ...] = ()


@dataclass
class AnswerResult:
    answer: str | None
    error: str | None = None
    latency_ms: float = 0.0
    usage: CallUsage | None = None  # None for answerers that call no model


class Answerer(Protocol):
    name: str  # what baselines record and compare: "standin", "anthropic", "openai"
    label: str  # what the scorecard prints
    model: str | None

    def answer_all(self, requests: Sequence[AnswerRequest]) -> list[AnswerResult]: ...
