"""The click options of ``ragrail run`` and ``ragrail demo``, made from the table of run
flags (:data:`ragrail.flags.RUN_FLAGS`); ``sweep``, ``merge`` and ``judge`` take the flags
they share with a run from here (:func:`flag_option`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragrail.cli.common import OUT_PATH, PATH, FiniteFloat, with_options
from ragrail.flags import FLAGS, RUN_FLAGS, Flag, Overrides, command_values

if TYPE_CHECKING:
    from ragrail.shards import Shard


@dataclass
class RunOptions:
    """What ``run`` and ``demo`` were given: the overrides, and the command's own flags
    (the rows of the table marked ``COMMAND``)."""

    overrides: Overrides = field(default_factory=Overrides)
    config: Path | None = None
    example: str | None = None
    save_baseline: bool = False
    json_path: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    strict: bool = False  # --junit: known failures fail too
    metrics: bool = False
    shard: Shard | None = None  # --shard I/N

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunOptions:
        """The parsed flags (click's keyword arguments) split by the table."""
        return cls(Overrides.of(values), **command_values(values))


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An empty value given on purpose (``--base-url ''``) is a mistake, not "use the default"."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty; leave the option out to use the default")
    return value


class ShardType(click.ParamType):
    """``I/N``: shard I of N (``ragrail.shards.parse_shard``)."""

    name = "I/N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ragrail.errors import InputError
        from ragrail.shards import Shard, parse_shard

        if isinstance(value, Shard):
            return value
        try:
            return parse_shard(str(value))
        except InputError as exc:
            self.fail(exc.message, param, ctx)


def _click_type(flag: Flag) -> Any:
    """The click type that checks what the row declares (its bounds, its choices)."""
    if flag.kind == "int":
        return click.IntRange(min=None if flag.low is None else int(flag.low), max=flag.high)
    if flag.kind == "number":
        low = None if flag.low is None else float(flag.low)
        return FiniteFloat(min=low, min_open=flag.above)
    if flag.kind == "choice":
        return click.Choice(list(flag.choices))
    if flag.kind == "path":
        return PATH
    if flag.kind == "output":
        return OUT_PATH
    if flag.kind == "shard":
        return ShardType()
    return None  # text


def flag_option(name: str, **change: Any) -> Callable[[Any], Any]:
    """The click option of the run flag ``name``; ``change``: what another command says
    differently (its ``help``)."""
    flag = FLAGS[name]
    names = [n for n in (flag.short, flag.flag) if n]
    if flag.option:
        names.append(flag.name)  # the parameter: --json is json_path
    settings: dict[str, Any] = {"help": flag.help}
    if flag.kind == "on":
        settings["is_flag"] = True
    else:
        kind = _click_type(flag)
        if kind is not None:
            settings["type"] = kind
        if flag.metavar is not None:
            settings["metavar"] = flag.metavar
        if flag.default is not None:
            settings["default"] = flag.default
        if not flag.blank_ok:
            settings["callback"] = _not_blank
    return click.option(*names, **{**settings, **change})


def run_options(func: Any) -> Any:
    """Every run flag, in the table's order (the order ``--help`` lists them)."""
    return with_options([flag_option(f.name) for f in RUN_FLAGS])(func)


JUDGE_CALLS = ("judge_concurrency", "judge_timeout", "judge_max_retries", "judge_rpm", "judge_tpm")


def judge_call_options() -> list[Any]:
    """How the judge calls its model; each defaults to [judge] in the config when written
    there, else to the run's own flag (--concurrency, --timeout, --max-retries, --rpm,
    --tpm)."""
    return [flag_option(name) for name in JUDGE_CALLS]
