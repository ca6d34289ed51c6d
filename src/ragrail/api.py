"""The Python API: evaluate a golden set from a notebook or a test, compare it with a baseline.

A thin layer over :mod:`ragrail.app`, the same evaluation the CLI runs::

    import ragrail

    result = ragrail.evaluate("golden.json", system=answer)  # answer(question) -> {...}
    result.totals.answer_pass_rate
    ragrail.assert_no_regression(result, "baseline.json")

Nothing here prints or exits: a bad file or argument raises
:class:`~ragrail.errors.InputError`, a failure of the machine or the disk
:class:`~ragrail.errors.SystemFailure`; a question the system under test fails on
is that question's error in the result, and the run goes on.
"""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.diff import Diff
    from ragrail.project import Project
    from ragrail.records.case import Case, GoldenSet
    from ragrail.records.results import RunResult
    from ragrail.store.baseline import Baseline

PathLike: TypeAlias = "str | os.PathLike[str]"
#: A golden set: a file (JSON, JSONL, YAML, CSV), a loaded one, or its cases as dicts.
GoldenLike: TypeAlias = "PathLike | GoldenSet | Sequence[Mapping[str, Any] | Case]"
#: The system under test: a function ``question -> {"answer", "contexts"}`` (sync or
#: async), a ``"module:function"`` string, a project (its file, its folder, or loaded).
SystemLike: TypeAlias = "Callable[..., Any] | PathLike | Project"
BaselineLike: TypeAlias = "PathLike | RunResult | Baseline"

CONFIG_NAME = "ragrail.toml"

@dataclass(frozen=True)
class _Origin:
    """Where a result came from: what compare() and save_baseline() default to."""

    baseline: Path | RunResult | Baseline | None
    docs: Path | None
    golden: Path | None
    config: Path | None  # the project file
    source: Path | None = None  # the results file it was loaded from


# Results by id(): RunResult is unhashable (a pydantic model with __eq__), so no
# WeakKeyDictionary; each entry goes when its result is collected.
_ORIGINS: dict[int, _Origin] = {}


def _remember(result: RunResult, origin: _Origin) -> None:
    key = id(result)
    _ORIGINS[key] = origin
    weakref.finalize(result, _ORIGINS.pop, key, None)


# ---------------------------------------------------------------- evaluate


def evaluate(
    golden: GoldenLike | None = None,
    system: SystemLike | None = None,
    *,
    config: PathLike | None = None,
    docs: PathLike | None = None,
    baseline: BaselineLike | None = None,
    history: bool = False,
    **overrides: Any,
) -> RunResult:
    """Run a golden set through the system under test and score every question.

    ``golden``: a golden-set file (JSON, JSONL, YAML or CSV), a loaded
    :class:`~ragrail.golden.GoldenSet`, or a list of cases as dicts (``{"id",
    "question", "sources", "facts"}``); None: the project's golden set.

    ``system``: None (the project's system under test: the built-in pipeline over
    ``docs``, or its ``[system]``); a function ``question -> {"answer": str,
    "contexts": [{"id", "source", "text", "score"}]}``, sync or async, called as it is;
    a ``"module:function"`` string; or a project: a ``ragrail.toml``, the folder
    holding one, or a loaded project.

    ``config``: the project file whose settings apply (pipeline, scoring, checks,
    judge). Default: the project given as ``system``, else ``./ragrail.toml`` when
    there is one, else every default, rooted in the current folder.

    ``docs``: the documents the built-in pipeline searches (default: the project's).
    ``baseline``: what :func:`compare` and :func:`assert_no_regression` compare this
    result with when not told (default: the project's ``baseline.json``); a file is
    read now, so a broken one fails before anything runs. ``history``: record the run
    in the project's history (``.ragrail/history.sqlite``), as ``ragrail run`` does.

    ``overrides``: any ``ragrail run`` flag as a keyword, ``top_k=1``,
    ``retriever="bm25"``, ``answerer="openai", model="..."``, ``judge="claude"``,
    ``concurrency=4``, ``timeout=30``, ``repeats=3``, ``no_cache=True``...

    Raises InputError for a bad file or argument (before anything runs) and
    SystemFailure when the disk or the machine fails. A question whose call fails is
    that question's error in the result (``result.totals.n_errors``).
    """
    from ragrail import app
    from ragrail.app.finish import Ending, finish
    from ragrail.flags import Overrides, check_keywords

    project, own = _project(system, config)
    given = check_keywords(overrides)
    if docs is not None:
        given["docs"] = _path(docs, "docs")
    if baseline is not None and not _is_run(baseline):
        given["baseline"] = _path(baseline, "baseline")
    gold = _golden(golden, project)
    evaluation = app.evaluate(project, Overrides.of(given), system=own, golden=gold)
    for note in evaluation.notes:
        warnings.warn(note, stacklevel=2)
    result = evaluation.result
    # the rest of a run's end is the caller's: compare(), save_baseline()
    recorded = history and not app.is_bundled(project)
    path = project.state_dir / "history.sqlite" if recorded else None
    finish(project, evaluation, Ending(history=path, compare=False))
    golden_file = evaluation.golden_path
    _remember(
        result,
        _Origin(
            baseline if _is_run(baseline) else evaluation.baseline_path,  # type: ignore[arg-type]
            evaluation.docs,
            # cases given as a list have no file to fingerprint
            golden_file if golden_file is not None and golden_file.is_file() else None,
            project.config_path,
        ),
    )
    return result


def _is_run(value: object) -> bool:
    from ragrail.records.results import RunResult
    from ragrail.store.baseline import Baseline

    return isinstance(value, RunResult | Baseline)


def _path(value: object, name: str) -> Path:
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise InputError(f"{name} must be a path, not {type(value).__name__}")


def _project(system: object, config: object) -> tuple[Project, object]:
    """The project whose settings apply, and the user's own system (None: the project's)."""
    from ragrail import app
    from ragrail.project import Project

    as_project = _as_project_file(system)
    if isinstance(system, Project) or as_project is not None:
        if config is not None:
            raise InputError("give the project as system= or as config=, not both")
        if isinstance(system, Project):
            return system, None
        return app.load_project(as_project), None
    if config is not None:
        path = _as_project_file(config)
        if path is None:
            raise InputError(
                f"config {os.fspath(config)!r} is not a {CONFIG_NAME} (nor a folder holding one)"
                if isinstance(config, str | os.PathLike)
                else f"config must be the path of a {CONFIG_NAME}, not {type(config).__name__}"
            )
        return app.load_project(path), system
    here = Path.cwd() / CONFIG_NAME
    if here.is_file():
        return app.load_project(here), system
    return app.default_project(), system


def _as_project_file(value: object) -> Path | None:
    """``value`` as a project file when it names one: a ``.toml`` path, or a folder with
    a ragrail.toml. A ``"module:function"`` string is not one."""
    if not isinstance(value, str | os.PathLike):
        return None
    path = Path(value)
    if path.suffix == ".toml":
        return path  # loading it says what is wrong with it
    if path.is_dir():
        if (path / CONFIG_NAME).is_file():
            return path / CONFIG_NAME
        raise InputError(f"no {CONFIG_NAME} in this folder", str(path))
    return None


def _golden(golden: object, project: Project) -> GoldenSet | Path | None:
    """The golden set as app.evaluate takes it: a path, a loaded set, or None (the
    project's). Cases given as dicts are checked as a golden file's would be."""
    from ragrail.golden import _build as build_golden
    from ragrail.records.case import Case, GoldenSet

    if golden is None or isinstance(golden, GoldenSet):
        return golden
    if isinstance(golden, str | os.PathLike):
        return Path(golden)
    if isinstance(golden, Sequence) and not isinstance(golden, bytes | bytearray):
        items = [c.model_dump(mode="json") if isinstance(c, Case) else c for c in golden]
        return build_golden(Path("<cases>"), [(item, 0) for item in items], project.root)
    raise InputError(
        "golden must be a golden-set file, a GoldenSet or a list of cases, "
        f"not {type(golden).__name__}"
    )


# ---------------------------------------------------------------- after the run


def compare(result: RunResult, baseline: BaselineLike | None = None) -> Diff:
    """The per-question diff of ``result`` against ``baseline``: a baseline file
    (compact, or a whole saved run), a RunResult, or a loaded Baseline. Default: the
    baseline of the :func:`evaluate` call that made ``result``.

    ``diff.worse`` and ``diff.errors`` are the WORSE and ERROR lines; ``diff.regressed``
    is the regression decision. A baseline file that does not exist is an InputError.
    """
    from ragrail import app

    target = _baseline_of(result, baseline)
    diff = app.compare_with_baseline(result, target)
    if diff is None:
        raise InputError(
            "no baseline here yet: accept a run first with ragrail.save_baseline(result) "
            "or `ragrail run --save-baseline`",
            str(target),
        )
    return diff


def assert_no_regression(result: RunResult, baseline: BaselineLike | None = None) -> Diff:
    """Raise AssertionError unless ``result`` has a clean verdict against ``baseline``
    (see :func:`compare`): no question got worse, none failed to run, the judge failed on
    none. The message lists the WORSE and ERROR lines. Returns the diff otherwise."""
    from ragrail import app

    diff = compare(result, baseline)
    if app.exit_code(result, diff) == 0:
        return diff
    raise AssertionError("\n".join(regression_lines(result, diff)))


def regression_lines(result: RunResult, diff: Diff) -> list[str]:
    """The verdict line (``2 questions got worse``), then one WORSE or ERROR line per
    question that keeps the verdict from being clean, its id and text made visible."""
    from ragrail.diff import first_error, judge_failed
    from ragrail.text.guard import visible

    lines = [f"ragrail: {diff.summary()}"]
    if diff.config_changes:
        lines[0] += f" (changed: {', '.join(diff.config_changes)})"
    lines += [visible(c.line()) for c in diff.worse + diff.errors]
    listed = {c.case_id for c in diff.errors}
    for case in result.cases:
        if case.errored and case.id not in listed:
            lines.append(visible(f"ERROR:  {case.id}: {first_error(case)}"))
        elif judge_failed(case) and case.judge is not None:
            lines.append(visible(f"ERROR:  {case.id}: the judge failed: {case.judge.errors[0]}"))
    return lines


def save_baseline(result: RunResult, path: PathLike | None = None) -> Path:
    """Accept ``result`` as the baseline: written atomically to ``path`` (default: the
    baseline of the :func:`evaluate` call that made it), with the fingerprints of its
    documents and golden set. A run with errors is refused (SystemFailure). Returns the
    path written."""
    from ragrail import app

    origin = _ORIGINS.get(id(result))
    if path is None:
        if origin is None or not isinstance(origin.baseline, Path):
            raise InputError("give the path to save the baseline to")
        target = origin.baseline
    else:
        target = _path(path, "path")
    docs, golden = (origin.docs, origin.golden) if origin is not None else (None, None)
    _check_baseline_target(target, origin)
    app.save_baseline(result, target, docs=docs, golden=golden)
    return target


def _check_baseline_target(path: Path, origin: _Origin | None) -> None:
    """Refuse (InputError) a baseline path that cannot be written, or that would replace
    the golden set, the project file or a document of the run."""
    from ragrail.outputs import guard_outputs

    reads: list[tuple[Path | None, str]] = []
    state_dir = None
    if origin is not None:
        reads = [
            (origin.golden, "the golden set"),
            (origin.config, "the project file"),
            (origin.source, "the results file it was loaded from"),
        ]
        if origin.config is not None:
            state_dir = origin.config.parent / ".ragrail"
    guard_outputs(
        [(path, "baseline")],
        None,
        reads,
        docs=origin.docs if origin else None,
        state_dir=state_dir,
        replaces=[(path, "the baseline")],  # saving a baseline is what this is for
    )


def load_results(path: PathLike) -> RunResult:
    """A run saved with ``ragrail run --json`` (or ``result.save(path)``)."""
    from ragrail.records.results import load_run

    source = _path(path, "path")
    result = load_run(source, "results")
    _remember(result, _Origin(None, None, None, None, source=source))
    return result


def _baseline_of(result: RunResult, baseline: BaselineLike | None) -> Path | RunResult | Baseline:
    if baseline is not None:
        return baseline if _is_run(baseline) else _path(baseline, "baseline")  # type: ignore[return-value]
    origin = _ORIGINS.get(id(result))
    if origin is None or origin.baseline is None:
        raise InputError("give the baseline to compare with (a file or a RunResult)")
    return origin.baseline
