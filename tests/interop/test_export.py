"""``ragrail export trec`` read by ir-measures gives ragrail's own article metrics, per
question and averaged; ``ragrail export ragas`` writes what RAGAS reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interop.conftest import DATA, read_jsonl, scores

GRADED = [
    # graded, with a judged non-relevant article and an id holding a space
    {"id": "return window", "question": "How long do I have to return an item?",
     "sources": {"returns": 2, "account": 0}, "facts": ["30 days"]},
    {"id": "refund-timing", "question": "When will I get my refund?",
     "sources": {"returns": 2, "billing": 1}, "facts": ["5 business days"]},
    # ranked [shipping, returns, account]: the grade-3 article below a grade-1 one
    {"id": "express", "question": "How long does express delivery take?",
     "sources": {"shipping": 1, "account": 3}, "facts": ["next business day"]},
    {"id": "tracking", "question": "How do I track my parcel?",
     "sources": {"account": 1, "shipping": 3}, "facts": ["Orders > Track"]},
    # ranked [billing, shipping, account]: the first relevant article at rank 2
    {"id": "invoices", "question": "Where are the invoices of my orders?",
     "sources": {"billing": 0, "shipping": 2, "returns": 1}, "facts": []},
    # a plain list: grade 1 each
    {"id": "close", "question": "How do I close my account?", "sources": ["account"], "facts": []},
    # no word of it is in any document: nothing is retrieved
    {"id": "nothing", "question": "Xylophone quartz?", "sources": ["billing"], "facts": []},
    # not covered: no article metrics in ragrail, no line in either file
    {"id": "mars", "question": "Do you ship to Mars?", "sources": [], "facts": []},
    # only judged non-relevant articles: no relevant source, no article metrics either
    {"id": "judged-only", "question": "Can I pay with PayPal?", "sources": {"returns": 0}, "facts": []},
]  # fmt: skip
MEASURES = {
    "precision_at_k": "P",
    "recall_at_k": "R",
    "success_at_k": "Success",
    "reciprocal_rank": "RR",
    "average_precision": "AP",
    "ndcg_at_k": "nDCG",
}


@pytest.fixture
def graded_run(cli, project) -> dict:
    """The built-in pipeline run on the graded golden set (k = 3; no minimum score, so
    rankings are full)."""
    (project / "golden.json").write_text(json.dumps(GRADED))
    return scores(cli, project, False, "--min-score", "0")


def ir_measures_values(project: Path, k: int) -> tuple[dict, dict, set[str]]:
    """(per query: ragrail field -> value, ragrail field -> mean, the queries in the run),
    computed by ir-measures from the exported files."""
    import ir_measures

    by_name = {name: getattr(ir_measures, measure) @ k for name, measure in MEASURES.items()}
    qrels = list(ir_measures.read_trec_qrels(str(project / "qrels.trec")))
    run = list(ir_measures.read_trec_run(str(project / "run.trec")))
    names = {m: name for name, m in by_name.items()}
    per_query: dict[str, dict[str, float]] = {}
    for m in ir_measures.iter_calc(list(by_name.values()), qrels, run):
        per_query.setdefault(m.query_id, {})[names[m.measure]] = m.value
    means = {
        names[m]: v
        for m, v in ir_measures.calc_aggregate(list(by_name.values()), qrels, run).items()
    }
    return per_query, means, {r.query_id for r in run}


def test_export_trec_read_by_ir_measures_gives_ragrails_values(cli, project, graded_run):
    r = cli("export", "trec", "--run", "results.json", cwd=project)
    assert r.code == 0, r.err
    assert (
        "trec_eval -m P.3 -m recall.3 -m recip_rank -m map -m ndcg_cut.3 qrels.trec run.trec"
        in r.err
    )
    k = graded_run["config"]["top_k"]
    assert k == 3
    per_query, means, queried = ir_measures_values(project, k)
    cases = graded_run["by_id"]
    scored = {c["id"] for c in graded_run["cases"] if c["articles"] is not None}
    assert scored == {
        "return window", "refund-timing", "express", "tracking", "invoices", "close", "nothing"
    }  # fmt: skip
    # every scored question, and only those, is in both files (ids percent-encoded)
    assert queried == set(per_query) == {i.replace(" ", "%20") for i in scored}
    compared = 0
    for case_id in scored:
        ours = cases[case_id]["articles"]
        theirs = per_query[case_id.replace(" ", "%20")]
        for field in MEASURES:
            assert ours[field] == pytest.approx(theirs[field], abs=1e-9), (case_id, field)
            compared += 1
    assert compared == 7 * 6
    stats = graded_run["totals"]["stats"]
    for field in MEASURES:
        assert stats[f"article_{field}"]["value"] == pytest.approx(means[field], abs=1e-9), field
        assert stats[f"article_{field}"]["n"] == 7
    # the rankings the comments in GRADED describe, and values a wrong ranking would change
    express, invoices = cases["express"]["articles"], cases["invoices"]["articles"]
    assert express["average_precision"] == pytest.approx((1 + 2 / 3) / 2)
    assert (invoices["reciprocal_rank"], invoices["recall_at_k"]) == (0.5, 0.5)
    assert cases["nothing"]["trace"]["retrieved"] == []
    assert per_query["nothing"] == dict.fromkeys(MEASURES, 0.0)


def test_the_files_hold_grades_and_article_rankings_as_written(cli, project, graded_run):
    assert cli("export", "trec", "--run", "results.json", cwd=project).code == 0
    qrels = (project / "qrels.trec").read_text().splitlines()
    assert qrels[:4] == [
        "return%20window 0 returns 2",
        "return%20window 0 account 0",  # judged non-relevant, kept
        "refund-timing 0 returns 2",
        "refund-timing 0 billing 1",
    ]
    assert "close 0 account 1" in qrels  # a plain list is grade 1
    assert not [line for line in qrels if line.startswith(("mars ", "judged-only "))]
    run = (project / "run.trec").read_text().splitlines()
    assert "nothing Q0 ragrail-nothing-retrieved 1 1 ragrail" in run
    by_case: dict[str, list[str]] = {}
    for line in run:
        qid, q0, doc, rank, score, tag = line.split(" ")
        assert (q0, tag) == ("Q0", "ragrail")
        by_case.setdefault(qid, []).append(doc)
        assert int(score) == len([x for x in run if x.startswith(qid + " ")]) - int(rank) + 1
    for case in graded_run["cases"]:
        if case["articles"] is None or not case["trace"]["retrieved"]:
            continue
        # the articles of the chunks, each once, in rank order
        articles = list(dict.fromkeys(c["source"] for c in case["trace"]["retrieved"]))
        assert by_case[case["id"].replace(" ", "%20")] == articles


def test_export_trec_from_the_latest_run_in_the_history(cli, project):
    (project / "golden.json").write_text(json.dumps(GRADED))
    (project / "ragrail.toml").write_text('docs = "docs"\ngolden = "golden.json"\n')
    assert cli("run", "--min-score", "0", "--json", "first.json", cwd=project).code == 0
    assert cli("run", "--top-k", "1", "--json", "second.json", cwd=project).code == 0
    assert cli("export", "trec", cwd=project).code == 0
    latest = (project / "run.trec").read_text()
    assert (
        cli("export", "trec", "--run", "second.json", "--run-file", "b.trec", cwd=project).code == 0
    )
    assert latest == (project / "b.trec").read_text()
    assert (
        cli(
            "export", "trec", "--run", "1", "--run-file", "c.trec", "--qrels", "q1", cwd=project
        ).code
        == 0
    )
    assert (
        cli(
            "export",
            "trec",
            "--run",
            "first.json",
            "--run-file",
            "d.trec",
            "--qrels",
            "q2",
            cwd=project,
        ).code
        == 0
    )
    assert (project / "c.trec").read_text() == (project / "d.trec").read_text() != latest


def test_export_to_standard_output(cli, project, graded_run):
    r = cli("export", "trec", "--run", "results.json", "--run-file", "-", cwd=project)
    assert r.code == 0
    assert not (project / "run.trec").exists() and (project / "qrels.trec").is_file()
    assert cli("export", "trec", "--run", "results.json", "--qrels", "q2", cwd=project).code == 0
    assert r.out == (project / "run.trec").read_text()
    assert r.out.startswith("return%20window Q0 returns 1 ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trec", "--run", "missing.json"], "results not found"),
        (["trec", "--run", "latest"], "no run history"),
        (["trec", "--run", "results.json", "--run-file", "-", "--qrels", "-"], "only one output"),
        (["trec", "--run", "results.json", "--run-file", "x", "--qrels", "x"], "same file"),
        (["trec", "--run", "results.json", "--run-file", "docs"], "is a folder"),
        (["ragas", "--run", "broken.json"], "invalid JSON"),
        (["trec", "--run", "baseline.json"], "a baseline keeps verdicts"),
    ],
)
def test_export_mistakes_are_exit_2_and_write_nothing(cli, project, graded_run, args, message):
    (project / "broken.json").write_text("{")
    (project / "baseline.json").write_text('{"format": "ragrail-baseline", "version": 2}')
    before = sorted(p.name for p in project.iterdir())
    r = cli("export", *args, cwd=project.parent if "latest" in args else project)
    assert r.code == 2, r.out + r.err
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], r.err
    assert sorted(p.name for p in project.iterdir()) == before


def test_export_ragas_writes_evaluation_dataset_jsonl_that_imports_back(cli, project):
    imported = DATA / "ragas" / "evaluation_dataset.jsonl"
    r = cli(
        "import",
        "ragas",
        str(imported),
        "--golden",
        "golden.json",
        "--outputs",
        "outputs.jsonl",
        cwd=project,
    )
    assert r.code == 0, r.err
    run = scores(cli, project)
    assert cli("export", "ragas", "--run", "results.json", cwd=project).code == 0
    samples = read_jsonl(project / "ragas.jsonl")
    assert len(samples) == len(run["cases"]) == 5
    first = samples[0]
    # SingleTurnSample's fields, in its order; no reference (ragrail labels facts); the
    # chunk ids as retrieved_context_ids (RAGAS's ID-based metrics read them)
    assert list(first) == ["user_input", "retrieved_contexts", "retrieved_context_ids", "response"]
    assert first["retrieved_context_ids"] == ["returns#2", "account#3"]
    assert first["user_input"] == "How long do I have to return an item?"
    assert first["retrieved_contexts"][0].startswith("You can return most items")
    assert first["response"] == "You have 30 days from delivery to return an item."
    # and back: the same questions, answers and passages
    again = project / "again"
    again.mkdir()
    r = cli(
        "import",
        "ragas",
        "../ragas.jsonl",
        "--outputs",
        "outputs.jsonl",
        "--docs",
        "../docs",
        cwd=again,
    )
    assert r.code == 0, r.err
    back = read_jsonl(again / "outputs.jsonl")
    original = {r["question"]: r for r in read_jsonl(project / "outputs.jsonl")}
    for record in back:
        before = original[record["question"]]
        assert record["answer"] == before["answer"]
        assert [c["text"] for c in record["contexts"]] == [c["text"] for c in before["contexts"]]
        # ... under the same ids, in the same documents
        assert [(c["id"], c.get("source")) for c in record["contexts"]] == [
            (c["id"], c.get("source")) for c in before["contexts"]
        ]
