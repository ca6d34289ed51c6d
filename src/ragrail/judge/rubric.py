"""Rubric grading: the judge's verdict on each [judge] criterion, and the gates that
let a validated criterion fail an answer."""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Any

from ragrail.errors import InputError
from ragrail.judge.config import CriterionConfig, JudgeConfig, Prompts, criteria_text, judge_key
from ragrail.judge.replies import CriterionReply, RubricReply, checker, parse_reply
from ragrail.judge.turns import Turn, question_in_context
from ragrail.records.results import CaseResult, CriterionResult, RunResult


def rubric_prompt(
    template: str,
    case: CaseResult,
    criteria: Sequence[CriterionConfig],
    answer: str | None = None,
    history: Sequence[Turn] = (),
) -> str:
    """``history``: a turn's earlier turns, shown before its question (``judge.turns``)."""
    return Template(template).safe_substitute(
        question=question_in_context(case.question, history),
        answer=answer if answer is not None else case.trace.answer or "",
        criteria=criteria_text(criteria),
    )


def rubric_checker(criteria: Sequence[CriterionConfig]) -> Any:
    """A reply check that also wants a verdict of the right kind for every criterion."""

    def complete(reply: RubricReply) -> str | None:
        got = {v.criterion: v for v in reply.verdicts}
        for c in criteria:
            v = got.get(c.name)
            if v is None:
                return f"no verdict for criterion {c.name!r}"
            if c.scale == "pass_fail" and v.passed is None:
                return f'criterion {c.name!r} needs "pass": true or false'
            if c.scale == "1-5" and v.score is None:
                return f'criterion {c.name!r} needs a "score" from 1 to 5'
        return None

    return checker(RubricReply, complete)


def apply_rubric(
    case: CaseResult, criteria: Sequence[CriterionConfig], results: Sequence[Any]
) -> None:
    """Record a case's criterion verdicts over its repeats: pass/fail by majority, a 1-5
    score by its mean against the threshold; unstable when the repeats disagree."""
    judged = case.judge
    assert judged is not None
    per: dict[str, list[CriterionReply]] = {c.name: [] for c in criteria}
    for res in results:
        if res.error is not None:
            judged.errors.append(f"rubric: {res.error}")
            continue
        reply = parse_reply(res.text, RubricReply)
        for v in reply.verdicts:
            if v.criterion in per:
                per[v.criterion].append(v)
    if any(e.startswith("rubric") for e in judged.errors):
        return
    for crit in criteria:
        verdicts = per[crit.name]
        if crit.scale == "pass_fail":
            values = [1.0 if v.passed else 0.0 for v in verdicts]
            passed = sum(values) * 2 > len(values)
            score = None
        else:
            values = [float(v.score or 0) for v in verdicts]
            score = sum(values) / len(values)
            passed = score >= crit.pass_threshold
        judged.criteria.append(
            CriterionResult(
                name=crit.name,
                passed=passed,
                score=score,
                reason=verdicts[0].reason,
                verdicts=values,
                stable=len(set(values)) <= 1,
            )
        )


def apply_gates(run: RunResult, criteria: Sequence[CriterionConfig]) -> None:
    """A gated criterion that failed fails the answer, with the judge's reason."""
    gated = {c.name for c in criteria if c.gate}
    if not gated:
        return
    for case in run.cases:
        if case.judge is None:
            continue
        for crit in case.judge.criteria:
            if crit.name in gated and crit.passed is False:
                case.problems.append(f"judge: {crit.name} failed ({crit.reason})")
                case.answer_pass = False
                case.answer_passes = 0


def require_validated(cfg: JudgeConfig, prompts: Prompts, store: Any) -> None:
    """Raise InputError unless every gated criterion of this judge (model, rubric prompt,
    criterion) has a stored validation with kappa >= ``cfg.min_kappa``."""
    who = f"{cfg.provider} {cfg.model}"
    for crit in (c for c in cfg.criteria if c.gate):
        key = judge_key(cfg.provider or "", cfg.model or "", prompts.rubric, crit)
        found = store.best_validation(key, crit.name)
        if found is None:
            raise InputError(
                f"criterion {crit.name!r} gates answers, but judge {who} with this prompt and "
                f"rubric has never been validated against human labels: label some answers "
                f"(case_id,criterion,verdict) and run `ragrail judge validate --labels FILE`, "
                f"or pass --trust-unvalidated"
            )
        _, kappa, when = found
        if kappa is None or kappa < cfg.min_kappa:
            shown = "none" if kappa is None else f"{kappa:.2f}"
            raise InputError(
                f"criterion {crit.name!r} gates answers, but judge {who}'s latest validation "
                f"({when}) has kappa {shown}, below judge.min_kappa {cfg.min_kappa}: improve the "
                f"prompt or rubric and validate again, or pass --trust-unvalidated"
            )
