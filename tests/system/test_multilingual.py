"""The bundled multilingual example: German, Hindi and Japanese articles and questions
(written for ragrail) where the stand-in and BM25 find the right article and the facts match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.golden import lint_golden, load_golden
from ragrail.project import example_dir, load_config
from ragrail.system.corpus import load_documents, make_chunks
from ragrail.system.retrieval import make_retriever

EXAMPLE = example_dir("multilingual")


def answerable(cases: list[dict]) -> list[dict]:
    return [c for c in cases if c["sources"]]


@pytest.mark.parametrize("retriever", ["standin", "bm25"])
def test_every_question_finds_its_article_and_its_facts(cli, tmp_path: Path, retriever: str):
    out = tmp_path / "results.json"
    r = cli("run", "--example", "multilingual", "--retriever", retriever, "--json", str(out))
    assert r.code == 0, r.err
    assert "No regressions." in r.out
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    assert {c["tags"][0] for c in cases} == {"de", "hi", "ja"}
    for lang in ("de", "hi", "ja"):
        assert len([c for c in answerable(cases) if c["tags"] == [lang]]) >= 3
    for case in answerable(cases):
        top = case["trace"]["retrieved"][0]
        assert top["source"] == case["sources"][0], case["id"]  # the right article, first
        assert case["retrieval_hit"] is True, case["id"]
        assert case["facts_retrieved"] == case["facts"], case["id"]
        assert case["answer_pass"] is True, (case["id"], case["problems"])
        assert all(f in case["trace"]["answer"] for f in case["facts"]), case["id"]
        assert case["faithfulness"] == 1.0, (case["id"], case["claims"])
    abstain = [c for c in cases if not c["sources"]]
    assert [c["id"] for c in abstain] == ["de-bitcoin"]
    assert abstain[0]["trace"]["retrieved"] == [] and abstain[0]["answer_pass"] is True


def test_the_example_is_listed_copied_linted_and_its_baseline_holds(cli, tmp_path: Path):
    assert "multilingual" in cli("example", "--help").out
    assert "multilingual" in cli("run", "--help").out
    dest = tmp_path / "ml"
    r = cli("example", "multilingual", str(dest))
    assert r.code == 0, r.err
    assert (dest / ".github" / "workflows" / "evals.yml").is_file()
    lint = cli("lint", cwd=dest)
    assert lint.code == 0, lint.err
    assert lint.out.strip() == "lint: 13 cases, 9 documents: OK"  # no near-duplicate warning
    run = cli("run", cwd=dest)
    assert run.code == 0, run.err + run.out
    assert "No regressions." in run.out
    baseline = json.loads((EXAMPLE / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["totals"]["hit_rate"] == 1.0
    assert baseline["totals"]["answers_passed"] == baseline["totals"]["n_cases"] == 13


def test_the_example_reads_each_word_by_its_script():
    project = load_config(EXAMPLE / "ragrail.toml")
    assert project.config.pipeline.language == "auto"


@pytest.mark.parametrize(
    ("language", "question", "source"),
    [
        ("de", "Wie lange dauern Rückerstattungen?", "de-refunds"),  # stemmed to ruckerstatt
        ("hi", "पासवर्ड रीसेट लिंक कब तक मान्य है?", "hi-password"),
        ("ja", "送料はいくらですか", "ja-shipping"),
    ],
)
@pytest.mark.parametrize("retriever", ["standin", "bm25"])
def test_retrievers_in_one_language(retriever: str, language: str, question: str, source: str):
    docs = [d for d in load_documents(EXAMPLE / "docs") if d.name.startswith(language)]
    chunks = make_chunks(docs, None)
    hits = make_retriever(retriever, chunks, language).search([question], top_k=1)[0]
    assert [chunks[h.index].source for h in hits] == [source]


def test_a_question_in_another_script_shares_no_word_with_english_docs():
    chunks = make_chunks(load_documents(example_dir("kitebase") / "docs"), None)
    for retriever in ("standin", "bm25"):
        assert make_retriever(retriever, chunks).search(["パスワード"], top_k=3) == [[]]


def test_near_duplicates_are_found_in_each_language(tmp_path: Path):
    path = tmp_path / "golden.json"
    cases = [
        {"id": "a", "question": "Wie lange dauert die Rückerstattung?"},
        {"id": "b", "question": "Wie lange dauert eine Rückerstattung?"},
        {"id": "c", "question": "パスワード再設定のリンクは何時間有効ですか"},
        {"id": "d", "question": "パスワード再設定のリンクが何時間有効ですか？"},
    ]
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    golden = load_golden(path, tmp_path)

    def flagged(language: str) -> list[str]:
        return [
            p.case_id for p in lint_golden(golden, {}, language) if "near-duplicate" in p.message
        ]

    # German stop words make "die" and "eine" the same question; in English they differ
    assert flagged("de") == ["b", "d"]
    assert flagged("en") == ["d"]


def test_an_unknown_language_is_a_usage_error_that_touches_nothing(cli, tmp_path: Path):
    dest = tmp_path / "ml"
    assert cli("example", "multilingual", str(dest)).code == 0
    config = dest / "ragrail.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('language = "auto"', 'language = "klingon"'),
        encoding="utf-8",
    )
    before = (dest / "baseline.json").read_bytes()
    r = cli("run", cwd=dest)
    assert r.code == 2
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert "ragrail.toml" in r.err and "pipeline.language" in r.err and "'klingon'" in r.err
    assert (dest / "baseline.json").read_bytes() == before
    # no state: only the .gitignore that `ragrail example` wrote
    assert [p.name for p in (dest / ".ragrail").iterdir()] == [".gitignore"]
