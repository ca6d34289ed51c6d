"""The ``ragrail`` command group. Each command's module is imported only when that command
runs (or its own --help is asked for), so ``ragrail --help`` loads click and nothing else."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import click

from ragrail._version import __version__
from ragrail.cli.common import CONTEXT
from ragrail.cli.ui import output_options

# name -> (module, attribute, the command's one-line summary for `ragrail --help`);
# tests/cli/test_cli_conventions.py checks each summary against the command's own help.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "add": (
        "ragrail.cli.project",
        "add",
        "Append a labelled question to the golden set (refusing duplicate ids and questions).",
    ),
    "cache": (
        "ragrail.cli.cache",
        "cache",
        "The model-reply and embeddings caches (.ragrail/ beside the project file).",
    ),
    "demo": (
        "ragrail.cli.run",
        "demo",
        "Run the bundled Kitebase example against its bundled baseline.",
    ),
    "diff": (
        "ragrail.cli.results",
        "diff",
        "Compare two recorded runs with the baseline rules (RUN_A is the older one).",
    ),
    "example": (
        "ragrail.cli.project",
        "example",
        "Copy a bundled example (kitebase, kitebase-chat, late-refund, multilingual) into DEST to run and "
        "edit it there.",
    ),
    "export": (
        "ragrail.cli.interop",
        "export_cmd",
        "Write a run in another tool's format (TREC run and qrels, RAGAS JSONL).",
    ),
    "history": (
        "ragrail.cli.results",
        "history_cmd",
        "List recorded runs with their totals (newest last).",
    ),
    "import": (
        "ragrail.cli.interop",
        "import_cmd",
        "Bring another tool's data: a golden set and/or an outputs file from FILE.",
    ),
    "init": ("ragrail.cli.project", "init", "Start a ragrail project in FOLDER (default: here)."),
    "judge": (
        "ragrail.cli.judge",
        "judge_group",
        "Check the LLM judge: validate it against human labels, compare two runs pairwise.",
    ),
    "label": (
        "ragrail.cli.label",
        "label",
        "Label in the browser: validate the judge, or make golden cases.",
    ),
    "lint": ("ragrail.cli.project", "lint", "Check the golden set's labels against the documents."),
    "logs": (
        "ragrail.cli.logs",
        "logs",
        "Production logs: ingest conversation exports (redacted) into .ragrail/logs.sqlite.",
    ),
    "merge": (
        "ragrail.cli.merge",
        "merge",
        "Merge the results of every `ragrail run --shard I/N` into one run and compare it.",
    ),
    "online": (
        "ragrail.cli.online",
        "online",
        "Online signals per version and week (or day), and A/B readouts, from the logs.",
    ),
    "report": (
        "ragrail.cli.results",
        "report",
        "Write a self-contained HTML report of a run (default: the latest recorded).",
    ),
    "run": (
        "ragrail.cli.run",
        "run",
        "Evaluate the project: score every golden question and compare with the baseline.",
    ),
    "sample": (
        "ragrail.cli.production",
        "sample",
        "Draw a stratified sample of logged conversations into a file to label.",
    ),
    "show": (
        "ragrail.cli.results",
        "show",
        "Print one recorded run's scorecard (RUN: an id, latest, or -N).",
    ),
    "sweep": (
        "ragrail.cli.sweep",
        "sweep",
        "Try every combination of chunking x retriever x k x min score and tabulate the totals.",
    ),
    "workflow": (
        "ragrail.cli.project",
        "workflow",
        "Write the GitHub Actions workflow that fits the project's system under test.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; ``--help`` lists them from
    :data:`COMMANDS` without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is None and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            found = getattr(import_module(module), attribute)
            self.add_command(found, cmd_name)
        return found

    def format_commands(self, ctx: click.Context, formatter: Any) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in COMMANDS:  # cut as click cuts a command's own help, without importing it
                command: click.Command | None = click.Command(name, help=COMMANDS[name][2])
            else:  # registered in code, not in COMMANDS
                command = self.get_command(ctx, name)
            rows.append((name, command.get_short_help_str(limit) if command else ""))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="ragrail")
@output_options()
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

    \b
    Every option can also come from the environment, as RAGRAIL_<COMMAND>_<OPTION>:
      RAGRAIL_RUN_TOP_K=1 ragrail run          same as ragrail run --top-k 1
    """
