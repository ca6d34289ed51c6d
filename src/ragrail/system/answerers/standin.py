"""The offline stand-in answerer: free, instant and deterministic."""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.system.answerers.base import NO_CONTEXT_ANSWER, AnswerRequest, AnswerResult


class StandinAnswerer:
    """Pastes the top retrieved chunk as the answer, citing its id.

    A deliberately dumb bot: it reads nothing past the first chunk, so a fact
    that search ranked second is never in its answer.
    """

    name = "standin"
    label = "offline stand-in (pastes the top chunk)"
    model: str | None = None

    def answer_all(self, requests: Sequence[AnswerRequest]) -> list[AnswerResult]:
        out = []
        for req in requests:
            if not req.chunks:
                out.append(AnswerResult(answer=NO_CONTEXT_ANSWER))
            else:
                top = req.chunks[0]
                out.append(AnswerResult(answer=f"{top.text} [{top.id}]"))
        return out
