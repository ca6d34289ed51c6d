"""Lint: labels checked against the documents."""

from __future__ import annotations

from pathlib import Path


def test_a_fact_written_with_markdown_marks_is_named_with_the_bare_text_that_is_there():
    from ragrail.golden.lint import lint_golden
    from ragrail.records.case import Case, GoldenSet

    docs = {"ci": "Run `npm ci` in CI, within **30 days** of the _logs rotation."}
    case = Case(id="a", question="q", sources=["ci"], facts=["**30 days**", "`npm ci`", "_logs"])
    golden = GoldenSet(Path("g.json"), [case], {})
    messages = [p.message for p in lint_golden(golden, docs) if not p.warning]
    # the fact keeps its own marks; the document's pair up and are dropped
    assert messages == [
        'fact "**30 days**" not found in ci (written with Markdown marks; "30 days" is there)',
        'fact "`npm ci`" not found in ci (written with Markdown marks; "npm ci" is there)',
    ]
