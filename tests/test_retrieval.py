from __future__ import annotations

import math
import random

import pytest

from ragrail.corpus import Chunk
from ragrail.retrieval import StandinRetriever, terms


def chunks(*texts: str) -> list[Chunk]:
    return [Chunk(id=f"d#{i}", source="d", text=t) for i, t in enumerate(texts, start=1)]


def test_terms_drop_stop_words_and_plural_s():
    assert terms("How do I reset my passwords? Can't sign-in!") == ["reset", "password", "sign"]
    assert terms("address boss codes") == ["address", "boss", "code"]


def test_score_is_the_cosine_of_word_sets():
    r = StandinRetriever(chunks("reset password link expires soon", "billing plans", "password"))
    # question words {reset, password, bank}: "bank" is unknown but still counts in the norm
    hits = r.search(["reset my password by bank"], top_k=3)[0]
    assert [h.index for h in hits] == [2, 0]
    assert hits[0].score == pytest.approx(1 / math.sqrt(3 * 1), abs=1e-6)
    assert hits[1].score == pytest.approx(2 / math.sqrt(3 * 5), abs=1e-6)
    assert [h.rank for h in hits] == [1, 2]


def test_min_score_and_top_k():
    r = StandinRetriever(chunks("alpha beta gamma delta", "alpha", "zeta"))
    assert [h.index for h in r.search(["alpha"], top_k=1)[0]] == [1]
    # alpha vs chunk 0: 1/sqrt(1*4) = 0.5
    assert [h.index for h in r.search(["alpha"], top_k=3, min_score=0.6)[0]] == [1]
    assert r.search(["omega"], top_k=3)[0] == []
    with pytest.raises(ValueError):
        r.search(["alpha"], top_k=0)


def test_ties_break_by_chunk_order():
    r = StandinRetriever(chunks("x one", "x two", "x three", "x four"))
    assert [h.index for h in r.search(["x"], top_k=2)[0]] == [0, 1]
    assert [h.index for h in r.search(["x"], top_k=4)[0]] == [0, 1, 2, 3]


def test_vectorised_search_equals_brute_force():
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    texts = [" ".join(rng.choices(vocab, k=rng.randint(1, 12))) for _ in range(300)]
    questions = [" ".join(rng.choices(vocab, k=rng.randint(1, 5))) for _ in range(80)]
    r = StandinRetriever(chunks(*texts))
    got = r.search(questions, top_k=5, min_score=0.1, batch=7)
    for q, hits in zip(questions, got, strict=True):
        qw = set(terms(q))
        scored = []
        for i, t in enumerate(texts):
            cw = set(terms(t))
            s = round(len(qw & cw) / math.sqrt(len(qw) * len(cw)), 6)
            if s >= 0.1 and s > 0:
                scored.append((-s, i))
        expected = [i for _, i in sorted(scored)[:5]]
        assert [h.index for h in hits] == expected
