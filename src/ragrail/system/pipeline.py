"""The built-in RAG pipeline under test: corpus -> chunker -> retriever -> prompt -> answerer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragrail.records.results import RetrievedChunk, Sample, Trace
from ragrail.system.answerers.base import (
    NO_CONTEXT_ANSWER,
    Answerer,
    AnswerRequest,
    AnswerResult,
)
from ragrail.system.corpus import Chunk, describe_chunking, load_documents, make_chunks
from ragrail.system.defaults import DEFAULT_MIN_SCORE, DEFAULT_TOP_K
from ragrail.system.prompt import DEFAULT_TEMPLATE, build_prompt, estimate_tokens
from ragrail.system.retrieval import make_retriever, min_score_problem


@dataclass(frozen=True)
class PipelineSettings:
    docs: Path
    product: str = "our product"
    chunk_words: int | None = None
    top_k: int = DEFAULT_TOP_K
    min_score: float = DEFAULT_MIN_SCORE
    retriever: str = "standin"
    template: str = DEFAULT_TEMPLATE
    language: str = "en"  # stop words and stemming of the stand-in and BM25
    embeddings_cache: Path | None = None  # the dense retriever's vectors; None: not cached

    @property
    def chunking(self) -> str:
        return describe_chunking(self.chunk_words)


def check_min_score(settings: PipelineSettings) -> None:
    """min_score is on the retriever's own scale: refuse one it can never reach."""
    from ragrail.errors import InputError

    problem = min_score_problem(settings.retriever, settings.min_score)
    if problem is not None:
        raise InputError(f"min_score {problem}")


class Pipeline:
    """Indexes the documents once, then answers any number of questions."""

    def __init__(self, settings: PipelineSettings) -> None:
        check_min_score(settings)  # before the documents are read and indexed
        self.settings = settings
        self.docs = load_documents(settings.docs)
        self.chunks: list[Chunk] = make_chunks(self.docs, settings.chunk_words)
        self.retriever = make_retriever(
            settings.retriever, self.chunks, settings.language, settings.embeddings_cache
        )

    def with_settings(self, **changes: object) -> Pipeline:
        """The same index under other search settings (top_k, min_score): no re-indexing."""
        import copy
        import dataclasses

        other = copy.copy(self)
        other.settings = dataclasses.replace(self.settings, **changes)  # type: ignore[arg-type]
        check_min_score(other.settings)
        return other

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

    def prepare(
        self,
        ids: Sequence[str],
        questions: Sequence[str],
        queries: Sequence[str] | None = None,
    ) -> list[Trace]:
        """Retrieve for every question and build the prompts; answer nothing yet.

        ``queries``: what to search for instead of each question (a turn of a
        conversation: :func:`ragrail.system.query.search_query`); the prompt keeps the
        question. A question whose search returns nothing gets no prompt: it never
        reaches the answerer, and the bot says it doesn't know, as the product would.
        """
        traces: list[Trace] = []
        found = self.retrieve(questions if queries is None else queries)
        for case_id, question, ctx in zip(ids, questions, found, strict=True):
            trace = Trace(case_id=case_id, retrieved=ctx)
            if ctx:
                chunks = [Chunk(id=c.id, source=c.source, text=c.text) for c in ctx]
                trace.prompt = build_prompt(
                    question, chunks, self.settings.product, self.settings.template
                )
                trace.prompt_tokens = estimate_tokens(trace.prompt)
            else:
                trace.answer = NO_CONTEXT_ANSWER
            traces.append(trace)
        return traces

    @staticmethod
    def requests(
        traces: Sequence[Trace], questions: Sequence[str], repeats: int = 1, first_repeat: int = 0
    ) -> list[AnswerRequest]:
        """One request per prompt and repeat, in case order."""
        out = []
        for trace, question in zip(traces, questions, strict=True):
            if trace.prompt is None:
                continue
            chunks = [Chunk(id=c.id, source=c.source, text=c.text) for c in trace.retrieved]
            for r in range(first_repeat, first_repeat + repeats):
                out.append(AnswerRequest(trace.case_id, question, trace.prompt, chunks, r))
        return out

    def run(
        self, ids: Sequence[str], questions: Sequence[str], answerer: Answerer, repeats: int = 1
    ) -> list[Trace]:
        """Retrieve, build prompts, then answer each prompt ``repeats`` times."""
        traces = self.prepare(ids, questions)
        requests = self.requests(traces, questions, repeats)
        self.record_answers(traces, requests, answerer.answer_all(requests))
        return traces

    @staticmethod
    def record_answers(
        traces: Sequence[Trace], requests: Sequence[AnswerRequest], results: Sequence[AnswerResult]
    ) -> None:
        """Each request's answer into its trace: the first repeat's as the answer, the
        others as its samples."""
        by_id = {t.case_id: t for t in traces}
        for req, result in zip(requests, results, strict=True):
            trace = by_id[req.case_id]
            if req.repeat == 0:
                trace.answer = result.answer
                trace.error = result.error
                trace.latency_ms = result.latency_ms
                trace.usage = result.usage
            else:
                trace.samples.append(
                    Sample(
                        answer=result.answer,
                        error=result.error,
                        latency_ms=result.latency_ms,
                        usage=result.usage,
                    )
                )
