"""The ``ragrail`` command: flag parsing and printing over the library.

One module per command group: ``run`` (run, demo), ``sweep``, ``results``
(history, show, diff, report), ``judge``, ``cache``, ``project`` (init,
example, add, lint); ``entry`` turns whatever a command did into an exit code.
The work is in the library (``ragrail.app`` and the stages), which never
imports this package. Heavy modules are imported inside the commands, so
``ragrail --help`` stays fast.
"""

from __future__ import annotations

from ragrail.cli.cache import cache
from ragrail.cli.entry import main
from ragrail.cli.group import cli
from ragrail.cli.judge import judge_group
from ragrail.cli.project import add, example, init, lint
from ragrail.cli.results import diff, history_cmd, report, show
from ragrail.cli.run import demo, run
from ragrail.cli.sweep import sweep
from ragrail.interop.commands import export_cmd, import_cmd

for command in (
    run,
    demo,
    sweep,
    history_cmd,
    show,
    diff,
    report,
    judge_group,
    cache,
    example,
    lint,
    init,
    add,
    import_cmd,
    export_cmd,
):
    cli.add_command(command)

__all__ = ["cli", "main"]
