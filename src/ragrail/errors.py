"""Exceptions that map onto ragrail's exit codes.

The CLI turns each of these into one line on stderr; nothing here prints.

The exit codes are a contract CI relies on:

- 0: the run finished and nothing regressed.
- 1: a regression (``lint``: problems found). Only a command's own verdict
  returns it; ``main()`` turns a raised ``SystemExit(1)``, or any other exit
  that escapes a command, into 3, so no crash or stray ``sys.exit`` can pass
  for a regression (or, with 0, for a green run).
- 2: a usage or input problem (``InputError``, click's usage errors): one
  line naming the file, line and field.
- 3: the system under test, a model call, the disk or the machine failed, or
  an unexpected exception (``SystemFailure``; anything else, via
  ``ragrail.crash``).
- 130: interrupted (Ctrl-C, or SIGTERM: a cancelled CI job or a stopped container).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REGRESSION = 1  # only ever returned by a command's verdict: see the module docstring
EXIT_USAGE = 2
EXIT_SYSTEM = 3
EXIT_INTERRUPTED = 130


class RagrailError(Exception):
    """Base class; ``exit_code`` says how the CLI should end."""

    exit_code = EXIT_USAGE


class InputError(RagrailError):
    """A user mistake in a file or flag: exit 2.

    ``where`` is ``file:line:column`` (or as much of it as is known) and is put
    in front of the message so the user can jump straight to it.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class SystemFailure(RagrailError):
    """The system under test or a model call failed: exit 3."""

    exit_code = EXIT_SYSTEM
