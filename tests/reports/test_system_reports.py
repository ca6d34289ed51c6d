"""How the scorecard and the HTML report show a user's system: a failed call's retrieval
is ERROR (not MISS), the header counts the index only when it is known, and a run whose
answers need not cite says so."""

from __future__ import annotations

from ragrail.records.results import RetrievedChunk
from ragrail.reports import html
from ragrail.reports.terminal.scorecard import header, score_rows, totals_lines
from tests.factories import run_result
from tests.test_diff import case, errored

SYSTEM = {"chunking": "python callable", "retriever": "python", "answerer": "python"}


def rows(run) -> dict[str, str]:
    lines = score_rows(run, 100)[1:]
    return {ln.split()[0]: " ".join(ln.split()[1:]) for ln in lines}


def test_a_failed_call_is_error_in_the_retrieval_column_not_miss():
    late = errored("late")
    late.trace.retrieved = [RetrievedChunk(id="a#1", source="a", rank=1, score=1.0, text="t")]
    run = run_result([errored("down"), case("miss", 0.0, False, ["no"]), late])
    assert rows(run)["down"].startswith("ERROR ERROR")
    assert rows(run)["miss"].startswith("MISS FAIL")
    assert rows(run)["late"].startswith("MISS ERROR")  # retrieval came back: its recall stands
    summaries = html.html_report(run)
    assert "<summary><span class='id'>down</span><span>ERROR</span>" in summaries
    assert "<summary><span class='id'>miss</span><span>MISS</span>" in summaries


def test_the_header_counts_the_index_or_says_what_was_seen():
    pipeline = run_result([case("a", 1.0, True)], n_chunks=13)
    assert "top_k=3, 13 chunks," in header(pipeline, 200)[0]
    seen = run_result([case("a", 1.0, True)], n_chunks=62, **SYSTEM)
    assert "top_k=3, 62 distinct chunks retrieved," in header(seen, 200)[0]
    assert "62 distinct chunks retrieved, 1 questions" in html.html_report(seen)
    sized = run_result([case("a", 1.0, True)], n_chunks=62, index_size=4100, **SYSTEM)
    assert "top_k=3, 4100 chunks," in header(sized, 200)[0]
    words = run_result([case("a", 1.0, True)], chunking="50-word chunks", chunk_words=50)
    assert "top_k=3, 1 chunks," in header(words, 200)[0]


def test_citations_not_required_is_one_line_beside_the_answers():
    run = run_result([case("a", 1.0, True)], citations="none cited", **SYSTEM)
    lines = totals_lines(run)
    at = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("answers pass"))
    assert lines[at + 1] == (
        "  citations: not required, no answer cites a source "
        '([scoring] require_citation = "auto")'
    )
    assert "<p id='citations'>Citations: not required, no answer" in html.html_report(run)
    required = run_result([case("a", 1.0, True)])
    assert not any("citations" in ln for ln in totals_lines(required))
    assert "id='citations'" not in html.html_report(required)
