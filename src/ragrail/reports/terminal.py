"""The plain-text scorecard and baseline diff, readable at 80 columns.

Every id, fact, reason, answer or name that reaches the terminal goes through
:func:`~ragrail.reports.text.visible` first, so no input can draw a line of its own
(a case id with a newline and ``WORSE:`` after it) or send a terminal escape.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragrail.answerers import CallPlan
from ragrail.compare import Diff, error_phrases, first_error, pct
from ragrail.reports.text import visible
from ragrail.results import CaseResult, RunResult, Stat, Totals, Usage
from ragrail.sweep import SweepRow

if TYPE_CHECKING:
    from ragrail.judge import JudgePlan

WIDTH = 80


def wrap(text: str, width: int, subsequent: str = "") -> list[str]:
    """Word-wrap one line, never inside a double-quoted string (a fact stays whole),
    never at a hyphen (``account-recovery#1`` stays whole)."""
    protected = re.sub(r'"[^"]*"', lambda m: m.group(0).replace(" ", "\x00"), text)
    lead = protected[: len(protected) - len(protected.lstrip())]
    lines = textwrap.wrap(
        protected.strip(),
        width,
        initial_indent=lead,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace("\x00", " ") for line in lines] or [text]


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


def header(run: RunResult) -> list[str]:
    c = run.config
    model = f" ({c.model})" if c.model else ""
    return [
        f"{visible(c.name)}: {visible(c.chunking)}, top_k={c.top_k}, {c.n_chunks} chunks, "
        f"{c.n_cases} golden questions",
        f"Answers from: {visible(c.answerer_label + model)}",
    ]


def scorecard(run: RunResult, metrics: bool = False) -> str:
    lines = [*header(run), ""]
    ids = [visible(c.id) for c in run.cases]
    id_width = max([len("question"), *(len(i) for i in ids)]) + 2
    lines.append(f"  {'question':<{id_width}}{'retrieval':<11}answer")
    # "FAIL  reason" as in a plain run; wider when ERROR or "10/10" labels appear
    answer_width = max([4, *(len(answer_label(c)) for c in run.cases)]) + 2
    indent = 2 + id_width + 11 + answer_width
    for case, shown_id in zip(run.cases, ids, strict=True):
        head = f"  {shown_id:<{id_width}}{retrieval_label(case):<11}{answer_label(case):<{answer_width}}"
        reason = answer_reason(case)
        if not reason:
            lines.append(head.rstrip())
            continue
        wrapped = wrap(head + reason, WIDTH, subsequent=" " * indent)
        lines.extend(wrapped)
    if metrics:
        lines.extend(["", metrics_table(run)])
    lines.append("")
    lines.extend(totals_lines(run))
    if run.judge is not None:
        lines.extend(["", *judge_lines(run)])
    why = causes_text(run)
    if why:
        lines.extend(["", why])
    return "\n".join(lines)


def judge_lines(run: RunResult) -> list[str]:
    """The judge's totals, its cost apart from the answerer's, and what it found per case."""
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
    id_width = max([len(visible(c.id)) for c in run.cases] + [8]) + 2
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
            findings.extend(
                wrap(
                    f"  {visible(c.id):<{id_width}}{'; '.join(notes)}",
                    WIDTH,
                    subsequent=" " * (2 + id_width),
                )
            )
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


def metrics_table(run: RunResult) -> str:
    """Per-question context precision, context recall, MRR, faithfulness, correctness."""
    id_width = max([len("question"), *(len(visible(c.id)) for c in run.cases)]) + 2
    cols = ("precision", "recall", "MRR", "faithful", "correct")
    lines = [
        "  per question: context precision and recall, MRR, faithfulness, correctness",
        f"  {'question':<{id_width}}" + "".join(f"{c:>11}" for c in cols),
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
            f"  {visible(c.id):<{id_width}}" + "".join(f"{_num(v, False):>11}" for v in values)
        )
    return "\n".join(lines)


def causes_text(run: RunResult) -> str:
    """Why each failing question failed, then counts per cause."""
    failing = [c for c in run.cases if c.cause]
    if not failing:
        return ""
    id_width = max(len(visible(c.id)) for c in failing) + 2
    lines = ["Why they failed:"]
    for c in failing:
        text = visible(f"{c.cause}: {c.cause_detail}" if c.cause_detail else c.cause or "")
        lines.extend(
            wrap(f"  {visible(c.id):<{id_width}}{text}", WIDTH, subsequent=" " * (2 + id_width))
        )
    counts = ", ".join(f"{n} {visible(cause)}" for cause, n in run.totals.causes.items())
    lines.extend(wrap(f"  causes: {counts}", WIDTH, subsequent="          "))
    return "\n".join(lines)


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


def diff_text(diff: Diff) -> str:
    b, r = diff.baseline.totals, diff.run.totals
    lines = [f"vs baseline ({visible(diff.baseline.config.describe())}):"]
    lines.extend(f"  changed: {visible(change)}" for change in diff.config_changes)
    hit, recall = _moved(pct(b.hit_rate), pct(r.hit_rate)), _moved(pct(b.recall), pct(r.recall))
    lines.append(f"  hit rate       {_with_errors(hit, r.n_retrieval_errors)}")
    lines.append(f"  recall         {_with_errors(recall, r.n_retrieval_errors)}")
    if diff.answers_compared:
        old, new = pct(b.answer_pass_rate), pct(r.answer_pass_rate)
        lines.append(f"  answers pass   {_with_errors(_moved(old, new), r.n_answer_errors)}")
        if diff.answer_flips is not None and (diff.answer_flips.worse or diff.answer_flips.better):
            f = diff.answer_flips
            verdict = "significant" if f.significant else "not significant"
            lines.append(
                f"                 {f.better} fixed, {f.worse} broken: McNemar exact "
                f"p={f.p_value:.2f}, {verdict}"
            )
    if b.prompt_tokens_mean is not None and r.prompt_tokens_mean is not None:
        old_t, new_t = str(round(b.prompt_tokens_mean)), str(round(r.prompt_tokens_mean))
        lines.append(f"  prompt tokens  {_moved(old_t, new_t)}")
    if diff.answers_note:
        lines.extend(wrap("  " + visible(diff.answers_note), WIDTH, subsequent="    "))
    if diff.new_cases:
        lines.append(f"  new (not in baseline): {', '.join(map(visible, diff.new_cases))}")
    if diff.removed_cases:
        lines.append(f"  removed (in baseline only): {', '.join(map(visible, diff.removed_cases))}")
    for change in diff.changes:
        lines.extend(wrap("  " + visible(change.line()), WIDTH, subsequent=" " * 10))
    lines.append("")
    lines.extend(verdict_lines(diff))
    return "\n".join(lines)


def verdict_lines(diff: Diff) -> list[str]:
    """The last words of a diff: what got worse, what errored; ``No regressions.`` only
    for a run where nothing got worse and nothing, the judge included, failed."""
    out = []
    n = len(diff.worse)
    if n:
        q = len({c.case_id for c in diff.worse})
        out.append(
            f"{q} question{'s' if q != 1 else ''} got worse ({n} WORSE line{'s' if n != 1 else ''}):"
            " something that passed before fails now."
        )
    if diff.has_errors:
        phrases = "; ".join(
            error_phrases(len(diff.errored_cases), len(diff.errors), len(diff.judge_errored_cases))
        )
        out.extend(
            wrap(
                f"{phrases[0].upper()}{phrases[1:]}: a run with errors is never a pass "
                "(no baseline is saved from it).",
                WIDTH,
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


def reruns_text(reruns: dict[str, list[tuple[str | None, str | None, list[str]]]]) -> str:
    """--rerun-failures: each failing question's extra answers, to read by eye."""
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
            lines.extend(
                textwrap.wrap(
                    body, WIDTH - 8, initial_indent="       ", subsequent_indent="       "
                )
            )
    return "\n".join(lines)


def sweep_table(rows: Sequence[SweepRow]) -> str:
    """One row per configuration, best first; * marks the best value of each metric."""
    from ragrail.sweep import best_per_metric

    best = best_per_metric(rows)
    lines = [
        f"  {'chunking':<18}{'retriever':<10}{'k':>2}{'hit':>7}{'recall':>8}{'answers':>9}"
        f"{'prec':>7}{'MRR':>7}{'tokens':>8}"
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
        lines.append(
            f"  {visible(r.chunking):<18}{visible(r.retriever):<10}{r.top_k:>2}"
            + cell(r, "hit_rate", True, 7)
            + cell(r, "recall", True, 8)
            + cell(r, "answer_pass_rate", True, 9)
            + cell(r, "context_precision", False, 7)
            + cell(r, "mrr", False, 7)
            + f"{tokens:>8}"
        )
    lines.append("  (* best value of each metric; rows best first by recall, hit rate, answers)")
    return "\n".join(lines)
