"""The ``ragrail`` command: flag parsing and printing over the library.

One module per command group: ``run`` (run, demo), ``sweep``, ``results``
(history, show, diff, report), ``judge``, ``cache``, ``project`` (init,
example, add, lint), ``merge``, ``interop`` (import, export) and the production
logs' (``logs``, ``online``, ``production``);
``group`` lists them (each is imported only when it runs) and ``entry``
turns whatever a command did into an exit code. The work is in the library
(``ragrail.app`` and the stages), which never imports this package.
"""

from __future__ import annotations

from ragrail.cli.entry import main
from ragrail.cli.group import cli

__all__ = ["cli", "main"]
