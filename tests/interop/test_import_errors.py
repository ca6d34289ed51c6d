"""A file no tool would write, or a flag that cannot work: exit 2, one line naming the
file and line, and nothing written (an existing output is left as it was)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interop.conftest import DATA

SENTINEL = '[{"id": "kept", "question": "Untouched?", "sources": [], "facts": []}]\n'


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("ragrail: error: ")
    return lines[0]


def jsonl(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


GOOD = {"user_input": "How do I track my parcel?", "retrieved_contexts": [], "response": "x"}
SPAN = {
    "context": {"trace_id": "t1", "span_id": "s1"},
    "span_kind": "RETRIEVER",
    "attributes": {
        "input": {"value": "How do I track my parcel?"},
        "retrieval": {"documents": [{"document": {"content": "Parcels arrive in 3 days."}}]},
        "openinference": {"span": {"kind": "RETRIEVER"}},
    },
}

BAD_FILES = [
    # (name, format, file name, text, where, message)
    ("broken-json", "ragas", "d.jsonl", jsonl(GOOD, '{"user_input": "x",'), "d.jsonl:2:", "invalid JSON"),
    ("nan-score-literal", "ragas", "d.jsonl", jsonl(GOOD, '{"user_input": NaN}'), "d.jsonl:2:", "NaN is not valid JSON"),
    # conversations (a MultiTurnSample, a ConversationalGolden) that neither tool would load
    ("multi-turn-role", "ragas", "d.jsonl",
     jsonl(GOOD, {"user_input": [{"content": "hi", "type": "human"}, {"content": "x", "type": "system"}]}),
     "d.jsonl:2", "field 'user_input.1.type' must be 'human', 'ai' or 'tool', not 'system'"),
    ("multi-turn-content", "ragas", "d.jsonl", jsonl({"user_input": [{"type": "human"}]}),
     "d.jsonl:1", "field 'user_input.0.content' must be text (missing)"),
    ("multi-turn-message", "ragas", "d.jsonl", jsonl({"user_input": [{"content": "hi", "type": "human"}, "hello"]}),
     "d.jsonl:1", "field 'user_input.1' must be an object (a message)"),
    ("multi-turn-csv-cell", "ragas", "d.csv", "user_input,reference\n\"[{'content': 'hi', 'type': \",x\n",
     "d.csv:2", "field 'user_input': a list of messages that does not parse"),
    ("multi-turn-own-labels", "ragas", "d.jsonl",
     jsonl({"user_input": [{"content": "hi", "type": "human", "metadata": {"ragrail": {"source": ["returns"]}}}]}),
     "d.jsonl:1", "field 'user_input.0.metadata.ragrail' has an unknown label 'source'"),
    ("conversation-role", "deepeval", "d.json",
     '[\n  {"scenario": "s", "turns": [{"role": "user", "content": "q?"}]},\n'
     '  {"scenario": "s", "turns": [{"role": "bot", "content": "a"}]}\n]',
     "d.json:3", "field 'turns.0.role' must be 'user' or 'assistant', not 'bot'"),
    ("conversation-content", "deepeval", "d.jsonl", jsonl({"scenario": "s", "turns": [{"role": "user", "content": 3}]}),
     "d.jsonl:1", "field 'turns.0.content' must be text (not int)"),
    ("conversation-turns", "deepeval", "d.jsonl", jsonl({"scenario": "s", "turns": {"role": "user"}}),
     "d.jsonl:1", "field 'turns' must be a list of messages"),
    ("conversation-csv-turns", "deepeval", "d.csv", 'scenario,turns\ns,"[{""role"": ""user"","\n',
     "d.csv:2", "field 'turns' must hold the turns as a JSON list"),
    ("conversation-same-name", "deepeval", "d.jsonl",
     jsonl({"scenario": "s", "name": "a", "turns": [{"role": "user", "content": "q?"}]},
           {"input": "r?", "name": "a", "expected_output": "y"}),
     "d.jsonl:2", "id 'a' is given twice (first at"),
    ("no-question", "ragas", "d.jsonl", jsonl(GOOD, {"response": "x"}), "d.jsonl:2",
     "no question: the record has no 'user_input' or 'question' field"),
    ("contexts-not-texts", "ragas", "d.jsonl", jsonl({**GOOD, "retrieved_contexts": [{"a": 1}]}),
     "d.jsonl:1", "field 'retrieved_contexts.0' must be text, not an object"),
    ("not-an-object", "ragas", "d.jsonl", jsonl(GOOD, "[1, 2]"), "d.jsonl:2", "must be an object"),
    ("csv-long-row", "hf", "d.csv", "question,answer\nq1,a1\nq2,a2,extra\n", "d.csv:3",
     "CSV row has 3 fields but the header has 2"),
    ("csv-open-quote", "hf", "d.csv", 'question,answer\n"q1,a1\n', "d.csv:2", "invalid CSV"),
    ("parquet", "hf", "d.parquet", "PAR1", "d.parquet", "Parquet cannot be read here"),
    ("unknown-suffix", "ragas", "d.txt", "x", "d.txt", "unknown file type '.txt'"),
    ("deepeval-object", "deepeval", "d.json", '{"goldens": 3}', "d.json", "expected a JSON array"),
    ("deepeval-no-input", "deepeval", "d.json", '[\n  {"input": "q?", "name": "a"},\n  {"name": "b"}\n]',
     "d.json:3", "field 'input' is missing or empty"),
    ("deepeval-same-name", "deepeval", "d.json",
     '[\n  {"input": "q?", "name": "a", "expected_output": "x"},\n  {"input": "r?", "name": "a", "expected_output": "y"}\n]',
     "d.json:3", "id 'a' is given twice (first at"),
    ("promptfoo-yaml", "promptfoo", "p.yaml", "tests:\n  - vars: {question: [unclosed\n", "p.yaml:3:", "invalid YAML"),
    ("promptfoo-which-var", "promptfoo", "p.yaml",
     "tests:\n  - vars:\n      topic: refunds\n      tone: kind\n", "p.yaml:2", "which var is the question"),
    ("promptfoo-bad-regex", "promptfoo", "p.yaml",
     "tests:\n  - vars:\n      question: How?\n  - vars:\n      question: Why?\n"
     "    assert:\n      - type: regex\n        value: '(unclosed'\n",
     "p.yaml:4", "does not compile"),
    ("promptfoo-no-tests", "promptfoo", "p.yaml", "prompts: [hi]\n", "p.yaml", "no 'tests'"),
    ("not-a-span", "openinference", "t.jsonl", jsonl({"hello": "world"}), "t.jsonl:1", "not a span"),
    # a number was called null
    ("contexts-a-number", "ragas", "d.jsonl", jsonl(GOOD, {**GOOD, "retrieved_contexts": 5}),
     "d.jsonl:2", "field 'retrieved_contexts' must be a list of texts, not a number"),
    ("record-a-number", "ragas", "d.jsonl", jsonl(GOOD, "5"), "d.jsonl:2",
     "each record must be an object, not a number"),
    ("record-a-string", "ragas", "d.jsonl", jsonl(GOOD, '"q?"'), "d.jsonl:2",
     "each record must be an object, not a string"),
    # documents read as none: the retrieval was lost, exit 0
    ("documents-a-string", "openinference", "t.jsonl", jsonl(SPAN, {**SPAN, "context": {
        "trace_id": "t2", "span_id": "s2"}, "attributes": {**SPAN["attributes"], "retrieval": {
        "documents": "Parcels arrive in 3 days."}}}), "t.jsonl:2",
     "field 'retrieval.documents' must be a list of documents"),
    ("documents-plain-texts", "openinference", "t.jsonl", jsonl({**SPAN, "attributes": {
        **SPAN["attributes"], "retrieval": {"documents": ["Parcels arrive in 3 days."]}}}),
     "t.jsonl:1", "must be a list of documents ([{\"document\": {\"content\": ...}}, ...]), "
     "not a list of plain values"),
    ("documents-one-object", "openinference", "t.jsonl", jsonl({**SPAN, "attributes": {
        **SPAN["attributes"], "retrieval": {"documents": {"document": {"content": "x"}}}}}),
     "t.jsonl:1", "it is an object ('retrieval.documents.document.content')"),
]  # fmt: skip


def _prepared(project: Path) -> None:
    (project / "golden.json").write_text(SENTINEL)


@pytest.mark.parametrize(
    ("fmt", "name", "text", "where", "message"),
    [case[1:] for case in BAD_FILES],
    ids=[case[0] for case in BAD_FILES],
)
def test_a_bad_file_is_exit_2_naming_where_and_writes_nothing(
    cli, project, fmt, name, text, where, message
):
    source = project.parent / name
    source.write_text(text)
    _prepared(project)
    wants = ["--golden", "golden.json", "--force"]
    if fmt == "openinference":
        wants = ["--outputs", "outputs.jsonl"]
    r = cli("import", fmt, str(source), *wants, cwd=project)
    assert r.code == 2, r.out + r.err
    line = one_line(r.err)
    assert line.startswith(f"ragrail: error: {project.parent / where}")
    assert message in line
    assert (project / "golden.json").read_text() == SENTINEL
    assert not (project / "outputs.jsonl").exists()


FLAG_MISTAKES = [
    # (name, args, message)
    ("nothing-to-write", ["ragas", "{ragas}"], "say what to write"),
    ("traces-have-no-labels", ["openinference", "{spans}", "--golden", "g.json"], "hold no labels"),
    ("tests-have-no-answers", ["promptfoo", "{promptfoo}", "--outputs", "o.jsonl"],
     "hold no answers or retrieved contexts"),
    ("map-for-fixed-fields", ["ragas", "{ragas}", "--golden", "g.json", "--map", "question=q"],
     "--map is for the hf and promptfoo formats"),
    ("map-unknown-field", ["hf", "{hf}", "--golden", "g.json", "--map", "title=q"], "unknown field 'title'"),
    ("map-missing-column", ["hf", "{hf}", "--golden", "g.json", "--map", "question=query"],
     "no record has a field 'query'"),
    ("map-without-equals", ["hf", "{hf}", "--golden", "g.json", "--map", "question"], "write FIELD=COLUMN"),
    ("exists-without-force", ["ragas", "{ragas}", "--golden", "golden.json"], "already exists; pass --force"),
    ("into-the-docs-folder", ["ragas", "{ragas}", "--outputs", "docs/outputs.txt"], "into the docs folder"),
    ("same-file-twice", ["ragas", "{ragas}", "--golden", "x.jsonl", "--outputs", "x.jsonl"], "same file"),
    ("over-the-source", ["ragas", "{copy}", "--outputs", "{copy}", "--force"], "would overwrite the file being imported"),
    ("golden-format", ["ragas", "{ragas}", "--golden", "g.txt"], "unknown golden-set format '.txt'"),
    ("unknown-format", ["trulens", "{ragas}", "--golden", "g.json"], "'trulens' is not one of"),
    ("no-docs", ["ragas", "{ragas}", "--golden", "g.json", "--docs", "missing"], "documents folder not found"),
    ("unlabelled", ["hf", "{unlabelled}", "--golden", "g.json"], "no case could be labelled"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"), [c[1:] for c in FLAG_MISTAKES], ids=[c[0] for c in FLAG_MISTAKES]
)
def test_a_flag_that_cannot_work_is_exit_2_before_anything_is_written(cli, project, args, message):
    _prepared(project)
    copy = project / "copy.jsonl"
    copy.write_text((DATA / "ragas" / "evaluation_dataset.jsonl").read_text())
    unlabelled = project / "unlabelled.jsonl"
    unlabelled.write_text(jsonl({"question": "Anything about Mars?", "ground_truth": "Red sand."}))
    paths = {
        "ragas": DATA / "ragas" / "evaluation_dataset.jsonl",
        "spans": DATA / "openinference" / "spans.jsonl",
        "promptfoo": DATA / "promptfoo" / "promptfooconfig.yaml",
        "hf": DATA / "hf" / "rag_eval.jsonl",
        "copy": copy,
        "unlabelled": unlabelled,
    }
    before = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    r = cli("import", *[a.format(**paths) for a in args], cwd=project)
    assert r.code == 2, r.out + r.err
    assert message in one_line(r.err)
    after = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    assert after == before  # nothing written, nothing replaced
    assert sorted(p.name for p in (project / "docs").iterdir()) == [
        "account.md",
        "billing.md",
        "returns.md",
        "shipping.md",
    ]


def test_force_replaces_an_existing_output_whole(cli, project):
    _prepared(project)
    source = DATA / "deepeval" / "20250101_120000.json"
    r = cli("import", "deepeval", str(source), "--golden", "golden.json", "--force", cwd=project)
    assert r.code == 0, r.err
    assert [c["id"] for c in json.loads((project / "golden.json").read_text())] == [
        "return-window",
        "refund-timing",
        "tracking",
        "mars",
    ]
    assert not [p for p in project.iterdir() if p.name.endswith(".tmp")]


def test_docs_default_to_the_project_then_to_a_docs_folder(cli, project, tmp_path):
    source = DATA / "deepeval" / "20250101_120000.json"
    assert cli("import", "deepeval", str(source), "--golden", "a.json", cwd=project).code == 0
    (project / "ragrail.toml").write_text('docs = "missing"\n')
    r = cli("import", "deepeval", str(source), "--golden", "b.json", cwd=project)
    assert r.code == 2 and "documents folder is not found" in one_line(r.err)
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("import", "deepeval", str(source), "--golden", "c.json", cwd=empty)
    assert r.code == 2 and "pass --docs DIR" in one_line(r.err)


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml", ".csv"])
def test_the_golden_set_is_written_in_the_format_its_name_says(cli, project, suffix):
    from ragrail.golden import load_golden

    source = DATA / "promptfoo" / "tests.csv"
    name = f"golden{suffix}"
    if suffix == ".csv":  # a CSV golden set holds no checks, and the tracking test has one
        r = cli("import", "promptfoo", str(source), "--golden", name, cwd=project)
        assert r.code == 2 and "cannot hold checks" in one_line(r.err)
        assert not (project / name).exists()
        source = DATA / "deepeval" / "20250101_120000.json"
        r = cli("import", "deepeval", str(source), "--golden", name, cwd=project)
    else:
        r = cli("import", "promptfoo", str(source), "--golden", name, cwd=project)
    assert r.code == 0, r.err
    reference = project / "reference.json"
    args = ("deepeval", str(DATA / "deepeval" / "20250101_120000.json")) if suffix == ".csv" else (
        "promptfoo", str(source))  # fmt: skip
    assert cli("import", *args, "--golden", "reference.json", cwd=project).code == 0
    assert load_golden(project / name).cases == load_golden(reference).cases
