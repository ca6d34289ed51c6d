"""``ragrail run`` and ``ragrail demo``: flags in, the application layer, lines out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from ragrail.cli.common import CONTEXT, colour
from ragrail.cli.run_options import RunOptions, run_options
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_SYSTEM, InputError

if TYPE_CHECKING:
    from ragrail.app import Evaluation
    from ragrail.app.finish import Finished
    from ragrail.project import Project
    from ragrail.shards import ShardInfo


@click.command(context_settings=CONTEXT)
@run_options
@output_options()
def run(**kwargs: Any) -> int:
    """Evaluate the project: score every golden question and compare with the baseline.

    Reads ./ragrail.toml (or --config); flags override it. Prints the scorecard,
    then the per-question diff against the baseline. Exits 1 when something a
    question held in the baseline fails now (its retrieval recall dropped or a fact
    it found is lost; its answer passed and now fails; or a check its answer held,
    a fact, the citation, claims supported, a [[checks]] entry, a judge criterion,
    fails now, even on a question that already failed), 3 when a question or a
    model call failed after its retries.

    \b
    Real answers (keys come from the environment only):
      ragrail run --claude                                   # ANTHROPIC_API_KEY
      ragrail run --answerer openai --model NAME --base-url URL   # OPENAI_API_KEY
    Replies are cached in .ragrail/cache.sqlite: an unchanged re-run calls nothing.
    """
    return run_and_report(RunOptions.of(kwargs))


@click.command(context_settings=CONTEXT)
@run_options
@output_options()
def demo(**kwargs: Any) -> int:
    """Run the bundled Kitebase example against its bundled baseline.

    Takes every flag of `ragrail run`. Try --top-k 1, --chunk-words 50 or
    --chunk-words 25 to see what a change breaks; `echo $?` shows the exit code
    CI would see.
    """
    opts = RunOptions.of(kwargs)
    if opts.config is not None:
        raise click.UsageError("demo runs the bundled example; use `ragrail run --config` instead")
    opts.example = opts.example or "kitebase"
    return run_and_report(opts)


def run_and_report(opts: RunOptions) -> int:
    """Evaluate through the application layer, then print what it found."""
    from ragrail import app
    from ragrail.errors import EXIT_INTERRUPTED
    from ragrail.reports.machine import to_stdout
    from ragrail.reports.progress import call_progress

    if opts.example and opts.config:
        raise click.UsageError("--example and --config contradict each other")
    if opts.example and opts.save_baseline and opts.overrides.baseline is None:
        raise InputError(
            f"the {opts.example} example's bundled baseline is read-only; copy the example with "
            f"`ragrail example {opts.example} DIR` and run `ragrail run --save-baseline` there "
            "(or pass --baseline PATH)"
        )
    if opts.shard is not None:
        _check_shard_flags(opts)
    strict_needs_junit(opts.strict, opts.junit)
    out = Out(opts.json_path)
    project = app.load_project(opts.config, opts.example)
    outputs = [
        (None if to_stdout(opts.json_path) else opts.json_path, "--json results"),
        (opts.junit, "--junit report"),
        (opts.markdown, "--markdown summary"),
    ]
    prepared = app.prepare(
        project, opts.overrides, outputs=outputs, save_baseline=opts.save_baseline
    )
    shard = None
    if opts.shard is not None:
        from ragrail.shards import slice_prepared

        shard = slice_prepared(prepared, opts.shard)
    if opts.overrides.dry_run:
        from ragrail.reports.terminal import plan_text

        dry = app.dry_run_plan(prepared)
        out.verdict(plan_text(dry.plan, dry.n_cases, dry.skipped, dry.judge))
        return EXIT_OK
    _describe_inputs(out, prepared)
    try:
        evaluation = app.run(prepared, call_progress)
    except app.Interrupted as exc:
        click.echo(f"ragrail: interrupted: {exc}", err=True)
        return EXIT_INTERRUPTED
    for note in evaluation.notes:
        out.say(note)
    if shard is not None:
        return _end_shard(opts, project, evaluation, shard, out)
    return end_run(opts, project, evaluation, prepared.history, out)


def strict_needs_junit(strict: bool, junit: Path | None) -> None:
    """--strict says how --junit reports known failures; alone it would do nothing."""
    if strict and junit is None:
        raise InputError(
            "--strict applies to the --junit report (known failures fail there too); "
            "give --junit PATH, or leave --strict out"
        )


def _check_shard_flags(opts: RunOptions) -> None:
    """--shard writes results for `ragrail merge` and nothing else."""
    if opts.save_baseline:
        raise InputError(
            f"--shard {opts.shard} with --save-baseline: one shard is not a run to accept; "
            "merge the shards with `ragrail merge`, or save from an unsharded run"
        )
    for flag, value in (("--junit", opts.junit), ("--markdown", opts.markdown)):
        if value is not None:
            raise InputError(
                f"--shard {opts.shard} with {flag}: a shard has no verdict to report; "
                f"pass {flag} to `ragrail merge`"
            )
    if opts.json_path is None and not opts.overrides.dry_run:
        raise InputError(
            f"--shard {opts.shard} needs --json PATH: `ragrail merge` reads each shard's results"
        )


def _end_shard(
    opts: RunOptions, project: Project, evaluation: Evaluation, shard: ShardInfo, out: Out
) -> int:
    """A shard's scorecard and results file; no comparison, baseline or history."""
    from ragrail.app.finish import Ending, finish

    steps = _Printer(opts, project.config, evaluation, out, shard=True)
    finished = finish(project, evaluation, Ending(json=opts.json_path, shard=shard), steps)
    out.verdict(
        f"{'' if out.quiet else chr(10)}Shard {shard.index}/{shard.count}: "
        f"{len(finished.result.cases)} of {shard.n_cases} questions. Not compared with the "
        "baseline, no baseline saved, not recorded: a shard alone is not a verdict; `ragrail "
        f"merge` the results of {'it' if shard.count == 1 else f'all {shard.count} shards'}."
    )
    if finished.failed is not None:
        click.echo(f"ragrail: {finished.failed} (shown as ERROR above); exit 3", err=True)
    return finished.exit_code


class ReportOptions(Protocol):
    """What :func:`end_run` reads of the flags (``run``'s, or ``merge``'s)."""

    metrics: bool
    save_baseline: bool
    json_path: Path | None
    junit: Path | None
    markdown: Path | None
    strict: bool


def _describe_inputs(out: Out, prepared: Any) -> None:
    """-v: what this run reads and where it is recorded."""
    project = prepared.project
    baseline = prepared.baseline_path if prepared.baseline is not None else "none yet"
    out.detail(f"project   {project.config_path or project.root}")
    out.detail(f"golden    {prepared.golden.path} ({len(prepared.golden.cases)} questions)")
    out.detail(f"baseline  {baseline}")
    out.detail(f"history   {prepared.history or 'not recorded'}")
    out.detail()


def end_run(
    opts: ReportOptions, project: Project, evaluation: Evaluation, history: Path | None, out: Out
) -> int:
    """The end of a run or a merge (:func:`ragrail.app.finish.finish`), printed as it
    happens: the scorecard, the diff, the outputs, the verdict; its exit code."""
    from ragrail.app.finish import Ending, finish

    ending = Ending(
        history=history,
        json=opts.json_path,
        junit=opts.junit,
        markdown=opts.markdown,
        save_baseline=opts.save_baseline,
        strict=opts.strict,
    )
    steps = _Printer(opts, project.config, evaluation, out)
    return _verdict(finish(project, evaluation, ending, steps), out)


_WROTE = {
    "json": "Wrote results to {}",
    "junit": "Wrote JUnit XML to {}",
    "markdown": "Wrote the Markdown summary to {}",
    "shard": "Wrote shard results to {}",
}


class _Printer:
    """The lines of a run's end, each printed when its step is done (app.finish.Steps)."""

    def __init__(
        self, opts: ReportOptions, cfg: Any, evaluation: Evaluation, out: Out, shard: bool = False
    ) -> None:
        self.opts, self.cfg, self.evaluation, self.out = opts, cfg, evaluation, out
        self.shard = shard  # a shard's end: no diff, no verdict against a baseline

    def recorded(self, run_id: int | None) -> None:
        if run_id is not None and not self.out.quiet:
            click.echo(f"(recorded as run {run_id}: `ragrail history`, `ragrail report`)", err=True)

    def before_writing(self, finished: Finished) -> None:
        """The scorecard and the diff (a shard's scorecard alone)."""
        from ragrail.reports.terminal import diff_text, reruns_text, scorecard, verdict_lines

        out, opts, diff = self.out, self.opts, finished.diff
        metrics = opts.metrics or self.cfg.report.metrics or out.verbose
        out.say(scorecard(finished.result, metrics=metrics))
        if self.evaluation.reruns:  # made before the scorecard, so their calls are in its totals
            out.say()
            out.say(reruns_text(self.evaluation.reruns))
        if self.shard:
            return
        if finished.compared_nothing:
            import warnings

            # "No regressions." over a comparison of nothing: the verdict stands, but it
            # must not read as a checked pass
            warnings.warn(
                f"no question of this run is in the baseline {finished.baseline_path}: nothing "
                "was compared (another project's baseline, or renamed ids?)",
                stacklevel=1,
            )
        if diff is not None:
            out.say()
            out.say(colour(diff_text(diff)))
            if out.quiet:
                out.verdict(colour("\n".join(verdict_lines(diff))))
        elif not opts.save_baseline:
            out.verdict(
                f"{'' if out.quiet else chr(10)}No baseline at {finished.baseline_path} yet: "
                "run with --save-baseline to create one."
            )

    def stdout(self, data: str | bytes) -> None:
        click.echo(data, nl=False)

    def wrote(self, kind: str, path: Path) -> None:
        self.out.say(_WROTE[kind].format(path))


def _verdict(finished: Finished, out: Out) -> int:
    """Why there is no clean verdict, or the saved baseline; the exit code."""
    if finished.failed is not None:
        shown = "ERROR or JUDGE ERROR" if finished.judge_errors else "ERROR"
        click.echo(f"ragrail: {finished.failed} (shown as {shown} above); exit 3", err=True)
        if finished.baseline_refused:
            click.echo(
                f"ragrail: not saving a baseline to {finished.baseline_path}: it would record "
                "failed calls as the expected result; fix or re-run them, then save",
                err=True,
            )
    elif finished.baseline_saved:
        out.verdict(
            f"Saved baseline to {finished.baseline_path}: commit it with the change it accepts."
        )
    elif finished.exit_code == EXIT_SYSTEM:
        click.echo(
            f"ragrail: the judge failed on {finished.judge_failed} question(s) "
            "(see JUDGE ERROR above); exit 3",
            err=True,
        )
    return finished.exit_code
