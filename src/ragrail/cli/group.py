"""The ``ragrail`` command group; the commands are registered in ``ragrail.cli``."""

from __future__ import annotations

import click

from ragrail import __version__
from ragrail.cli.common import CONTEXT
from ragrail.cli.ui import output_options


@click.group(context_settings=CONTEXT)
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
