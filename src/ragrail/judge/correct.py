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

Which correction. The labels were drawn from one run (the labelled run). That run
itself (or a run identical to it: the same answers and the same verdicts, see
:func:`run_digest`) is corrected by PPI++ (λ tuned): the labels are a random sample of
its answers, and every λ is unbiased. Any other run is corrected by classic PPI (λ = 1):
under the assumption printed with it, "the judge errs on this run as it did on the
labelled one" (the same mean error E[Y - f]), λ = 1 is the only unbiased choice; a
tuned λ would pull the total towards the labelled run's (``ragrail.judge.ppi``).

Labels too old. The validation keeps the labelled run's system settings (answerer,
model, retriever, chunking, top_k, its own settings: :func:`system_of`); a run of
another system says which differ (``Corrected.stale``): the judge may err differently
on another system's answers, so label again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragrail.records.results import Corrected, LabelPair, RunConfig, RunResult

if TYPE_CHECKING:
    from ragrail.judge.config import CriterionConfig
    from ragrail.judge.core import Judge
    from ragrail.store.validations import StoredValidation

FAITHFULNESS = "faithfulness"
# the settings that make a system (what its answers depend on); the others (name, counts,
# repeats) describe the run
SYSTEM_FIELDS = (
    "answerer",
    "answerer_label",
    "model",
    "retriever",
    "chunking",
    "chunk_words",
    "top_k",
    "min_score",
    "settings",
)
ASSUMPTION = "assumes the judge errs on this run as it did on the labelled one"


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


def system_of(config: RunConfig) -> dict[str, Any]:
    """The run's system, as a validation keeps it (JSON values)."""
    return config.model_dump(mode="json", include=set(SYSTEM_FIELDS))


def run_digest(run: RunResult, target: Target) -> str:
    """A fingerprint of what a correction of ``target`` sees in ``run``: each question's
    answers (every repeat) and the judge's verdict on it. Two runs with the same digest
    are, for the correction, the same sample."""
    import hashlib
    import json

    seen = verdicts(run, target)
    rows = sorted(
        (
            c.id,
            [sm.answer for sm in c.trace.all_samples()] if c.trace is not None else [],
            seen.get(c.id),
        )
        for c in run.cases
    )
    return "sha256:" + hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def labelled_source(run: RunResult, target: Target) -> dict[str, Any]:
    """What a validation keeps of the run it was labelled on (``judge validate``)."""
    return {
        "created_at": run.created_at,
        "digest": run_digest(run, target),
        "system": system_of(run.config),
    }


def _relation(
    run: RunResult, target: Target, source: dict[str, Any] | None
) -> tuple[bool, list[str]]:
    """(whether ``run`` is the labelled run, the system settings that differ from the
    labelled run's). A validation stored before the labelled run was kept knows neither:
    another run, settings unknown."""
    if not isinstance(source, dict):
        return False, []
    system = source.get("system")
    mine = system_of(run.config)
    stale = (
        [k for k in SYSTEM_FIELDS if system.get(k) != mine.get(k)]
        if isinstance(system, dict)
        else []
    )
    return source.get("digest") == run_digest(run, target), stale


def correct(
    values: Sequence[float],
    labels: Sequence[LabelPair],
    target: Target,
    validation: tuple[int, str],
    *,
    labelled_run: bool = False,
    stale: Sequence[str] = (),
) -> Corrected | None:
    """One judged total corrected with the labels of ``validation`` (its id and date):
    PPI++ when this is the ``labelled_run``, classic PPI (λ = 1) otherwise (see the
    module docstring). None when there is nothing to correct (no judged answer or no
    usable label)."""
    from ragrail.judge.ppi import labels_to_halve, ppi_mean

    if not values or not labels:
        return None
    est = ppi_mean(
        values,
        [lb.judge for lb in labels],
        [lb.human for lb in labels],
        lam=None if labelled_run else 1.0,
    )
    low_h, high_h = est.human_only or (None, None)
    return Corrected(
        measure=target.measure,
        method="ppi++" if labelled_run else "ppi",
        raw=est.raw,
        estimate=est.estimate,
        unclipped=est.theta if est.clipped else None,
        fits=est.fits,
        stale=list(stale),
        low=est.low,
        high=est.high,
        n_judged=est.n_unlabelled,
        n_labelled=est.n_labelled,
        lam=est.lam,
        human_only_low=low_h,
        human_only_high=high_h,
        labels_to_halve=labels_to_halve(est) if est.fits else None,
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
        same, stale = _relation(run, target, found.source)
        labels = label_pairs(found.pairs, target.config)
        corrected = correct(values, labels, target, validation, labelled_run=same, stale=stale)
        if corrected is not None:
            out[target.stat_key] = corrected
    return out


def recorrect(run: RunResult, previous: dict[str, Corrected]) -> dict[str, Corrected]:
    """``run``'s totals corrected again with the labels an earlier correction rested on
    (merged shards: each shard was corrected over its own questions only), by the same
    method and with the same note on the labels' age."""
    out: dict[str, Corrected] = {}
    for key, old in previous.items():
        target = Target(key.removeprefix("judge_"), None, old.judge_key)
        values = list(verdicts(run, target).values())
        corrected = correct(
            values,
            old.labels,
            target,
            (old.validation_id, old.validated_at),
            labelled_run=old.method == "ppi++",
            stale=old.stale,
        )
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
    methods: tuple[str, str] = ("ppi++", "ppi++")  # (baseline, now): "ppi++" or "ppi"

    @property
    def significant(self) -> bool:
        """The interval leaves out 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def compare_corrected(baseline: Any, run: RunResult) -> tuple[list[CorrectedChange], list[str]]:
    """The corrected totals of two runs judged by the same validated judge, compared;
    and a note for each total that cannot be (another judge, prompt or rubric; labels
    that do not fit one of the runs).

    Both corrected with one validation's labels: paired, over the questions both runs
    judged, with the shared labels (``ppi_difference(paired=True)``). Each run keeps the
    λ it was corrected with: the labels' term then cancels when both are later runs
    (λ = 1: the difference of the judge's raw rates, valid when the judge errs on both
    as on the labelled run), and is kept, with its variance, against the labelled run
    itself (``ragrail.judge.ppi_change``). With two validations of the same judge: each
    run with its own labels, unpaired. A compact baseline keeps no judge verdicts:
    nothing to compare."""
    from ragrail.judge.ppi_change import ppi_difference

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
        if not (old.fits and now.fits):
            which = (
                "either run"
                if not (old.fits or now.fits)
                else ("the baseline" if not old.fits else "this run")
            )
            notes.append(
                f"{now.measure}: the corrected totals are not compared (the labels do not fit "
                f"{which})"
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
            lam_a=now.lam,
            lam_b=old.lam,
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
                methods=(old.method, now.method),
            )
        )
    return changes, notes
