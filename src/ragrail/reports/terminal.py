"""The plain-text scorecard and baseline diff, readable at 80 columns."""

from __future__ import annotations

import re
import textwrap

from ragrail.compare import Diff, pct
from ragrail.results import CaseResult, RunResult

WIDTH = 80


def wrap(text: str, width: int, subsequent: str = "") -> list[str]:
    """Wrap at "; " and ", " boundaries first, so a quoted fact stays on one line;
    fall back to word wrapping only for a piece too long to fit."""
    pieces = re.split(r"(?<=[;,]) ", text)
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(subsequent + piece)
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip())]
        out.extend(
            textwrap.wrap(
                line.strip(),
                width,
                initial_indent=lead,
                subsequent_indent=subsequent,
                break_long_words=False,
            )
        )
    return out


def retrieval_label(case: CaseResult) -> str:
    """``hit`` when every fact came back, ``MISS`` when none did, the recall otherwise,
    and ``-`` for a case with nothing to retrieve."""
    if case.retrieval_recall is None:
        return "-"
    if case.retrieval_recall == 1.0:
        return "hit"
    if case.retrieval_recall == 0.0:
        return "MISS"
    return pct(case.retrieval_recall)


def answer_label(case: CaseResult) -> str:
    if case.errored:
        return "ERROR"
    if case.answer_pass is None:
        return "-"
    return "pass" if case.answer_pass else "FAIL"


def header(run: RunResult) -> list[str]:
    c = run.config
    model = f" ({c.model})" if c.model else ""
    return [
        f"{c.name}: {c.chunking}, top_k={c.top_k}, {c.n_chunks} chunks, "
        f"{c.n_cases} golden questions",
        f"Answers from: {c.answerer_label}{model}",
    ]


def scorecard(run: RunResult) -> str:
    lines = [*header(run), ""]
    id_width = max([len("question"), *(len(c.id) for c in run.cases)]) + 2
    lines.append(f"  {'question':<{id_width}}{'retrieval':<11}answer")
    indent = 2 + id_width + 11 + 6
    for case in run.cases:
        head = f"  {case.id:<{id_width}}{retrieval_label(case):<11}{answer_label(case):<6}"
        reason = case.trace.error if case.errored else "; ".join(case.problems)
        if not reason:
            lines.append(head.rstrip())
            continue
        wrapped = wrap(head + reason, WIDTH, subsequent=" " * indent)
        lines.extend(wrapped)
    lines.append("")
    lines.extend(totals_lines(run))
    return "\n".join(lines)


def totals_lines(run: RunResult) -> list[str]:
    t, k = run.totals, run.config.top_k
    out = [
        f"  hit rate@{k}  {pct(t.hit_rate):>4}      recall@{k}  {pct(t.recall):>4}"
        f"      ({t.n_retrieval} questions with facts)",
        f"  answers pass {pct(t.answer_pass_rate):>4}      ({t.answers_passed} of {t.n_answers})",
    ]
    if t.n_errors:
        out.append(
            f"  errors       {t.n_errors:>4}      (calls that failed; not counted as passes)"
        )
    if t.prompt_tokens_mean is not None:
        out.append(f"  prompt       ~{round(t.prompt_tokens_mean)} tokens per question")
    return out


def _moved(old: str, new: str) -> str:
    return f"{old} -> {new}" if old != new else f"{new} (unchanged)"


def diff_text(diff: Diff) -> str:
    b, r = diff.baseline.totals, diff.run.totals
    lines = [f"vs baseline ({diff.baseline.config.describe()}):"]
    lines.extend(f"  changed: {change}" for change in diff.config_changes)
    lines.append(f"  hit rate       {_moved(pct(b.hit_rate), pct(r.hit_rate))}")
    lines.append(f"  recall         {_moved(pct(b.recall), pct(r.recall))}")
    if diff.answers_compared:
        old, new = pct(b.answer_pass_rate), pct(r.answer_pass_rate)
        lines.append(f"  answers pass   {_moved(old, new)}")
    if b.prompt_tokens_mean is not None and r.prompt_tokens_mean is not None:
        old_t, new_t = str(round(b.prompt_tokens_mean)), str(round(r.prompt_tokens_mean))
        lines.append(f"  prompt tokens  {_moved(old_t, new_t)}")
    if diff.answers_note:
        lines.extend(wrap("  " + diff.answers_note, WIDTH, subsequent="    "))
    if diff.new_cases:
        lines.append(f"  new (not in baseline): {', '.join(diff.new_cases)}")
    if diff.removed_cases:
        lines.append(f"  removed (in baseline only): {', '.join(diff.removed_cases)}")
    for change in diff.changes:
        lines.extend(wrap("  " + change.line(), WIDTH, subsequent=" " * 10))
    lines.append("")
    n = len(diff.worse)
    if n:
        q = len({c.case_id for c in diff.worse})
        lines.append(
            f"{q} question{'s' if q != 1 else ''} got worse ({n} WORSE line{'s' if n != 1 else ''}):"
            " something that passed before fails now."
        )
    else:
        lines.append("No regressions.")
    return "\n".join(lines)
