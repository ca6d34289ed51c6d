"""The built-in RAG pipeline under test: corpus -> chunker -> retriever -> prompt -> answerer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragrail.answerers.base import NO_CONTEXT_ANSWER, Answerer, AnswerRequest
from ragrail.corpus import Chunk, describe_chunking, load_documents, make_chunks
from ragrail.prompt import DEFAULT_TEMPLATE, build_prompt, estimate_tokens
from ragrail.results import RetrievedChunk, Trace
from ragrail.retrieval import StandinRetriever

DEFAULT_TOP_K = 3
DEFAULT_MIN_SCORE = 0.2


@dataclass(frozen=True)
class PipelineSettings:
    docs: Path
    product: str = "our product"
    chunk_words: int | None = None
    top_k: int = DEFAULT_TOP_K
    min_score: float = DEFAULT_MIN_SCORE
    retriever: str = "standin"
    template: str = DEFAULT_TEMPLATE

    @property
    def chunking(self) -> str:
        return describe_chunking(self.chunk_words)


class Pipeline:
    """Indexes the documents once, then answers any number of questions."""

    def __init__(self, settings: PipelineSettings) -> None:
        self.settings = settings
        self.docs = load_documents(settings.docs)
        self.chunks: list[Chunk] = make_chunks(self.docs, settings.chunk_words)
        self.retriever = StandinRetriever(self.chunks)

    def retrieve(self, questions: Sequence[str]) -> list[list[RetrievedChunk]]:
        s = self.settings
        hits = self.retriever.search(questions, s.top_k, s.min_score)
        return [
            [
                RetrievedChunk(
                    id=self.chunks[h.index].id,
                    source=self.chunks[h.index].source,
                    rank=h.rank,
                    score=round(h.score, 4),
                    text=self.chunks[h.index].text,
                )
                for h in row
            ]
            for row in hits
        ]

    def run(self, ids: Sequence[str], questions: Sequence[str], answerer: Answerer) -> list[Trace]:
        """Retrieve for every question, then answer those with context.

        A question whose search returns nothing never reaches the answerer:
        the bot says it doesn't know, as the product would.
        """
        retrieved = self.retrieve(questions)
        traces: list[Trace] = []
        requests: list[AnswerRequest] = []
        slots: list[int] = []
        for case_id, question, ctx in zip(ids, questions, retrieved, strict=True):
            trace = Trace(case_id=case_id, retrieved=ctx)
            if ctx:
                chunks = [Chunk(id=c.id, source=c.source, text=c.text) for c in ctx]
                prompt = build_prompt(
                    question, chunks, self.settings.product, self.settings.template
                )
                trace.prompt = prompt
                trace.prompt_tokens = estimate_tokens(prompt)
                requests.append(AnswerRequest(case_id, question, prompt, chunks))
                slots.append(len(traces))
            else:
                trace.answer = NO_CONTEXT_ANSWER
            traces.append(trace)
        for slot, result in zip(slots, answerer.answer_all(requests), strict=True):
            trace = traces[slot]
            trace.answer = result.answer
            trace.error = result.error
            trace.latency_ms = result.latency_ms
        return traces
