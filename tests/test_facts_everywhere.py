"""Structured facts, slugged chunk ids, loose citations and abstentions, through every
golden format, the results file, the corpus, the HTML report and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.golden import Case, add_case, lint_golden, load_golden
from ragrail.records.results import CaseResult, RetrievedChunk, Trace, load_run
from ragrail.scoring.case import ScoringOptions, score_case
from ragrail.system.corpus import chunk_by_section, chunk_by_words, load_documents
from ragrail.text.matching import Fact

RAW_FACTS = ["30 days", {"any": ["10%", "10 percent"]}, {"regex": r"\d+ business days"}]
QUESTION = "How do refunds work?"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _formats(tmp_path: Path) -> dict[str, Path]:
    case = {"id": "refund", "question": QUESTION, "sources": ["Refund Policy"], "facts": RAW_FACTS}
    cell = json.dumps(RAW_FACTS).replace('"', '""')
    return {
        "json": _write(tmp_path / "g.json", json.dumps([case], indent=1)),
        "jsonl": _write(tmp_path / "g.jsonl", json.dumps(case) + "\n"),
        "yaml": _write(
            tmp_path / "g.yaml",
            "- id: refund\n"
            f"  question: {QUESTION}\n"
            "  sources: [Refund Policy]\n"
            "  facts:\n"
            "    - 30 days\n"
            "    - any: ['10%', 10 percent]\n"
            "    - regex: '\\d+ business days'\n",
        ),
        "csv": _write(
            tmp_path / "g.csv",
            f'id,question,sources,facts\nrefund,{QUESTION},Refund Policy,"{cell}"\n',
        ),
    }


def test_every_golden_format_reads_the_same_structured_facts(tmp_path):
    loaded = {name: load_golden(path).cases[0] for name, path in _formats(tmp_path).items()}
    for case in loaded.values():
        assert case == loaded["json"]
        assert [f.kind for f in case.facts] == ["text", "any", "regex"]
        assert case.facts == ["30 days", "10% | 10 percent", r"/\d+ business days/"]
        assert case.model_dump()["facts"] == RAW_FACTS


def test_a_plain_csv_facts_cell_still_splits_at_bars(tmp_path):
    path = _write(tmp_path / "g.csv", "id,question,sources,facts\na,q?,s,30 days| 10% \n")
    facts = load_golden(path).cases[0].facts
    assert facts == ["30 days", "10%"] and [f.kind for f in facts] == ["text", "text"]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("g.json", '[\n{"id": "a", "question": "q?",\n "facts": [{"regex": "(x"}]}\n]', "g.json:2"),
        ("g.jsonl", '{"id": "z", "question": "q?"}\n{"id": "a", "question": "q?", "facts": [{"regex": "(x"}]}\n', "g.jsonl:2"),
        ("g.yaml", "- id: z\n  question: q?\n- id: a\n  question: q?\n  facts: [{regex: '(x'}]\n", "g.yaml:3"),
        ("g.csv", 'id,question,facts\nz,q?,\na,q?,"[{""regex"": ""(x""}]"\n', "g.csv:3"),
    ],
)  # fmt: skip
def test_a_regex_that_does_not_compile_names_file_line_case_and_field(tmp_path, name, text, where):
    with pytest.raises(InputError) as info:
        load_golden(_write(tmp_path / name, text))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / where}: case 'a': field 'facts.0': regex '(x'")
    assert "does not compile" in message


def test_a_csv_cell_starting_with_a_bracket_must_be_a_json_list(tmp_path):
    path = _write(tmp_path / "g.csv", "id,question,facts\na,q?,[beta] feature\n")
    with pytest.raises(InputError, match=r"g\.csv:2: field 'facts': a cell starting with \["):
        load_golden(path)
    path = _write(tmp_path / "g.csv", 'id,question,facts\na,q?,"[""[beta] feature""]"\n')
    assert load_golden(path).cases[0].facts == ["[beta] feature"]


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".csv"])
def test_add_writes_structured_facts_that_read_back(tmp_path, suffix):
    path = _formats(tmp_path)[suffix.lstrip(".")]
    new = Case(
        id="other",
        question="Is there a fee for late refunds?",
        sources=["Refund Policy"],
        facts=[{"any": ["no fee", "free"]}, "a|b"],
    )
    add_case(path, new)
    cases = load_golden(path).cases
    assert cases[-1] == new and [f.kind for f in cases[-1].facts] == ["any", "text"]
    if suffix == ".csv":
        assert '[{""any"": [""no fee"", ""free""]}, ""a|b""]' in path.read_text()


def test_plain_facts_go_to_csv_as_bars(tmp_path):
    path = _write(tmp_path / "g.csv", "id,question,sources,facts\nz,r?,s,x\n")
    add_case(path, Case(id="a", question="q?", sources=["s"], facts=["30 days", "10%"]))
    assert path.read_text().splitlines()[-1] == "a,q?,s,30 days|10%"


def test_lint_uses_the_matcher(tmp_path):
    path = _write(
        tmp_path / "g.json",
        json.dumps(
            [
                {"id": "ok", "question": "a?", "sources": ["p"], "facts": RAW_FACTS},
                {"id": "typo", "question": "b?", "sources": ["p"], "facts": ["0 days"]},
                {
                    "id": "rx",
                    "question": "c?",
                    "sources": ["p"],
                    "facts": [{"regex": "\\d+ weeks"}],
                },
            ]
        ),
    )
    docs = {"p": "Refunds within 30 days: 10\u00a0percent back, paid in 5 business days."}
    problems = [str(p) for p in lint_golden(load_golden(path), docs)]
    assert problems == [
        f"{path}:1: case 'typo': fact \"0 days\" not found in p",
        f"{path}:1: case 'rx': fact \"/\\d+ weeks/\" not found in p",
    ]


def _result(tmp_path: Path) -> CaseResult:
    case = load_golden(_formats(tmp_path)["json"]).cases[0]
    chunk = RetrievedChunk(
        id="refund-policy#1",
        source="Refund Policy",
        rank=1,
        score=0.9,
        text="Returns within 30 days. Refunds of 10 percent arrive in 5 business days.",
    )
    answer = "Within 30 days [refund policy #1]; 10% back in 5 business days 【refund-policy#1】."
    return score_case(case, Trace(case_id=case.id, retrieved=[chunk], answer=answer))


def test_scoring_reads_structured_facts_and_loose_citations(tmp_path):
    result = _result(tmp_path)
    assert result.facts_retrieved == result.facts
    assert result.retrieval_recall == 1.0 and result.correctness == 1.0
    assert result.answer_pass is True, result.problems
    assert result.context_precision == 1.0


def test_a_saved_run_keeps_structured_facts(tmp_path):
    from ragrail.records.results import RunConfig
    from ragrail.run import score_run

    result = _result(tmp_path)
    config = RunConfig(
        name="t", chunking="chunks by section", top_k=3, min_score=0.2, retriever="standin",
        answerer="outputs", answerer_label="outputs", n_chunks=1, n_cases=1,
    )  # fmt: skip
    golden = load_golden(_formats(tmp_path)["json"])
    run = score_run(config, golden.cases, [result.trace])
    run.save(tmp_path / "baseline.json", "baseline")
    data = json.loads((tmp_path / "baseline.json").read_text())
    assert data["cases"][0]["facts"] == RAW_FACTS
    back = load_run(tmp_path / "baseline.json")
    assert back.cases[0].facts == run.cases[0].facts
    assert [f.kind for f in back.cases[0].facts] == ["text", "any", "regex"]
    assert isinstance(back.cases[0].facts_retrieved[1], Fact)


def test_custom_abstain_phrases_replace_the_defaults():
    case = Case(id="x", question="Bank transfer?", sources=[])
    trace = Trace(case_id="x", answer="Keine Ahnung, tut mir leid.")
    assert score_case(case, trace).answer_pass is False
    options = ScoringOptions(abstain_phrases=("keine Ahnung",))
    assert score_case(case, trace, options).answer_pass is True
    english = Trace(case_id="x", answer="I don't know.")
    assert score_case(case, english, options).answer_pass is False


def test_a_quoted_dont_know_keeps_its_claims(tmp_path):
    case = Case(id="w", question="Do weekends count?", sources=["p"], facts=["5 days"])
    chunk = RetrievedChunk(
        id="p#1", source="p", rank=1, score=1.0, text="Refunds take 5 days. Weekends: unknown."
    )
    answer = "Refunds take 5 days [p#1]. We do not know at this time if weekends count."
    result = score_case(case, Trace(case_id="w", retrieved=[chunk], answer=answer))
    assert result.faithfulness is not None and len(result.claims) >= 2


# ----------------------------------------------------------------------- corpus ids


def test_chunk_ids_are_slugs_of_the_document_name(tmp_path):
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    _write(
        docs_dir / "Refund Policy.md", "# Window\n\nReturns within 30 days.\n\n# Fees\n\nNone.\n"
    )
    _write(docs_dir / "sso.md", "# SSO\n\nAsk your IT admin.\n")
    docs = load_documents(docs_dir)
    assert [(c.id, c.source) for c in chunk_by_section(docs)] == [
        ("refund-policy#1", "Refund Policy"),
        ("refund-policy#2", "Refund Policy"),
        ("sso#1", "sso"),
    ]
    assert chunk_by_words(docs, 3)[0].id == "refund-policy#1"


def test_two_names_with_one_slug_are_refused(tmp_path):
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    _write(docs_dir / "Refund Policy.md", "a\n")
    _write(docs_dir / "refund-policy.md", "b\n")
    with pytest.raises(InputError, match="would share the chunk ids refund-policy#<n>"):
        load_documents(docs_dir)


# ----------------------------------------------------------------------- the HTML report


def test_html_highlights_facts_as_written_and_shows_the_citations_read(tmp_path):
    from ragrail.reports.html import _case, highlight

    assert highlight("Upload the ﬁle <now>", ["file"]) == (
        'Upload the <mark class="fact">ﬁle</mark> &lt;now&gt;'
    )
    marked = highlight("10 percent in 5 business days", list(_result(tmp_path).facts))
    assert marked.count("<mark") == 2
    html = _case(_result(tmp_path), set(), set())
    assert "<h4>Citations read</h4>" in html
    assert "refund-policy#1: refund-policy#1, rank 1 (source article)" in html
    assert "<code>10% | 10 percent</code>" in html


# ----------------------------------------------------------------------- the CLI


def _project(tmp_path: Path, answers: dict[str, str], extra: str = "") -> Path:
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    text = "Returns within 30 days.\n\nRefunds of 10 percent arrive in 5 business days.\n"
    _write(root / "docs" / "Refund Policy.md", text)
    golden = [
        {"id": "refund", "question": QUESTION, "sources": ["Refund Policy"], "facts": RAW_FACTS},
        {"id": "bank", "question": "Can I pay by bank transfer?", "sources": [], "facts": []},
    ]
    _write(root / "golden.json", json.dumps(golden))
    context = {"id": "refund-policy#1", "source": "Refund Policy", "text": text, "score": 0.9}
    lines = [
        json.dumps({"id": cid, "answer": a, "contexts": [context] if cid == "refund" else []})
        for cid, a in answers.items()
    ]
    _write(root / "outputs.jsonl", "\n".join(lines) + "\n")
    _write(
        root / "ragrail.toml",
        f'name = "t"\n[system]\nkind = "outputs"\npath = "outputs.jsonl"\n{extra}',
    )
    return root


def test_a_run_reads_loose_citations_and_a_polite_abstention(cli, tmp_path):
    root = _project(
        tmp_path,
        {
            "refund": "Within 30 days [Refund Policy #1]; 10% in 5 business days［refund-policy#1］.",
            "bank": "Sorry, but I couldn't find anything about bank transfers.",
        },
    )
    out = tmp_path / "r.json"
    r = cli("run", "--config", str(root / "ragrail.toml"), "--json", str(out))
    assert r.code == 0, r.out + r.err
    run = json.loads(out.read_text())
    assert [(c["id"], c["answer_pass"]) for c in run["cases"]] == [("refund", True), ("bank", True)]


def test_abstain_phrases_from_the_project_file(cli, tmp_path):
    answers = {"refund": "x", "bank": "Keine Ahnung."}
    out = tmp_path / "r.json"
    for extra, passed in (("", False), ('[scoring]\nabstain_phrases = ["keine Ahnung"]\n', True)):
        root = _project(tmp_path / str(passed), answers, extra)
        cli("run", "--config", str(root / "ragrail.toml"), "--json", str(out))
        bank = json.loads(out.read_text())["cases"][1]
        assert bank["answer_pass"] is passed


def test_a_bad_regex_fact_is_exit_2_and_writes_nothing(cli, tmp_path):
    root = _project(tmp_path, {"refund": "x", "bank": "I don't know."})
    golden = json.loads((root / "golden.json").read_text())
    golden[0]["facts"] = [{"regex": "(30 days"}]
    _write(root / "golden.json", json.dumps(golden))
    before = sorted(p.name for p in root.rglob("*"))
    r = cli("run", "--config", str(root / "ragrail.toml"), "--save-baseline")
    assert r.code == 2
    assert (
        "golden.json:1: case 'refund': field 'facts.0': regex '(30 days' does not compile" in r.err
    )
    assert sorted(p.name for p in root.rglob("*")) == before
