"""The judge's totals as every report shows them: the judge's own figure (raw), and the
figure corrected by human labels with its interval and label count, or the word
"uncorrected" where no validation of this judge was stored. Plain text pieces; each
report escapes them its own way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragrail.diff import Diff
    from ragrail.judge.correct import CorrectedChange
    from ragrail.records.results import Corrected, RunResult, Stat

UNCORRECTED_WHY = (
    "uncorrected: no human labels stored for this judge, prompt and rubric; "
    "`ragrail judge validate --labels FILE` stores them"
)


@dataclass(frozen=True)
class JudgedTotal:
    label: str  # "faithfulness", "faithful answers", or a criterion's name
    as_pct: bool
    raw: Stat | None  # the judge's own total and interval; None when only the correction has it
    corrected: Corrected | None
    uncorrected: bool = False  # no validation corrects it (the claim mean: nor its answers' rate)


def judged_totals(run: RunResult) -> list[JudgedTotal]:
    """Each judged total of ``run`` in report order. The mean claim-level faithfulness is
    never corrected (people label whole answers); when the faithful-answers rate is, it
    follows as its own line."""
    st, cor = run.judge_stats, run.judge_corrected
    out = []
    faith = st.get("judge_faithfulness")
    if faith is not None and faith.n:
        covered = "judge_faithfulness" in cor
        out.append(JudgedTotal("faithfulness", False, faith, None, uncorrected=not covered))
    if "judge_faithfulness" in cor:
        out.append(JudgedTotal("faithful answers", True, None, cor["judge_faithfulness"]))
    for key, stat in st.items():
        if key.startswith("judge_") and key != "judge_faithfulness":
            c = cor.get(key)
            out.append(JudgedTotal(key.removeprefix("judge_"), True, stat, c, c is None))
    return out


def pct_tenths(value: float | None) -> str:
    """A rate to one decimal: a correction of a few points must show."""
    return "-" if value is None else f"{value * 100:.1f}%"


def interval(
    low: float | None, high: float | None, points: bool = False, why: str | None = None
) -> str:
    if low is None or high is None:
        return f"no interval ({why})" if why else "no interval"
    if points:
        return f"[{low * 100:+.1f}, {high * 100:+.1f}] points"
    return f"[{pct_tenths(low)}, {pct_tenths(high)}]"


NO_FIT = "the labels do not fit this run"


def no_interval_why(c: Corrected) -> str | None:
    """Why a correction has no interval."""
    if not c.fits:
        return NO_FIT
    return "fewer than 2 labels" if c.n_labelled < 2 else None


def corrected_text(c: Corrected) -> str:
    """``raw 90.0%, corrected 81.2% [70.0%, 92.4%], 30 human labels``; a clipped estimate
    says so (``corrected 0.0% (clipped from -3.1%)``)."""
    labels = f"{c.n_labelled} human label{'' if c.n_labelled == 1 else 's'}"
    raw, corrected = pct_tenths(c.raw), pct_tenths(c.estimate)
    if c.unclipped is not None:
        corrected += f" (clipped from {pct_tenths(c.unclipped)})"
    shown = interval(c.low, c.high, why=no_interval_why(c))
    return f"raw {raw}, corrected {corrected} {shown}, {labels}"


def corrected_detail(c: Corrected) -> str:
    """How the correction was made, what it assumes, whether the labels are too old for
    the run, and what more labels would buy."""
    from ragrail.judge.correct import ASSUMPTION

    when = c.validated_at.replace("T", " ").removesuffix("+00:00")
    if c.method == "ppi":
        how = (
            f"classic PPI (lambda 1) over {c.n_judged} judged answers, with the labels of "
            f"validation {c.validation_id} ({when}) from another run; it {ASSUMPTION}"
        )
    else:
        how = (
            f"PPI++, lambda {c.lam:.2f}, over {c.n_judged} judged answers; "
            f"labels of validation {c.validation_id}, {when}"
        )
    text = how
    if c.stale:
        text += (
            f"; labels may be too old for this run: labelled on another system "
            f"({', '.join(c.stale)} differ), label this run's answers again"
        )
    if not c.fits:
        text += (
            f"; {NO_FIT}: the judge's rate here is too far from what the labels allow "
            "(label this run's answers)"
        )
    if c.human_only_low is not None and c.human_only_high is not None:
        text += f"; the labels alone: {interval(c.human_only_low, c.human_only_high)}"
    if c.labels_to_halve is not None:
        text += f"; {c.labels_to_halve} more labels would halve the interval"
    elif c.low is not None:
        text += "; more labels alone would not halve the interval"
    return text


def change_text(ch: CorrectedChange) -> str:
    """``tone pass rate (corrected): 81.2% -> 74.0%, -7.2 points [-12.0, -2.4] points, paired
    over 40 questions``."""
    how = (
        f"paired over {ch.n_judged} questions and the same {ch.n_labelled} labels"
        if ch.paired
        else "unpaired (each run corrected by its own validation)"
    )
    sign = " (the interval leaves out 0)" if ch.significant else ""
    if "ppi" in ch.methods:  # a run corrected from another run's labels
        from ragrail.judge.correct import ASSUMPTION

        runs = {("ppi", "ppi"): "both runs", ("ppi", "ppi++"): "the baseline"}
        sign += "; " + ASSUMPTION.replace("this run", runs.get(ch.methods, "this run"))
    shown = interval(ch.low, ch.high, points=True, why="fewer than 2 labels")
    return (
        f"{ch.measure} (corrected): {pct_tenths(ch.baseline)} -> {pct_tenths(ch.now)}, "
        f"{ch.difference * 100:+.1f} points {shown}, {how}{sign}"
    )


def figure(value: float | None, as_pct: bool) -> str:
    """A raw total as the scorecard shows it: a whole percentage, or a mean to 2 places."""
    if value is None:
        return "-"
    return f"{round(value * 100)}%" if as_pct else f"{value:.2f}"


def confusion_html(totals: list[JudgedTotal]) -> str:
    """Each corrected total's labels as a confusion matrix (people in rows, the judge in
    columns): where the correction's labels say the judge goes wrong."""
    from ragrail.reports.charts import confusion_chart

    charts = []
    for total in totals:
        c = total.corrected
        if c is None:
            continue
        cells = [[0, 0], [0, 0]]
        for pair in c.labels:
            if pair.human in (0, 1) and pair.judge in (0, 1):  # pass/fail labels only
                cells[1 - int(pair.human)][1 - int(pair.judge)] += 1
        title = f"{total.label}: people vs judge, validation {c.validation_id}"
        charts.append(confusion_chart(title, f"confusion-{total.label}", cells))
    if not charts:
        return ""
    return f"<div class='charts' id='judge-confusion'>{''.join(charts)}</div>"


def judge_html(run: RunResult, diff: Diff | None) -> str:
    """The judge's totals: raw, corrected by human labels (interval, label count, how),
    or marked uncorrected; and the corrected totals against the baseline."""
    if run.judge is None:
        return ""
    from ragrail.text.guard import escape

    totals = judged_totals(run)
    if not totals:  # the judge gave no verdict to total (it failed, or nothing to judge)
        return ""
    rows, uncorrected = [], False
    for total in totals:
        c, label = total.corrected, escape(total.label)
        if c is not None:
            rows.append(
                f"<tr class='corrected'><td>{label}</td><td class='num'>{pct_tenths(c.raw)}</td>"
                f"<td class='num value'>{pct_tenths(c.estimate)}</td>"
                f"<td class='num'>{escape(interval(c.low, c.high))}</td>"
                f"<td class='num'>{c.n_labelled}</td>"
                f"<td class='muted'>{escape(corrected_detail(c))}</td></tr>"
            )
            continue
        raw = total.raw
        rows.append(
            f"<tr class='uncorrected'><td>{label}</td>"
            f"<td class='num'>{figure(raw.value if raw else None, total.as_pct)}</td>"
            "<td>uncorrected</td>"
            f"<td class='num'>{figure(raw.low if raw else None, total.as_pct)} to "
            f"{figure(raw.high if raw else None, total.as_pct)} (raw)</td><td class='num'>0</td>"
            "<td></td></tr>"
        )
        uncorrected = uncorrected or total.uncorrected
    out = [
        f"<h2>Judge: {escape(run.judge)}</h2>",
        "<table id='judge-totals'><thead><tr><th>total</th><th>judge (raw)</th>"
        "<th>corrected</th><th>95% interval</th><th>human labels</th><th>how</th></tr>"
        "</thead><tbody>",
        *rows,
        "</tbody></table>",
    ]
    if uncorrected:
        out.append(f"<p class='muted'>{escape(UNCORRECTED_WHY)}</p>")
    out.append(confusion_html(totals))
    if diff is not None and (diff.judge_changes or diff.judge_notes):
        items = [change_text(ch) for ch in diff.judge_changes] + list(diff.judge_notes)
        out.append(
            "<ul id='judge-changes'>" + "".join(f"<li>{escape(t)}</li>" for t in items) + "</ul>"
        )
    return "".join(out)
