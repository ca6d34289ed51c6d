"""A Markdown summary for a pull-request comment or GitHub's job summary: regressions first."""

from __future__ import annotations

from ragrail.compare import Diff, pct
from ragrail.results import RunResult


def cell(text: str) -> str:
    """Escape model or document text for a Markdown table cell: no HTML, no pipes, one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.replace("|", "\\|").split())


def markdown_summary(run: RunResult, diff: Diff | None = None) -> str:
    t = run.totals
    lines = []
    if diff is not None and diff.regressed:
        n = len({c.case_id for c in diff.worse})
        lines.append(
            f"## ragrail: {cell(run.config.name)}: {n} question{'s' if n != 1 else ''} got worse"
        )
    elif diff is not None:
        lines.append(f"## ragrail: {cell(run.config.name)}: no regressions")
    else:
        lines.append(f"## ragrail: {cell(run.config.name)}")
    lines.append("")
    if diff is not None and diff.worse:
        lines += ["### Regressions", "", "| question | what got worse |", "| --- | --- |"]
        lines += [f"| `{cell(c.case_id)}` | {cell(c.detail)} |" for c in diff.worse]
        lines.append("")
    lines += ["### Totals", ""]
    if diff is not None:
        b = diff.baseline.totals
        lines += ["| metric | baseline | now |", "| --- | --- | --- |"]
        lines.append(f"| hit rate@{run.config.top_k} | {pct(b.hit_rate)} | {pct(t.hit_rate)} |")
        lines.append(f"| recall@{run.config.top_k} | {pct(b.recall)} | {pct(t.recall)} |")
        if diff.answers_compared:
            lines.append(
                f"| answers pass | {pct(b.answer_pass_rate)} | {pct(t.answer_pass_rate)} |"
            )
    else:
        lines += ["| metric | value |", "| --- | --- |"]
        lines.append(f"| hit rate@{run.config.top_k} | {pct(t.hit_rate)} |")
        lines.append(f"| recall@{run.config.top_k} | {pct(t.recall)} |")
        lines.append(f"| answers pass | {pct(t.answer_pass_rate)} |")
    lines.append(
        f"\n{t.n_cases} questions; {t.answers_passed} of {t.n_answers} answers pass"
        + (f"; {t.n_errors} errors" if t.n_errors else "")
        + "."
    )
    if diff is not None and diff.fixed:
        lines += ["", "### Fixed", "", "| question | what got better |", "| --- | --- |"]
        lines += [f"| `{cell(c.case_id)}` | {cell(c.detail)} |" for c in diff.fixed]
    failing = [c for c in run.cases if c.cause]
    if failing:
        lines += [
            "",
            "<details><summary>Failing questions and their causes</summary>",
            "",
            "| question | cause | detail |",
            "| --- | --- | --- |",
        ]
        lines += [
            f"| `{cell(c.id)}` | {cell(c.cause or '')} | {cell(c.cause_detail or '; '.join(c.problems))} |"
            for c in failing
        ]
        lines += ["", "</details>"]
    c = run.config
    lines += [
        "",
        f"<sub>{cell(c.chunking)}, top_k={c.top_k}, retriever {cell(c.retriever)}, "
        f"answers from {cell(c.answerer_label)}{' ' + cell(c.model) if c.model else ''}</sub>",
        "",
    ]
    return "\n".join(lines)
