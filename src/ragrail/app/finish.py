"""The end of a run, in one place: record it in the history, compare it with the baseline,
write its outputs (--json, --junit, --markdown), save it as the baseline, decide the exit code.

``ragrail run`` (a shard's too), ``ragrail merge``, the Python API and the pytest plugin all
end a run with :func:`finish`; each asks for the steps it wants in an :class:`Ending`. Nothing
here prints: the CLI hears each step as it happens through its :class:`Steps` (so the
scorecard and the diff are on the screen before a file is written, as a person reads
them), and everything the end of the run did comes back in a :class:`Finished`.

    evaluation = app.run(app.prepare(project, overrides))
    finished = finish(project, evaluation, Ending(history=prepared.history, junit=path))
    finished.diff, finished.run_id, finished.written, finished.exit_code
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from ragrail.app import (
    compare_with_baseline,
    exit_code,
    failures,
    judge_errors,
    record,
    save_baseline,
)
from ragrail.errors import EXIT_OK, EXIT_SYSTEM

if TYPE_CHECKING:
    from ragrail.app import Evaluation
    from ragrail.diff import Diff
    from ragrail.project import Project
    from ragrail.records.results import RunResult, Verdict
    from ragrail.shards import ShardInfo

#: An output of the run: ``json`` (the results), ``junit``, ``markdown``, or ``shard`` (a
#: shard's results, for ``ragrail merge``).
OutputKind = Literal["json", "junit", "markdown", "shard"]


@dataclass(frozen=True)
class Ending:
    """What the end of a run does (every step off by default)."""

    history: Path | None = None  # record the run there; None: not recorded
    compare: bool = True  # compare with the evaluation's baseline (when it has one)
    json: Path | None = None  # the results; ``-``: standard output, through Steps.stdout
    junit: Path | None = None  # a JUnit XML report
    markdown: Path | None = None  # a Markdown summary
    save_baseline: bool = False  # accept the run as the baseline, unless it has errors
    strict: bool = False  # junit: a question that failed in the baseline too still fails
    # a shard of the run: its results (to json, marked with this) are all it writes; it is
    # neither recorded, compared nor saved: a shard alone is not a verdict
    shard: ShardInfo | None = None


@dataclass
class Finished:
    """What the end of a run did, and its verdict."""

    result: RunResult
    baseline_path: Path | None  # the baseline compared with (and saved to)
    diff: Diff | None = None  # None: no baseline yet (or not compared)
    run_id: int | None = None  # the id the history recorded the run under
    written: list[tuple[OutputKind, Path]] = field(default_factory=list)  # files, in order
    failed: str | None = None  # why the run has no clean verdict (failed calls, judge)
    judge_errors: int = 0  # questions of the results the judge failed on
    judge_failed: int = 0  # questions the judge failed on in this evaluation
    baseline_refused: bool = False  # asked to save, refused: the run has errors
    baseline_saved: bool = False
    exit_code: int = EXIT_OK

    @property
    def compared_nothing(self) -> bool:
        """Whether no question of the run is in the baseline: a "No regressions." that
        checked nothing (another project's baseline, or every id renamed)."""
        diff, cases = self.diff, self.result.cases
        return diff is not None and bool(cases) and len(diff.new_cases) == len(cases)


class Steps(Protocol):
    """Hears each step of :func:`finish` as it happens (the CLI prints from one)."""

    def recorded(self, run_id: int | None) -> None:
        """The run was recorded (``run_id``), or the history could not take it (None)."""

    def before_writing(self, finished: Finished) -> None:
        """Recorded and compared; nothing is written yet."""

    def stdout(self, data: str | bytes) -> None:
        """An output asked for on standard output (``--json -``), or a piece of it."""

    def wrote(self, kind: OutputKind, path: Path) -> None:
        """``path`` was written whole."""


class Silent:
    """:class:`Steps` that hear nothing; an output asked for on standard output is
    written there."""

    def recorded(self, run_id: int | None) -> None:
        pass

    def before_writing(self, finished: Finished) -> None:
        pass

    def stdout(self, data: str | bytes) -> None:
        sys.stdout.write(data.decode() if isinstance(data, bytes) else data)
        sys.stdout.flush()

    def wrote(self, kind: OutputKind, path: Path) -> None:
        pass


def finish(
    project: Project, evaluation: Evaluation, ending: Ending, steps: Steps | None = None
) -> Finished:
    """End a run as ``ending`` asks: record, compare, write the outputs, save the baseline
    (not when the run has errors), and decide the exit code: 3 when a question failed to
    run or the judge failed on one, 0 after saving a baseline, else 1 when a question got
    worse than in the baseline, else 0. A shard writes its results and is 3 or 0.

    The outputs' paths are checked before the run (:func:`ragrail.app.prepare`'s
    ``outputs``); a failure to write one now is the disk's (SystemFailure), raised after
    the steps before it were heard."""
    hear = steps or Silent()
    result = evaluation.result
    done = Finished(result, evaluation.baseline_path, judge_failed=evaluation.judge_failed)
    if ending.shard is not None:
        return _finish_shard(ending, ending.shard, done, hear)
    if ending.history is not None:
        done.run_id = record(project, result, ending.history)
        hear.recorded(done.run_id)
    if ending.compare:
        done.diff = compare_with_baseline(result, evaluation.baseline)
    # the verdict is decided before anything is written, so the results carry it
    done.failed = failures(result, done.diff)
    if done.failed is not None:
        done.judge_errors = judge_errors(result)
        done.baseline_refused = ending.save_baseline
        done.exit_code = EXIT_SYSTEM
    elif not ending.save_baseline:
        done.exit_code = exit_code(result, done.diff, evaluation.judge_failed)
    saving = ending.save_baseline and done.failed is None
    # not compared (the Python API's evaluate, which leaves that to compare()): no verdict
    result.verdict = verdict(done, saving, project.root) if ending.compare else None
    hear.before_writing(done)
    _write_outputs(ending, done, hear)
    if saving:
        if done.baseline_path is None:
            raise ValueError("save_baseline needs the evaluation's baseline_path")
        save_baseline(
            result, done.baseline_path, docs=evaluation.docs, golden=evaluation.golden_path
        )
        done.baseline_saved = True
    return done


def verdict(done: Finished, saving: bool = False, root: Path | None = None) -> Verdict:
    """The verdict the results carry: ``done``'s exit code and its diff's questions; the
    baseline's path relative to the project folder ``root`` when it is inside it, so the
    same run gives the same results wherever the project is checked out."""
    from ragrail.diff import run_summary
    from ragrail.records.results import CaseChange, Verdict

    diff = done.diff
    if diff is None:
        return Verdict(
            exit_code=done.exit_code,
            summary=run_summary(done.result) or "no baseline to compare with",
            errored=[c.id for c in done.result.cases if c.errored],
            baseline_saved=saving,
        )
    by_case: dict[str, dict[str, list[str]]] = {"WORSE": {}, "fixed": {}}
    for change in diff.changes:
        if change.kind in by_case:
            by_case[change.kind].setdefault(change.case_id, []).append(change.detail)
    summary = diff.summary()
    if saving and diff.regressed:
        summary += "; accepted as the new baseline"
    return Verdict(
        exit_code=done.exit_code,
        summary=summary,
        baseline=_shown_path(done.baseline_path, root),
        regressed=[CaseChange(id=k, changes=v) for k, v in by_case["WORSE"].items()],
        fixed=[CaseChange(id=k, changes=v) for k, v in by_case["fixed"].items()],
        errored=list(diff.errored_cases),
        new_cases=list(diff.new_cases),
        removed_cases=list(diff.removed_cases),
        baseline_saved=saving,
    )


def _finish_shard(ending: Ending, shard: ShardInfo, done: Finished, hear: Steps) -> Finished:
    """A shard's results, for ``ragrail merge``; 3 when a question failed to run."""
    from ragrail.reports.machine import to_stdout
    from ragrail.shards import save_shard, shard_pieces

    hear.before_writing(done)
    if ending.json is not None and to_stdout(ending.json):
        for piece in shard_pieces(done.result, shard):
            hear.stdout(piece)
    elif ending.json is not None:
        save_shard(done.result, shard, ending.json)
        _wrote(done, hear, "shard", ending.json)
    done.failed = failures(done.result)
    if done.failed is not None:
        done.judge_errors = judge_errors(done.result)
        done.exit_code = EXIT_SYSTEM
    return done


def _write_outputs(ending: Ending, done: Finished, hear: Steps) -> None:
    """The results (a file, or standard output with ``-``), the JUnit XML and the Markdown
    summary, each written whole, in that order."""
    from ragrail.fileio import atomic_write_text
    from ragrail.reports.machine import to_stdout

    result, diff = done.result, done.diff
    if ending.json is not None:
        if to_stdout(ending.json):
            hear.stdout(result.to_json())
        else:
            result.save(ending.json, "--json results")
            _wrote(done, hear, "json", ending.json)
    if ending.junit:
        from ragrail.reports.junit import junit_xml

        xml = junit_xml(
            result,
            diff,
            strict=ending.strict,
            accepted=done.failed is None and ending.save_baseline,
        )
        atomic_write_text(ending.junit, xml, "--junit report")
        _wrote(done, hear, "junit", ending.junit)
    if ending.markdown:
        from ragrail.reports.markdown import markdown_summary

        atomic_write_text(ending.markdown, markdown_summary(result, diff), "--markdown summary")
        _wrote(done, hear, "markdown", ending.markdown)


def _wrote(done: Finished, hear: Steps, kind: OutputKind, path: Path) -> None:
    done.written.append((kind, path))
    hear.wrote(kind, path)


def _shown_path(path: Path | None, root: Path | None) -> str | None:
    if path is None:
        return None
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            pass
    return str(path)
