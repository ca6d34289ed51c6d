"""What every command shares: click settings, flag types, the project and history a
command reads, and where its outputs may go."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.errors import InputError

if TYPE_CHECKING:
    from ragrail.project import Project
    from ragrail.store.history import History

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
RUN_REFS = {**CONTEXT, "ignore_unknown_options": True}  # so "-1" is a run, not an option
PATH = click.Path(path_type=Path)
# An output path is checked by ragrail.outputs.guard_outputs, not by click: click would call
# an existing file it cannot read "not readable", though a write replaces it whole.
OUT_PATH = click.Path(path_type=Path, readable=False)


class FiniteFloat(click.FloatRange):
    """A float flag that refuses nan and inf (which float() and FloatRange accept)."""

    name = "finite float"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def with_options(options: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """Apply a list of click options, first listed first in --help."""

    def deco(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func

    return deco


history_options = [
    click.option("--config", "-c", type=PATH, help="Project file."),
    click.option("--example", metavar="NAME", help="A bundled example's project."),
]


def json_option(what: str) -> Callable[[Any], Any]:
    """``--json PATH|-``: machine output, to a file or (``-``) to standard output."""
    return click.option(
        "--json",
        "json_path",
        type=OUT_PATH,
        metavar="PATH|-",
        help=f"Write {what} as JSON to PATH, or to standard output with `--json -`.",
    )


def load_project(config: Path | None, example: str | None) -> Project:
    from ragrail.app import load_project as load

    return load(config, example)


def project_or_none(config: Path | None, example: str | None) -> Project | None:
    """The project a command names or finds in this folder; None when there is none."""
    from ragrail.project import CONFIG_NAME

    if config is None and example is None and not (Path.cwd() / CONFIG_NAME).is_file():
        return None
    return load_project(config, example)


def check_outputs(
    outputs: list[tuple[Path | None, str]],
    config: Path | None,
    example: str | None,
    reads: list[tuple[Path | None, str]] | None = None,
) -> list[Path | None]:
    """The one output rule (ragrail.outputs.guard_outputs) for a command that names its
    project with --config/--example (or finds it in this folder)."""
    from ragrail.outputs import guard_outputs as guard

    return guard(outputs, project_or_none(config, example), reads or ())


def open_history(config: Path | None, example: str | None) -> History:
    """The run history of the project (or of this folder when there is no project)."""
    from ragrail.project import CONFIG_NAME
    from ragrail.store.history import History

    if config is None and example is None and not (Path.cwd() / CONFIG_NAME).is_file():
        path = Path.cwd() / ".ragrail" / "history.sqlite"
    else:
        path = load_project(config, example).state_dir / "history.sqlite"
    if not path.exists():
        raise InputError(f"no run history at {path}: run `ragrail run` (or `ragrail demo`) first")
    return History(path)


def colour(text: str) -> str:
    """WORSE and ERROR lines red, fixed lines green (click drops the colour where it
    should not show: a pipe, a file, NO_COLOR, --no-color)."""
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("WORSE", "ERROR")):
            line = click.style(line, fg="red", bold=True)
        elif stripped.startswith("fixed"):
            line = click.style(line, fg="green")
        out.append(line)
    return "\n".join(out)
