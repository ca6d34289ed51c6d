"""Retrievers. The default is the offline stand-in: it matches words, not meaning.

The stand-in "embedder" turns a text into a bag-of-words vector: one
dimension per distinct content word (lower-cased, stop words dropped, a
plural ``s`` stripped), weight 1, L2-normalised. The score of a chunk for a
question is the cosine of their vectors,

    score(q, c) = |W(q) ∩ W(c)| / sqrt(|W(q)| * |W(c)|)

where W is the set of content words. It is deterministic and needs no
model, and it fails exactly where a word matcher should: a paraphrase with no
shared words scores 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragrail.corpus import Chunk

_WORD = re.compile(r"[a-z0-9]+")

# Function words that carry no topic; contractions split on the apostrophe
# ("can't" -> "can", "t"), so their tails are listed too.
STOPWORDS = frozenset(
    """
    a about after again all also am an and any are as at be been before being both but by
    can could d did do does doing don done down during each either else even ever every for
    from get gets getting got had has have having he her here hers him his how i if in
    into is it its just ll m may me might more most much must my need needs no nor not
    now of off on once one only or other our ours out over own re s same she should so
    some still such t than that the their theirs them then there these they this those
    through to too under until up us ve very was way we were what when where which while
    who whom why will with would yet you your yours
    """.split()
)


def terms(text: str) -> list[str]:
    """Content words of a text, in order, with duplicates."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: its position in the index, rank (1-based) and score."""

    index: int
    rank: int
    score: float


class StandinRetriever:
    """Cosine over bag-of-words vectors, scored for all questions at once."""

    name = "standin"

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        import numpy as np
        from scipy import sparse

        self.chunks = list(chunks)
        self.vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, chunk in enumerate(self.chunks):
            for term in set(terms(chunk.text)):
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
            words = set(terms(question))
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

    def all_scores(self, question: str):  # -> numpy.ndarray, one score per chunk
        """Every chunk's score for one question (for diagnosis, not for search)."""
        import numpy as np

        q = self.embed_queries([question])
        return np.round((q @ self.matrix.T).toarray()[0], 6)

    @staticmethod
    def rank_of(scores, index: int) -> int:
        """1-based rank of chunk ``index`` under the search's ordering (score, then chunk order)."""
        s = scores[index]
        return int((scores > s).sum() + (scores[:index] == s).sum()) + 1

    def search(
        self, questions: Sequence[str], top_k: int, min_score: float = 0.0, batch: int = 512
    ) -> list[list[Hit]]:
        """The ``top_k`` best chunks per question with score >= ``min_score``.

        Ties are broken by chunk order (earlier document and section first), so
        results are the same on every machine.
        """
        import numpy as np

        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        queries = self.embed_queries(questions)
        results: list[list[Hit]] = []
        n = len(self.chunks)
        for start in range(0, len(questions), batch):
            scores = (queries[start : start + batch] @ self.matrix.T).toarray()
            # Round away float noise so equal overlaps tie exactly and the
            # tie-break by chunk order decides.
            scores = np.round(scores, 6)
            k = min(top_k, n)
            for row in scores:
                if k < n:
                    part = np.argpartition(-row, k - 1)[:k]
                    # argpartition may cut inside a tie; widen to every chunk
                    # that ties with the k-th score so ordering stays stable.
                    kth = row[part].min()
                    part = np.flatnonzero(row >= kth) if kth > 0 else np.flatnonzero(row > 0)
                else:
                    part = np.flatnonzero(row > 0)
                order = part[np.lexsort((part, -row[part]))][:k]
                results.append(
                    [
                        Hit(index=int(j), rank=r, score=float(row[j]))
                        for r, j in enumerate(order, start=1)
                        if row[j] >= min_score and row[j] > 0
                    ]
                )
        return results
