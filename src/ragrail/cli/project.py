"""Setting a project up: ``init``, ``example``, ``workflow``, ``add`` and ``lint``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.cli.common import CONTEXT, OUT_PATH, PATH, json_option, load_project
from ragrail.cli.turns import InOrder
from ragrail.cli.ui import Out, output_options
from ragrail.errors import EXIT_OK, EXIT_REGRESSION, InputError

if TYPE_CHECKING:
    from ragrail.online.record import Conversation
    from ragrail.project import Project


@click.command(context_settings=CONTEXT)
@click.argument("name")
@click.argument("dest", type=PATH)
@output_options()
def example(name: str, dest: Path) -> int:
    """Copy a bundled example (kitebase, kitebase-chat, late-refund, multilingual) into DEST to run and
    edit it there.

    DEST gets the documents, golden.json, baseline.json, ragrail.toml, a
    GitHub Actions workflow in .github/workflows/evals.yml and .ragrail/.gitignore.
    """
    from ragrail.scaffold import copy_example

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
    from ragrail.outputs import guard_outputs
    from ragrail.reports.machine import lint_json
    from ragrail.system.corpus import load_documents

    project = load_project(config, example_name)
    guard_outputs(
        [(json_path, "--json lint")],
        project,
        [(golden, "the golden set being linted")],
        golden=golden,
        docs=docs,
    )
    out = Out(json_path)
    gold = load_golden(golden or project.golden, project.root)
    documents = {d.name: d.text for d in load_documents(docs or project.docs)}
    problems = lint_golden(gold, documents, project.config.pipeline.language)
    problems += _production_cases_removed(project, gold)
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


def _production_cases_removed(project: Any, gold: Any) -> list[Any]:
    """lint's warnings for cases made from production logs that left the golden set;
    none when there is no log database (lint never creates one)."""
    import os

    from ragrail.golden.lint import lint_from_log
    from ragrail.online.store import LogStore

    db = _log_db(project)
    if not db.is_file():
        return []
    with LogStore(db, create=False) as store:
        rows = store.golden_from_log()
    return lint_from_log(gold, rows, os.path.realpath(gold.path))


@click.command(context_settings=CONTEXT)
@click.argument("folder", type=PATH, default=".")
@output_options()
def init(folder: Path) -> int:
    """Start a ragrail project in FOLDER (default: here).

    Writes a commented ragrail.toml, a starter golden.json, an empty docs/,
    .github/workflows/evals.yml and .ragrail/.gitignore. Refuses to overwrite any
    existing file.
    """
    from ragrail.scaffold import init_project

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
@click.option("--config", "-c", type=PATH, help="Project file (default: ./ragrail.toml).")
@click.option(
    "--output",
    "-o",
    type=OUT_PATH,
    metavar="PATH|-",
    help="Where to write it (default: .github/workflows/evals.yml in the repository's root; "
    "-: standard output).",
)
@click.option("--force", is_flag=True, help="Replace the file if it exists.")
@output_options()
def workflow(config: Path | None, output: Path | None, force: bool) -> int:
    """Write the GitHub Actions workflow that fits the project's system under test.

    The built-in pipeline gets an offline job and a real-model (--claude) job; a Python
    target a job that installs the app's requirements.txt / pyproject.toml (or a step
    marked EDIT that fails until edited); an HTTP service a step to start it and a wait
    for its port; an outputs file a check that it is committed. Run it again (--force)
    after changing [system]; refuses to overwrite a file otherwise.
    """
    from ragrail.fileio import atomic_write_text
    from ragrail.outputs import guard_outputs
    from ragrail.scaffold import project_workflow, workflow_home
    from ragrail.scaffold.steps import system_name, to_do

    project = load_project(config, None)
    target = output or workflow_home(project)
    (path,) = guard_outputs([(target, "workflow")], project, stdout=lambda what: True)
    if path is not None and not force and (path.exists() or path.is_symlink()):
        raise InputError("the workflow exists; --force replaces it", str(path))
    text, plan = project_workflow(project, "the workflow" if path is None else str(path))
    if path is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(path, text, "workflow")
    out = Out(target)
    done = f"Wrote {'the workflow' if path is None else path} for {system_name(plan)}."
    todo = to_do(plan)
    out.verdict(
        done
        if out.quiet or not todo
        else f"{done} Before you commit it:\n" + "\n".join(f"  - {line}" for line in todo)
    )
    return EXIT_OK


@click.command(cls=InOrder, context_settings=CONTEXT)
@click.option("--config", "-c", type=PATH, help="Project file.")
@click.option("--golden", "-g", type=PATH, help="Golden set file.")
@click.option(
    "--id", "case_id", help="A unique id, e.g. lost-phone (--from-log: default log-<conversation>)."
)
@click.option(
    "--question",
    "-q",
    multiple=True,
    help="The question, as a user would type it (--from-log: the logged one). Repeat it for "
    "a conversation: each --question starts the next turn, and the --source, --fact and "
    "--expect after it are that turn's.",
)
@click.option(
    "--turn",
    type=int,
    multiple=True,
    metavar="K",
    help="The labels after it are turn K's (a logged conversation's turn with --from-log).",
)
@click.option(
    "--from-log",
    "from_log",
    metavar="ID",
    help="Make the case from this logged conversation (ragrail logs ingest), keeping where "
    "it came from.",
)
@click.option(
    "--db", type=PATH, help="The log database for --from-log (default: .ragrail/logs.sqlite)."
)
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
@click.option(
    "--expect",
    type=click.Choice(["answer", "abstain", "refuse", "escalate"]),
    multiple=True,
    help="What the reply should do (default: abstain without --source, answer with one).",
)
@output_options(quiet_short=False)
def add(
    config: Path | None,
    golden: Path | None,
    case_id: str | None,
    question: tuple[str, ...],
    turn: tuple[int, ...],
    from_log: str | None,
    db: Path | None,
    sources: tuple[str, ...],
    facts: tuple[str, ...],
    tags: tuple[str, ...],
    expect: tuple[str, ...] = (),
) -> int:
    """Append a labelled question to the golden set (refusing duplicate ids and questions).

    A conversation: repeat --question; the --source, --fact and --expect after each are
    that turn's (--tag is the whole conversation's):

    \b
      ragrail add --id pro-plan -t chat \\
        -q "How much is Basic?" -s pricing -f '$8' \\
        -q "And on the Pro plan?" -s pricing -f '$12'

    With --from-log ID the question comes from that logged conversation (every turn of it,
    labelled with --turn K) and the case records where it came from (conversation, date,
    app version); `ragrail lint` then warns if the case is ever removed from the golden set.
    """
    from pydantic import ValidationError

    from ragrail.cli.turns import turn_labels
    from ragrail.golden import Case, add_case

    if from_log is None:
        for flag, value in (("--id", case_id), ("--question", question)):
            if not value:
                raise InputError(f"missing option {flag} (or give --from-log ID)")
    if golden is None or (from_log is not None and db is None):
        project = load_project(config, None)
        golden = golden or project.golden
        db = db or _log_db(project)
    path = golden
    conversation = None
    if from_log is not None:
        assert db is not None  # --db, or the project's (loaded above without it)
        conversation = _logged_conversation(from_log, db)
    logged = len(conversation.turns) + 1 if conversation is not None and conversation.turns else 0
    per_turn = {"question": question, "sources": sources, "facts": facts, "expect": expect}
    labels = turn_labels({**per_turn, "turn": turn}, logged)
    if len(labels) > 1:
        from ragrail.cli.turns import add_turns

        added = add_turns(path, case_id, labels, list(tags), conversation)
        if conversation is not None:
            assert db is not None  # as above
            _record_golden(db, added, conversation.id, path)
        Out().verdict(
            f"Added conversation {added!r} ({len(labels)} turns) to {path}. "
            "Check the labels with `ragrail lint`."
        )
        return EXIT_OK
    first = labels[0]
    try:
        if conversation is not None:
            from ragrail.online.cases import case_from_log

            case = case_from_log(
                conversation, case_id, first.question, first.sources, first.facts, list(tags)
            )
        else:
            # validated as a golden-set entry is: a fact is read from its text
            case = Case.model_validate(
                {
                    "id": case_id,
                    "question": first.question,
                    "sources": first.sources,
                    "facts": first.facts,
                    "tags": list(tags),
                }
            )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"--{err['loc'][0]}: {err['msg'].removeprefix('Value error, ')}") from None
    if first.facts and not first.sources:
        raise InputError("a case with --fact needs a --source (a fact is found in a source)")
    if first.expect is not None:
        from ragrail.golden.add import with_expect

        case = with_expect(case, first.expect)
    add_case(path, case)
    if conversation is not None:
        assert db is not None  # as above
        _record_golden(db, case.id, conversation.id, path)
    Out().verdict(f"Added {case.id!r} to {path}. Check the labels with `ragrail lint`.")
    return EXIT_OK


def _log_db(project: Project) -> Path:
    from ragrail.online.store import log_path

    return log_path(project.state_dir)


def _logged_conversation(conversation_id: str, db: Path) -> Conversation:
    """The stored conversation (exit 2 when the database or the id is unknown)."""
    from ragrail.online.store import LogStore

    with LogStore(db, create=False) as store:
        found = store.get(conversation_id)
    if found is None:
        raise InputError(f"no conversation {conversation_id!r} in the production logs", str(db))
    return found


def _record_golden(db: Path, case_id: str, conversation_id: str, golden: Path) -> None:
    """Remember in the log database that the case came from the conversation."""
    import os
    import time

    from ragrail.online.store import LogStore

    with LogStore(db, create=False) as store:
        store.record_golden(case_id, conversation_id, os.path.realpath(golden), time.time())
