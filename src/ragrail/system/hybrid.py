"""Retrieval in stages: hybrid search (BM25 and dense fused) and a dense rerank.

**Hybrid** (``[pipeline] retriever = "hybrid"``): BM25 and the dense retriever each return
their ``candidates`` best chunks, fused by reciprocal rank fusion (Cormack, Clarke and
Büttcher, 2009) with k = 60:

    RRF(c) = sum over the two rankings r holding c of 1 / (60 + rank_r(c))

reported divided by its largest value 2/61 (first in both), so a hybrid score runs 0 to 1
and ``min_score`` is on that scale. RRF reads ranks, not scores: a chunk first in one list
scores 0.5 whatever the other says. Ties go to the earlier chunk, as every retriever's.

**Rerank** (``[pipeline] rerank = "dense"``): the first stage returns ``candidates``
chunks (at least ``top_k``), each re-scored by the cosine of its all-MiniLM-L6-v2
embedding with the question's (the dense retriever's model and cache); the ``top_k``
best with a cosine above 0 are kept, a tie going to the better first-stage rank.

Each step is kept in the trace as a stage (``Trace.stages``: bm25, dense and hybrid for a
hybrid search, then rerank), so the scores say which step lost a fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.system.corpus import Chunk
from ragrail.system.retrieval import (
    HYBRID_MAX_SCORE,
    BM25Retriever,
    DenseRetriever,
    Hit,
    Retriever,
    make_retriever,
    top_hits,
)

if TYPE_CHECKING:
    import numpy as np

RRF_K = 60
DEFAULT_CANDIDATES = 20
RERANKERS = ("none", "dense")

# One question's stages: (name, hits in rank order), in the order they ran.
Stages = list[tuple[str, list[Hit]]]


class HybridRetriever(Retriever):
    """BM25 and dense retrieval fused by reciprocal rank fusion (module docstring)."""

    name = "hybrid"
    scale = "0 to 1 (reciprocal rank fusion of bm25 and dense, k = 60, over its maximum 2/61)"
    max_score = HYBRID_MAX_SCORE

    def __init__(
        self,
        chunks: Sequence[Chunk],
        language: str = "en",
        cache: Path | None = None,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        super().__init__(chunks, language)
        self.bm25 = BM25Retriever(chunks, language)
        self.dense = DenseRetriever(chunks, language, cache=cache)
        self.candidates = candidates

    def cache_note(self) -> str:
        return self.dense.cache_note()

    def parts(self, questions: Sequence[str]) -> tuple[list[list[Hit]], list[list[Hit]]]:
        """Each question's BM25 and dense lists, ``candidates`` deep."""
        return (
            self.bm25.search(questions, self.candidates),
            self.dense.search(questions, self.candidates),
        )

    @staticmethod
    def fuse(n: int, lists: Sequence[Sequence[Hit]]) -> np.ndarray:
        """One RRF score per chunk over ``lists``, divided by its maximum."""
        import numpy as np

        row = np.zeros(n)
        for hits in lists:
            for h in hits:
                row[h.index] += 1.0 / (RRF_K + h.rank)
        # rounded so that equal rank sums tie exactly, whatever the order they were added in
        return np.round(row * (RRF_K + 1) / 2, 9)

    def score_batch(self, questions: Sequence[str]) -> np.ndarray:
        import numpy as np

        bm25, dense = self.parts(questions)
        n = len(self.chunks)
        return np.stack([self.fuse(n, pair) for pair in zip(bm25, dense, strict=True)])

    def search_stages(
        self, questions: Sequence[str], top_k: int, min_score: float = 0.0
    ) -> list[Stages]:
        """Per question: the bm25 and dense lists and their fusion, cut to ``top_k``."""
        bm25, dense = self.parts(questions)
        n = len(self.chunks)
        return [
            [
                ("bm25", b),
                ("dense", d),
                ("hybrid", top_hits(self.fuse(n, (b, d)), top_k, min_score)),
            ]
            for b, d in zip(bm25, dense, strict=True)
        ]


def make_any_retriever(
    name: str,
    chunks: Sequence[Chunk],
    language: str = "en",
    cache: Path | None = None,
    candidates: int = DEFAULT_CANDIDATES,
) -> Retriever:
    """The retriever ``name`` (standin, bm25, dense or hybrid) over ``chunks``; ``cache``:
    the dense embeddings cache; ``candidates``: how deep hybrid's two lists go."""
    if name == "hybrid":
        return HybridRetriever(chunks, language, cache, candidates)
    return make_retriever(name, chunks, language, cache)


class DenseReranker:
    """Re-scores a first stage's chunks by the dense cosine (module docstring)."""

    def __init__(
        self,
        chunks: Sequence[Chunk],
        cache: Path | None = None,
        dense: DenseRetriever | None = None,
    ) -> None:
        from ragrail.system.embeddings import open_embedder
        from ragrail.system.retrieval import load_dense_model

        self.chunks = list(chunks)
        self.dense = dense  # a dense retriever at hand: its chunk vectors are reused
        self.embedder = dense.embedder if dense else open_embedder(cache, load_dense_model)
        self.vectors: dict[int, np.ndarray] = {}  # chunk index -> vector, embedded once

    def _vector(self, index: int) -> np.ndarray:
        return self.dense.matrix[index] if self.dense is not None else self.vectors[index]

    def rerank(
        self, questions: Sequence[str], rows: Sequence[list[Hit]], top_k: int
    ) -> list[list[Hit]]:
        import numpy as np

        if self.dense is None:
            need = sorted({h.index for row in rows for h in row} - self.vectors.keys())
            if need:
                found = self.embedder.embed([self.chunks[i].text for i in need], "passage", 64)
                self.vectors.update(zip(need, found, strict=True))
        queries = self.embedder.embed(list(questions), "query", 32)
        out = []
        for q, row in zip(queries, rows, strict=True):
            scored = [(float(np.round(q @ self._vector(h.index), 5)), h) for h in row]
            kept = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1].rank))
            out.append(
                [Hit(index=h.index, rank=r, score=s) for r, (s, h) in enumerate(kept[:top_k], 1)]
            )
        return out


RERANK_SUFFIX = "+rerank"


def split_name(name: str) -> tuple[str, str]:
    """(retriever, rerank) of a sweep's retriever name: ``hybrid+rerank`` is hybrid with
    a dense rerank, ``bm25`` BM25 alone."""
    if name.endswith(RERANK_SUFFIX):
        return name.removesuffix(RERANK_SUFFIX), "dense"
    return name, "none"


def search_in_stages(
    retriever: Retriever,
    reranker: DenseReranker | None,
    questions: Sequence[str],
    top_k: int,
    min_score: float,
    candidates: int,
) -> list[tuple[list[Hit], Stages]]:
    """Each question's final hits and its stages. A single retriever without a rerank
    has no stages: its search is the whole of retrieval, as before stages existed."""
    first_k = max(candidates, top_k) if reranker is not None else top_k
    if isinstance(retriever, HybridRetriever):
        staged = retriever.search_stages(questions, first_k, min_score)
    elif reranker is not None:
        staged = [
            [(retriever.name, hits)] for hits in retriever.search(questions, first_k, min_score)
        ]
    else:
        return [(hits, []) for hits in retriever.search(questions, top_k, min_score)]
    if reranker is not None:
        reranked = reranker.rerank(questions, [stages[-1][1] for stages in staged], top_k)
        for stages, hits in zip(staged, reranked, strict=True):
            stages.append(("rerank", hits))
    return [(stages[-1][1], stages) for stages in staged]
