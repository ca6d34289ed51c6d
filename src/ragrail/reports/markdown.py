"""A Markdown summary for a pull-request comment or GitHub's job summary: errors and
regressions first."""

from __future__ import annotations

import re

from ragrail.diff import Diff, first_error, judge_failed, pct, run_summary
from ragrail.records.results import RunResult
from ragrail.reports.conversations import conversations_note, together
from ragrail.text.guard import visible

# Markdown syntax that could turn text into emphasis, a link, an image or a code span.
_INLINE = re.compile(r"([\\`*_\[\]~])")


def cell(text: str) -> str:
    """Escape model or document text for a Markdown table cell: no HTML, no pipes, no
    links or emphasis, one line (line breaks become spaces), control characters and bidi
    overrides visible."""
    text = (
        visible(text, one_line=False)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )
    return " ".join(_INLINE.sub(r"\\\1", text).replace("|", "\\|").split())


def code(text: str) -> str:
    """A case id as an inline code span for a table cell: shown literally, whatever it holds.

    Code spans show ``&lt;`` and ``\\*`` literally, so only what would end the span or
    the cell is handled: the fence is one backtick longer than any run inside, and pipes
    are escaped (GitHub removes that backslash in tables, code spans included).
    """
    text = visible(text).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_summary(run: RunResult, diff: Diff | None = None) -> str:
    t = run.totals
    verdict = diff.summary() if diff is not None else run_summary(run)
    title = f"## ragrail: {cell(run.config.name)}"
    lines = [f"{title}: {verdict}" if verdict else title, ""]
    errored = [c for c in run.cases if c.errored or judge_failed(c)]
    if errored:
        was_passing = {c.case_id for c in diff.errors} if diff is not None else set()
        lines += ["### Errors", "", "| question | what failed |", "| --- | --- |"]
        for c in errored:
            if c.errored:
                why = first_error(c)
                if c.id in was_passing:
                    why = f"passed in the baseline, now errors: {why}"
            else:
                why = "judge: " + "; ".join(c.judge.errors if c.judge else [])
            lines.append(f"| {code(c.id)} | {cell(why)} |")
        lines.append("")
    if diff is not None and diff.worse:
        lines += ["### Regressions", "", "| question | what got worse |", "| --- | --- |"]
        lines += [f"| {code(c.case_id)} | {cell(c.detail)} |" for c in diff.worse]
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
        for name, (was, now) in diff.graded.items():  # over the questions scored in both
            if f"{was:.2f}" != f"{now:.2f}":
                lines.append(f"| {name} | {was:.2f} | {now:.2f} |")
        if diff.set_test is not None:
            from ragrail.diff.noise import family_text

            noise = f"{diff.set_test.text()}; {family_text(diff.family, diff.n_tests, diff.floor)}"
            lines.append(f"\nRepeated answers: {cell(noise)}.")
    else:
        lines += ["| metric | value |", "| --- | --- |"]
        lines.append(f"| hit rate@{run.config.top_k} | {pct(t.hit_rate)} |")
        lines.append(f"| recall@{run.config.top_k} | {pct(t.recall)} |")
        lines.append(f"| answers pass | {pct(t.answer_pass_rate)} |")
    asked = t.n_answers + t.n_answer_errors
    lines.append(
        f"\n{t.n_cases} questions; {t.answers_passed} of {asked} answers pass"
        + (f" ({t.n_answer_errors} lost to errors)" if t.n_answer_errors else "")
        + (f"; {t.n_errors} question{'s' if t.n_errors != 1 else ''} errored" if t.n_errors else "")
        + "."
    )
    if t.n_conversations:  # a conversation passes when every turn passes
        lines.append(f"\n{conversations_note(t.conversations_passed, t.n_conversations)}.")
    if t.expected:
        from ragrail.scoring.behaviour import describe_counts

        lines.append(f"\nExpected behaviour: {describe_counts(t.expected)}.")
    if run.judge is not None:
        lines += _judge(run, diff)
    if diff is not None and diff.lower:
        lines += ["", "### Lower scores (not regressions)", "", "| question | score |"]
        lines += [
            "| --- | --- |",
            *(f"| {code(c.case_id)} | {cell(c.detail)} |" for c in diff.lower),
        ]
    if diff is not None and diff.noise:
        lines += ["", "### Within noise (not regressions)", "", "| question | what moved |"]
        lines += [
            "| --- | --- |",
            *(f"| {code(c.case_id)} | {cell(c.detail)} |" for c in diff.noise),
        ]
    if diff is not None and diff.fixed:
        lines += ["", "### Fixed", "", "| question | what got better |", "| --- | --- |"]
        lines += [f"| {code(c.case_id)} | {cell(c.detail)} |" for c in diff.fixed]
    failing = [c for c in together(run.cases) if c.cause]  # a conversation's turns in a row
    if failing:
        lines += [
            "",
            "<details><summary>Failing questions and their causes</summary>",
            "",
            "| question | cause | detail |",
            "| --- | --- | --- |",
        ]
        lines += [
            f"| {code(c.id)} | {cell(c.cause or '')} | {cell(c.cause_detail or '; '.join(c.problems) or first_error(c))} |"
            for c in failing
        ]
        lines += ["", "</details>"]
    cfg = run.config
    lines += [
        "",
        f"<sub>{cell(cfg.chunking)}, top_k={cfg.top_k}, retriever {cell(cfg.retriever)}, "
        f"answers from {cell(cfg.answerer_label)}{' ' + cell(cfg.model) if cfg.model else ''}</sub>",
        "",
    ]
    return "\n".join(lines)


def _judge(run: RunResult, diff: Diff | None) -> list[str]:
    """The judge's totals: raw, corrected by human labels with the interval and label
    count, or marked uncorrected; and corrected totals against the baseline."""
    from ragrail.reports.judged import (
        UNCORRECTED_WHY,
        change_text,
        corrected_detail,
        interval,
        judged_totals,
        pct_tenths,
    )

    totals = judged_totals(run)
    if not totals:  # the judge gave no verdict to total (it failed, or nothing to judge)
        return []
    lines = [
        "",
        f"### Judge: {cell(run.judge or '')}",
        "",
        "| total | judge (raw) | corrected | 95% interval | human labels |",
        "| --- | --- | --- | --- | --- |",
    ]
    details, uncorrected = [], False
    for total in totals:
        c = total.corrected
        if c is not None:
            lines.append(
                f"| {cell(total.label)} | {pct_tenths(c.raw)} | {pct_tenths(c.estimate)} "
                f"| {interval(c.low, c.high)} | {c.n_labelled} |"
            )
            details.append(f"- {cell(total.label)}: {cell(corrected_detail(c))}")
            continue
        raw = total.raw
        value = (
            "-"
            if raw is None or raw.value is None
            else (pct_tenths(raw.value) if total.as_pct else f"{raw.value:.2f}")
        )
        shown = (
            "-"
            if raw is None or raw.low is None or raw.high is None
            else (
                interval(raw.low, raw.high) if total.as_pct else f"[{raw.low:.2f}, {raw.high:.2f}]"
            )
        )
        lines.append(f"| {cell(total.label)} | {value} | uncorrected | {shown} (raw) | 0 |")
        uncorrected = uncorrected or total.uncorrected
    lines += ["", *details] if details else []
    if uncorrected:
        lines += ["", cell(UNCORRECTED_WHY)]
    if diff is not None and (diff.judge_changes or diff.judge_notes):
        lines += ["", "Against the baseline:", ""]
        lines += [f"- {cell(change_text(ch))}" for ch in diff.judge_changes]
        lines += [f"- {cell(note)}" for note in diff.judge_notes]
    return lines
