"""The ``ragrail`` command: a thin layer over library calls.

Every user mistake ends as one line on stderr and exit 2; a regression is
exit 1; a failing system under test or model call is exit 3.
"""

from __future__ import annotations

import shutil
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
                2 usage or input error, 3 the system under test or a model call failed.
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


def run_options(func: Any) -> Any:
    options = [
        click.option(
            "--config",
            "-c",
            type=click.Path(path_type=Path),
            help="Project file (default: ./ragrail.toml).",
        ),
        click.option(
            "--docs",
            type=click.Path(path_type=Path),
            help="Folder of documents (Markdown or text), overriding the config.",
        ),
        click.option(
            "--golden",
            "-g",
            type=click.Path(path_type=Path),
            help="Golden set file (JSON array or JSONL), overriding the config.",
        ),
        click.option(
            "--baseline",
            "-b",
            type=click.Path(path_type=Path),
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
            type=click.FloatRange(0.0, 1.0),
            metavar="S",
            help="Chunks scoring below S are never returned (default 0.2).",
        ),
        click.option(
            "--save-baseline",
            is_flag=True,
            help="Accept this run: write it as the new baseline (atomically).",
        ),
        click.option(
            "--json",
            "json_path",
            type=click.Path(path_type=Path),
            metavar="PATH",
            help="Write the full results (every question, trace and score) as JSON.",
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
    answer passed and now fails).
    """
    return _run(RunOptions(**kwargs), example=None)


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
    if opts.save_baseline and opts.baseline is None:
        raise InputError(
            "the demo's bundled baseline is read-only; copy the example with "
            "`ragrail example kitebase DIR` and run `ragrail run --save-baseline` there "
            "(or pass --baseline PATH)"
        )
    return _run(opts, example="kitebase")


def _run(opts: RunOptions, example: str | None) -> int:
    from ragrail.answerers import StandinAnswerer
    from ragrail.compare import compare
    from ragrail.golden import load_golden
    from ragrail.pipeline import Pipeline, PipelineSettings
    from ragrail.reports.terminal import diff_text, scorecard
    from ragrail.results import load_run
    from ragrail.run import evaluate

    project = _project(opts.config, example)
    cfg = project.config
    pipe = cfg.pipeline
    baseline_path = opts.baseline or project.baseline
    settings = PipelineSettings(
        docs=opts.docs or project.docs,
        product=cfg.product,
        chunk_words=pipe.chunk_words if opts.chunk_words is None else opts.chunk_words,
        top_k=opts.top_k or pipe.top_k,
        min_score=pipe.min_score if opts.min_score is None else opts.min_score,
        retriever=pipe.retriever,
    )
    if cfg.answerer.name != "standin":
        raise InputError(f"unknown answerer {cfg.answerer.name!r}", str(project.config_path))
    # Read every input before any work, so a bad file fails fast and nothing is written.
    golden = load_golden(opts.golden or project.golden)
    baseline = load_run(baseline_path) if baseline_path.is_file() else None
    pipeline = Pipeline(settings)
    result = evaluate(cfg.name, golden, pipeline, StandinAnswerer())

    click.echo(scorecard(result))
    diff = None
    if baseline is not None:
        from ragrail.compare import compare

        diff = compare(result, baseline)
        click.echo()
        click.echo(_colour(diff_text(diff)))
    elif not opts.save_baseline:
        click.echo(f"\nNo baseline at {baseline_path} yet: run with --save-baseline to create one.")
    if opts.json_path:
        result.save(opts.json_path)
        click.echo(f"Wrote results to {opts.json_path}")
    if opts.save_baseline:
        result.save(baseline_path)
        click.echo(f"Saved baseline to {baseline_path}: commit it with the change it accepts.")
        return EXIT_OK
    if result.totals.n_errors:
        return EXIT_SYSTEM
    return EXIT_REGRESSION if diff is not None and diff.regressed else EXIT_OK


def _colour(text: str) -> str:
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("WORSE"):
            line = click.style(line, fg="red", bold=True)
        elif stripped.startswith("fixed"):
            line = click.style(line, fg="green")
        out.append(line)
    return "\n".join(out)


def _project(config: Path | None, example: str | None):  # -> Project
    from ragrail.config import CONFIG_NAME, example_dir, load_config

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


# ---------------------------------------------------------------- example


@cli.command(context_settings=CONTEXT)
@click.argument("name")
@click.argument("dest", type=click.Path(path_type=Path))
def example(name: str, dest: Path) -> int:
    """Copy a bundled example (kitebase) into DEST to run and edit it there.

    DEST gets the documents, golden.json, baseline.json, ragrail.toml and a
    GitHub Actions workflow in .github/workflows/evals.yml.
    """
    from ragrail.config import example_dir

    source = example_dir(name)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("already exists and is not an empty folder; choose a new one", str(dest))
    shutil.copytree(
        source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "evals.yml")
    )
    workflows = dest / ".github" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / "evals.yml", workflows / "evals.yml")
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
    bot failure. Exits 1 when it finds problems.
    """
    from ragrail.corpus import load_documents
    from ragrail.golden import lint_golden, load_golden

    project = _project(config, example_name)
    gold = load_golden(golden or project.golden)
    documents = {d.name: d.text for d in load_documents(docs or project.docs)}
    problems = lint_golden(gold, documents)
    for problem in problems:
        click.echo(str(problem), err=True)
    if problems:
        click.echo(f"lint: {len(problems)} problem(s) in {gold.path}", err=True)
        return EXIT_REGRESSION
    click.echo(f"lint: {len(gold.cases)} cases, {len(documents)} documents: OK")
    return EXIT_OK


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> None:
    """Run the CLI, turning every user mistake into one line and an exit code."""
    try:
        code = cli.main(args=argv, prog_name="ragrail", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        code = EXIT_OK
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        click.echo(f"ragrail: error: {exc.format_message()}{hint}", err=True)
        code = EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("ragrail: interrupted", err=True)
        code = 130
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except RagrailError as exc:
        click.echo(f"ragrail: error: {exc}", err=True)
        code = exc.exit_code
    sys.exit(code if isinstance(code, int) else EXIT_OK)
