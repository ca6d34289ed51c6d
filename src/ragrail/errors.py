"""Exceptions that map onto ragrail's exit codes.

The CLI turns each of these into one line on stderr; nothing here prints.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2
EXIT_SYSTEM = 3


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
