"""Lint: labels checked against the documents."""

from __future__ import annotations

from pathlib import Path


def test_a_fact_written_with_markdown_marks_is_named_with_the_bare_text_that_is_there():
    from ragrail.golden.lint import lint_golden
    from ragrail.records.case import Case, GoldenSet

    docs = {"ci": "Run npm ci in CI, within 30 days of the _logs rotation (__init__.py)."}
    case = Case(
        id="a", question="q", sources=["ci"],
        facts=["**30 days**", "`npm ci`", "_logs", "__init__"],
    )  # fmt: skip
    golden = GoldenSet(Path("g.json"), [case], {})
    messages = [p.message for p in lint_golden(golden, docs) if not p.warning]
    # the fact keeps its own marks; the document has the bare text only
    assert messages == [
        'fact "**30 days**" not found in ci (written with Markdown marks; "30 days" is there)',
        'fact "`npm ci`" not found in ci (written with Markdown marks; "npm ci" is there)',
    ]


def test_a_fact_found_with_the_documents_own_marks_is_a_warning_naming_the_bare_text():
    from ragrail.golden.lint import lint_golden
    from ragrail.records.case import Case, GoldenSet

    docs = {"ci": "Run `npm ci` in CI, within **30 days**; see __init__.py."}
    case = Case(
        id="a", question="q", sources=["ci"], facts=["**30 days**", "`npm ci`", "__init__"]
    )  # fmt: skip
    problems = lint_golden(GoldenSet(Path("g.json"), [case], {}), docs)
    assert [p.message for p in problems if not p.warning] == []  # found as written
    # an answer that writes "30 days" plainly misses the fact: say so; __init__ is a name
    assert [p.message for p in problems if p.warning] == [
        'fact "**30 days**" is written with Markdown marks: only an answer that writes them '
        'too has it ("30 days" without them)',
        'fact "`npm ci`" is written with Markdown marks: only an answer that writes them '
        'too has it ("npm ci" without them)',
    ]
