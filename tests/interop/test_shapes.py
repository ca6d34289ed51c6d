"""Other shapes the same tools write: a Phoenix spans DataFrame saved as JSON Lines, a
reranker's output, a promptfoo config whose tests are in a file, a DeepEval test run."""

from __future__ import annotations

import json
from pathlib import Path

from ragrail.interop import deepeval, openinference, promptfoo
from tests.interop.conftest import DATA

WINDOW = "You can return most items within 30 days of delivery."
CLOSE = "To close your account, contact support."


def test_a_phoenix_spans_dataframe_written_as_json_lines(tmp_path: Path):
    """``get_spans_dataframe().to_json(orient="records", lines=True)``: flattened
    ``attributes.*`` columns, documents as dicts of dotted keys, epoch-ms times."""
    rows = [
        {"name": "retrieve", "span_kind": "RETRIEVER", "parent_id": "r1", "start_time": 1746180000200,
         "status_code": "OK", "context.span_id": "s2", "context.trace_id": "t1",
         "attributes.input.value": "How long do I have to return an item?",
         "attributes.retrieval.documents": [
             {"document.content": CLOSE, "document.id": "d2", "document.score": 0.2},
             {"document.content": WINDOW, "document.id": "d1", "document.score": "0.9"},
         ],
         "attributes.openinference.span.kind": "RETRIEVER"},
        {"name": "query", "span_kind": "CHAIN", "parent_id": None, "start_time": 1746180000100,
         "status_code": "OK", "context.span_id": "r1", "context.trace_id": "t1",
         "attributes.input.value": "How long do I have to return an item?",
         "attributes.output.value": "Within 30 days.", "attributes.openinference.span.kind": "CHAIN"},
    ]  # fmt: skip
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    raw = openinference.read(path)
    (case,) = raw.cases
    assert (case.id, case.question, case.answer) == (
        "t1",
        rows[0]["attributes.input.value"],
        "Within 30 days.",
    )
    assert [(c.text, c.id, c.score) for c in case.contexts] == [
        (CLOSE, "d2", 0.2),
        (WINDOW, "d1", 0.9),
    ]
    assert case.where == f"{path}:1"  # the trace's first line


def test_documents_given_as_json_text_are_read(tmp_path: Path):
    """A table export writes a list cell as its JSON text: the same documents, not a
    string to refuse (any other string is exit 2: tests/interop/test_import_errors.py)."""
    docs = [{"document.content": WINDOW, "document.id": "d1", "document.score": 0.9}]
    row = {"span_kind": "RETRIEVER", "context.span_id": "s1", "context.trace_id": "t1",
           "attributes.input.value": "How long do I have to return an item?",
           "attributes.retrieval.documents": json.dumps(docs),
           "attributes.openinference.span.kind": "RETRIEVER"}  # fmt: skip
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (case,) = openinference.read(path).cases
    assert [(c.text, c.id, c.score) for c in case.contexts] == [(WINDOW, "d1", 0.9)]


def test_a_reranker_gives_the_final_ranking_and_the_llm_the_answer(tmp_path: Path):
    def span(sid: str, parent: str | None, kind: str, start: str, attributes: dict) -> dict:
        return {"name": kind.lower(), "context": {"trace_id": "t", "span_id": sid}, "span_kind": kind,
                "parent_id": parent, "start_time": start, "status_code": "OK", "attributes": attributes}  # fmt: skip

    docs = [{"document": {"content": CLOSE}}, {"document": {"content": WINDOW}}]
    spans = [
        span("root", None, "CHAIN", "2025-01-01T00:00:00+00:00", {"input": {"value": '{"query": "Return?"}', "mime_type": "application/json"}}),
        span("r", "root", "RETRIEVER", "2025-01-01T00:00:01+00:00", {"retrieval": {"documents": docs}}),
        span("k", "root", "RERANKER", "2025-01-01T00:00:02+00:00", {"reranker": {"output_documents": docs[::-1]}}),
        span("l", "root", "LLM", "2025-01-01T00:00:03+00:00", {"llm": {"output_messages": [{"message": {"content": "30 days."}}]}}),
    ]  # fmt: skip
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"data": spans}))  # the REST API's page of spans
    (case,) = openinference.read(path).cases
    assert case.question == "Return?"  # from the JSON input's "query"
    assert case.answer == "30 days."  # the root has no output: the LLM span's message
    assert [c.text for c in case.contexts] == [WINDOW, CLOSE]  # the reranker's order


def test_a_trace_without_a_question_is_skipped_and_said(tmp_path: Path):
    spans = [
        {"context": {"trace_id": "a", "span_id": "1"}, "span_kind": "CHAIN", "attributes": {"input": {"value": "Q?"}}},
        {"context": {"trace_id": "b", "span_id": "2"}, "span_kind": "TOOL", "attributes": {}},
    ]  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    raw = openinference.read(path)
    assert [c.id for c in raw.cases] == ["a"]
    assert raw.cases[0].contexts is None  # no retriever span: no retrieval recorded
    assert raw.notes == [
        "1 trace(s) skipped: no question (no input.value on the root span or a RETRIEVER span)"
    ]


def test_a_promptfoo_config_whose_tests_are_a_file(tmp_path: Path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: [x]\ntests: file://{DATA / 'promptfoo' / 'tests.csv'}\n")
    raw = promptfoo.read(config)
    assert [c.question for c in raw.cases] == [
        "How do I track my parcel?",
        "How do I change my delivery address?",
        "Which cards do you accept?",
    ]
    assert raw.cases[0].where == f"{DATA / 'promptfoo' / 'tests.csv'}:2"


def test_a_deepeval_test_run_in_camel_case(tmp_path: Path):
    run = {"testRunData": {"testCases": [
        {"name": "test_case_0", "input": "Return?", "actualOutput": "30 days.",
         "expectedOutput": "30 days", "retrievalContext": [WINDOW], "context": None, "success": False},
    ]}}  # fmt: skip
    path = tmp_path / ".latest_test_run.json"
    path.write_text(json.dumps(run))
    (case,) = deepeval.read(path).cases
    assert (case.id, case.answer, case.references) == ("test_case_0", "30 days.", ["30 days"])
    assert [c.text for c in case.contexts] == [WINDOW]
    assert case.where == f"{path}: testRunData.testCases.0"
