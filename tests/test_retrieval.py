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
