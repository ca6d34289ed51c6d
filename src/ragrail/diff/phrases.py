"""The verdict's words and the predicates they rest on, which need no diff: whether a
question fails, what errored, the answer-flip line (``ragrail.diff`` re-exports them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrail.diff.lines import p_text

if TYPE_CHECKING:
    from ragrail.diff.lines import BaselineCaseLike
    from ragrail.records.results import CaseResult, RunResult
    from ragrail.stats import McNemar


def fails(case: BaselineCaseLike) -> bool:
    """A question fails when its answer fails or retrieval missed one of its facts (what
    a JUnit report and ``pytest --ragrail`` fail it for)."""
    recall = case.retrieval_recall
    return case.answer_pass is False or (recall is not None and recall < 1)


def error_phrases(n_errored: int, n_baseline_passing: int = 0, n_judge: int = 0) -> list[str]:
    """``["1 question passed in the baseline and now errors", "2 other questions
    failed to run", "the judge failed on 1 question"]``, leaving out zero counts."""
    parts = []
    if n_baseline_passing:
        verb = "errors" if n_baseline_passing == 1 else "error"
        parts.append(
            f"{counted(n_baseline_passing, 'question')} passed in the baseline and now {verb}"
        )
    others = n_errored - n_baseline_passing
    if others:
        parts.append(f"{counted(others, 'other question' if parts else 'question')} failed to run")
    if n_judge:
        parts.append(f"the judge failed on {counted(n_judge, 'question')}")
    return parts


def flips_text(flips: McNemar) -> str:
    """The answer-flip test as one phrase that says what it counts: ``answer verdicts
    that flipped: 1 fail -> pass, 3 pass -> fail (McNemar exact test p=0.62, not
    significant)``. It counts whole-answer verdicts only; a WORSE line for a lost check
    of an answer that already failed is not a flip."""
    verdict = "significant" if flips.significant else "not significant"
    return (
        f"answer verdicts that flipped: {flips.better} fail -> pass, {flips.worse} pass -> fail "
        f"(McNemar exact test p={p_text(flips.p_value)}, {verdict})"
    )


def run_summary(run: RunResult) -> str:
    """The same phrase for a run without a baseline: its errors, or nothing."""
    errored = sum(1 for c in run.cases if c.errored)
    judged = sum(1 for c in run.cases if judge_failed(c))
    return "; ".join(error_phrases(errored, 0, judged))


def judge_failed(case: CaseResult) -> bool:
    return case.judge is not None and bool(case.judge.errors)


def first_error(case: CaseResult) -> str:
    """The reason of the first failed call of a question ("" when none failed)."""
    return next((s.error for s in case.trace.all_samples() if s.error), "")


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
