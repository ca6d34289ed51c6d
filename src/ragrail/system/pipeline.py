"""The built-in RAG pipeline under test: corpus -> chunker -> retriever -> prompt -> answerer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragrail.records.results import RetrievedChunk, Sample, Trace
from ragrail.records.trace import Setting, Stage
from ragrail.system.answerers.base import (
    NO_CONTEXT_ANSWER,
    Answerer,
    AnswerRequest,
    AnswerResult,
)
from ragrail.system.corpus import Chunk, describe_chunking, load_documents, make_chunks
from ragrail.system.defaults import DEFAULT_MIN_SCORE, DEFAULT_TOP_K
from ragrail.system.hybrid import (
    DenseReranker,
    HybridRetriever,
    make_any_retriever,
    search_in_stages,
)
from ragrail.system.prompt import DEFAULT_TEMPLATE, build_prompt, estimate_tokens
from ragrail.system.retrieval import DenseRetriever, Hit, min_score_problem


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
    rerank: str = "none"  # "dense": re-score the first stage's candidates (system.hybrid)
    candidates: int = 20  # how many chunks a first stage hands to hybrid's fusion or rerank

    @property
    def retriever_label(self) -> str:
        """The retriever as a run's config names it: ``hybrid+rerank`` with a rerank."""
        return self.retriever + ("+rerank" if self.rerank != "none" else "")

    @property
    def stage_settings(self) -> dict[str, Setting]:
        """What a run's config adds for a pipeline in stages (hybrid, or a rerank): how
        deep a first stage's lists go."""
        staged = self.retriever == "hybrid" or self.rerank != "none"
        return {"candidates": self.candidates} if staged else {}

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
        self.retriever = make_any_retriever(
            settings.retriever,
            self.chunks,
            settings.language,
            settings.embeddings_cache,
            settings.candidates,
        )
        self.reranker: DenseReranker | None = None
        if settings.rerank != "none":
            own = self.retriever
            dense = own.dense if isinstance(own, HybridRetriever) else own
            self.reranker = DenseReranker(
                self.chunks,
                settings.embeddings_cache,
                dense if isinstance(dense, DenseRetriever) else None,
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
        return [found for found, _ in self.retrieve_stages(questions)]

    def retrieve_stages(
        self, questions: Sequence[str]
    ) -> list[tuple[list[RetrievedChunk], list[Stage]]]:
        """Each question's contexts and the stages that chose them (none for a single
        retriever without a rerank: :func:`ragrail.system.hybrid.search_in_stages`)."""
        s = self.settings
        found = search_in_stages(
            self.retriever, self.reranker, questions, s.top_k, s.min_score, s.candidates
        )
        made: dict[tuple[int, int, float], RetrievedChunk] = {}  # the stages share chunks

        def chunk(h: Hit) -> RetrievedChunk:
            key = (h.index, h.rank, h.score)
            if key not in made:
                c = self.chunks[h.index]
                made[key] = RetrievedChunk(
                    id=c.id, source=c.source, rank=h.rank, score=round(h.score, 4), text=c.text
                )
            return made[key]

        return [
            (
                [chunk(h) for h in hits],
                [Stage(name=name, contexts=[chunk(h) for h in row]) for name, row in stages],
            )
            for hits, stages in found
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
        found = self.retrieve_stages(questions if queries is None else queries)
        for case_id, question, (ctx, stages) in zip(ids, questions, found, strict=True):
            trace = Trace(case_id=case_id, retrieved=ctx, stages=stages)
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
