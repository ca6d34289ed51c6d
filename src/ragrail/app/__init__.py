"""The application layer: one evaluation, read top to bottom.

Load a project, apply overrides, read every input (failing fast, before any
work), run the system under test (the built-in pipeline, or the user's own),
judge, compare with the baseline, record the run, and decide the verdict. The
CLI, the Python API and the pytest plugin all go through here; nothing here
prints. Warnings go through :func:`warnings.warn` (the CLI shows each as one
line); what a person should read goes back in the returned objects.

    project = load_project(Path("ragrail.toml"))
    evaluation = evaluate(project, Overrides(top_k=1))
    diff = compare_with_baseline(evaluation.result, evaluation.baseline)
    record(project, evaluation.result)
    code = exit_code(evaluation.result, diff, evaluation.judge_failed)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragrail.errors import EXIT_OK, EXIT_REGRESSION, EXIT_SYSTEM, InputError, SystemFailure
from ragrail.jobs import (
    DryRun,
    Evaluation,
    Interrupted,
    Prepared,
    Progress,
)
from ragrail.settings import (
    Overrides,
    build_judge,
    check_gates,
    check_judge_provider,
    check_min_score,
    history_path,
    judge_config,
    prices,
    refuse_pipeline_flags,
    resolve,
)

if TYPE_CHECKING:
    from ragrail.diff import Diff
    from ragrail.judge import JudgeConfig
    from ragrail.project import Project
    from ragrail.records.case import GoldenSet
    from ragrail.records.results import Corrected, RunResult
    from ragrail.settings import ResolvedSettings
    from ragrail.store.baseline import Baseline

# ---------------------------------------------------------------- the project


def load_project(config: Path | None = None, example: str | None = None) -> Project:
    """The project file ``config``, a bundled ``example``, or ./ragrail.toml."""
    from ragrail.project import CONFIG_NAME, example_dir, load_config

    if example is not None and config is not None:
        raise InputError("--example and --config contradict each other")
    if example is not None:
        return load_config(example_dir(example) / CONFIG_NAME)
    if config is not None:
        return load_config(config)
    here = Path.cwd() / CONFIG_NAME
    if here.is_file():
        return load_config(here)
    raise InputError(
        f"no {CONFIG_NAME} in this folder: pass --config PATH, copy an example with "
        "`ragrail example kitebase DIR`, or try `ragrail demo`"
    )


def default_project(root: Path | None = None) -> Project:
    """A project with every default, rooted at ``root`` (default: here): for a golden set
    evaluated without a project file."""
    from ragrail.project import Project, ProjectConfig

    return Project(root=root or Path.cwd(), config=ProjectConfig())


def is_bundled(project: Project) -> bool:
    """Whether the project is a bundled example (read-only, inside the package)."""
    from ragrail.project import EXAMPLES_DIR

    return project.root.resolve().is_relative_to(EXAMPLES_DIR.resolve())


# ---------------------------------------------------------------- before any work


def prepare(
    project: Project,
    overrides: Overrides | None = None,
    *,
    system: object | None = None,
    golden: GoldenSet | Path | str | None = None,
    outputs: Sequence[tuple[Path | None, str]] = (),
    save_baseline: bool = False,
) -> Prepared:
    """Read and check every input of an evaluation before anything runs, so a bad file or
    setting fails fast (InputError) and nothing is written. ``outputs`` (``(path or None,
    what)``) and the baseline when ``save_baseline`` are the files the caller will write:
    each is refused here when it cannot be written or would replace an input."""
    from ragrail.golden import GoldenSet, load_golden
    from ragrail.store.baseline import load_baseline

    o = overrides or Overrides()
    own_system = system is not None or project.config.system.kind != "pipeline"
    if not own_system:
        check_min_score(project, o)
    baseline_path = o.baseline or project.baseline
    if isinstance(golden, GoldenSet):
        gold = golden
    else:
        gold = load_golden(Path(golden or o.golden or project.golden), project.root)
    # exists(), not is_file(): a folder or FIFO where the baseline should be is an error,
    # not "no baseline yet"; a dangling link is a baseline still to be saved
    baseline = load_baseline(baseline_path) if baseline_path.exists() else None
    if outputs or save_baseline:  # a bad output path must not cost a run
        from ragrail.outputs import check_run_outputs

        check_run_outputs(project, outputs, baseline_path, save_baseline, o.golden, o.docs)
    history = None if o.no_history or o.dry_run else history_path(project)
    judge_cfg = judge_config(project, o)
    if judge_cfg is not None:
        check_gates(project, judge_cfg, o)
        if not o.dry_run:  # a dry run calls nothing, so it needs no key
            check_judge_provider(judge_cfg)
    if own_system:
        refuse_pipeline_flags(o, "python" if system is not None else project.config.system.kind)
    # every stage's settings, once: a missing Ray is exit 2 before any work
    settings = resolve(project, o, judge=judge_cfg)
    if o.batch and judge_cfg is None and (own_system or not settings.answerer.uses_model):
        raise InputError(
            "--batch sends model calls as one provider batch, and this run makes none: "
            "add a model answerer (--claude, --answerer) or a judge (--judge)"
        )
    if not save_baseline:  # accepting a run that cites nothing lets the rule go
        settings = _cite_as_the_baseline(settings, baseline)
    return Prepared(project, o, gold, baseline_path, baseline, settings, history, system)


def _cite_as_the_baseline(
    settings: ResolvedSettings, baseline: Baseline | None
) -> ResolvedSettings:
    """``require_citation = "auto"`` against a baseline whose answers had to cite: required
    here too, so an app that stops citing altogether loses the citation check of every
    answer (WORSE lines) rather than having the requirement dropped without a word."""
    from dataclasses import replace

    scoring = settings.scoring
    if scoring.require_citation != "auto" or baseline is None:
        return settings
    if baseline.config.citations != "required":
        return settings
    return replace(settings, scoring=replace(scoring, require_citation=True))


# ---------------------------------------------------------------- the run


def evaluate(
    project: Project,
    overrides: Overrides | None = None,
    *,
    system: object | None = None,
    golden: GoldenSet | Path | str | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Run the golden set through the system under test, score it, and judge it.

    ``system``: None (the project's: the built-in pipeline or its [system]), a Python
    function ``question -> {answer, contexts}`` (sync or async, used as-is), a
    ``"module:function"`` string, or an object with ``traces(cases)``.
    """
    return run(prepare(project, overrides, system=system, golden=golden), progress)


def run(prepared: Prepared, progress: Progress | None = None) -> Evaluation:
    """Run a prepared evaluation (see :func:`prepare`)."""
    p = prepared
    if p.overrides.dry_run:
        raise InputError("a dry run sends nothing: use dry_run_plan()")
    evaluation = Evaluation(result=None, baseline=p.baseline, baseline_path=p.baseline_path)  # type: ignore[arg-type]
    evaluation.docs, evaluation.golden_path = p.settings.docs, p.golden.path
    if not p.settings.backend.local:
        from ragrail.backends.ray import run_on_ray

        run_on_ray(p, evaluation, progress)
    elif p.system is None and p.project.config.system.kind == "pipeline":
        _run_pipeline(p, evaluation, progress)
    else:
        _run_system(p, evaluation)
    judge = p.settings.judge
    if judge is not None:
        evaluation.judge_failed = _run_judge(
            p.project, judge, evaluation.result, p.settings.backend, p.overrides.no_cache
        )
    return evaluation


def _run_system(p: Prepared, evaluation: Evaluation) -> None:
    from ragrail.gcpause import paused_gc
    from ragrail.run import evaluate_system
    from ragrail.system.adapters import make_system

    s = p.settings
    with paused_gc():  # an outputs file is read here: one trace per line
        system = make_system(s.system, p.project.root, p.system)
    evaluation.result = evaluate_system(
        p.project.config.name, p.golden, system, s.scoring, s.repeats
    )


def _run_pipeline(p: Prepared, evaluation: Evaluation, progress: Progress | None) -> None:
    from ragrail.run import evaluate as evaluate_pipeline
    from ragrail.run import rerun_failures, usage_of
    from ragrail.system.answerers import build_answerer
    from ragrail.system.pipeline import Pipeline

    o, name, s = p.overrides, p.project.config.name, p.settings
    spec, repeats, pipeline = s.answerer, s.repeats, Pipeline(s.pipeline)
    bar = progress or (lambda total, label: nullcontext(None))
    with bar(repeats * len(p.golden.cases), f"answering ({spec.name})") as on_result:
        answerer = build_answerer(spec, on_result)
        try:
            result = evaluate_pipeline(name, p.golden, pipeline, answerer, repeats, s.scoring)
            if o.rerun_failures and spec.uses_model:
                evaluation.reruns = rerun_failures(
                    result, p.golden, pipeline, answerer, o.rerun_failures, s.scoring
                )
                # the re-runs' calls are this run's calls: counted and costed with them
                result.usage = usage_of(answerer)
        except KeyboardInterrupt:
            usage = getattr(answerer, "usage", None)
            done = f"{usage.calls} calls finished" if usage else "finished calls"
            where = f" and are cached in {spec.cache_path}" if spec.cache_path else ""
            raise Interrupted(
                f"{done}{where}; run the same command again to resume "
                "(cached answers are reused, so only the rest is called)"
            ) from None
    if o.rerun_failures and not spec.uses_model:
        evaluation.notes.append(
            "(--rerun-failures needs a model answerer; the stand-in always answers the same)"
        )
    cache_note = getattr(pipeline.retriever, "cache_note", None)  # dense: what was encoded
    if cache_note is not None:
        evaluation.notes.append(cache_note())
    evaluation.result = result


def _run_judge(
    project: Project, cfg: JudgeConfig, result: RunResult, backend: Any, no_cache: bool = False
) -> int:
    """Judge the run in place (its calls on ``backend``); returns how many questions the
    judge failed on."""
    from ragrail.backends import judging
    from ragrail.judge import judge_and_rescore, same_family_warning

    judge = build_judge(project, cfg, no_cache)
    warning = same_family_warning(judge, [result.config.model])
    if warning:
        warnings.warn(warning, stacklevel=2)
    with judging(backend, judge):
        failed = judge_and_rescore(judge, result)
    result.judge_corrected = corrected_totals(judge, result, project.state_dir / "history.sqlite")
    return failed


def corrected_totals(judge: Any, result: RunResult, history: Path) -> dict[str, Corrected]:
    """The run's judged totals corrected by the labels of this judge's latest stored
    validations (``ragrail.judge.correct``); empty when it has none."""
    from ragrail.judge.correct import correct_totals, targets
    from ragrail.store.validations import load_validations

    wanted = targets(judge)
    stored = load_validations(history, [(t.judge_key, t.criterion) for t in wanted])
    return correct_totals(result, wanted, stored)


def dry_run_plan(prepared: Prepared) -> DryRun:
    """The calls a model run would make and their estimated cost; sends nothing."""
    from ragrail.system.answerers import plan_calls
    from ragrail.system.pipeline import Pipeline

    p, s = prepared, prepared.settings
    spec, judge = s.answerer, s.judge
    if p.system is not None or p.project.config.system.kind != "pipeline":
        return _dry_run_own_system(p)
    if not spec.uses_model and judge is None:
        raise InputError("--dry-run needs a model answerer (--claude or --answerer) or a judge")
    cases = p.golden.cases
    pipeline = Pipeline(s.pipeline)
    ids, questions = [c.id for c in cases], [c.question for c in cases]
    from ragrail.system.rounds import search_queries

    traces = pipeline.prepare(ids, questions, search_queries(cases))  # as the run searches
    prompts = [(r.prompt, r.repeat) for r in pipeline.requests(traces, questions, s.repeats)]
    plan = plan_calls(spec, prompts, p.overrides.rerun_failures) if spec.uses_model else None
    judge_plan = None
    if judge is not None:
        from ragrail.judge import Prompts, plan_items, plan_judge

        folder = p.project.root / judge.prompts_dir if judge.prompts_dir else None
        judge_plan = plan_judge(
            judge,
            Prompts.load(folder),
            plan_items(cases, traces),
            spec.calls.max_tokens,
            prices(p.project),
        )
    skipped = sum(1 for t in traces if t.prompt is None)
    return DryRun(plan, len(cases), skipped, judge_plan)


def _dry_run_own_system(p: Prepared) -> DryRun:
    """A dry run of a system that needs no calling (an outputs file: written by hand or by
    `ragrail import`): its answers are read, and the judge's very prompts counted."""
    from ragrail.gcpause import paused_gc
    from ragrail.judge import Prompts, plan_judge_run
    from ragrail.run import evaluate_system
    from ragrail.system.adapters import make_system

    s, kind = p.settings, p.project.config.system.kind
    if p.system is not None or kind != "outputs":
        raise InputError(
            f'--dry-run cannot count a [system] kind = "{kind}" run without calling it: its '
            "answers are not known until it answers (an outputs file's are)"
        )
    judge = s.judge
    if judge is None:
        raise InputError(
            "--dry-run on an outputs file needs a judge (--judge or [judge] provider): "
            "nothing else is called"
        )
    with paused_gc():
        system = make_system(s.system, p.project.root, None)
    result = evaluate_system(p.project.config.name, p.golden, system, s.scoring, s.repeats)
    folder = p.project.root / judge.prompts_dir if judge.prompts_dir else None
    phrases = tuple(p.project.config.scoring.abstain_phrases)
    plan = plan_judge_run(judge, Prompts.load(folder), result, prices(p.project), phrases)
    skipped = sum(1 for c in result.cases if c.errored or c.trace.answer is None)
    return DryRun(None, len(result.cases), skipped, plan)


# ---------------------------------------------------------------- after the run


def compare_with_baseline(
    result: RunResult, baseline: Path | str | RunResult | Baseline | None
) -> Diff | None:
    """The per-question diff against ``baseline`` (a run, a loaded baseline, or a baseline
    file, compact or a whole saved run, that may not exist yet: None then)."""
    from ragrail.diff import compare
    from ragrail.records.results import RunResult
    from ragrail.store.baseline import Baseline, load_baseline

    if baseline is None:
        return None
    if not isinstance(baseline, RunResult | Baseline):
        if not Path(baseline).exists():
            return None
        baseline = load_baseline(Path(baseline))
    return compare(result, baseline)


def mark_flaky(project: Project, result: RunResult, path: Path | None = None) -> int:
    """Mark the questions whose verdict changed between the recorded runs of this
    configuration (``ragrail.store.flaky``) without recording this run; how many."""
    from ragrail.store.flaky import mark_flaky as mark

    path = path or project.state_dir / "history.sqlite"
    return mark(result, path, None if is_bundled(project) else project.root)


def record(project: Project, result: RunResult, path: Path | None = None) -> int | None:
    """Record the run in the project's history; its id, or None after one warning when the
    history cannot take it. Never raises for the history's sake: a run is never lost to it.
    First, the questions whose verdict changed between recorded runs of this configuration
    are marked flaky (``ragrail.store.flaky``)."""
    from ragrail.store.history import record_run

    path = path or project.state_dir / "history.sqlite"
    mark_flaky(project, result, path)  # before it is recorded: this run is one of them
    return record_run(path, result, None if is_bundled(project) else project.root)


def judge_errors(result: RunResult) -> int:
    """Questions the judge failed on."""
    from ragrail.diff import judge_failed

    return sum(1 for c in result.cases if judge_failed(c))


def failures(result: RunResult, diff: Diff | None = None) -> str | None:
    """Why the run has no clean verdict (failed calls, judge failures), or None."""
    from ragrail.diff import error_phrases

    n_judge = judge_errors(result)
    if not (result.totals.n_errors or n_judge):
        return None
    was_passing = len(diff.errors) if diff is not None else 0
    return "; ".join(error_phrases(result.totals.n_errors, was_passing, n_judge))


def exit_code(result: RunResult, diff: Diff | None, judge_failed: int = 0) -> int:
    """THE verdict: 3 when a question failed to run or the judge failed on one (no clean
    verdict, whatever else changed), 1 when a question got worse than in the baseline,
    else 0."""
    if result.totals.n_errors or judge_failed or judge_errors(result):
        return EXIT_SYSTEM
    return EXIT_REGRESSION if diff is not None and diff.regressed else EXIT_OK


def save_baseline(
    result: RunResult, path: Path, *, docs: Path | None = None, golden: Path | None = None
) -> None:
    """Accept the run as the new baseline: its compact form (ragrail.store.baseline), written
    atomically, with the fingerprints of ``docs`` and ``golden``. A run with errors is
    refused (SystemFailure): it would record failed calls as the expected result."""
    from ragrail.store.baseline import save_baseline as write_baseline

    reason = failures(result)
    if reason is not None:
        raise SystemFailure(
            f"not saving a baseline to {path}: it would record failed calls as the expected "
            f"result ({reason}); fix or re-run them, then save"
        )
    write_baseline(result, path, docs=docs, golden=golden)
