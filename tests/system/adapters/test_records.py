"""What a system returns beyond its answer (the contexts it used, its index's size, its
settings), and its sources read as the documents they name."""

from __future__ import annotations

import json

import pytest

from ragrail.errors import InputError
from ragrail.project import SystemConfig
from ragrail.records.results import RetrievedChunk, Trace
from ragrail.system.adapters import HttpSystem, parse_output, record_to_trace
from ragrail.system.adapters.records import named_sources, unknown_sources
from ragrail.text.names import DocumentNames

CONTEXTS = [{"id": "node-1", "source": "docs/npm-ci.md", "text": "Use npm ci."}]


def test_cited_index_size_and_settings_reach_the_trace_and_only_cited_is_saved():
    record = parse_output(
        {
            "answer": "Use npm ci.",
            "contexts": CONTEXTS,
            "cited": ["node-1"],
            "index_size": 412,
            "settings": {"chunk_size": 512, "retriever": "bm25", "rerank": False, "temp": 0.2},
        },
        "app:answer",
    )
    trace = record_to_trace("q1", record)
    assert trace.cited == ["node-1"] and trace.index_size == 412
    assert trace.settings == {"chunk_size": 512, "retriever": "bm25", "rerank": False, "temp": 0.2}
    saved = json.loads(trace.model_dump_json())
    assert saved["cited"] == ["node-1"]
    assert "index_size" not in saved and "settings" not in saved


def test_a_trace_without_them_is_saved_as_before():
    trace = record_to_trace("q1", parse_output({"answer": "x", "contexts": CONTEXTS}, "t"))
    assert set(json.loads(trace.model_dump_json())) == {
        "case_id", "retrieved", "prompt", "prompt_tokens", "answer", "error", "latency_ms",
        "usage", "samples",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"cited": "node-1"}, "'cited'"),
        ({"cited": [1]}, "'cited.0'"),
        ({"index_size": -1}, "'index_size'"),
        ({"index_size": 3.0}, "'index_size'"),
        ({"index_size": True}, "'index_size'"),
        ({"settings": {"splitter": {"size": 512}}}, "'settings.splitter"),
        ({"settings": {"top_k": None}}, "'settings.top_k"),
        ({"settings": {"temp": float("nan")}}, "'settings.temp"),
        ({"settings": [1, 2]}, "'settings'"),
    ],
)
def test_each_is_checked_naming_the_field(extra, field):
    with pytest.raises(InputError, match=f"app:answer returned an invalid {field}"):
        parse_output({"answer": "x", "contexts": CONTEXTS, **extra}, "app:answer")


# ---------------------------------------------------------------- sources read as documents

NAMES = DocumentNames(["npm-ci", "npm-audit"])


def chunk(cid: str, source: str, rank: int = 1) -> RetrievedChunk:
    return RetrievedChunk(id=cid, source=source, rank=rank, score=0.0, text="t")


def test_sources_as_apps_return_them_are_read_as_their_documents():
    trace = Trace(
        case_id="q",
        retrieved=[
            chunk("a", "npm-ci.md", 1),
            chunk("b", "docs/npm-audit.md", 2),
            chunk("c", "https://docs.npmjs.com/cli/npm-ci.html", 3),
            chunk("npm-audit#4", "npm-audit#4", 4),  # no source given: its id
            chunk("e", "unrelated.md", 5),
            chunk("npm-ci#2", "a-title", 6),  # the source names none, the id does
        ],
    )
    [named] = named_sources([trace], NAMES)
    assert [c.source for c in named.retrieved] == [
        "npm-ci", "npm-audit", "npm-ci", "npm-audit", "unrelated.md", "npm-ci",
    ]  # fmt: skip
    assert trace.retrieved[0].source == "npm-ci.md"  # the given trace unchanged


def test_cited_sources_are_read_as_the_ids_of_that_documents_contexts():
    """A LangChain chain's sources (file names, paths, URLs) given as ``cited``: each names
    the contexts of its document (both chunks of npm-ci here), an id stays an id, and a
    source that names nothing given stays as written (scored as never given)."""
    from ragrail.records.trace import Sample

    retrieved = [
        chunk("a", "docs/npm-ci.md", 1),
        chunk("b", "docs/npm-audit.md", 2),
        chunk("c", "npm-ci.md", 3),
    ]
    trace = Trace(
        case_id="q",
        retrieved=retrieved,
        cited=["docs/npm-ci.md", "b", "docs/other.md"],
        samples=[Sample(answer="x", cited=["https://docs.npmjs.com/cli/npm-audit.html"])],
    )
    [named] = named_sources([trace], NAMES)
    assert named.cited == ["a", "c", "b", "docs/other.md"]
    assert named.samples[0].cited == ["b"]
    assert trace.cited == ["docs/npm-ci.md", "b", "docs/other.md"]  # the given trace unchanged
    ids = Trace(case_id="q", retrieved=retrieved, cited=["c", "a"])
    assert named_sources([ids], NAMES)[0].cited == ["c", "a"]  # ids: nothing to read


def test_a_trace_already_named_is_kept_as_it_is():
    trace = Trace(case_id="q", retrieved=[chunk("npm-ci#1", "npm-ci")])
    assert named_sources([trace], NAMES)[0] is trace
    assert named_sources([trace], DocumentNames([]))[0] is trace


def test_most_sources_naming_no_document_is_one_warning_naming_three():
    bad = [chunk(f"u{i}", f"uuid-{i}", i) for i in range(1, 5)]
    traces = [Trace(case_id="q", retrieved=[*bad, chunk("k", "npm-ci", 5)])]
    warning = unknown_sources(traces, NAMES, "the 2 documents in docs/")
    assert warning is not None
    assert warning.startswith(
        "4 of the 5 contexts returned name no document ('uuid-1', 'uuid-2', 'uuid-3'): "
        "their sources and ids were compared with the names of the 2 documents in docs/ "
        "('npm-ci', 'npm-audit')"
    )
    assert "\n" not in warning


def test_half_or_fewer_unknown_is_no_warning():
    traces = [Trace(case_id="q", retrieved=[chunk("u", "uuid"), chunk("k", "npm-ci")])]
    assert unknown_sources(traces, NAMES, "x") is None
    assert unknown_sources([Trace(case_id="q")], NAMES, "x") is None
    assert unknown_sources(traces, DocumentNames([]), "x") is None


# ---------------------------------------------------------------- the HTTP reply


def http(**fields: str) -> HttpSystem:
    return HttpSystem(SystemConfig(kind="http", url="http://127.0.0.1:9/ask", **fields))


def test_an_http_reply_may_say_what_it_cited_its_index_size_and_settings():
    reply = {
        "answer": "Use npm ci.",
        "contexts": CONTEXTS,
        "cited": [7, "node-1"],
        "index_size": 90,
        "settings": {"top_k": 3},
    }
    record = http()._parse(json.dumps(reply))
    assert not isinstance(record, str)
    assert (record.cited, record.index_size, record.settings) == (["7", "node-1"], 90, {"top_k": 3})
    nested = {"answer": "x", "contexts": CONTEXTS, "meta": {"used": ["node-1"], "n": 5}}
    record = http(cited_field="meta.used", index_size_field="meta.n")._parse(json.dumps(nested))
    assert not isinstance(record, str)
    assert (record.cited, record.index_size, record.settings) == (["node-1"], 5, None)


def test_an_empty_field_path_reads_nothing_and_a_wrong_cited_names_the_key():
    reply = json.dumps({"answer": "x", "contexts": CONTEXTS, "cited": {"a": 1}})
    record = http(cited_field="")._parse(reply)
    assert not isinstance(record, str) and record.cited is None
    with pytest.raises(InputError, match=r"system\.cited_field 'cited' is an object in the reply"):
        http()._parse(reply)


def test_a_credential_named_setting_is_masked_before_it_is_kept_or_shown():
    settings = {"api_key": "sk-live-SECRET123", "AUTH_TOKEN": "t0k", "db_password": "pw",
                "top_k": 3, "keyword_boost": 1.5}  # fmt: skip
    record = parse_output({"answer": "a", "contexts": CONTEXTS, "settings": settings}, "app")
    trace = record_to_trace("q1", record)
    assert trace.settings == {
        "api_key": "***", "AUTH_TOKEN": "***", "db_password": "***",
        "top_k": 3, "keyword_boost": "***",  # "key" in the name: masked, to be safe
    }  # fmt: skip
    assert "SECRET123" not in trace.model_dump_json()
