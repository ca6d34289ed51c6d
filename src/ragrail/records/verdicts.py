"""What the LLM judge said about a case, judged totals corrected by human labels, and the
run's verdict against its baseline (re-exported by ``ragrail.records.results``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ragrail.records.base import Count, Rate
from ragrail.records.base import Model as _Model


class JudgeClaim(_Model):
    text: str
    supported: bool
    chunk: str | None = None


class CriterionResult(_Model):
    name: str
    passed: bool | None = None  # the majority verdict over repeats
    score: float | None = None  # the mean score, for 1-5 scales
    reason: str = ""
    verdicts: list[float] = Field(default_factory=list)  # per repeat: 1/0, or the score
    stable: bool = True  # every repeat gave the same verdict


class JudgeResult(_Model):
    """What the LLM judge said about one case."""

    faithfulness: Rate | None = None
    claims: list[JudgeClaim] = Field(default_factory=list)
    faithfulness_runs: list[Rate] = Field(default_factory=list)
    faithfulness_stable: bool = True
    criteria: list[CriterionResult] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class LabelPair(_Model):
    """One human-labelled answer of a judge validation: the judge's and the person's
    verdict as 0 (fail) or 1 (pass)."""

    case_id: str
    judge: Rate
    human: Rate


class Corrected(_Model):
    """A judged total corrected by the human labels of a stored judge validation, by
    prediction-powered inference (``ragrail.judge.ppi``): ``estimate`` = λ·``raw`` +
    mean(human - λ·judge) over the labels, clipped to [0, 1], with its 95% interval.
    ``method`` "ppi++" (λ tuned) on the labelled run itself, "ppi" (λ = 1) on any other
    run (``ragrail.judge.correct``). ``raw`` is the judge's own rate over ``n_judged``
    answers; ``labels`` are what the correction rests on (kept so a comparison between
    two runs can pair them)."""

    measure: str  # what is estimated: "faithful answers", or a criterion's pass rate
    method: Literal["ppi++", "ppi"] = "ppi++"
    raw: Rate
    # λ·raw + mean(human - λ·judge) with λ, raw and each verdict in [0, 1]: within [-1, 2]
    # (clipped to [0, 1] since issue 24; older files may hold the unclipped figure)
    estimate: float = Field(ge=-1.0, le=2.0)
    # the estimate before clipping, when it left [0, 1]
    unclipped: float | None = Field(default=None, ge=-1.0, le=2.0, exclude_if=lambda v: v is None)
    # False: estimate ± z·se misses [0, 1] (no interval): the labels do not fit this run
    fits: bool = Field(default=True, exclude_if=lambda v: v)
    # the labelled run's system settings that differ from this run's (labels too old)
    stale: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    low: Rate | None
    high: Rate | None
    n_judged: Count
    n_labelled: Count
    lam: Rate
    human_only_low: Rate | None = None  # the labels alone: what the judge adds to them
    human_only_high: Rate | None = None
    labels_to_halve: Count | None = None  # more labels that would halve the interval
    judge_key: str
    validation_id: Count
    validated_at: str
    labels: list[LabelPair]

    @model_validator(mode="after")
    def _consistent(self) -> Corrected:
        # what a correction always is; a hand-edited file that breaks it would be
        # shown as a figure, or fail a comparison that re-corrects from the labels
        if not self.labels or self.n_labelled != len(self.labels):
            raise ValueError(
                f"n_labelled ({self.n_labelled}) must be the number of labels ({len(self.labels)}),"
                " at least 1"
            )
        if self.n_judged < 1:
            raise ValueError("n_judged must be at least 1")
        for low, high in ((self.low, self.high), (self.human_only_low, self.human_only_high)):
            if low is not None and high is not None and low > high:
                raise ValueError(f"an interval's low ({low}) is above its high ({high})")
        return self


class CaseChange(_Model):
    """A question of a verdict, and what changed: its WORSE (or fixed) lines' details."""

    id: str
    changes: list[str]


class Verdict(_Model):
    """The run's verdict as ``ragrail run`` decided it (``ragrail.app.finish``): the exit
    code and, against the baseline it was compared with, the questions that regressed
    (each with the checks it lost), were fixed, errored, are new or were removed. A run
    with no baseline has empty lists and ``baseline`` None."""

    exit_code: int = Field(ge=0, le=3)
    summary: str  # "no regressions", "2 questions got worse", ...
    baseline: str | None = None  # the baseline file compared with
    regressed: list[CaseChange] = Field(default_factory=list)
    fixed: list[CaseChange] = Field(default_factory=list)
    errored: list[str] = Field(default_factory=list)
    new_cases: list[str] = Field(default_factory=list)
    removed_cases: list[str] = Field(default_factory=list)
    baseline_saved: bool = False  # --save-baseline accepted this run
