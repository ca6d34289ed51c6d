from __future__ import annotations

import json
import math
import random

import pytest

from ragrail.system.corpus import Chunk
from ragrail.system.retrieval import StandinRetriever, terms


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


# ---------------------------------------------------------------- thresholds on each scale


def test_min_score_problem_follows_each_retrievers_scale():
    from ragrail.system.retrieval import min_score_problem

    assert min_score_problem("standin", 1.0) is None
    assert min_score_problem("standin", 0.0) is None
    assert "above the highest score the standin retriever gives (1)" in (
        min_score_problem("standin", 1.5) or ""
    )
    assert "dense" in (min_score_problem("dense", 1.01) or "")
    assert min_score_problem("bm25", 1e6) is None  # BM25 has no ceiling
    for bad in (-0.1, math.nan, math.inf):
        assert "finite number >= 0" in (min_score_problem("bm25", bad) or "")


def test_a_bm25_threshold_above_one_is_on_bm25s_own_scale():
    from ragrail.system.retrieval import BM25Retriever

    r = BM25Retriever(
        chunks(
            "refund payments arrive in thirty days",
            "invite teammates from settings members",
            "delete a workspace under settings",
        )
    )
    scores = r.all_scores("when do refund payments arrive")
    assert scores[0] > 1 and scores[1] == scores[2] == 0  # far above the old cap of 1
    question = ["when do refund payments arrive"]
    assert [h.index for h in r.search(question, top_k=3, min_score=1.0)[0]] == [0]
    assert r.search(question, top_k=3, min_score=float(scores[0]) + 0.01)[0] == []
    # a question that only shares "settings" scores well below 1: held back at 1
    assert r.search(["settings"], top_k=3, min_score=0.0)[0]
    assert r.search(["settings"], top_k=3, min_score=1.0)[0] == []


def test_a_pipeline_refuses_a_threshold_its_retriever_can_never_reach(tmp_path):
    from ragrail.errors import InputError
    from ragrail.system.pipeline import Pipeline, PipelineSettings

    (tmp_path / "a.md").write_text("# A\n\nalpha beta\n", encoding="utf-8")
    with pytest.raises(InputError, match="standin retriever gives"):
        Pipeline(PipelineSettings(docs=tmp_path, min_score=1.5))
    pipeline = Pipeline(PipelineSettings(docs=tmp_path, retriever="bm25", min_score=1.5))
    assert pipeline.settings.min_score == 1.5  # BM25 has no ceiling
    with pytest.raises(InputError, match="finite number >= 0"):
        pipeline.with_settings(min_score=math.nan)


def kitebase_bm25(cli, tmp_path, min_score: str) -> dict:
    out = tmp_path / f"bm25-{min_score}.json"
    r = cli(
        "run",
        "--example",
        "kitebase",
        "--retriever",
        "bm25",
        "--min-score",
        min_score,
        "--baseline",
        str(tmp_path / "no-baseline.json"),
        "--no-history",
        "--json",
        str(out),
    )
    assert r.code == 0, r.err  # no baseline to compare with: no verdict to fail
    return json.loads(out.read_text())


def test_kitebase_bm25_threshold_1_makes_bank_transfer_abstain_and_keeps_all_else(cli, tmp_path):
    """The README's threshold: at --min-score 1 bank-transfer retrieves nothing and says
    it doesn't know, while every other question keeps the retrieval it has at 0."""
    at0, at1 = kitebase_bm25(cli, tmp_path, "0"), kitebase_bm25(cli, tmp_path, "1")
    before = {c["id"]: c for c in at0["cases"]}
    after = {c["id"]: c for c in at1["cases"]}
    assert before["bank-transfer"]["trace"]["retrieved"]  # at 0 BM25 always finds something
    assert before["bank-transfer"]["answer_pass"] is False
    assert after["bank-transfer"]["trace"]["retrieved"] == []
    assert after["bank-transfer"]["answer_pass"] is True
    for case_id, old in before.items():
        if case_id == "bank-transfer":
            continue
        new = after[case_id]
        for key in ("facts_retrieved", "retrieval_hit", "retrieval_recall", "answer_pass"):
            assert new[key] == old[key], (case_id, key)
        ids_old = [c["id"] for c in old["trace"]["retrieved"]]
        ids_new = [c["id"] for c in new["trace"]["retrieved"]]
        # the threshold only drops the tail of a ranking, never the top chunk
        assert ids_new and ids_new == ids_old[: len(ids_new)], case_id
    t0, t1 = at0["totals"], at1["totals"]
    assert (t1["hit_rate"], t1["recall"]) == (t0["hit_rate"], t0["recall"])
    assert t1["answers_passed"] == t0["answers_passed"] + 1
    # the margin: bank-transfer's best chunk is below 1, every fact-holding hit above it
    best_bank = max(c["score"] for c in before["bank-transfer"]["trace"]["retrieved"])
    fact_hits = [
        c["score"]
        for case in before.values()
        for c in case["trace"]["retrieved"]
        if c["source"] in case["sources"]
        and any(f.lower() in c["text"].lower() for f in case["facts_retrieved"])
    ]
    assert best_bank < 1.0 < min(fact_hits)


def copy_kitebase(tmp_path, kitebase, min_score: str, retriever: str):
    import shutil

    project = tmp_path / "kb"
    shutil.copytree(kitebase, project)
    toml = project / "ragrail.toml"
    text = toml.read_text(encoding="utf-8")
    text = text.replace("min_score = 0.2", f"min_score = {min_score}")
    text = text.replace('retriever = "standin"', f'retriever = "{retriever}"')
    toml.write_text(text, encoding="utf-8")
    return project


def test_a_flag_threshold_the_retriever_cannot_reach_is_exit_2_before_any_work(
    cli, tmp_path, kitebase
):
    project = copy_kitebase(tmp_path, kitebase, "0.2", "standin")
    before = (project / "baseline.json").read_bytes()
    r = cli("run", "--min-score", "2", "--save-baseline", cwd=project)
    assert r.code == 2
    assert "--min-score" in r.err and "standin retriever gives (1)" in r.err
    assert (project / "baseline.json").read_bytes() == before
    assert not (project / ".ragrail").exists()
    # the same number is an ordinary BM25 threshold
    r = cli("run", "--retriever", "bm25", "--min-score", "2", "--no-history", cwd=project)
    assert r.code in (0, 1), r.err


def test_a_config_threshold_is_checked_against_the_retriever_it_is_used_with(
    cli, tmp_path, kitebase
):
    bm25 = copy_kitebase(tmp_path, kitebase, "3", "bm25")
    assert cli("run", "--no-history", cwd=bm25).code in (0, 1)
    r = cli("run", "--no-history", "--retriever", "standin", cwd=bm25)
    assert r.code == 2
    assert "pipeline.min_score" in r.err and "--retriever standin" in r.err
    standin = copy_kitebase(tmp_path / "s", kitebase, "3", "standin")
    r = cli("run", "--no-history", cwd=standin)
    assert r.code == 2 and "pipeline.min_score" in r.err and "ragrail.toml" in r.err


# ---------------------------------------------------------------- batched search (issue 13)


def old_standin_rows(r, questions: list[str]):
    """The stand-in's dense score rows as computed before the batched search."""
    import numpy as np
    from scipy import sparse

    rows, cols, data = [], [], []
    for i, question in enumerate(questions):
        words = set(terms(question))
        known = [r.vocab[w] for w in words if w in r.vocab]
        weight = 1.0 / (len(words) ** 0.5) if words else 0.0
        rows += [i] * len(known)
        cols += known
        data += [weight] * len(known)
    shape = (len(questions), r.by_term.shape[0])
    q = sparse.csr_matrix((np.asarray(data, dtype=np.float32), (rows, cols)), shape=shape)
    return np.round((q @ r.by_term).toarray(), 6)


def old_bm25_rows(r, questions: list[str]):
    """BM25's dense score rows as before: bm25s's own get_scores, one question at a time."""
    import numpy as np

    from ragrail.text.tokens import bm25_terms

    rows = []
    for question in questions:
        tokens = bm25_terms(question)
        rows.append(r.index.get_scores(tokens) if tokens else np.zeros(len(r.chunks)))
    return np.round(np.asarray(rows, dtype=np.float32).reshape(len(questions), -1), 5)


def tie_heavy(seed: int) -> tuple[list[Chunk], list[str]]:
    """Few distinct words, short texts: scores tie all the time. With empty questions,
    stop words only, unknown words and repeated words."""
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "kites", "kite", "the", "a", "of"]
    n = rng.choice([1, 2, 7, 40, 150])
    texts = ["alpha beta"] + [" ".join(rng.choices(vocab, k=rng.randint(0, 6))) for _ in range(n)]
    words = [*vocab, "unknownword", "zzz"]
    questions = [" ".join(rng.choices(words, k=rng.randint(0, 7))) for _ in range(60)]
    return chunks(*texts), [*questions, "", "the of a", "zzz qqq", "alpha alpha alpha beta"]


def thresholds(rows) -> list[float]:
    """min_score cuts: none, exactly at scores the retriever gives (as Python floats of
    the float32 values and as decimals), between them, and above every score."""
    import numpy as np

    positive = np.unique(rows[rows > 0])
    if not len(positive):
        return [0.0, 0.5]
    mid = float(positive[len(positive) // 2])
    return [0.0, mid, round(mid, 2), float(np.nextafter(positive[0], 0)), float(positive[-1]), 1e9]


@pytest.mark.parametrize("kind", ["standin", "bm25"])
@pytest.mark.parametrize("seed", range(8))
def test_batched_search_equals_the_per_row_search_with_ties(kind, seed, monkeypatch):
    from ragrail.system import topk
    from ragrail.system.retrieval import RETRIEVERS, top_hits

    texts, questions = tie_heavy(seed)
    r = RETRIEVERS[kind](texts)
    rows = (old_standin_rows if kind == "standin" else old_bm25_rows)(r, questions)
    assert (r.score_batch(questions) == rows).all()  # diagnosis sees the same scores
    n = len(texts)
    for top_k in (1, 2, 5, n, n + 3):
        for min_score in thresholds(rows):
            expected = [top_hits(row, top_k, min_score) for row in rows]
            assert r.search(questions, top_k, min_score) == expected, (top_k, min_score)
            assert r.search(questions, top_k, min_score, batch=7) == expected
    # blocks of one row, and blocks cut by the cell budget rather than the row count
    monkeypatch.setattr(topk, "BLOCK_CELLS", 16)
    expected = [top_hits(row, 3, 0.0) for row in rows]
    assert r.search(questions, 3) == expected
    assert r.search(questions, 3, batch=1) == expected


def test_each_hit_ranks_where_diagnosis_ranks_it():
    from ragrail.system.retrieval import BM25Retriever

    texts, questions = tie_heavy(3)
    for r in (StandinRetriever(texts), BM25Retriever(texts)):
        for question, hits in zip(questions, r.search(questions, top_k=50), strict=True):
            scores = r.all_scores(question)
            assert [r.rank_of(scores, h.index) for h in hits] == [h.rank for h in hits]


def test_bm25_batched_scores_are_bm25s_own_bit_for_bit():
    """Before rounding: a chunk's terms are added in the question's order, repeats kept,
    as bm25s adds them; another order changes the last bit of many sums."""
    import numpy as np

    from ragrail.system.retrieval import BM25Retriever
    from ragrail.text.tokens import bm25_terms

    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(30)]
    texts = [" ".join(rng.choices(vocab, k=rng.randint(1, 40))) for _ in range(300)]
    r = BM25Retriever(chunks(*texts))
    questions = [" ".join(rng.choices(vocab, k=rng.randint(1, 25))) for _ in range(200)]
    raw = (r.query_matrix(questions) @ r.postings).toarray()
    own = np.stack([r.index.get_scores(bm25_terms(q)) for q in questions])
    assert raw.dtype == own.dtype == np.float32
    assert np.array_equal(raw, own)
    reordered = np.stack([r.index.get_scores(sorted(bm25_terms(q))) for q in questions])
    assert not np.array_equal(reordered, own)  # so the order is what this test pins


def test_sparse_top_k_orders_by_score_then_chunk():
    import numpy as np

    from ragrail.system.topk import sparse_top_k

    # row 0: ties at 0.5 in unsorted chunk order; row 1 empty; row 2: a stored 0 and a low score
    data = np.array([0.5, 0.9, 0.5, 0.5, 0.0, 0.2], dtype=np.float32)
    indices = np.array([7, 3, 2, 5, 1, 4], dtype=np.int32)
    indptr = np.array([0, 4, 4, 6])
    chunks_, scores, counts = sparse_top_k(data, indices, indptr, 3, 0.0)
    assert counts.tolist() == [3, 0, 1]
    assert chunks_[0].tolist() == [3, 2, 5] and chunks_[2, :1].tolist() == [4]
    assert scores[0].tolist() == pytest.approx([0.9, 0.5, 0.5])
    chunks_, _, counts = sparse_top_k(data, indices, indptr, 9, 0.3)
    assert counts.tolist() == [4, 0, 0] and chunks_[0].tolist() == [3, 2, 5, 7]
    with pytest.raises(TypeError, match="float32"):
        sparse_top_k(data.astype(np.float64), indices, indptr, 3, 0.0)


def test_row_blocks_bound_rows_times_the_widest_row():
    import numpy as np

    from ragrail.system.topk import row_blocks

    touched = np.array([3, 3, 10, 1, 1, 0])
    assert list(row_blocks(touched, cells=10)) == [(0, 2), (2, 3), (3, 6)]
    assert list(row_blocks(touched, max_rows=2, cells=100)) == [(0, 2), (2, 4), (4, 6)]
    assert list(row_blocks(np.array([50]), cells=10)) == [(0, 1)]  # one row alone may exceed
    assert list(row_blocks(np.array([], dtype=np.int64))) == []


@pytest.mark.parametrize("kind", ["standin", "bm25"])
def test_search_memory_is_bounded_by_the_block_not_by_the_questions(kind, monkeypatch):
    """A word in every chunk: each question scores all 4,000 chunks. 300 questions are
    1.2 M cells (4.8 MB as one float32 array); blocks of 2**14 cells keep the search's
    peak far below that."""
    import tracemalloc

    from ragrail.system import topk
    from ragrail.system.retrieval import RETRIEVERS, top_hits

    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(500)]
    texts = ["kitebase " + " ".join(rng.choices(vocab, k=8)) for _ in range(4000)]
    questions = ["kitebase " + " ".join(rng.choices(vocab, k=3)) for _ in range(300)]
    r = RETRIEVERS[kind](chunks(*texts))
    monkeypatch.setattr(topk, "BLOCK_CELLS", 1 << 14)
    tracemalloc.start()
    try:
        got = r.search(questions, top_k=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5e6, peak
    rows = (old_standin_rows if kind == "standin" else old_bm25_rows)(r, questions[:20])
    assert got[:20] == [top_hits(row, 5, 0.0) for row in rows]
