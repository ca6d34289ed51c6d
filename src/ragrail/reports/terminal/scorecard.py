"""The scorecard: per-question verdicts, totals with intervals, causes, usage and cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrail.diff import first_error, pct
from ragrail.records.results import CaseResult, RunResult, Stat, Totals, Usage
from ragrail.reports.conversations import conversations_note, together
from ragrail.run import chunks_text
from ragrail.scoring.citing import citations_note
from ragrail.text.guard import visible

if TYPE_CHECKING:
    pass
from ragrail.reports.terminal.layout import (
    LINES_PER_QUESTION,
    LONG_REPORT,
    cut_middle,
    fit,
    id_column,
    pad,
    terminal_width,
    wrap,
)


def retrieval_label(case: CaseResult) -> str:
    """``hit`` when every fact came back, ``MISS`` when none did, the recall otherwise,
    ``-`` for a case with nothing to retrieve, and ``ERROR`` when its call failed before
    anything came back (not a miss: nobody knows what retrieval would have found)."""
    if case.retrieval_recall is None:
        return "-"
    if case.errored and not case.trace.retrieved:
        return "ERROR"
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
    if case.recorded is not None:
        note = case.flaky_text() or ""
        return f"{note}; {reason}" if reason else note
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
            f"{visible(c.name)}: {visible(c.chunking)}, top_k={c.top_k}, {chunks_text(c)}, "
            f"{c.n_cases} golden questions",
            w,
            subsequent="  ",
        ),
        *wrap(f"Answers from: {visible(c.answerer_label + model)}", w, subsequent="  "),
    ]


def id_text(case_id: str) -> str:
    """A case id as a table shows it: escaped, its tabs too (visible() keeps a tab, which
    a terminal widens to the next tab stop, pushing the rest of the row out of line)."""
    return visible(case_id).replace("\t", "\\t")


def id_cell(case_id: str, width: int) -> str:
    """A case id, escaped, cut in the middle to ``width`` cells and padded to them."""
    return pad(cut_middle(id_text(case_id), width), width)


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
        # a total's note wraps under the value column; the "(uncorrected: ...)" note under itself
        lines.extend(
            more
            for ln in judge_lines(run, w)
            for more in wrap(ln, w, " " * (3 if ln.startswith("  (") else 20))
        )
    if why:
        lines.extend(["", *why])
    return "\n".join(lines)


def per_question_lines(run: RunResult, width: int) -> tuple[list[str], list[str]]:
    """The scorecard's rows and its "Why they failed" lines. Each reason gets up to two
    lines and each cause up to four; in a long report (past LONG_REPORT lines and
    LINES_PER_QUESTION lines a question) rows go to one line, then causes to two, then
    to one, so a set of a hundred questions with long ids still reads as a list."""
    if len(run.cases) > LIST_ALL_UP_TO:
        return _large_run_lines(run, width)
    budget = max(LONG_REPORT, LINES_PER_QUESTION * len(run.cases))
    for row_lines, cause_lines in ((2, 4), (1, 2), (1, 1)):
        rows = score_rows(run, width, row_lines)
        why = causes_lines(run, width, cause_lines)
        if len(rows) + len(why) <= budget:
            break
    return rows, why


# Past this many questions the table lists only questions that did not pass, at most
# LISTED of them: 100,000 rows scroll the totals out of sight and take seconds to lay
# out, and every question is in the --json results, `ragrail report` and the history.
LIST_ALL_UP_TO = 200
LISTED = 100


def _needs_a_look(case: CaseResult) -> bool:
    return retrieval_label(case) not in ("hit", "-") or answer_label(case) not in ("pass", "-")


def _large_run_lines(run: RunResult, width: int) -> tuple[list[str], list[str]]:
    """A long run's rows (the first LISTED questions that did not pass, one line each)
    and causes (the first LISTED, one line each), each followed by what was left out."""
    failing = [c for c in run.cases if _needs_a_look(c)]
    passed = len(run.cases) - len(failing)
    shown = f"the first {LISTED} of " if len(failing) > LISTED else ""
    listed = f"listed: {shown}{len(failing):,} questions that did not pass; {passed:,} passed"
    rows = score_rows(run.model_copy(update={"cases": failing[:LISTED]}), width, 1)
    every = f"all {len(run.cases):,} are"
    if not failing:  # a table header over no rows reads as if something were missing
        rows, listed, every = [], f"all {len(run.cases):,} questions passed", "each is"
    rows.extend(
        wrap(
            f"  ({listed}; {every} in --json, `ragrail report` and the history)",
            width,
            subsequent="   ",
        )
    )
    caused = [c for c in run.cases if c.cause]
    why = causes_lines(run.model_copy(update={"cases": caused[:LISTED]}), width, 1)
    if len(caused) > LISTED and why:
        why.insert(-1, f"  (the first {LISTED} of {len(caused):,})")
    return rows, why


def score_rows(run: RunResult, width: int, max_lines: int = 2) -> list[str]:
    """One row per question: id, retrieval, answer verdict and the reason it failed, in
    at most ``max_lines`` lines."""
    labels = [answer_label(c) for c in run.cases]
    # "FAIL  reason" as in a plain run; wider when ERROR or "10/10" labels appear
    answer_width = max([4, *(len(label) for label in labels)]) + 2
    # ids give way first: the verdict columns and 20 cells of reason keep their room
    id_width = id_column([id_text(c.id) for c in run.cases], width, 4 + 11 + answer_width + 20)
    indent = 2 + id_width + 2 + 11 + answer_width
    lines = [f"  {pad('question', id_width + 2)}{'retrieval':<11}answer"]
    for case, label in together_with(run.cases, labels):
        head = f"  {id_cell(case.id, id_width)}  {retrieval_label(case):<11}{label:<{answer_width}}"
        reason = answer_reason(case)
        if not reason:
            lines.append(head.rstrip())
            continue
        body = fit(reason, width - indent, max_lines=max_lines)
        lines.append(head + body[0])
        lines.extend(" " * indent + more for more in body[1:])
    return lines


def together_with(cases: list[CaseResult], labels: list[str]) -> list[tuple[CaseResult, str]]:
    """The cases with their labels, each conversation's turns next to each other."""
    label_of = {id(c): label for c, label in zip(cases, labels, strict=True)}
    return [(c, label_of[id(c)]) for c in together(cases)]


def judge_lines(run: RunResult, width: int | None = None) -> list[str]:
    """The judge's totals, its cost apart from the answerer's, and what it found per case."""
    w = width or terminal_width()
    out = [f"Judge: {visible(run.judge or '')}", *judged_total_lines(run)]
    if run.judge_usage is not None:
        u = run.judge_usage
        out.append(f"  {'judge calls':<18}{u.calls} made, {u.cached} cached, {u.errors} failed")
        out.append(f"  {'judge cost':<18}{usage_cost(u)} (apart from the answers' cost)")
    findings = []
    id_width = id_column([id_text(c.id) for c in run.cases], w, 4 + 30)
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


def judged_total_lines(run: RunResult) -> list[str]:
    """Each judged total: raw and corrected with its label count when a validation of this
    judge corrects it (a second line says how), or the raw figure marked uncorrected."""
    from ragrail.reports.judged import (
        UNCORRECTED_WHY,
        corrected_detail,
        corrected_text,
        judged_totals,
    )

    out, uncorrected = [], False
    for total in judged_totals(run):
        label = visible(total.label)
        c = total.corrected
        if c is not None:
            # at least one space after a long name; the detail quotes a saved file's text
            out.append(f"  {pad(label, 17)} {corrected_text(c)}")
            out.append(f"  {'':<18}({visible(corrected_detail(c))})")
            continue
        note = "pass, " if total.as_pct else ""
        if total.uncorrected:
            note += "uncorrected"
            uncorrected = True
        else:
            note += "the judge's mean claim support (faithful answers, below, is corrected)"
        out.append(stat_line(label, total.raw, total.as_pct, note))
    if uncorrected:
        out.append(f"  ({UNCORRECTED_WHY})")
    return out


def stat_line(label: str, stat: Stat | None, as_pct: bool, note: str = "") -> str:
    """``label  value  [low, high]  n=N``: every total with its n and 95% interval."""
    if stat is None:
        return f"  {pad(label, 18)}{'-':>5}"
    if stat.low is None or stat.high is None:
        ci = ""
    else:
        ci = f"[{_num(stat.low, as_pct)}, {_num(stat.high, as_pct)}]"
    # padded in cells: a criterion named in Chinese or Japanese keeps the columns
    line = f"  {pad(label, 18)}{_num(stat.value, as_pct):>5}  {ci:<13} n={stat.n}"
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
    if t.n_conversations:  # a conversation passes when every turn passes
        out.append(
            f"  {conversations_note(t.conversations_passed, t.n_conversations)}"
            f" (every turn passing; their {sum(1 for c in run.cases if c.turn)} turns are"
            " counted as questions above)"
        )
    note = citations_note(run.config)
    if note is not None:  # answers passed without citing: say so beside their rate
        out.append(f"  {note}")
    if t.expected:  # questions that should refuse or escalate are counted apart
        from ragrail.scoring.behaviour import describe_counts

        out.append(f"  expected behaviour: {describe_counts(t.expected)}")
    for key, label in (
        ("context_precision", "context precision"),
        ("mrr", "MRR"),
        ("faithfulness", "faithfulness"),
        ("correctness", "correctness"),
    ):
        if key in st and st[key].n:
            out.append(stat_line(label, st[key], False))
    for name, stage in t.stages.items():  # a staged system: each stage's own retrieval
        for key, label in (("hit_rate", "hit rate"), ("recall", "recall"), ("mrr", "MRR")):
            if key in stage and stage[key].n:
                out.append(stat_line(f"{name} {label}", stage[key], key != "mrr"))
    if t.n_flaky:
        out.append(
            f"  {'flaky':<18}{t.n_flaky:>5}  questions whose repeats or recorded runs disagree"
        )
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
    id_width = id_column([id_text(c.id) for c in run.cases], w, 4 + 11 * len(cols))
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
    id_width = id_column([id_text(c.id) for c in failing], width, 4 + 30, least=0)
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
