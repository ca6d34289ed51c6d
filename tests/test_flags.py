"""The table of run flags (ragrail.flags) against what is made from it: the Overrides, the
CLI's options and the Python API's keyword checks agree row for row."""

from __future__ import annotations

import math
from dataclasses import fields

import click
import pytest

from ragrail.cli.run import run
from ragrail.cli.run_options import RunOptions
from ragrail.errors import InputError
from ragrail.flags import COMMAND, OVERRIDES, RUN_FLAGS, Overrides, check_keywords
from ragrail.project import ProjectConfig


def test_every_override_is_one_row_and_every_row_goes_somewhere():
    rows = [f.name for f in RUN_FLAGS]
    assert len(rows) == len(set(rows))
    assert {f.name for f in RUN_FLAGS if f.sets == OVERRIDES} == {f.name for f in fields(Overrides)}
    command = {f.name for f in fields(RunOptions)} - {"overrides"}
    assert {f.name for f in RUN_FLAGS if f.sets == COMMAND} == command


def test_each_key_a_flag_overrides_is_in_the_project_file():
    for flag in RUN_FLAGS:
        if flag.key:
            table, _, key = flag.key.partition(".")
            assert key in type(getattr(ProjectConfig(), table)).model_fields, flag.name


def test_run_takes_every_row_in_the_tables_order():
    options = [p for p in run.params if isinstance(p, click.Option)]
    assert [p.name for p in options][: len(RUN_FLAGS)] == [f.name for f in RUN_FLAGS]


def test_run_options_splits_the_flags_by_the_table():
    opts = RunOptions.of({"top_k": 2, "json_path": "x", "metrics": True, "quiet": True})
    assert opts.overrides == Overrides(top_k=2)
    assert (opts.json_path, opts.metrics, opts.config) == ("x", True, None)


PROBES = {
    "int": [-1, 0, 1, 2, 999, 1000, 1001],
    "number": [-1.0, 0.0, 0.0005, 0.001, 0.5, 60.0, math.inf, math.nan],
}


@pytest.mark.parametrize(
    "flag", [f for f in RUN_FLAGS if f.keyword and f.kind in PROBES], ids=lambda f: f.name
)
def test_the_api_refuses_what_the_flag_refuses(flag):
    option = next(p for p in run.params if p.name == flag.name)
    for value in PROBES[flag.kind]:
        try:
            option.type.convert(str(value), option, None)
            cli_ok = True
        except click.BadParameter:
            cli_ok = False
        assert (flag.problem(value) is None) == cli_ok, (flag.name, value)


def test_keywords_are_checked_by_the_table():
    assert check_keywords({"top_k": 2, "model": None}) == {"top_k": 2}
    with pytest.raises(TypeError, match=r"'json_path'$"):
        check_keywords({"json_path": "x"})  # the command's own flag: no keyword
    with pytest.raises(TypeError, match="history=True"):
        check_keywords({"no_history": True})
    with pytest.raises(InputError, match="repeats=1001: must be a whole number from 1 to 1000"):
        check_keywords({"repeats": 1001})
    with pytest.raises(InputError, match=r"rpm=0: must be a finite number > 0$"):
        check_keywords({"rpm": 0})
    with pytest.raises(InputError, match=r"backend='x': must be one of local, ray"):
        check_keywords({"backend": "x"})
