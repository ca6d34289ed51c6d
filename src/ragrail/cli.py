"""The ``ragrail`` command: a thin layer over library calls.

Every user mistake ends as one line on stderr and exit 2; a regression is
exit 1; a failing system under test or model call is exit 3.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ragrail import __version__
from ragrail.errors import (
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_SYSTEM,
    EXIT_USAGE,
    InputError,
    RagrailError,
)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class FiniteFloat(click.FloatRange):
    """A float flag that refuses nan and inf (which float() and FloatRange accept)."""

    name = "finite float"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="ragrail")
def cli() -> None:
    """Regression tests for RAG apps.

    ragrail runs a golden set of labelled questions through your RAG system,
    scores retrieval and answers separately, and compares every question with
    a saved baseline. Anything that passed before and fails now exits 1, so a
    CI check goes red.

    \b
    Start here:
      ragrail demo                      the bundled Kitebase example, offline
      ragrail demo --top-k 1            ...and a change that breaks three questions
      ragrail example kitebase DIR      copy the example to edit and re-run
      ragrail run                       evaluate the project in this folder

    \b
    Exit codes: 0 no regression, 1 regression (or lint findings),
                2 usage or input error, 3 the system under test, a model call,
                the disk or ragrail itself failed, 130 interrupted (Ctrl-C, SIGTERM).
    """


# ---------------------------------------------------------------- run / demo


@dataclass
class RunOptions:
    config: Path | None
    docs: Path | None
    golden: Path | None
    baseline: Path | None
    top_k: int | None
    chunk_words: int | None
    min_score: float | None
    save_baseline: bool
    json_path: Path | None
    claude: bool
    answerer: str | None
    model: str | None
    base_url: str | None
    concurrency: int | None
    timeout: float | None
    max_retries: int | None
    max_tokens: int | None
    repeats: int | None
    rerun_failures: int
    no_cache: bool
    dry_run: bool
    example: str | None
    metrics: bool
    retriever: str | None
    junit: Path | None
    markdown: Path | None
    no_history: bool
    judge: str | None
    judge_model: str | None
    judge_base_url: str | None
    judge_repeats: int | None
    judge_concurrency: int | None
    judge_timeout: float | None
    judge_max_retries: int | None
    trust_unvalidated: bool


def judge_call_options() -> list[Any]:
    """How the judge calls its model; each defaults to [judge] in the config when written
    there, else to the run's own flag (--concurrency, --timeout, --max-retries)."""
    return [
        click.option(
            "--judge-concurrency",
            type=click.IntRange(min=1),
            metavar="N",
            help="Judge calls in flight at once (default: [judge] concurrency, else "
            "--concurrency, else 8).",
        ),
        click.option(
            "--judge-timeout",
            type=FiniteFloat(min=0.001),
            metavar="SECONDS",
            help="Per-call timeout of the judge (default: [judge] timeout, else --timeout, "
            "else 60).",
        ),
        click.option(
            "--judge-max-retries",
            type=click.IntRange(min=0),
            metavar="N",
            help="Retries of a failed or malformed judge call (default: [judge] max_retries, "
            "else --max-retries, else 2).",
        ),
    ]


def run_options(func: Any) -> Any:
    path = click.Path(path_type=Path)
    options = [
        click.option("--config", "-c", type=path, help="Project file (default: ./ragrail.toml)."),
        click.option("--docs", type=path, help="Folder of documents (Markdown, text or HTML)."),
        click.option(
            "--golden", "-g", type=path, help="Golden set file (JSON, JSONL, YAML or CSV)."
        ),
        click.option(
            "--baseline",
            "-b",
            type=path,
            help="Baseline to compare with and to --save-baseline to.",
        ),
        click.option(
            "--top-k",
            "-k",
            type=click.IntRange(min=1),
            metavar="K",
            help="Chunks search returns per question (default 3).",
        ),
        click.option(
            "--chunk-words",
            type=click.IntRange(min=0),
            metavar="N",
            help="Fixed N-word chunks instead of one per section (0: by section).",
        ),
        click.option(
            "--min-score",
            type=FiniteFloat(min=0.0),
            metavar="S",
            help="Chunks scoring below S are never returned (default 0.2), on the "
            "retriever's own scale: standin 0-1, bm25 0 and up (unbounded, often 0-20), "
            "dense -1 to 1 (cosine).",
        ),
        click.option(
            "--save-baseline",
            is_flag=True,
            help="Accept this run: write it as the new baseline (atomically).",
        ),
        click.option(
            "--json",
            "json_path",
            type=path,
            metavar="PATH",
            help="Write the full results (every question, trace and score) as JSON.",
        ),
        click.option(
            "--claude",
            is_flag=True,
            help="Real answers from Claude: --answerer anthropic --model claude-opus-5.",
        ),
        click.option(
            "--answerer",
            type=click.Choice(["standin", "anthropic", "openai"]),
            help="Who answers: the offline stand-in (default), Claude, or any "
            "OpenAI-compatible server.",
        ),
        click.option("--model", metavar="NAME", help="Model name for --answerer."),
        click.option(
            "--base-url",
            metavar="URL",
            help="API base URL (default: the SDK's, or ANTHROPIC_BASE_URL / OPENAI_BASE_URL).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            metavar="N",
            help="Model calls in flight at once (default 8).",
        ),
        click.option(
            "--timeout",
            type=FiniteFloat(min=0.001),
            metavar="SECONDS",
            help="Per-call timeout (default 60).",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(min=0),
            metavar="N",
            help="Retries of a failed call: 429, 529, 5xx, timeouts, dropped "
            "connections (default 4).",
        ),
        click.option(
            "--max-tokens",
            type=click.IntRange(min=1),
            metavar="N",
            help="Longest answer, in tokens (default 512).",
        ),
        click.option(
            "--repeats",
            type=click.IntRange(min=1),
            metavar="N",
            help="Answer every question N times; cases that sometimes pass are flaky.",
        ),
        click.option(
            "--rerun-failures",
            type=click.IntRange(min=0),
            default=0,
            metavar="N",
            help="After the run, answer each failing question N more times and print the answers.",
        ),
        click.option("--no-cache", is_flag=True, help="Call the model even for cached prompts."),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Print the calls a model run would make and their estimated cost; send nothing.",
        ),
        click.option(
            "--example",
            metavar="NAME",
            help="Run a bundled example (kitebase, late-refund, multilingual) "
            "instead of ./ragrail.toml.",
        ),
        click.option(
            "--judge",
            type=click.Choice(["claude", "anthropic", "openai"]),
            help="Also grade answers with an LLM judge: claim-level faithfulness and the "
            "[judge] rubric (opt-in; default: off, or the config's [judge]).",
        ),
        click.option(
            "--judge-model", metavar="NAME", help="The judge's model (claude: claude-opus-5)."
        ),
        click.option("--judge-base-url", metavar="URL", help="The judge's API base URL."),
        click.option(
            "--judge-repeats",
            type=click.IntRange(min=1),
            metavar="N",
            help="Judge each case N times; criteria whose verdicts disagree are unstable.",
        ),
        *judge_call_options(),
        click.option(
            "--trust-unvalidated",
            is_flag=True,
            help="Let gated judge criteria fail answers without a stored validation.",
        ),
        click.option(
            "--junit",
            type=path,
            metavar="PATH",
            help="Write JUnit XML: one test case per question (for CI test reports).",
        ),
        click.option(
            "--markdown",
            type=path,
            metavar="PATH",
            help="Write a Markdown summary, regressions first (PR comment, job summary).",
        ),
        click.option(
            "--no-history", is_flag=True, help="Do not record this run in .ragrail/history.sqlite."
        ),
        click.option(
            "--retriever",
            type=click.Choice(["standin", "bm25", "dense"]),
            help="standin (word matching, default), bm25, or dense (needs ragrail[semantic]).",
        ),
        click.option(
            "--metrics",
            is_flag=True,
            help="Also print per-question context precision, recall, MRR, faithfulness and "
            "correctness.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.command(context_settings=CONTEXT)
@run_options
def run(**kwargs: Any) -> int:
    """Evaluate the project: score every golden question and compare with the baseline.

    Reads ./ragrail.toml (or --config); flags override it. Prints the scorecard,
    then the per-question diff against the baseline. Exits 1 when a question
    that passed in the baseline fails now (its retrieval recall dropped, or its
    answer passed and now fails), 3 when a model call failed after its retries.

    \b
    Real answers (keys come from the environment only):
      ragrail run --claude                                   # ANTHROPIC_API_KEY
      ragrail run --answerer openai --model NAME --base-url URL   # OPENAI_API_KEY
    Replies are cached in .ragrail/cache.sqlite: an unchanged re-run calls nothing.
    """
    return _run(RunOptions(**kwargs))


@cli.command(context_settings=CONTEXT)
@run_options
def demo(**kwargs: Any) -> int:
    """Run the bundled Kitebase example against its bundled baseline.

    Takes every flag of `ragrail run`. Try --top-k 1, --chunk-words 50 or
    --chunk-words 25 to see what a change breaks; `echo $?` shows the exit code
    CI would see.
    """
    opts = RunOptions(**kwargs)
    if opts.config is not None:
        raise click.UsageError("demo runs the bundled example; use `ragrail run --config` instead")
    opts.example = opts.example or "kitebase"
    return _run(opts)


def _overrides(opts: RunOptions) -> Any:  # -> app.Overrides
    from dataclasses import asdict

    from ragrail.app import Overrides

    return Overrides.of(asdict(opts))


def _answerer_spec(opts: RunOptions, project: Any) -> Any:
    from ragrail.app import answerer_spec

    return answerer_spec(project, _overrides(opts))


def _run(opts: RunOptions) -> int:
    """Evaluate through the application layer, then print what it found."""
    from ragrail import app
    from ragrail.errors import EXIT_INTERRUPTED
    from ragrail.reports.progress import call_progress

    if opts.example and opts.config:
        raise click.UsageError("--example and --config contradict each other")
    if opts.example and opts.save_baseline and opts.baseline is None:
        raise InputError(
            f"the {opts.example} example's bundled baseline is read-only; copy the example with "
            f"`ragrail example {opts.example} DIR` and run `ragrail run --save-baseline` there "
            "(or pass --baseline PATH)"
        )
    project = app.load_project(opts.config, opts.example)
    outputs = [
        (opts.json_path, "--json results"),
        (opts.junit, "--junit report"),
        (opts.markdown, "--markdown summary"),
    ]
    prepared = app.prepare(
        project, _overrides(opts), outputs=outputs, save_baseline=opts.save_baseline
    )
    if opts.dry_run:
        from ragrail.reports.terminal import plan_text

        dry = app.dry_run_plan(prepared)
        click.echo(plan_text(dry.plan, dry.n_cases, dry.skipped, dry.judge))
        return EXIT_OK
    try:
        evaluation = app.run(prepared, call_progress)
    except app.Interrupted as exc:
        click.echo(f"ragrail: interrupted: {exc}", err=True)
        return EXIT_INTERRUPTED
    for note in evaluation.notes:
        click.echo(note)
    if prepared.history is not None:
        result_id = app.record(project, evaluation.result, prepared.history)
        if result_id is not None:
            click.echo(
                f"(recorded as run {result_id}: `ragrail history`, `ragrail report`)", err=True
            )
    return _report(opts, project.config, evaluation)


def _project_inputs(
    project: Any, golden: Path | None = None, docs: Path | None = None
) -> dict[Path, str]:
    from ragrail.outputs import project_inputs

    return project_inputs(project, golden, docs)


def _refuse_clashes(
    targets: list[tuple[Path, Path, str]], inputs: dict[Path, str], docs: Path | None
) -> None:
    from ragrail.outputs import refuse_clashes

    refuse_clashes(targets, inputs, docs)


def _real(path: Path) -> Path:
    from ragrail.outputs import real

    return real(path)


def _validation_store(project: Any):  # -> History
    from ragrail.history import History

    return History(project.state_dir / "history.sqlite")


def _report(opts: RunOptions, cfg: Any, evaluation: Any) -> int:
    from ragrail import app
    from ragrail.reports.terminal import diff_text, reruns_text, scorecard

    result, baseline_path = evaluation.result, evaluation.baseline_path
    click.echo(scorecard(result, metrics=opts.metrics or cfg.report.metrics))
    if evaluation.reruns:  # made before the scorecard, so their calls are in its totals
        click.echo()
        click.echo(reruns_text(evaluation.reruns))
    diff = app.compare_with_baseline(result, evaluation.baseline)
    if diff is not None:
        click.echo()
        click.echo(_colour(diff_text(diff)))
    elif not opts.save_baseline:
        click.echo(f"\nNo baseline at {baseline_path} yet: run with --save-baseline to create one.")
    if opts.json_path:
        result.save(opts.json_path, "--json results")
        click.echo(f"Wrote results to {opts.json_path}")
    if opts.junit:
        from ragrail.fileio import atomic_write_text
        from ragrail.reports.junit import junit_xml

        atomic_write_text(opts.junit, junit_xml(result, diff), "--junit report")
        click.echo(f"Wrote JUnit XML to {opts.junit}")
    if opts.markdown:
        from ragrail.fileio import atomic_write_text
        from ragrail.reports.markdown import markdown_summary

        atomic_write_text(opts.markdown, markdown_summary(result, diff), "--markdown summary")
        click.echo(f"Wrote the Markdown summary to {opts.markdown}")
    failed = app.failures(result, diff)
    if failed is not None:
        shown = "ERROR or JUDGE ERROR" if app.judge_errors(result) else "ERROR"
        click.echo(f"ragrail: {failed} (shown as {shown} above); exit 3", err=True)
        if opts.save_baseline:
            click.echo(
                f"ragrail: not saving a baseline to {baseline_path}: it would record "
                "failed calls as the expected result; fix or re-run them, then save",
                err=True,
            )
        return EXIT_SYSTEM
    if opts.save_baseline:
        app.save_baseline(
            result, baseline_path, docs=evaluation.docs, golden=evaluation.golden_path
        )
        click.echo(f"Saved baseline to {baseline_path}: commit it with the change it accepts.")
        return EXIT_OK
    code = app.exit_code(result, diff, evaluation.judge_failed)
    if code == EXIT_SYSTEM:
        click.echo(
            f"ragrail: the judge failed on {evaluation.judge_failed} question(s) "
            "(see JUDGE ERROR above); exit 3",
            err=True,
        )
    return code


def _colour(text: str) -> str:
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("WORSE", "ERROR")):
            line = click.style(line, fg="red", bold=True)
        elif stripped.startswith("fixed"):
            line = click.style(line, fg="green")
        out.append(line)
    return "\n".join(out)


def _project(config: Path | None, example: str | None):  # -> Project
    from ragrail.app import load_project

    return load_project(config, example)


# ---------------------------------------------------------------- sweep


def _int_list(ctx: Any, param: Any, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        items = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
    if not items or any(v < 0 for v in items):
        raise click.BadParameter(f"{value!r}: give one or more integers >= 0")
    return items


def _score_list(ctx: Any, param: Any, value: str | None) -> list[float] | None:
    import math

    if value is None:
        return None
    try:
        items = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers") from None
    if not items or any(not math.isfinite(v) or v < 0 for v in items):
        raise click.BadParameter(f"{value!r}: give one or more finite numbers >= 0")
    return list(dict.fromkeys(items))  # each threshold once, in the order given


@cli.command(context_settings=CONTEXT)
@click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file.")
@click.option("--example", metavar="NAME", help="Sweep a bundled example (kitebase).")
@click.option(
    "--chunk-words",
    callback=_int_list,
    metavar="N,N,...",
    help="Chunkings to try; 0 is by section (default: the config's).",
)
@click.option(
    "--top-k", callback=_int_list, metavar="K,K,...", help="Values of k to try (default: 1,3,5)."
)
@click.option(
    "--retriever",
    "retrievers",
    default=None,
    metavar="NAME,NAME",
    help="Retrievers to try: standin, bm25, dense (default: the config's).",
)
@click.option(
    "--min-score",
    "min_scores",
    callback=_score_list,
    metavar="S,S,...",
    help="Minimum scores to try, each on the retriever's own scale: standin 0-1, bm25 0 "
    "and up (unbounded), dense -1 to 1 (default: the config's). One above what a "
    "retriever can score is skipped for it. The table then shows each row's abstain "
    "cases that pass and answerable cases that lost retrieval.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    help="Where to write the table as JSON (default: .ragrail/sweep.json).",
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(path_type=Path),
    help="Where to write the table as CSV (default: .ragrail/sweep.csv).",
)
def sweep(
    config: Path | None,
    example: str | None,
    chunk_words: list[int] | None,
    top_k: list[int] | None,
    retrievers: str | None,
    min_scores: list[float] | None,
    json_path: Path | None,
    csv_path: Path | None,
) -> int:
    """Try every combination of chunking x retriever x k x min score and tabulate the totals.

    Uses the built-in pipeline and the configured answerer (the stand-in by
    default). Prints one row per configuration, best first, and writes the
    table as JSON and CSV.

    \b
      ragrail sweep --example kitebase --chunk-words 0,25,50 --top-k 1,3,5 --retriever standin,bm25
      ragrail sweep --example kitebase --retriever bm25 --top-k 3 --min-score 0,0.5,1,1.5
    """
    from ragrail.answerers import build_answerer
    from ragrail.fileio import atomic_write_text, check_writable_output
    from ragrail.golden import load_golden
    from ragrail.pipeline import PipelineSettings
    from ragrail.reports.terminal import sweep_table
    from ragrail.retrieval import RETRIEVERS
    from ragrail.scoring.case import ScoringOptions
    from ragrail.sweep import run_sweep, to_csv, to_json, unusable_thresholds

    project = _project(config, example)
    cfg = project.config
    targets = [
        (check_writable_output(out, what), out, what)  # before the sweep, not after it
        for out, what in ((json_path, "--json table"), (csv_path, "--csv table"))
        if out is not None
    ]
    _refuse_clashes(targets, _project_inputs(project), project.docs)
    if cfg.system.kind != "pipeline":
        raise InputError(
            "sweep varies the built-in pipeline; this project's system is "
            f'[system] kind = "{cfg.system.kind}"'
        )
    names = [r.strip() for r in (retrievers or cfg.pipeline.retriever).split(",") if r.strip()]
    unknown = [r for r in names if r not in RETRIEVERS]
    if unknown:
        raise click.BadParameter(
            f"unknown retriever {unknown[0]!r}; choose {', '.join(RETRIEVERS)}",
            param_hint="--retriever",
        )
    golden = load_golden(project.golden, project.root)
    base = PipelineSettings(
        docs=project.docs,
        product=cfg.product,
        min_score=cfg.pipeline.min_score,
        language=cfg.pipeline.language,
    )
    words = chunk_words or [cfg.pipeline.chunk_words]
    ks = top_k or [1, 3, 5]
    if any(k < 1 for k in ks):
        raise click.BadParameter("k must be at least 1", param_hint="--top-k")
    thresholds = min_scores or [cfg.pipeline.min_score]
    skipped = unusable_thresholds(names, thresholds)
    if len(skipped) == len(names) * len(thresholds):
        raise click.BadParameter(
            f"no retriever can use any of these minimum scores: {skipped[0][2]}",
            param_hint="--min-score",
        )
    answerer = build_answerer(_answerer_spec(_plain_opts(), project))
    options = ScoringOptions(
        checks=tuple(cfg.checks),
        require_faithful=cfg.scoring.require_faithful,
        language=cfg.pipeline.language,
        abstain_phrases=tuple(cfg.scoring.abstain_phrases),
    )
    for retriever, threshold, _ in skipped:
        click.echo(
            f"skipping --min-score {threshold:g} for {retriever}: above the most it scores",
            err=True,
        )
    total = len(words) * len(ks) * (len(names) * len(thresholds) - len(skipped))
    click.echo(f"{cfg.name}: {total} configurations x {len(golden.cases)} questions", err=True)
    rows = run_sweep(
        cfg.name, golden, base, words, ks, names, answerer, options, min_scores=thresholds
    )
    click.echo(sweep_table(rows, thresholds=min_scores is not None))
    written = []
    for given, default, what, text in (
        (json_path, "sweep.json", "--json table", to_json(rows)),
        (csv_path, "sweep.csv", "--csv table", to_csv(rows)),
    ):
        if given is not None:  # checked before the sweep: a failure now is the disk's
            atomic_write_text(given, text, what)
            written.append(str(given))
        elif _write_state_copy(project.state_dir / default, text, what):
            written.append(str(project.state_dir / default))
    if written:
        click.echo(f"Wrote {' and '.join(written)}")
    return EXIT_OK


def _write_state_copy(path: Path, text: str, what: str) -> bool:
    """Keep a copy of a printed table under the state folder; on a read-only checkout
    (or an unwritable state folder) one warning instead: the table was printed, and
    nobody asked for the file (--json/--csv name a path that must be written)."""
    import warnings

    from ragrail.fileio import atomic_write_text

    try:
        atomic_write_text(path, text, what.replace("--json", "sweep").replace("--csv", "sweep"))
    except InputError as exc:
        flag = what.split()[0]
        warnings.warn(f"{exc}; the table was not saved (pass {flag} PATH)", stacklevel=2)
        return False
    return True


def _plain_opts() -> RunOptions:
    fields = RunOptions.__dataclass_fields__
    defaults: dict[str, Any] = {name: None for name in fields}
    defaults.update(
        save_baseline=False,
        claude=False,
        rerun_failures=0,
        no_cache=False,
        dry_run=False,
        metrics=False,
        no_history=True,
        trust_unvalidated=False,
    )
    return RunOptions(**defaults)


# ---------------------------------------------------------------- history and reports


def _history(config: Path | None, example: str | None):  # -> History
    from ragrail.config import CONFIG_NAME
    from ragrail.history import History

    if config is None and example is None and not (Path.cwd() / CONFIG_NAME).is_file():
        path = Path.cwd() / ".ragrail" / "history.sqlite"
    else:
        path = _project(config, example).state_dir / "history.sqlite"
    if not path.exists():
        raise InputError(f"no run history at {path}: run `ragrail run` (or `ragrail demo`) first")
    return History(path)


history_options = [
    click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file."),
    click.option("--example", metavar="NAME", help="A bundled example's project."),
]


def _with(options: list[Any]) -> Any:
    def deco(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func

    return deco


@cli.command("history", context_settings=CONTEXT)
@_with(history_options)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
def history_cmd(config: Path | None, example: str | None, limit: int) -> int:
    """List recorded runs with their totals (newest last)."""
    from ragrail.compare import pct
    from ragrail.reports.text import visible
    from ragrail.run import recorded_answer_rate

    store = _history(config, example)
    rows = store.rows(limit)
    click.echo(
        f"  {'run':>4}  {'when (UTC)':<19}  {'commit':<13} {'hit':>5} {'recall':>6} "
        f"{'answers':>7} {'errors':>6} {'cost':>8}  configuration"
    )
    for r in rows:
        st = r.totals.get("stats", {})

        def v(key: str, st: dict = st) -> str:
            return pct((st.get(key) or {}).get("value"))

        commit = (r.git_commit or "-") + ("*" if r.git_dirty else "")
        cost = "-" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        answers = pct(recorded_answer_rate(r.totals, r.config.get("repeats", 1)))
        click.echo(
            f"  {r.id:>4}  {r.created_at[:19].replace('T', ' '):<19}  {commit:<13} "
            f"{v('hit_rate'):>5} {v('recall'):>6} {answers:>7} {r.totals.get('n_errors', 0):>6} "
            f"{cost:>8}  {visible(r.describe())}"
        )
    click.echo(
        f"{len(rows)} run(s) in {store.path}"
        + ("; * = uncommitted changes" if any(r.git_dirty for r in rows) else "")
    )
    store.close()
    return EXIT_OK


RUN_REFS = {**CONTEXT, "ignore_unknown_options": True}  # so "-1" is a run, not an option


@cli.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="RUN", default="latest")
@_with(history_options)
@click.option("--metrics", is_flag=True, help="Also print the per-question metrics table.")
def show(run_ref: str, config: Path | None, example: str | None, metrics: bool) -> int:
    """Print one recorded run's scorecard (RUN: an id, latest, or -N)."""
    from ragrail.reports.terminal import scorecard

    store = _history(config, example)
    click.echo(scorecard(store.load(run_ref), metrics=metrics))
    store.close()
    return EXIT_OK


@cli.command(context_settings=RUN_REFS)
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B", default="latest")
@_with(history_options)
def diff(run_a: str, run_b: str, config: Path | None, example: str | None) -> int:
    """Compare two recorded runs with the baseline rules (RUN_A is the older one).

    Exits 1 when a question that passed in RUN_A fails in RUN_B, and 3 when
    RUN_B had errors (a failed call, or the judge failed), as `ragrail run` did.
    """
    from ragrail.compare import compare, error_phrases
    from ragrail.reports.terminal import diff_text

    store = _history(config, example)
    try:
        old, new = store.load(run_a), store.load(run_b)
    finally:
        store.close()
    result = compare(new, old)
    click.echo(_colour(diff_text(result)))
    if result.has_errors:
        # the run being judged had failures: no clean verdict, as `ragrail run` said
        phrases = error_phrases(
            len(result.errored_cases), len(result.errors), len(result.judge_errored_cases)
        )
        click.echo(f"ragrail: run {run_b}: {'; '.join(phrases)}; exit 3", err=True)
        return EXIT_SYSTEM
    return EXIT_REGRESSION if result.regressed else EXIT_OK


@cli.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="[RUN]", default="latest")
@_with(history_options)
@click.option(
    "--from-json",
    "from_json",
    type=click.Path(path_type=Path),
    help="Report on a results file (ragrail run --json) instead of a recorded run.",
)
@click.option(
    "--baseline",
    "-b",
    type=click.Path(path_type=Path),
    help="Baseline to compare with (default: the project's).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="Where to write the HTML file.",
)
def report(
    run_ref: str,
    config: Path | None,
    example: str | None,
    from_json: Path | None,
    baseline: Path | None,
    output: Path,
) -> int:
    """Write a self-contained HTML report of a run (default: the latest recorded).

    One file with no outside resources: the scorecard with intervals, the diff
    against the baseline, failure causes, trends over the recorded runs, and a
    drill-down per question (retrieved chunks with the labelled facts
    highlighted, prompt, answer, claims, checks) with filters.
    """
    from ragrail.baseline import load_baseline
    from ragrail.compare import compare
    from ragrail.config import CONFIG_NAME
    from ragrail.fileio import atomic_write_text, check_writable_output
    from ragrail.history import HistoryUnavailable
    from ragrail.reports.html import html_report
    from ragrail.results import load_run

    # before any work: a folder, FIFO or device is exit 2, and so is an input's path
    target = check_writable_output(output, "report")
    has_project = example or config or (Path.cwd() / CONFIG_NAME).is_file()
    project = _project(config, example) if has_project else None
    inputs = _project_inputs(project) if project is not None else {}
    for given, what in ((from_json, "the --from-json results"), (baseline, "the --baseline")):
        if given is not None:
            inputs[_real(given)] = what
    _refuse_clashes(
        [(target, output, "report")], inputs, project.docs if project is not None else None
    )
    history_rows = []
    if from_json is not None:
        run = load_run(from_json, "results")
        try:
            store = _history(config, example)
            history_rows = store.rows()
            store.close()
        except (InputError, HistoryUnavailable):
            pass  # the trends are optional beside a results file
    else:
        store = _history(config, example)
        run = store.load(run_ref)
        history_rows = [r for r in store.rows() if r.id <= store.resolve(run_ref)]
        store.close()
    base_path = baseline
    if base_path is None and project is not None:
        base_path = project.baseline
    base = load_baseline(base_path) if base_path is not None and base_path.is_file() else None
    result_diff = compare(run, base) if base is not None else None
    atomic_write_text(output, html_report(run, result_diff, history_rows), "report")
    click.echo(f"Wrote {output} ({output.stat().st_size:,} bytes): open it in a browser")
    return EXIT_OK


# ---------------------------------------------------------------- judge


@cli.group("judge", context_settings=CONTEXT)
def judge_group() -> None:
    """Check the LLM judge: validate it against human labels, compare two runs pairwise."""


judge_options = [
    click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file."),
    click.option("--example", metavar="NAME", help="A bundled example's project."),
    click.option(
        "--judge",
        type=click.Choice(["claude", "anthropic", "openai"]),
        help="The judge (default: the config's [judge]).",
    ),
    click.option("--judge-model", metavar="NAME", help="The judge's model."),
    click.option("--judge-base-url", metavar="URL", help="The judge's API base URL."),
    *judge_call_options(),
]


def _judge_for(
    project: Any,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    **calls: Any,
) -> Any:
    """The judge of `ragrail judge ...`; ``calls``: judge_concurrency, judge_timeout,
    judge_max_retries (None: the config's)."""
    from ragrail import app

    overrides = app.Overrides(
        judge=judge, judge_model=judge_model, judge_base_url=judge_base_url, **calls
    )
    cfg = app.judge_config(project, overrides)
    if cfg is None:
        raise InputError(
            "no judge: pass --judge claude|openai or add [judge] provider = ... to ragrail.toml"
        )
    return app.build_judge(project, cfg)


def _load_run_ref(ref: str, project: Any) -> Any:
    """A run from a results file (a path that exists) or from the history (id, latest, -N)."""
    from ragrail.history import History
    from ragrail.results import load_run

    path = Path(ref)
    if path.suffix == ".json" and path.is_file():
        return load_run(path, "results")
    store_path = project.state_dir / "history.sqlite"
    if not store_path.exists():
        raise InputError(f"{ref}: not a results file, and no run history at {store_path}")
    store = History(store_path)
    try:
        return store.load(ref)
    finally:
        store.close()


def _pct_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    interval = f"  [{ci[0]:.0%}, {ci[1]:.0%}]" if ci else ""
    return f"{value:.0%}{interval}"


@judge_group.command("validate", context_settings=RUN_REFS)
@click.option(
    "--labels",
    "-l",
    "labels_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Human verdicts: CSV or JSONL with case_id, criterion, verdict (pass/fail or 1-5).",
)
@click.option(
    "--run",
    "run_ref",
    default="latest",
    show_default=True,
    help="The run whose answers to judge: an id, latest, -N, or a results .json file.",
)
@_with(judge_options)
def judge_validate(
    labels_path: Path,
    run_ref: str,
    config: Path | None,
    example: str | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    **calls: Any,
) -> int:
    """Measure the judge against human labels, and store the result.

    Prints agreement, Cohen's kappa (Spearman for 1-5 scales), the true-positive
    and true-negative rates, the confusion matrix, each with a 95% interval, and
    the disagreements to read. A run may gate on a judge criterion only after a
    validation of that judge (model, prompt and rubric) with kappa of at least
    [judge] min_kappa (0.6).

    A labelled case the judge failed on, or gave no verdict for, is left out of
    the agreement (never counted as "fail") and listed; when the judge failed on
    any, nothing is stored and the exit code is 3.
    """
    from ragrail.judge import load_labels, validate_judge
    from ragrail.reports.text import visible

    project = _project(config, example)
    labels = load_labels(labels_path)
    run = _load_run_ref(run_ref, project)
    the_judge = _judge_for(project, judge, judge_model, judge_base_url, **calls)
    validation = validate_judge(the_judge, run, labels)
    store = _validation_store(project)
    crit_by_name = {c.name: c for c in the_judge.config.criteria}
    for a in validation.agreements:
        skipped = validation.left_out_of(a.criterion)
        click.echo(
            f"Judge {visible(the_judge.label)} vs {a.n} human labels: criterion "
            f"{visible(repr(a.criterion))} ({a.scale})"
        )
        if skipped:
            click.echo(f"  left out          {skipped} labelled case(s) with no verdict (below)")
        click.echo(f"  agreement         {_pct_ci(a.agreement, a.agreement_ci)}")
        if a.scale == "pass_fail":
            ci = f"  [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
            click.echo(f"  Cohen's kappa     {'-' if a.kappa is None else f'{a.kappa:.2f}'}{ci}")
            click.echo(
                f"  true positive     {_pct_ci(a.tpr, a.tpr_ci)}  (judge passes what people pass; n={a.tpr_n})"
            )
            click.echo(
                f"  true negative     {_pct_ci(a.tnr, a.tnr_ci)}  (judge fails what people fail; n={a.tnr_n})"
            )
            m = a.confusion
            click.echo("  confusion         judge pass  judge fail")
            click.echo(f"    people pass     {m['hp_jp']:>10}  {m['hp_jf']:>10}")
            click.echo(f"    people fail     {m['hf_jp']:>10}  {m['hf_jf']:>10}")
        else:
            ci = f"  [{a.spearman_ci[0]:.2f}, {a.spearman_ci[1]:.2f}]" if a.spearman_ci else ""
            click.echo(
                f"  Spearman          {'-' if a.spearman is None else f'{a.spearman:.2f}'}{ci}"
            )
        if a.disagreements:
            click.echo(f"  disagreements ({len(a.disagreements)}), worth reading:")
            for case_id, human, verdict, reason in a.disagreements:

                def word(v: float, scale: str = a.scale) -> str:
                    return ("pass" if v else "fail") if scale == "pass_fail" else f"{v:g}"

                click.echo(
                    f"    {visible(case_id)}: people {word(human)}, judge {word(verdict)}"
                    + (f": {visible(reason)}" if reason else "")
                )
        if validation.failed:
            continue  # a validation over the cases the judge managed is not stored
        key = the_judge.key(crit_by_name.get(a.criterion))
        vid = store.record_validation(key, the_judge.label, a.criterion, a)
        score = a.kappa if a.kappa is not None else a.spearman
        ok = score is not None and score >= the_judge.config.min_kappa
        click.echo(
            f"  stored as validation {vid} (judge key {key}); "
            + (
                f"gates on {a.criterion!r} are allowed"
                if ok
                else f"below min_kappa {the_judge.config.min_kappa}: gates stay refused"
            )
        )
    store.close()
    for case_id, criterion, why in validation.left_out:
        click.echo(f"  left out {visible(case_id)} ({visible(criterion)}): {visible(why)}")
    for case_id, criterion, why in validation.failed:
        click.echo(f"  JUDGE ERROR {visible(case_id)} ({visible(criterion)}): {visible(why)}")
    if validation.failed:
        click.echo(
            f"ragrail: the judge failed on {len(validation.failed)} labelled case(s) (listed "
            "above); the agreement shown leaves them out and was not stored; exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    return EXIT_OK


@judge_group.command("pairwise", context_settings=RUN_REFS)
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@_with(judge_options)
def judge_pairwise(
    run_a: str,
    run_b: str,
    config: Path | None,
    example: str | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    **calls: Any,
) -> int:
    """Which run answers better, per question, with the answers shown in both orders.

    RUN_A and RUN_B are run ids (latest, -N) or results .json files. Only verdicts
    that agree across the swap count (a judge that prefers whatever comes first
    cannot decide); prints wins, ties, losses, the swap-disagreement rate and an
    exact sign test. A question that errored in either run, or that the judge
    failed on, is listed with its reason, and the exit code is 3.
    """
    from ragrail.judge import pairwise, same_family_warning
    from ragrail.reports.terminal import usage_cost
    from ragrail.reports.text import visible

    project = _project(config, example)
    a, b = _load_run_ref(run_a, project), _load_run_ref(run_b, project)
    the_judge = _judge_for(project, judge, judge_model, judge_base_url, **calls)
    warning = same_family_warning(the_judge, [a.config.model, b.config.model])
    if warning:
        click.echo(f"ragrail: warning: {warning}", err=True)
    result = pairwise(the_judge, a, b)
    click.echo(
        f"Pairwise: B ({run_b}) vs A ({run_a}), judged by {the_judge.label}, {result.n} questions"
    )
    for case_id, verdict in result.per_case:
        click.echo(f"  {visible(case_id):<24}{visible(verdict)}")
    if result.unmatched:
        click.echo(f"  not in both runs (not compared): {visible(', '.join(result.unmatched))}")
    rate = "-" if result.swap_rate is None else f"{result.swap_rate:.0%}"
    click.echo(
        f"  B better {result.wins}, ties {result.ties}, A better {result.losses}; "
        f"changed with the order {result.swap_disagreements} ({rate}); errors {result.errors}"
    )
    click.echo(
        f"  sign test (B vs A, ties and order-dependent verdicts left out): p={result.sign_test_p:.3f}"
    )
    u = the_judge.usage
    click.echo(
        f"  judge calls {u.calls} made, {u.cached} cached, {u.errors} failed; cost {usage_cost(u)}"
    )
    if result.errored:
        click.echo(
            f"ragrail: {len(result.errored)} question(s) not compared: they errored in a run "
            "or the judge failed on them (listed as ERROR above); exit 3",
            err=True,
        )
        return EXIT_SYSTEM
    return EXIT_OK


# ---------------------------------------------------------------- cache


@cli.group(context_settings=CONTEXT)
def cache() -> None:
    """The model-reply cache (.ragrail/cache.sqlite beside the project file)."""


def _cache_path(config: Path | None) -> Path:
    from ragrail.config import CONFIG_NAME, load_config

    if config is not None or (Path.cwd() / CONFIG_NAME).is_file():
        return load_config(config or Path.cwd() / CONFIG_NAME).state_dir / "cache.sqlite"
    return Path.cwd() / ".ragrail" / "cache.sqlite"


@cache.command("stats", context_settings=CONTEXT)
@click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file.")
def cache_stats(config: Path | None) -> int:
    """How many replies are cached, and where."""
    from ragrail.cache import ResponseCache

    path = _cache_path(config)
    if not path.exists():
        click.echo(f"{path}: no cache yet")
        return EXIT_OK
    store = ResponseCache(path, required=True)  # its own command: fail, not skip
    click.echo(f"{path}: {store.count()} cached replies, {path.stat().st_size:,} bytes")
    for provider, model, n in store.by_model():
        click.echo(f"  {provider:<10} {model:<30} {n}")
    store.close()
    return EXIT_OK


@cache.command("clear", context_settings=CONTEXT)
@click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file.")
def cache_clear(config: Path | None) -> int:
    """Delete every cached reply: the next model run calls the API again."""
    from ragrail.cache import ResponseCache

    path = _cache_path(config)
    if not path.exists():
        click.echo(f"{path}: no cache to clear")
        return EXIT_OK
    store = ResponseCache(path, required=True)  # its own command: fail, not skip
    n = store.clear()
    store.close()
    click.echo(f"{path}: cleared {n} cached replies")
    return EXIT_OK


# ---------------------------------------------------------------- example


@cli.command(context_settings=CONTEXT)
@click.argument("name")
@click.argument("dest", type=click.Path(path_type=Path))
def example(name: str, dest: Path) -> int:
    """Copy a bundled example (kitebase, late-refund, multilingual) into DEST to run and
    edit it there.

    DEST gets the documents, golden.json, baseline.json, ragrail.toml, a
    GitHub Actions workflow in .github/workflows/evals.yml and .ragrail/.gitignore.
    """
    from ragrail.project_files import copy_example

    copy_example(name, dest)
    click.echo(f"Copied the {name} example to {dest}. Next:\n  cd {dest}\n  ragrail run")
    return EXIT_OK


# ---------------------------------------------------------------- lint


@cli.command(context_settings=CONTEXT)
@click.option(
    "--config",
    "-c",
    type=click.Path(path_type=Path),
    help="Project file (default: ./ragrail.toml).",
)
@click.option("--example", "example_name", metavar="NAME", help="Lint a bundled example instead.")
@click.option("--docs", type=click.Path(path_type=Path), help="Folder of documents.")
@click.option("--golden", "-g", type=click.Path(path_type=Path), help="Golden set file.")
def lint(
    config: Path | None, example_name: str | None, docs: Path | None, golden: Path | None
) -> int:
    """Check the golden set's labels against the documents.

    Every source must name a document and every fact must appear in one of its
    case's sources, so a typo in a label fails here instead of looking like a
    bot failure. Near-duplicate questions and documents no case uses are
    warnings. Exits 1 when it finds errors.
    """
    from ragrail.corpus import load_documents
    from ragrail.golden import lint_golden, load_golden

    project = _project(config, example_name)
    gold = load_golden(golden or project.golden, project.root)
    documents = {d.name: d.text for d in load_documents(docs or project.docs)}
    problems = lint_golden(gold, documents, project.config.pipeline.language)
    for problem in problems:
        click.echo(str(problem), err=True)
    errors = [p for p in problems if not p.warning]
    warnings = len(problems) - len(errors)
    note = f", {warnings} warning(s)" if warnings else ""
    if errors:
        click.echo(f"lint: {len(errors)} error(s){note} in {gold.path}", err=True)
        return EXIT_REGRESSION
    click.echo(f"lint: {len(gold.cases)} cases, {len(documents)} documents: OK{note}")
    return EXIT_OK


# ---------------------------------------------------------------- init / add


@cli.command(context_settings=CONTEXT)
@click.argument("folder", type=click.Path(path_type=Path), default=".")
def init(folder: Path) -> int:
    """Start a ragrail project in FOLDER (default: here).

    Writes a commented ragrail.toml, a starter golden.json, an empty docs/,
    .github/workflows/evals.yml and .ragrail/.gitignore. Refuses to overwrite any
    existing file.
    """
    from ragrail.project_files import init_project

    written = init_project(folder)
    click.echo(
        f"Started a ragrail project in {folder}:\n"
        + "".join(f"  {p.relative_to(folder)}\n" for p in written)
        + "Next: put your documents in docs/, label questions (ragrail add), then\n"
        "  ragrail lint && ragrail run --save-baseline"
    )
    return EXIT_OK


@cli.command(context_settings=CONTEXT)
@click.option("--config", "-c", type=click.Path(path_type=Path), help="Project file.")
@click.option("--golden", "-g", type=click.Path(path_type=Path), help="Golden set file.")
@click.option("--id", "case_id", required=True, help="A unique id, e.g. lost-phone.")
@click.option("--question", "-q", required=True, help="The question, as a user would type it.")
@click.option(
    "--source",
    "-s",
    "sources",
    multiple=True,
    help="A document that answers it (repeat for several; none: the docs don't cover it).",
)
@click.option(
    "--fact",
    "-f",
    "facts",
    multiple=True,
    help="A string a correct answer must contain (repeat for several).",
)
@click.option("--tag", "-t", "tags", multiple=True, help="A tag (repeat for several).")
def add(
    config: Path | None,
    golden: Path | None,
    case_id: str,
    question: str,
    sources: tuple[str, ...],
    facts: tuple[str, ...],
    tags: tuple[str, ...],
) -> int:
    """Append a labelled question to the golden set (refusing duplicate ids and questions)."""
    from pydantic import ValidationError

    from ragrail.golden import Case, add_case

    path = golden or _project(config, None).golden
    try:
        case = Case(
            id=case_id, question=question, sources=list(sources), facts=list(facts), tags=list(tags)
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"--{err['loc'][0]}: {err['msg'].removeprefix('Value error, ')}") from None
    if facts and not sources:
        raise InputError("a case with --fact needs a --source (a fact is found in a source)")
    add_case(path, case)
    click.echo(f"Added {case_id!r} to {path}. Check the labels with `ragrail lint`.")
    return EXIT_OK


from ragrail.interop.commands import export_cmd, import_cmd  # noqa: E402  (io helper; core moves it)

cli.add_command(import_cmd, "import")
cli.add_command(export_cmd, "export")


# ---------------------------------------------------------------- entry point


def _warn(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    _say(f"ragrail: warning: {message}")


def _say(line: str) -> None:
    """One line on stderr, whatever paths, ids or replies it quotes (control characters
    and line breaks made visible); a closed stderr must not turn an exit code into a
    traceback."""
    import contextlib

    from ragrail.reports.text import visible

    with contextlib.suppress(OSError, ValueError):
        click.echo(visible(line), err=True)


def _crashed(exc: BaseException, argv: list[str] | None) -> int:
    """One line for an exception no command handled; the traceback goes to a report
    file (or to stderr with RAGRAIL_DEBUG=1). Never exit 1: that is a verdict."""
    import contextlib
    import traceback

    from ragrail.crash import debug_enabled, describe, write_report

    crash = describe(exc)
    label = "internal error" if crash.internal else "error"
    if debug_enabled():
        with contextlib.suppress(OSError, ValueError):
            traceback.print_exception(exc, file=sys.stderr)
        _say(f"ragrail: {label}: {crash.message}")
        return crash.code
    if not crash.internal:
        _say(f"ragrail: error: {crash.message}")
        return crash.code
    path = write_report(exc, argv)
    where = (
        f"full report: {path}"
        if path is not None
        else "no report could be written; RAGRAIL_DEBUG=1 prints the traceback"
    )
    _say(f"ragrail: internal error: {crash.message} ({where})")
    return crash.code


def _dispatch(argv: list[str] | None) -> int:
    """Run one command and return its exit code, whatever it raised."""
    from ragrail.errors import EXIT_INTERRUPTED

    try:
        code = cli.main(args=argv, prog_name="ragrail", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return EXIT_OK
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _say(f"ragrail: error: {exc.format_message()}{hint}")
        return EXIT_USAGE
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, EOFError):  # click wraps EOFError too; not a Ctrl-C
            return _crashed(exc.__cause__, argv)
        _say("ragrail: terminated (SIGTERM)" if _terminated else "ragrail: interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.Exit as exc:
        return EXIT_OK if exc.exit_code == EXIT_OK else EXIT_USAGE
    except click.ClickException as exc:  # e.g. click.FileError: exit 2, not click's 1
        _say(f"ragrail: error: {exc.format_message()}")
        return EXIT_USAGE
    except RagrailError as exc:
        _say(f"ragrail: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("ragrail: terminated (SIGTERM)" if _terminated else "ragrail: interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        # click answers a broken pipe on stdout (`ragrail run | head`) with sys.exit(1),
        # after wrapping stdout so the final flush stays quiet: not a regression either.
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            _say("ragrail: error: the output was closed before ragrail finished (broken pipe)")
            return EXIT_SYSTEM
        return _crashed(exc, argv)
    except BaseException as exc:  # a bug, the disk, or a stray sys.exit(): never a verdict
        return _crashed(exc, argv)
    # Exit 1 comes only from here: a command's own verdict (a regression, lint findings).
    return code if isinstance(code, int) else EXIT_OK


def main(argv: list[str] | None = None) -> None:
    """Run the CLI, turning every user mistake into one line and an exit code.

    The codes are a contract (see ``ragrail.errors``): 0 no regression, 1 a
    regression, 2 usage or input error, 3 a failure of the system under test,
    a model, the disk or ragrail itself, 130 Ctrl-C (or SIGTERM).
    """
    import warnings

    from ragrail.errors import EXIT_INTERRUPTED

    warnings.showwarning = _warn  # one plain line, not Python's file:line: UserWarning form
    previous = _catch_sigterm()
    try:
        code = _dispatch(argv)
    except KeyboardInterrupt:  # a second Ctrl-C while the first was being reported
        code = EXIT_INTERRUPTED
    finally:
        _restore_sigterm(previous)
    sys.exit(code)


_terminated = False  # set by SIGTERM: the interruption came from a kill, not from Ctrl-C


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM (a CI job cancelled, a container stopped) ends a run as Ctrl-C does:
    every ``finally`` runs, so no temp file is left beside an output, finished calls stay
    cached, and the exit code is 130 with one line, not a silent death."""
    global _terminated
    _terminated = True
    raise KeyboardInterrupt


def _catch_sigterm() -> tuple[Any] | None:
    """Install the SIGTERM handler; ``(the one it replaced,)``, or None when it could not."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return (signal.signal(signal.SIGTERM, _on_sigterm),)
    except (ValueError, OSError):
        return None


def _restore_sigterm(previous: tuple[Any] | None) -> None:
    import signal

    global _terminated
    _terminated = False
    if previous is not None:
        # None: the old handler was not set from Python; the default is the closest
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous[0] is None else previous[0])
