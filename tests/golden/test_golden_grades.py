"""Graded sources: {"plans": 2, "billing": 1} in every golden format, nDCG with the grades,
the binary measures and everything else with the articles graded >= 1."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.golden import Case, add_case, lint_golden, load_golden
from ragrail.records.results import Trace
from ragrail.scoring.case import ScoringOptions, score_case

GRADED = {"plans": 2, "billing": 1, "faq": 0}


def write(tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / f"g{suffix}"
    if suffix == ".json":
        text = json.dumps([{"id": "a", "question": "q?", "sources": GRADED}])
    elif suffix == ".jsonl":
        text = json.dumps({"id": "a", "question": "q?", "sources": GRADED}) + "\n"
    elif suffix == ".yaml":
        text = "- id: a\n  question: q?\n  sources: {plans: 2, billing: 1, faq: 0}\n"
    else:
        text = "id,question,sources\na,q?,plans:2|billing:1|faq:0\n"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".csv"])
def test_every_format_reads_graded_sources(tmp_path, suffix):
    [case] = load_golden(write(tmp_path, suffix)).cases
    assert case.sources == ["plans", "billing"]  # graded >= 1, in the order given
    assert case.grades == GRADED and case.relevance == GRADED
    assert not case.expects_abstain


def test_a_list_of_sources_is_grade_one_each_and_stores_no_grades():
    case = Case(id="a", question="q?", sources=["plans", "billing"])
    assert case.grades == {} and case.relevance == {"plans": 1, "billing": 1}
    assert "grades" not in case.model_dump()


def test_csv_items_without_a_grade_are_grade_one():
    case = load_golden_text("id,question,sources\na,q?,plans:3|billing\n", ".csv")
    assert case.grades == {"plans": 3, "billing": 1}


def test_only_grade_zero_sources_make_an_abstain_case():
    case = Case(id="a", question="q?", sources={"faq": 0})
    assert case.sources == [] and case.expects_abstain and case.grades == {"faq": 0}


def test_graded_cases_survive_a_dump_and_reload():
    case = Case(id="a", question="q?", sources=GRADED)
    assert Case.model_validate(case.model_dump()) == case


def load_golden_text(text: str, suffix: str) -> Case:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"g{suffix}"
        path.write_text(text, encoding="utf-8")
        return load_golden(path).cases[0]


@pytest.mark.parametrize(
    ("text", "suffix", "needle"),
    [
        ('[{"id": "a", "question": "q", "sources": {"plans": -1}}]', ".json", "whole number"),
        ('[{"id": "a", "question": "q", "sources": {"plans": 1.5}}]', ".json", "not 1.5"),
        ('[{"id": "a", "question": "q", "sources": {"plans": true}}]', ".json", "not True"),
        ('[{"id": "a", "question": "q", "sources": {"plans": "2"}}]', ".json", "not '2'"),
        ('[{"id": "a", "question": "q", "sources": {" ": 1}}]', ".json", "empty strings"),
        (
            '[{"id": "a", "question": "q", "sources": {"plans": 1}, "grades": {"plans": 1}}]',
            ".json",
            'in "sources" only',
        ),
        (
            '[{"id": "a", "question": "q", "sources": ["plans"], "grades": {"plans": 2, "x": 1}}]',
            ".json",
            "exactly the sources",
        ),
        ("- id: a\n  question: q\n  sources: {plans: 2.5}\n", ".yaml", "whole number"),
        ("id,question,sources\na,q,plans:2|plans:1\n", ".csv", "'plans' is graded twice"),
        ("id,question,sources\na,q,plans:1.5\n", ".csv", "not '1.5'"),
        ("id,question,sources\na,q,plans:-2\n", ".csv", "not -2"),
    ],
)
def test_bad_grades_name_the_file_line_and_field(tmp_path, text, suffix, needle):
    path = tmp_path / f"g{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_golden(path)
    assert needle in err.value.message
    assert err.value.where.startswith(str(path))
    if suffix != ".json":  # a JSON array's line is its case's
        assert err.value.where.endswith(":1") or err.value.where.endswith(":2")


def test_lint_checks_grade_zero_sources_name_documents_too(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(
        json.dumps([{"id": "a", "question": "q?", "sources": {"plans": 1, "typo": 0}}]),
        encoding="utf-8",
    )
    problems = [str(p) for p in lint_golden(load_golden(path), {"plans": "Plans text."})]
    assert any("unknown source 'typo'" in p for p in problems)


def test_add_to_a_csv_with_graded_rows_keeps_them(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("id,question,sources,facts,tags\na,q?,plans:2|faq:0,,\n", encoding="utf-8")
    add_case(path, Case(id="b", question="other?", sources=["faq"]))
    cases = load_golden(path).cases
    assert cases[0].grades == {"plans": 2, "faq": 0} and cases[1].sources == ["faq"]


def retrieved(*sources: str):
    from ragrail.records.results import RetrievedChunk

    return [
        RetrievedChunk(id=f"{s}#1", source=s, rank=i, score=1.0, text=f"{s} text")
        for i, s in enumerate(sources, 1)
    ]


def test_ndcg_uses_the_grades_and_binary_measures_grade_one_and_up():
    case = Case(id="a", question="q?", sources=GRADED)
    trace = Trace(case_id="a", retrieved=retrieved("faq", "billing", "plans"), answer="x")
    articles = score_case(case, trace, ScoringOptions(k=3)).articles
    assert articles is not None
    # DCG = 0 + 1/log2(3) + 2/log2(4); IDCG = 2 + 1/log2(3)
    expected = (1 / math.log2(3) + 1) / (2 + 1 / math.log2(3))
    assert articles.ndcg_at_k == pytest.approx(expected)
    assert articles.precision_at_k == pytest.approx(2 / 3)  # faq (grade 0) is not relevant
    assert articles.recall_at_k == 1.0 and articles.reciprocal_rank == 0.5


def test_a_graded_golden_set_runs_end_to_end_and_stores_its_grades(cli, tmp_path, kitebase):
    project = tmp_path / "kb"
    shutil.copytree(kitebase, project)
    golden = json.loads((project / "golden.json").read_text(encoding="utf-8"))
    for case in golden:
        if case["id"] == "secure-account":
            case["sources"] = {"two-factor": 2, "recovery-email": 1, "account-recovery": 0}
    (project / "golden.json").write_text(json.dumps(golden), encoding="utf-8")
    out = tmp_path / "r.json"
    r = cli("run", "--no-history", "--json", str(out), cwd=project)
    assert r.code in (0, 1), r.err
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    secure = cases["secure-account"]
    assert secure["sources"] == ["two-factor", "recovery-email"]
    assert secure["grades"] == {"two-factor": 2, "recovery-email": 1, "account-recovery": 0}
    assert "grades" not in cases["link-expiry"]  # a plain list stores no grades
    ranked = []
    for chunk in secure["trace"]["retrieved"]:
        if chunk["source"] not in ranked:
            ranked.append(chunk["source"])
    gains = [secure["grades"].get(s, 0) for s in ranked[:3]]
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains, 1))
    assert secure["articles"]["ndcg_at_k"] == pytest.approx(dcg / (2 + 1 / math.log2(3)))
