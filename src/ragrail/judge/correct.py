"""Judged totals corrected by human labels, and compared between two runs.

A judge validated with ``ragrail judge validate`` left its labelled (judge, human) pairs
in the history. A run judged by the same judge (model, prompt, criterion definition:
``ragrail.judge.config.judge_key``) reports each judged total twice: the judge's own
rate (raw) and the PPI++ estimate corrected by those labels (``ragrail.judge.ppi``).

What is corrected is a rate of 0/1 verdicts, the quantity the people labelled:

- faithfulness: the share of answers the judge found faithful in every claim
  (faithfulness = 1), the verdict ``judge validate`` compares with people; the mean
  claim-level faithfulness beside it is the judge's alone and stays uncorrected;
- a pass/fail criterion: its pass rate;
- a 1-5 criterion: its pass rate at the criterion's ``pass_threshold``, for the judge's
  score and the person's alike.

The correction assumes the judge errs on this run's answers as it did on the labelled
ones: its interval is valid when the labels came from a random sample of this run's
answers, and holds approximately for a similar system (ARES makes the same assumption).
After a large change to the system, label again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragrail.records.results import Corrected, LabelPair, RunResult

if TYPE_CHECKING:
    from ragrail.judge.config import CriterionConfig
    from ragrail.judge.core import Judge
    from ragrail.store.validations import StoredValidation

FAITHFULNESS = "faithfulness"


@dataclass(frozen=True)
class Target:
    """A judged total that a validation may correct."""

    criterion: str  # "faithfulness" or a rubric criterion's name
    config: CriterionConfig | None  # None for faithfulness (or when labels are 0/1 already)
    judge_key: str

    @property
    def is_faithfulness(self) -> bool:
        return self.criterion == FAITHFULNESS

    @property
    def stat_key(self) -> str:  # the key in RunResult.judge_stats and judge_corrected
        return f"judge_{self.criterion}"

    @property
    def measure(self) -> str:
        if self.is_faithfulness:
            return "faithful answers"
        return f"{self.criterion} pass rate"


def targets(judge: Judge) -> list[Target]:
    """What this judge totals: faithfulness (when on) and each rubric criterion."""
    out = [Target(FAITHFULNESS, None, judge.key(None))] if judge.config.faithfulness else []
    out += [Target(c.name, c, judge.key(c)) for c in judge.config.criteria]
    return out


def as_pass(value: float, config: CriterionConfig | None) -> float | None:
    """A stored verdict as 1 (pass) or 0 (fail): a 1-5 score passes at the criterion's
    threshold. None for a value that is neither on this scale (never stored by today's
    ``judge validate``, which refuses such labels)."""
    if config is not None and config.scale == "1-5":
        if not 1.0 <= value <= 5.0:
            return None
        return 1.0 if value >= config.pass_threshold else 0.0
    return value if value in (0.0, 1.0) else None


def verdicts(run: RunResult, target: Target) -> dict[str, float]:
    """Case id -> the judge's 0/1 verdict on it. A case without one (it errored, the
    judge failed on it, the answer abstained or made no claim) is left out, as it is of
    the judge's raw total."""
    out: dict[str, float] = {}
    for case in run.cases:
        j = case.judge
        if j is None:
            continue
        if target.is_faithfulness:
            if j.faithfulness is not None:
                out[case.id] = 1.0 if j.faithfulness == 1.0 else 0.0
            continue
        found = next((cr for cr in j.criteria if cr.name == target.criterion), None)
        if found is not None and found.passed is not None:
            out[case.id] = 1.0 if found.passed else 0.0
    return out


def label_pairs(
    pairs: Sequence[tuple[str, float, float]], config: CriterionConfig | None
) -> list[LabelPair]:
    """A validation's (case id, judge, human) pairs as 0/1 verdicts; a pair off the
    scale is left out."""
    out = []
    for case_id, judge, human in pairs:
        j, h = as_pass(judge, config), as_pass(human, config)
        if j is not None and h is not None:
            out.append(LabelPair(case_id=case_id, judge=j, human=h))
    return out


def correct(
    values: Sequence[float],
    labels: Sequence[LabelPair],
    target: Target,
    validation: tuple[int, str],
) -> Corrected | None:
    """The PPI++ estimate of one judged total with the labels of ``validation`` (its id
    and date); None when there is nothing to correct (no judged answer or no usable
    label)."""
    from ragrail.judge.ppi import labels_to_halve, ppi_mean

    if not values or not labels:
        return None
    est = ppi_mean(values, [lb.judge for lb in labels], [lb.human for lb in labels])
    low_h, high_h = est.human_only or (None, None)
    return Corrected(
        measure=target.measure,
        raw=est.raw,
        estimate=est.estimate,
        low=est.low,
        high=est.high,
        n_judged=est.n_unlabelled,
        n_labelled=est.n_labelled,
        lam=est.lam,
        human_only_low=low_h,
        human_only_high=high_h,
        labels_to_halve=labels_to_halve(est),
        judge_key=target.judge_key,
        validation_id=validation[0],
        validated_at=validation[1],
        labels=list(labels),
    )


def correct_totals(
    run: RunResult, wanted: Sequence[Target], stored: dict[tuple[str, str], StoredValidation]
) -> dict[str, Corrected]:
    """Every judged total of ``run`` that a stored validation of the same judge corrects."""
    out: dict[str, Corrected] = {}
    for target in wanted:
        found = stored.get((target.judge_key, target.criterion))
        if found is None:
            continue
        values = list(verdicts(run, target).values())
        validation = (found.id, found.created_at)
        corrected = correct(values, label_pairs(found.pairs, target.config), target, validation)
        if corrected is not None:
            out[target.stat_key] = corrected
    return out


def recorrect(run: RunResult, previous: dict[str, Corrected]) -> dict[str, Corrected]:
    """``run``'s totals corrected again with the labels an earlier correction rested on
    (merged shards: each shard was corrected over its own questions only)."""
    out: dict[str, Corrected] = {}
    for key, old in previous.items():
        target = Target(key.removeprefix("judge_"), None, old.judge_key)
        values = list(verdicts(run, target).values())
        corrected = correct(values, old.labels, target, (old.validation_id, old.validated_at))
        if corrected is not None:
            out[key] = corrected
    return out


def merge_corrections(run: RunResult, parts: Sequence[RunResult]) -> dict[str, Corrected]:
    """A merged run's judged totals corrected again over all its questions with the labels
    its shards were corrected by (:func:`recorrect`). A shard with no verdict on a total
    (no question, or the judge failed on all of them) had nothing to correct and does not
    count. A total the other shards did not all correct with the same labels (a validation
    stored between them, or a shard run before it) is left uncorrected rather than mixed,
    after one warning (the scorecard's "uncorrected" would say no labels are stored)."""
    import warnings

    same: dict[str, Corrected] = {}
    dropped: list[str] = []
    for key in dict.fromkeys(k for p in parts for k in p.judge_corrected):
        target = Target(key.removeprefix("judge_"), None, "")
        found = [p.judge_corrected.get(key) for p in parts]
        used = [
            c for c, p in zip(found, parts, strict=True) if c is not None or verdicts(p, target)
        ]
        kept = [c for c in used if c is not None]
        first = kept[0]  # the key came from a shard's corrections
        if len(kept) == len(used) and all(
            (c.judge_key, c.validation_id, c.labels)
            == (first.judge_key, first.validation_id, first.labels)
            for c in kept
        ):
            same[key] = first
        else:
            dropped.append(target.criterion)
    if dropped:
        warnings.warn(
            f"{', '.join(dropped)}: left uncorrected, the shards were not all corrected by "
            "the same validation (rerun them)",
            stacklevel=2,
        )
    return recorrect(run, same)


@dataclass(frozen=True)
class CorrectedChange:
    """A corrected judged total, baseline against now: ``now - baseline`` with its 95%
    interval (``ragrail.judge.ppi.ppi_difference``). Read beside the per-question
    verdicts; it never decides a regression on its own."""

    key: str  # the judge_corrected key
    measure: str
    baseline: float
    now: float
    difference: float
    low: float | None
    high: float | None
    paired: bool  # the same labels and the questions both runs judged
    n_judged: int  # judged answers in the comparison (per run when unpaired: the smaller)
    n_labelled: int

    @property
    def significant(self) -> bool:
        """The interval leaves out 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def compare_corrected(baseline: Any, run: RunResult) -> tuple[list[CorrectedChange], list[str]]:
    """The corrected totals of two runs judged by the same validated judge, compared;
    and a note for each total that cannot be (another judge, prompt or rubric).

    Both corrected with one validation's labels: paired, over the questions both runs
    judged (``ppi_difference(paired=True)`` with the shared labels, where the judge's
    shared bias cancels). With two validations of the same judge: each run with its own
    labels, unpaired. A compact baseline keeps no judge verdicts: nothing to compare."""
    from ragrail.judge.ppi import ppi_difference

    before: dict[str, Corrected] = getattr(baseline, "judge_corrected", None) or {}
    changes: list[CorrectedChange] = []
    notes: list[str] = []
    for key, now in run.judge_corrected.items():
        old = before.get(key)
        if old is None:
            continue
        if old.judge_key != now.judge_key:
            notes.append(
                f"{now.measure}: the corrected totals are not compared (the runs were judged "
                "by another judge, prompt or rubric)"
            )
            continue
        target = Target(key.removeprefix("judge_"), None, now.judge_key)
        mine, theirs = verdicts(run, target), verdicts(baseline, target)
        paired = old.validation_id == now.validation_id and old.labels == now.labels
        if paired:
            common = [i for i in mine if i in theirs]
            a_all, b_all = [mine[i] for i in common], [theirs[i] for i in common]
            a_lab = b_lab = now.labels
        else:
            a_all, b_all = list(mine.values()), list(theirs.values())
            a_lab, b_lab = now.labels, old.labels
        if not a_all or not b_all:
            continue
        d = ppi_difference(
            a_all,
            [lb.judge for lb in a_lab],
            [lb.human for lb in a_lab],
            b_all,
            [lb.judge for lb in b_lab],
            [lb.human for lb in b_lab],
            paired=paired,
        )
        changes.append(
            CorrectedChange(
                key=key,
                measure=now.measure,
                baseline=d.b.estimate,
                now=d.a.estimate,
                difference=d.estimate,
                low=d.low,
                high=d.high,
                paired=paired,
                n_judged=min(len(a_all), len(b_all)),
                n_labelled=min(len(a_lab), len(b_lab)),
            )
        )
    return changes, notes
