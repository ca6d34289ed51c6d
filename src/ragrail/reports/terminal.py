"""The plain-text scorecard and baseline diff, laid out for the terminal's width.

Every id, fact, reason, answer or name that reaches the terminal goes through
:func:`~ragrail.reports.text.visible` first, so no input can draw a line of its own
(a case id with a newline and ``WORSE:`` after it) or send a terminal escape.

Widths are measured in terminal cells (a CJK character takes two), from ``COLUMNS``,
the terminal, or 100 columns for a pipe or a CI log. Long ids are cut in the middle
with an ellipsis so the verdict and its reason keep their room; a reason or cause
wraps to a few lines at most, one in a long report, and ends in … when cut (the
JSON and HTML reports keep every word).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len as _rich_cell_len
from rich.cells import get_character_cell_size

from ragrail.answerers import CallPlan
from ragrail.compare import Diff, error_phrases, first_error, pct
from ragrail.reports.text import visible
from ragrail.results import CaseResult, RunResult, Stat, Totals, Usage
from ragrail.sweep import SweepRow

if TYPE_CHECKING:
    from ragrail.judge import JudgePlan

DEFAULT_WIDTH = 100  # output to a pipe, a file or a CI log: no terminal to ask
MIN_WIDTH = 40
ELLIPSIS = "…"
# A long scorecard is printed compact (each reason and cause on one line) once its
# per-question lines would run past this many a question, and past LONG_REPORT lines.
LINES_PER_QUESTION = 2.5
LONG_REPORT = 40


def terminal_width() -> int:
    """The width to lay out for: ``COLUMNS`` when set (as rich and click read it), else
    the terminal's, else 100 when output goes to a pipe, a file or a CI log."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def cell_len(text: str) -> int:
    """Terminal cells ``text`` takes: two for a wide (CJK) character, none for a combining
    mark. Text that went through visible() has no control characters, so ASCII is one
    cell a character (the common case, and fast)."""
    return len(text) if text.isascii() else _rich_cell_len(text)


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal cells (a CJK character takes two), ending
    in … where it had to be cut."""
    if cell_len(text) <= width:
        return text
    if text.isascii():
        return text[: max(0, width - 1)].rstrip() + ELLIPSIS
    kept, used = [], 0
    for ch in text:
        size = get_character_cell_size(ch)
        if used + size > width - 1:
            break
        kept.append(ch)
        used += size
    return "".join(kept).rstrip() + ELLIPSIS


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, its middle replaced by … where it is too long:
    ids often share a prefix (``billing-refund-...``) or differ only in a tail number."""
    if cell_len(text) <= width:
        return text
    head_room = width // 2
    tail_room = width - 1 - head_room
    if text.isascii():
        return text[:head_room] + ELLIPSIS + (text[-tail_room:] if tail_room > 0 else "")
    head = cut(text, head_room + 1).removesuffix(ELLIPSIS)
    tail, used = [], 0
    for ch in reversed(text):
        size = get_character_cell_size(ch)
        if used + size > tail_room:
            break
        tail.append(ch)
        used += size
    return head + ELLIPSIS + "".join(reversed(tail))


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` cells (a CJK character takes two)."""
    return text + " " * max(0, width - cell_len(text))


def id_column(ids: Sequence[str], width: int, rest: int, least: int = len("question")) -> int:
    """Cells for an id column: the longest id (at least ``least``, the header's), but at
    most 2/5 of the line and never so wide that fewer than ``rest`` cells are left for
    what follows. Longer ids are cut in the middle."""
    longest = max([least, *(cell_len(i) for i in ids)])
    return min(longest, max(12, min(width * 2 // 5, width - rest)))


def _spans(text: str, first: int, rest: int, keep_quotes: bool = True) -> list[tuple[int, int]]:
    """Greedy line breaking of ``text`` measured in cells: lines of at most ``first``,
    then ``rest`` cells, as (start, end) offsets. With ``keep_quotes`` a double-quoted
    string (a fact) stays on one line where it fits; a word wider than a line (CJK text
    has no spaces) is broken between characters; hyphens never break."""
    protected = text
    if keep_quotes:
        protected = re.sub(r'"[^"]*"', lambda m: m.group(0).replace(" ", "\x00"), text)
    todo = [m.span() for m in re.finditer(r"[^ \t\n]+", protected)]
    todo.reverse()
    lines: list[tuple[int, int]] = []
    start = end = used = 0
    open_line = False
    room = max(1, first)
    while todo:
        s, e = todo.pop()
        size = cell_len(text[s:e])
        if open_line and used + (s - end) + size <= room:  # the gap as written: 1 cell a space
            end, used = e, used + (s - end) + size
            continue
        if open_line:
            lines.append((start, end))
            room, open_line = max(1, rest), False
        if size > room and "\x00" in protected[s:e]:  # a quoted string too long: its words
            todo.extend(reversed([(s + a, s + b) for a, b in _words(text[s:e])]))
            continue
        while size > room:  # a single word wider than the line
            k, taken = s, 0
            while k < e and taken + get_character_cell_size(text[k]) <= room:
                taken += get_character_cell_size(text[k])
                k += 1
            k = max(k, s + 1)
            lines.append((s, k))
            room, s = max(1, rest), k
            size = cell_len(text[s:e])
        start, end, used, open_line = s, e, size, True
    if open_line:
        lines.append((start, end))
    return lines


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def fit(text: str, first: int, rest: int | None = None, max_lines: int | None = None) -> list[str]:
    """``text`` broken into lines of at most ``first`` cells (``rest`` after the first),
    at most ``max_lines`` of them: the last one kept ends in … when text was left over."""
    rest = first if rest is None else rest
    spans = _spans(text, first, rest)
    if not spans:
        return [""]
    if max_lines is not None and len(spans) > max_lines:
        # it will be cut anyway: fill the lines rather than move a fact down whole
        spans = _spans(text, first, rest, keep_quotes=False)
        head = [text[a:b] for a, b in spans[: max_lines - 1]]
        tail = " ".join(text[spans[max_lines - 1][0] :].split())
        return [*head, cut(tail, first if max_lines == 1 else rest)]
    return [text[a:b] for a, b in spans]


def wrap(text: str, width: int, subsequent: str = "", max_lines: int | None = None) -> list[str]:
    """Word-wrap one line to ``width`` cells, keeping its indent on the first line and
    ``subsequent`` on the others; never inside a double-quoted string where it fits
    (a fact stays whole), never at a hyphen (``account-recovery#1`` stays whole)."""
    body = text.lstrip(" ")
    lead = text[: len(text) - len(body)]
    lines = fit(body, width - cell_len(lead), width - cell_len(subsequent), max_lines=max_lines)
    return [lead + lines[0], *(subsequent + line for line in lines[1:])]


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
    if not case.answer_runs:
        return "-"
    if case.answer_runs > 1:
        return f"{case.answer_passes}/{case.answer_runs}"
    return "pass" if case.answer_pass else "FAIL"


def answer_reason(case: CaseResult) -> str:
    """Why the answer failed or errored, escaped for the terminal."""
    if case.errored:
        return visible(first_error(case))
    reason = visible("; ".join(case.problems))
    if case.flaky:
        rate = pct(case.answer_pass_rate)
        return f"flaky ({rate} pass); {reason}" if reason else f"flaky ({rate} pass)"
    return reason


def header(run: RunResult, width: int | None = None) -> list[str]:
    w = width or terminal_width()
    c = run.config
    model = f" ({c.model})" if c.model else ""
    return [
        *wrap(
            f"{visible(c.name)}: {visible(c.chunking)}, top_k={c.top_k}, {c.n_chunks} chunks, "
            f"{c.n_cases} golden questions",
            w,
            subsequent="  ",
        ),
        *wrap(f"Answers from: {visible(c.answerer_label + model)}", w, subsequent="  "),
    ]


def id_cell(case_id: str, width: int) -> str:
    """A case id, escaped, cut in the middle to ``width`` cells and padded to them."""
    return pad(cut_middle(visible(case_id), width), width)


def scorecard(run: RunResult, metrics: bool = False, width: int | None = None) -> str:
    """The per-question table, totals, the judge's findings and why questions failed,
    laid out for ``width`` columns (default: the terminal's, see :func:`terminal_width`)."""
    w = width or terminal_width()
    rows, why = per_question_lines(run, w)
    lines = [*header(run, w), "", *rows]
    if metrics:
        lines.extend(["", metrics_table(run, w)])
    lines.append("")
    # a total's note (errors, an unknown cost) wraps under the value column
    lines.extend(more for ln in totals_lines(run) for more in wrap(ln, w, " " * 20))
    if run.judge is not None:
        lines.append("")
        lines.extend(more for ln in judge_lines(run, w) for more in wrap(ln, w, " " * 20))
    if why:
        lines.extend(["", *why])
    return "\n".join(lines)


def per_question_lines(run: RunResult, width: int) -> tuple[list[str], list[str]]:
    """The scorecard's rows and its "Why they failed" lines. Each reason gets up to two
    lines and each cause up to four; in a long report (past LONG_REPORT lines and
    LINES_PER_QUESTION lines a question) rows go to one line, then causes to two, then
    to one, so a set of a hundred questions with long ids still reads as a list."""
    budget = max(LONG_REPORT, LINES_PER_QUESTION * len(run.cases))
    for row_lines, cause_lines in ((2, 4), (1, 2), (1, 1)):
        rows = score_rows(run, width, row_lines)
        why = causes_lines(run, width, cause_lines)
        if len(rows) + len(why) <= budget:
            break
    return rows, why


def score_rows(run: RunResult, width: int, max_lines: int = 2) -> list[str]:
    """One row per question: id, retrieval, answer verdict and the reason it failed, in
    at most ``max_lines`` lines."""
    labels = [answer_label(c) for c in run.cases]
    # "FAIL  reason" as in a plain run; wider when ERROR or "10/10" labels appear
    answer_width = max([4, *(len(label) for label in labels)]) + 2
    # ids give way first: the verdict columns and 20 cells of reason keep their room
    id_width = id_column([visible(c.id) for c in run.cases], width, 4 + 11 + answer_width + 20)
    indent = 2 + id_width + 2 + 11 + answer_width
    lines = [f"  {pad('question', id_width + 2)}{'retrieval':<11}answer"]
    for case, label in zip(run.cases, labels, strict=True):
        head = f"  {id_cell(case.id, id_width)}  {retrieval_label(case):<11}{label:<{answer_width}}"
        reason = answer_reason(case)
        if not reason:
            lines.append(head.rstrip())
            continue
        body = fit(reason, width - indent, max_lines=max_lines)
        lines.append(head + body[0])
        lines.extend(" " * indent + more for more in body[1:])
    return lines


def judge_lines(run: RunResult, width: int | None = None) -> list[str]:
    """The judge's totals, its cost apart from the answerer's, and what it found per case."""
    w = width or terminal_width()
    out = [f"Judge: {visible(run.judge or '')}"]
    st = run.judge_stats
    if "judge_faithfulness" in st and st["judge_faithfulness"].n:
        out.append(stat_line("faithfulness", st["judge_faithfulness"], False))
    for key, stat in st.items():
        if key.startswith("judge_") and key != "judge_faithfulness":
            out.append(stat_line(key.removeprefix("judge_"), stat, True, "pass"))
    if run.judge_usage is not None:
        u = run.judge_usage
        out.append(f"  {'judge calls':<18}{u.calls} made, {u.cached} cached, {u.errors} failed")
        out.append(f"  {'judge cost':<18}{usage_cost(u)} (apart from the answers' cost)")
    findings = []
    id_width = id_column([visible(c.id) for c in run.cases], w, 4 + 30)
    for c in run.cases:
        j = c.judge
        if j is None:
            continue
        notes = [f"JUDGE ERROR {visible(e)}" for e in j.errors]
        notes += [f'unsupported "{visible(cl.text)}"' for cl in j.claims if not cl.supported]
        if not j.faithfulness_stable:
            runs = ", ".join(f"{v:.2f}" for v in j.faithfulness_runs)
            notes.append(f"faithfulness unstable ({runs})")
        for cr in j.criteria:
            if not cr.stable:
                shown = ", ".join(
                    ("pass" if v else "fail") if cr.score is None else f"{v:g}" for v in cr.verdicts
                )
                notes.append(f"{visible(cr.name)} unstable ({shown})")
            elif cr.passed is False:
                notes.append(f"{visible(cr.name)} failed: {visible(cr.reason)}")
        if notes:
            body = fit("; ".join(notes), w - id_width - 4, max_lines=3)
            findings.append(f"  {id_cell(c.id, id_width)}  {body[0]}")
            findings.extend(" " * (id_width + 4) + more for more in body[1:])
    if findings:
        out.extend(["  per question:", *findings])
    return out


def _num(value: float | None, as_pct: bool) -> str:
    if value is None:
        return "-"
    return f"{round(value * 100)}%" if as_pct else f"{value:.2f}"


def stat_line(label: str, stat: Stat | None, as_pct: bool, note: str = "") -> str:
    """``label  value  [low, high]  n=N``: every total with its n and 95% interval."""
    if stat is None:
        return f"  {label:<18}{'-':>5}"
    if stat.low is None or stat.high is None:
        ci = ""
    else:
        ci = f"[{_num(stat.low, as_pct)}, {_num(stat.high, as_pct)}]"
    line = f"  {label:<18}{_num(stat.value, as_pct):>5}  {ci:<13} n={stat.n}"
    return f"{line}  {note}" if note else line


def _errors_note(count: int) -> str:
    return f"{count} error{'' if count == 1 else 's'}"


def answers_note(t: Totals) -> str:
    """``(8 of 12)``, or ``(0 of 1, 1 error)``: every answer asked for is counted, and
    those lost to a failed call are named apart, never left out."""
    asked = t.n_answers + t.n_answer_errors
    errors = f", {_errors_note(t.n_answer_errors)}" if t.n_answer_errors else ""
    return f"({t.answers_passed} of {asked}{errors})"


def totals_lines(run: RunResult) -> list[str]:
    t, k = run.totals, run.config.top_k
    st = t.stats
    # a call that failed before retrieval is a miss in hit rate and recall; say how many
    lost = f"({_errors_note(t.n_retrieval_errors)})" if t.n_retrieval_errors else ""
    out = [
        "  total             value  95% interval  questions",
        stat_line(f"hit rate@{k}", st.get("hit_rate"), True, lost),
        stat_line(f"recall@{k}", st.get("recall"), True, lost),
        stat_line("answers pass", st.get("answer_pass_rate"), True, answers_note(t)),
    ]
    for key, label in (
        ("context_precision", "context precision"),
        ("mrr", "MRR"),
        ("faithfulness", "faithfulness"),
        ("correctness", "correctness"),
    ):
        if key in st and st[key].n:
            out.append(stat_line(label, st[key], False))
    if t.n_flaky:
        out.append(f"  {'flaky':<18}{t.n_flaky:>5}  questions whose repeats disagree")
    if t.n_errors:
        out.append(
            f"  {'errors':<18}{t.n_errors:>5}  questions whose call failed: never a pass, "
            "never dropped"
        )
    if t.prompt_tokens_mean is not None:
        out.append(f"  {'prompt':<18}~{round(t.prompt_tokens_mean)} tokens per question")
    if run.usage is not None:
        out.extend(usage_lines(run))
    return out


def metrics_table(run: RunResult, width: int | None = None) -> str:
    """Per-question context precision, context recall, MRR, faithfulness, correctness."""
    w = width or terminal_width()
    cols = ("precision", "recall", "MRR", "faithful", "correct")
    id_width = id_column([visible(c.id) for c in run.cases], w, 4 + 11 * len(cols))
    lines = [
        "  per question: context precision and recall, MRR, faithfulness, correctness",
        f"  {pad('question', id_width + 2)}" + "".join(f"{c:>11}" for c in cols),
    ]
    for c in run.cases:
        values = (
            c.context_precision,
            c.retrieval_recall,
            c.reciprocal_rank,
            c.faithfulness,
            c.correctness,
        )
        lines.append(
            f"  {id_cell(c.id, id_width)}  " + "".join(f"{_num(v, False):>11}" for v in values)
        )
    return "\n".join(lines)


def causes_text(run: RunResult, width: int | None = None, max_lines: int = 4) -> str:
    """Why each failing question failed, then counts per cause."""
    return "\n".join(causes_lines(run, width or terminal_width(), max_lines))


def causes_lines(run: RunResult, width: int, max_lines: int = 4) -> list[str]:
    """Why each failing question failed, each in at most ``max_lines`` lines, then
    counts per cause; no lines when nothing failed."""
    failing = [c for c in run.cases if c.cause]
    if not failing:
        return []
    id_width = id_column([visible(c.id) for c in failing], width, 4 + 30, least=0)
    indent = id_width + 4
    lines = ["Why they failed:"]
    for c in failing:
        text = visible(f"{c.cause}: {c.cause_detail}" if c.cause_detail else c.cause or "")
        body = fit(text, width - indent, max_lines=max_lines)
        lines.append(f"  {id_cell(c.id, id_width)}  {body[0]}")
        lines.extend(" " * indent + more for more in body[1:])
    counts = ", ".join(f"{n} {visible(cause)}" for cause, n in run.totals.causes.items())
    lines.extend(wrap(f"  causes: {counts}", width, subsequent="          "))
    return lines


def money(value: float | None) -> str:
    if value is None:
        return "unknown (no price for this model: add [prices] to the config)"
    return f"${value:.4f}"


NO_USAGE = "unknown (the server did not report usage)"


def usage_cost(u: Usage) -> str:
    """A batch's cost, or why it is unknown: never $0 for what was not counted."""
    if u.input_tokens is None or u.output_tokens is None:
        return NO_USAGE
    return money(u.cost_usd)


def usage_lines(run: RunResult) -> list[str]:
    u = run.usage
    assert u is not None
    retries = f", {u.retries} retries" if u.retries else ""
    tokens = (
        NO_USAGE
        if u.input_tokens is None or u.output_tokens is None
        else f"{u.input_tokens:,} in, {u.output_tokens:,} out (the API's usage counts)"
    )
    lines = [
        f"  {'calls':<18}{u.calls} made, {u.cached} cached, {u.errors} failed{retries}",
        f"  {'tokens':<18}{tokens}",
        f"  {'cost':<18}{usage_cost(u)}",
    ]
    if u.cached and u.cached_cost_usd:
        lines[-1] += f" (cached answers: {money(u.cached_cost_usd)} when first made)"
    return lines


def _moved(old: str, new: str) -> str:
    return f"{old} -> {new}" if old != new else f"{new} (unchanged)"


def _with_errors(text: str, count: int) -> str:
    return f"{text} ({_errors_note(count)})" if count else text


def diff_text(diff: Diff, width: int | None = None) -> str:
    """What changed against the baseline, every WORSE line whole (wrapped, never cut)."""
    w = width or terminal_width()
    b, r = diff.baseline.totals, diff.run.totals
    lines = wrap(f"vs baseline ({visible(diff.baseline.config.describe())}):", w, "    ")
    for change in diff.config_changes:
        lines.extend(wrap(f"  changed: {visible(change)}", w, subsequent="    "))
    hit, recall = _moved(pct(b.hit_rate), pct(r.hit_rate)), _moved(pct(b.recall), pct(r.recall))
    lines.append(f"  hit rate       {_with_errors(hit, r.n_retrieval_errors)}")
    lines.append(f"  recall         {_with_errors(recall, r.n_retrieval_errors)}")
    if diff.answers_compared:
        old, new = pct(b.answer_pass_rate), pct(r.answer_pass_rate)
        lines.append(f"  answers pass   {_with_errors(_moved(old, new), r.n_answer_errors)}")
        if diff.answer_flips is not None and (diff.answer_flips.worse or diff.answer_flips.better):
            f = diff.answer_flips
            verdict = "significant" if f.significant else "not significant"
            flips = f"{f.better} fixed, {f.worse} broken: McNemar exact p={f.p_value:.2f}"
            lines.extend(wrap(f"{' ' * 17}{flips}, {verdict}", w, subsequent=" " * 17))
    if b.prompt_tokens_mean is not None and r.prompt_tokens_mean is not None:
        old_t, new_t = str(round(b.prompt_tokens_mean)), str(round(r.prompt_tokens_mean))
        lines.append(f"  prompt tokens  {_moved(old_t, new_t)}")
    if diff.answers_note:
        lines.extend(wrap("  " + visible(diff.answers_note), w, subsequent="    "))
    if diff.new_cases:
        lines.extend(id_list("new (not in baseline)", diff.new_cases, w))
    if diff.removed_cases:
        lines.extend(id_list("removed (in baseline only)", diff.removed_cases, w))
    for change in diff.changes:
        lines.extend(wrap("  " + visible(change.line()), w, subsequent=" " * 10))
    lines.append("")
    lines.extend(verdict_lines(diff, w))
    return "\n".join(lines)


def id_list(label: str, ids: Sequence[str], width: int, max_lines: int = 3) -> list[str]:
    """``label: a, b, c`` wrapped to at most ``max_lines`` lines; the ids that do not fit
    are counted (``and 117 more``), since a golden set of a hundred new ids is a count."""
    shown = [visible(i) for i in ids]
    lines = wrap(f"  {label}: {', '.join(shown)}", width, subsequent="    ")
    if len(lines) <= max_lines:
        return lines
    room = max_lines * (width - 4) - len(label) - 24  # leave room for ", and N more"
    kept, used = 0, 0
    while kept < len(shown) and used + cell_len(shown[kept]) + 2 <= room:
        used += cell_len(shown[kept]) + 2
        kept += 1
    while True:  # line ends waste a little: drop ids until the count fits whole
        text = f"  {label}: {', '.join([*shown[:kept], f'and {len(shown) - kept} more'])}"
        lines = wrap(text, width, subsequent="    ")
        if len(lines) <= max_lines or kept == 0:
            return lines
        kept -= 1


def verdict_lines(diff: Diff, width: int | None = None) -> list[str]:
    """The last words of a diff: what got worse, what errored; ``No regressions.`` only
    for a run where nothing got worse and nothing, the judge included, failed."""
    out = []
    n = len(diff.worse)
    w = width or terminal_width()
    if n:
        q = len({c.case_id for c in diff.worse})
        out.extend(
            wrap(
                f"{q} question{'s' if q != 1 else ''} got worse "
                f"({n} WORSE line{'s' if n != 1 else ''}): something that passed before fails now.",
                w,
            )
        )
    if diff.has_errors:
        phrases = "; ".join(
            error_phrases(len(diff.errored_cases), len(diff.errors), len(diff.judge_errored_cases))
        )
        out.extend(
            wrap(
                f"{phrases[0].upper()}{phrases[1:]}: a run with errors is never a pass "
                "(no baseline is saved from it).",
                w,
            )
        )
    return out or ["No regressions."]


def plan_text(
    plan: CallPlan | None, n_cases: int, skipped: int, judge: JudgePlan | None = None
) -> str:
    """The --dry-run report: what would be sent and what it would cost, re-runs
    (--rerun-failures) and judge calls included, with a bound on the total."""
    bounds: list[float | None] = []
    if plan is None:
        lines = ["Dry run: nothing is sent."]
    else:
        typical = plan.cost(plan.typical_output_tokens)
        worst = plan.cost(plan.max_output_tokens)
        bounds.append(worst)
        where = f" at {plan.base_url}" if plan.base_url else ""
        lines = [
            f"Dry run: nothing is sent. {visible(f'{plan.provider} {plan.model}{where}')}",
            f"  {'questions':<18}{n_cases} ({skipped} never reach the model: search returned "
            "nothing)",
            f"  {'calls':<18}{plan.calls} to make, {plan.cached} answered from the cache",
            f"  {'input':<18}~{plan.input_tokens:,} tokens (estimated from the prompts)",
            f"  {'output':<18}~{plan.typical_output_tokens} tokens per call assumed, "
            f"at most {plan.max_output_tokens}",
        ]
        if typical is None:
            lines.append(f"  {'cost':<18}{money(None)}")
        else:
            lines.append(f"  {'cost':<18}~{money(typical)} (at most {money(worst)})")
        if plan.rerun_times:
            bound = plan.rerun_cost_bound()
            bounds.append(bound)
            cached = plan.rerun_cases * plan.rerun_times - plan.rerun_calls
            lines.append(
                f"  {'re-runs':<18}at most {plan.rerun_calls} calls ({plan.rerun_cases} "
                f"questions that may fail x {plan.rerun_times}), {cached} cached"
            )
            lines.append(f"  {'re-run cost':<18}{_at_most(bound)}")
    if judge is not None:
        bound = judge.cost_bound()
        bounds.append(bound)
        who = visible(f"{judge.provider} {judge.model}")
        lines.append(
            f"  {'judge':<18}{judge.calls} calls to {who} (at most {judge.max_calls} with retries)"
        )
        lines.append(f"  {'judge input':<18}~{judge.input_tokens:,} tokens (answers at max_tokens)")
        lines.append(f"  {'judge cost':<18}{_at_most(bound)}")
    if len(bounds) > 1:
        total = None if any(b is None for b in bounds) else sum(b or 0.0 for b in bounds)
        lines.append(f"  {'total cost':<18}{_at_most(total)}")
    return "\n".join(lines)


def _at_most(bound: float | None) -> str:
    return money(None) if bound is None else f"at most {money(bound)}"


def reruns_text(
    reruns: dict[str, list[tuple[str | None, str | None, list[str]]]], width: int | None = None
) -> str:
    """--rerun-failures: each failing question's extra answers, to read by eye."""
    w = width or terminal_width()
    lines = ["Re-runs of failing questions (read them: is the failure real?):"]
    for case_id, samples in reruns.items():
        passed = sum(1 for _, err, problems in samples if err is None and not problems)
        lines.append(f"  {visible(case_id)}: {passed} of {len(samples)} re-runs pass")
        for i, (answer, error, problems) in enumerate(samples, start=1):
            verdict = (
                f"ERROR {error}"
                if error
                else ("pass" if not problems else "FAIL " + "; ".join(problems))
            )
            lines.append(f"    #{i} {visible(verdict)}")
            body = visible(" ".join((answer or "").split()))
            if body:
                lines.extend(wrap("       " + body, w - 1, subsequent="       "))
    return "\n".join(lines)


def sweep_table(rows: Sequence[SweepRow], thresholds: bool | None = None) -> str:
    """One row per configuration, best first; * marks the best value of each metric.

    With ``thresholds`` (by default: when the rows try more than one minimum score),
    each row also shows its minimum score, the abstain cases that pass and the
    answerable cases that lost retrieval to the threshold.
    """
    from ragrail.sweep import best_per_metric

    if thresholds is None:
        thresholds = len({r.min_score for r in rows}) > 1
    best = best_per_metric(rows)
    lines = [
        f"  {'chunking':<18}{'retriever':<10}{'k':>2}"
        + (f"{'min':>6}" if thresholds else "")
        + f"{'hit':>7}{'recall':>8}{'answers':>9}{'prec':>7}{'MRR':>7}{'tokens':>8}"
        + (f"{'abstain':>9}{'lost':>6}" if thresholds else "")
    ]

    def cell(r: SweepRow, metric: str, as_pct: bool, width: int) -> str:
        value = getattr(r, metric)
        mark = (
            "*"
            if metric in best and value is not None and value == getattr(best[metric], metric)
            else " "
        )
        return f"{_num(value, as_pct) + mark:>{width}}"

    for r in rows:
        tokens = "-" if r.prompt_tokens is None else f"~{round(r.prompt_tokens)}"
        abstain = f"{r.abstain_passed}/{r.abstain_cases}" if r.abstain_cases else "-"
        lines.append(
            f"  {visible(r.chunking):<18}{visible(r.retriever):<10}{r.top_k:>2}"
            + (f"{r.min_score:>6g}" if thresholds else "")
            + cell(r, "hit_rate", True, 7)
            + cell(r, "recall", True, 8)
            + cell(r, "answer_pass_rate", True, 9)
            + cell(r, "context_precision", False, 7)
            + cell(r, "mrr", False, 7)
            + f"{tokens:>8}"
            + (f"{abstain:>9}{r.answerable_lost:>6}" if thresholds else "")
        )
    lines.append("  (* best value of each metric; rows best first by recall, hit rate, answers)")
    if thresholds:
        lines.append(
            "  (min: minimum score, on the retriever's own scale; abstain: abstain cases "
            "that pass;\n   lost: answerable cases retrieving fewer facts than with no minimum)"
        )
    return "\n".join(lines)
