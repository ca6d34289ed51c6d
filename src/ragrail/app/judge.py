"""The judge's own commands, as library functions: ``judge validate``
(:func:`validate_with_labels`: the judge against human labels, stored for gates and
corrections) and ``judge pairwise`` (:func:`judge_pairwise`: which of two runs answers
better). Each takes plain arguments and returns what it found; nothing here prints
(warnings go through :func:`warnings.warn`). Output paths are checked by
:func:`ragrail.outputs.guard_outputs` before any work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.flags import Overrides
    from ragrail.judge import Judge, PairwiseResult, Validation
    from ragrail.project import Project
    from ragrail.records.results import RunResult


def judge_for(project: Project, overrides: Overrides | None = None) -> Judge:
    """The judge of ``ragrail judge ...``: the project's ``[judge]`` with ``overrides``
    (judge, judge_model, judge_base_url and the judge's call settings) applied."""
    from ragrail.flags import Overrides
    from ragrail.settings import build_judge, judge_config

    cfg = judge_config(project, overrides or Overrides())
    if cfg is None:
        raise InputError(
            "no judge: pass --judge claude|openai or add [judge] provider = ... to ragrail.toml"
        )
    return build_judge(project, cfg)


def results_file(ref: str) -> Path | None:
    """The results file a RUN argument names (a ``.json`` path), None for a recorded run."""
    return Path(ref) if Path(ref).suffix.lower() == ".json" else None


def load_run_ref(ref: str, project: Project) -> RunResult:
    """A run from a results file (a path that exists) or from the history (id, latest, -N)."""
    from ragrail.records.results import load_run
    from ragrail.store.history import History

    path = Path(ref)
    if path.suffix.lower() == ".json":
        if not path.is_file():
            raise InputError(f"{ref}: no such results file (a run's --json output)")
        return load_run(path, "results")
    store_path = project.state_dir / "history.sqlite"
    if not store_path.exists():
        raise InputError(f"{ref}: not a results file, and no run history at {store_path}")
    store = History(store_path)
    try:
        return store.load(ref)
    finally:
        store.close()


# ---------------------------------------------------------------- judge validate


@dataclass(frozen=True)
class StoredValidation:
    """One criterion's agreement as stored in the history: its id, the judge key it is
    for, and whether it allows gates on the criterion (kappa or Spearman >= min_kappa)."""

    id: int
    judge_key: str
    gates_allowed: bool


@dataclass
class LabelValidation:
    """What ``judge validate`` found: the agreement per criterion, and what was stored
    of each (``stored[i]`` is agreement ``i``'s; None when it was not stored: the judge
    failed on a labelled case, or nothing was measured)."""

    judge: Judge
    validation: Validation
    stored: list[StoredValidation | None]

    @property
    def min_kappa(self) -> float:
        return self.judge.config.min_kappa

    def json_data(self) -> dict[str, Any]:
        """The ``--json`` document."""
        from ragrail.reports.machine import validation_json

        stored = {
            a.criterion: {
                "stored": s.id,
                "judge_key": s.judge_key,
                "gates_allowed": s.gates_allowed,
            }
            for a, s in zip(self.validation.agreements, self.stored, strict=True)
            if s is not None
        }
        return validation_json(self.judge.label, self.validation, stored, self.min_kappa)


def validate_with_labels(
    labels_path: Path,
    run_ref: str = "latest",
    config: Path | None = None,
    example: str | None = None,
    overrides: Overrides | None = None,
    json_path: Path | None = None,
) -> LabelValidation:
    """Measure the judge against the human labels in ``labels_path`` on the answers of
    ``run_ref`` (an id, latest, -N, or a results .json file), and store each measured
    criterion's agreement. When the judge failed on any labelled case nothing is stored
    (``validation.failed`` lists them). ``json_path`` is only checked here."""
    from ragrail.judge import load_labels, validate_judge
    from ragrail.judge.correct import Target, labelled_source
    from ragrail.outputs import guard_outputs
    from ragrail.store.history import History

    project = _project(config, example)
    reads = [(labels_path, "the labels file"), (results_file(run_ref), "the results file")]
    guard_outputs([(json_path, "--json validation")], project, reads)
    labels = load_labels(labels_path)
    run = load_run_ref(run_ref, project)
    judge = judge_for(project, overrides)
    validation = validate_judge(judge, run, labels)
    criteria = {c.name: c for c in judge.config.criteria}
    stored: list[StoredValidation | None] = []
    store = History(project.state_dir / "history.sqlite")
    try:
        for a in validation.agreements:
            # a validation over the cases the judge managed is not stored; nor is one that
            # measured nothing: it would become this judge's latest validation and hide the
            # labels of an earlier one from corrections
            if validation.failed or not a.n:
                stored.append(None)
                continue
            key = judge.key(criteria.get(a.criterion))
            # what a later run's correction compares itself with: is it this run, which system
            source = labelled_source(run, Target(a.criterion, criteria.get(a.criterion), key))
            vid = store.record_validation(key, judge.label, a.criterion, a, source)
            score = a.kappa if a.kappa is not None else a.spearman
            ok = score is not None and score >= judge.config.min_kappa
            stored.append(StoredValidation(vid, key, ok))
    finally:
        store.close()
    return LabelValidation(judge, validation, stored)


# ---------------------------------------------------------------- judge pairwise


@dataclass
class PairwiseReadout:
    """What ``judge pairwise`` found: the verdicts of run B against run A, and the judge
    (its label and its calls' usage)."""

    judge: Judge
    result: PairwiseResult

    def json_data(self) -> dict[str, Any]:
        """The ``--json`` document."""
        from ragrail.reports.machine import pairwise_json

        return pairwise_json(self.judge.label, self.result, self.judge.usage)


def judge_pairwise(
    run_a: str,
    run_b: str,
    config: Path | None = None,
    example: str | None = None,
    overrides: Overrides | None = None,
    json_path: Path | None = None,
) -> PairwiseReadout:
    """Which run answers better, per question, judged with the answers in both orders
    (run ids, latest, -N, or results .json files). Warns when the judge is of the same
    model family as an answerer. ``json_path`` is only checked here."""
    import warnings

    from ragrail.judge import pairwise, same_family_warning
    from ragrail.outputs import guard_outputs

    project = _project(config, example)
    reads = [(results_file(run_a), "RUN_A's results"), (results_file(run_b), "RUN_B's results")]
    guard_outputs([(json_path, "--json verdicts")], project, reads)
    a, b = load_run_ref(run_a, project), load_run_ref(run_b, project)
    judge = judge_for(project, overrides)
    warning = same_family_warning(judge, [a.config.model, b.config.model])
    if warning:
        warnings.warn(warning, stacklevel=2)
    return PairwiseReadout(judge, pairwise(judge, a, b))


def _project(config: Path | None, example: str | None) -> Project:
    from ragrail.app import load_project

    return load_project(config, example)
