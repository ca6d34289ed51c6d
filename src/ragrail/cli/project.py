"""Setting a project up: ``init``, ``example``, ``add`` and ``lint``."""

from __future__ import annotations

from pathlib import Path

import click

from ragrail.cli.common import CONTEXT, PATH, json_option, load_project
from ragrail.cli.ui import Out, check_json_target, output_options
from ragrail.errors import EXIT_OK, EXIT_REGRESSION, InputError


@click.command(context_settings=CONTEXT)
@click.argument("name")
@click.argument("dest", type=PATH)
@output_options()
def example(name: str, dest: Path) -> int:
    """Copy a bundled example (kitebase, late-refund, multilingual) into DEST to run and
    edit it there.

    DEST gets the documents, golden.json, baseline.json, ragrail.toml, a
    GitHub Actions workflow in .github/workflows/evals.yml and .ragrail/.gitignore.
    """
    from ragrail.project_files import copy_example

    copy_example(name, dest)
    out = Out()
    done = f"Copied the {name} example to {dest}."
    out.verdict(done if out.quiet else f"{done} Next:\n  cd {dest}\n  ragrail run")
    return EXIT_OK


@click.command(context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file (default: ./ragrail.toml).")
@click.option("--example", "example_name", metavar="NAME", help="Lint a bundled example instead.")
@click.option("--docs", type=PATH, help="Folder of documents.")
@click.option("--golden", "-g", type=PATH, help="Golden set file.")
@json_option("every problem")
@output_options()
def lint(
    config: Path | None,
    example_name: str | None,
    docs: Path | None,
    golden: Path | None,
    json_path: Path | None,
) -> int:
    """Check the golden set's labels against the documents.

    Every source must name a document and every fact must appear in one of its
    case's sources, so a typo in a label fails here instead of looking like a
    bot failure. Near-duplicate questions and documents no case uses are
    warnings. Exits 1 when it finds errors.
    """
    from ragrail.golden import lint_golden, load_golden
    from ragrail.reports.machine import lint_json
    from ragrail.system.corpus import load_documents

    check_json_target(json_path, "--json lint")
    out = Out(json_path)
    project = load_project(config, example_name)
    gold = load_golden(golden or project.golden, project.root)
    documents = {d.name: d.text for d in load_documents(docs or project.docs)}
    problems = lint_golden(gold, documents, project.config.pipeline.language)
    out.json(
        lint_json(problems, len(gold.cases), len(documents), gold.path), json_path, "--json lint"
    )
    if not out.quiet:
        for problem in problems:
            click.echo(str(problem), err=True)
    errors = [p for p in problems if not p.warning]
    warnings = len(problems) - len(errors)
    note = f", {warnings} warning(s)" if warnings else ""
    if errors:
        click.echo(f"lint: {len(errors)} error(s){note} in {gold.path}", err=True)
        return EXIT_REGRESSION
    out.verdict(f"lint: {len(gold.cases)} cases, {len(documents)} documents: OK{note}")
    return EXIT_OK


@click.command(context_settings=CONTEXT)
@click.argument("folder", type=PATH, default=".")
@output_options()
def init(folder: Path) -> int:
    """Start a ragrail project in FOLDER (default: here).

    Writes a commented ragrail.toml, a starter golden.json, an empty docs/,
    .github/workflows/evals.yml and .ragrail/.gitignore. Refuses to overwrite any
    existing file.
    """
    from ragrail.project_files import init_project

    written = init_project(folder)
    out = Out()
    done = f"Started a ragrail project in {folder}"
    out.verdict(
        f"{done}."
        if out.quiet
        else f"{done}:\n"
        + "".join(f"  {p.relative_to(folder)}\n" for p in written)
        + "Next: put your documents in docs/, label questions (ragrail add), then\n"
        "  ragrail lint && ragrail run --save-baseline"
    )
    return EXIT_OK


@click.command(context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@click.option("--golden", "-g", type=PATH, help="Golden set file.")
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
@output_options(quiet_short=False)
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

    path = golden or load_project(config, None).golden
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
    Out().verdict(f"Added {case_id!r} to {path}. Check the labels with `ragrail lint`.")
    return EXIT_OK
