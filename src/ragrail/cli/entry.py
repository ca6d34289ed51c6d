"""The entry point: run one command and turn whatever happened into an exit code.

Every user mistake ends as one line on stderr and exit 2; a regression is exit 1;
a failing system under test or model call is exit 3; Ctrl-C (or SIGTERM) is 130.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ragrail.cli.group import cli
from ragrail.errors import EXIT_OK, EXIT_SYSTEM, EXIT_USAGE, RagrailError

# Every option can come from the environment: RAGRAIL_<COMMAND>_<OPTION>, e.g.
# RAGRAIL_RUN_TOP_K=1 or RAGRAIL_JUDGE_VALIDATE_LABELS=labels.csv (a flag on the
# command line wins).
ENV_PREFIX = "RAGRAIL"
COMPLETE_VAR = (
    "_RAGRAIL_COMPLETE"  # click's shell completion: `_RAGRAIL_COMPLETE=bash_source ragrail`
)


def _warn(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    _say(f"ragrail: warning: {message}")


def _say(line: str) -> None:
    """One line on stderr, whatever paths, ids or replies it quotes (control characters
    and line breaks made visible); a closed stderr must not turn an exit code into a
    traceback."""
    import contextlib

    from ragrail.text.guard import visible

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
        code = cli.main(
            args=argv, prog_name="ragrail", standalone_mode=False, auto_envvar_prefix=ENV_PREFIX
        )
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
    import os
    import warnings

    from ragrail.errors import EXIT_INTERRUPTED

    if os.environ.get(COMPLETE_VAR):  # click prints the script or the candidates, and exits
        cli.main(args=argv, prog_name="ragrail", complete_var=COMPLETE_VAR)
    from ragrail.exit_guard import exit_guarded

    warnings.showwarning = _warn  # one plain line, not Python's file:line: UserWarning form
    previous = _catch_sigterm()
    try:
        # the process is ragrail's for the whole command: a target's call abandoned on a
        # timeout may still run, and its os._exit(0) must not end the command green
        with exit_guarded():
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
