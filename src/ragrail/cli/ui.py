"""How the CLI talks: -q/-v, colour (NO_COLOR, --color/--no-color), and machine output
(``--json -``) that keeps standard output for the JSON alone."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ragrail.reports.machine import dumps, to_stdout


@dataclass
class Settings:
    verbosity: int = 0  # -1: quiet (the verdict line only), 0: normal, 1+: more detail
    color: bool | None = None  # --color / --no-color; None: NO_COLOR, else the terminal's


def settings() -> Settings:
    """This invocation's settings, shared by the group and the command (``ragrail -q run``
    and ``ragrail run -q`` alike)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Settings()
    meta = ctx.find_root().meta
    found = meta.get("ragrail.ui")
    if not isinstance(found, Settings):
        found = meta["ragrail.ui"] = Settings()
    return found


def effective_color(flag: bool | None) -> bool | None:
    """--color/--no-color, else off when NO_COLOR is set (https://no-color.org), else None:
    colour on a terminal only."""
    if flag is not None:
        return flag
    return False if os.environ.get("NO_COLOR") else None


def _set_quiet(ctx: click.Context, param: Any, value: bool) -> None:
    if value:
        settings().verbosity = -1


def _set_verbose(ctx: click.Context, param: Any, value: int) -> None:
    if value:
        settings().verbosity = max(settings().verbosity, 0) + value


def _set_color(ctx: click.Context, param: Any, value: bool | None) -> None:
    state = settings()
    if value is not None:
        state.color = value
    ctx.color = effective_color(state.color)


def output_options(quiet_short: bool = True) -> Callable[[Any], Any]:
    """-q/--quiet, -v/--verbose and --color/--no-color, on the group and on a command.
    ``quiet_short=False`` leaves -q to the command (``add -q`` is its question)."""
    quiet_flags = ["--quiet", "-q"] if quiet_short else ["--quiet"]
    options = [
        click.option(
            *quiet_flags,
            is_flag=True,
            expose_value=False,
            callback=_set_quiet,
            help="Print only the verdict line (errors and warnings still go to stderr).",
        ),
        click.option(
            "--verbose",
            "-v",
            count=True,
            expose_value=False,
            callback=_set_verbose,
            help="Print more detail (run: the inputs used and the metrics table).",
        ),
        click.option(
            "--color/--no-color",
            default=None,
            expose_value=False,
            callback=_set_color,
            help="Colour WORSE/fixed lines (default: on a terminal, unless NO_COLOR is set).",
        ),
    ]

    def deco(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func

    return deco


class Out:
    """Where a command's lines go. With ``--json -`` standard output carries only the
    JSON, so the text moves to stderr; with -q only the verdict is printed."""

    def __init__(self, json_path: Path | str | None = None) -> None:
        self.json_to_stdout = to_stdout(json_path)
        self.verbosity = settings().verbosity

    @property
    def quiet(self) -> bool:
        return self.verbosity < 0

    @property
    def verbose(self) -> bool:
        return self.verbosity > 0

    def say(self, text: str = "") -> None:
        """An ordinary line (left out with -q)."""
        if not self.quiet:
            click.echo(text, err=self.json_to_stdout)

    def detail(self, text: str = "") -> None:
        """A line for -v only."""
        if self.verbose:
            click.echo(text, err=self.json_to_stdout)

    def verdict(self, text: str) -> None:
        """The line that says how it went: printed even with -q."""
        click.echo(text, err=self.json_to_stdout)

    def json(self, data: Any, path: Path | None, what: str) -> None:
        """Write ``data`` as JSON to ``path`` (atomically), or to stdout for ``-``."""
        if path is None:
            return
        if self.json_to_stdout:
            click.echo(dumps(data), nl=False)
            return
        from ragrail.fileio import atomic_write_text

        atomic_write_text(path, dumps(data), what)
        self.say(f"Wrote {what} to {path}")
