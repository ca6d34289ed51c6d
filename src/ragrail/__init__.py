"""ragrail: regression tests for retrieval-augmented generation apps.

The Python API (see the README, "Python API")::

    import ragrail

    result = ragrail.evaluate("golden.json", system=answer)  # answer(question) -> dict
    result.totals, result.to_pandas()
    ragrail.assert_no_regression(result, "baseline.json")

Every name is imported on first use, so ``import ragrail`` (and ``ragrail --help``)
stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# name -> the module that defines it
_LAZY = {
    "__version__": "ragrail._version",
    "evaluate": "ragrail.api",
    "compare": "ragrail.api",
    "assert_no_regression": "ragrail.api",
    "save_baseline": "ragrail.api",
    "load_results": "ragrail.api",
    "load_golden": "ragrail.golden",
    "RunResult": "ragrail.records.results",
    "CaseResult": "ragrail.records.results",
    "Totals": "ragrail.records.results",
    "Diff": "ragrail.diff",
    "Change": "ragrail.diff",
    "Baseline": "ragrail.store.baseline",
    "GoldenSet": "ragrail.golden",
    "Case": "ragrail.golden",
    "RagrailError": "ragrail.errors",
    "InputError": "ragrail.errors",
    "SystemFailure": "ragrail.errors",
}

__all__ = [  # "__version__" and every name of _LAZY (tests/test_api.py checks)
    "Baseline",
    "Case",
    "CaseResult",
    "Change",
    "Diff",
    "GoldenSet",
    "InputError",
    "RagrailError",
    "RunResult",
    "SystemFailure",
    "Totals",
    "__version__",
    "assert_no_regression",
    "compare",
    "evaluate",
    "load_golden",
    "load_results",
    "save_baseline",
]

if TYPE_CHECKING:  # what type checkers and IDEs see (the package ships py.typed)
    from ragrail._version import __version__ as __version__
    from ragrail.api import assert_no_regression as assert_no_regression
    from ragrail.api import compare as compare
    from ragrail.api import evaluate as evaluate
    from ragrail.api import load_results as load_results
    from ragrail.api import save_baseline as save_baseline
    from ragrail.diff import Change as Change
    from ragrail.diff import Diff as Diff
    from ragrail.errors import InputError as InputError
    from ragrail.errors import RagrailError as RagrailError
    from ragrail.errors import SystemFailure as SystemFailure
    from ragrail.golden import Case as Case
    from ragrail.golden import GoldenSet as GoldenSet
    from ragrail.golden import load_golden as load_golden
    from ragrail.records.results import CaseResult as CaseResult
    from ragrail.records.results import RunResult as RunResult
    from ragrail.records.results import Totals as Totals
    from ragrail.store.baseline import Baseline as Baseline


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrail' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
