"""Code checks on answers: declared per case (``"checks"`` in the golden set) or for
the whole golden set (``[[checks]]`` in the config). Each check returns a list of
problems; an empty list is a pass.

Kinds:

- ``contains`` / ``not_contains``: a string, matched as facts are (normalised, case-folded,
  at token boundaries: see ``scoring.matching``) or, with
  ``regex = true``, a regular expression the answer must (not) match;
- ``json``: the answer parses as JSON; ``json_schema``: and validates against ``schema``;
- ``no_pii``: no e-mail address, phone number (found by ``phonenumbers``: written
  with a country code, or as dialled in ``region``), payment-card number (13-19
  digits shaped like one that pass the Luhn check) or IBAN (ISO 13616 mod-97) in the
  answer; dates, times, ISBNs and labelled order or reference numbers are not PII;
  ``kinds`` narrows it;
- ``number``: every number the ``pattern`` finds (first group, default: any
  number) lies within ``min``/``max``, e.g. a refund of at most the ₹150 cap;
- ``python``: ``function = "package.module:function"`` called as
  ``function(answer, case)``, returning a list of problems (or a bool).

Every check is validated when the config or golden set is loaded (a regular
expression compiles, a schema is a schema, a function imports), so a mistake
in one is exit 2 before anything runs. A check that fails while scoring (a
function that raises) raises :class:`CheckError`: that question's error, never
a verdict.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.records.checks import (  # noqa: F401  (re-exported beside the runners)
    CHECK_TYPES,
    CheckSpec,
    Contains,
    IsJson,
    JsonSchema,
    NoPII,
    NumberBound,
    PythonCheck,
    error_field,
    error_message,
)
from ragrail.scoring.pii import (  # noqa: F401  (re-exported: the checks' public helpers)
    IBAN_LENGTHS,
    card_shaped,
    find_pii,
    iban_ok,
    isbn13_ok,
    luhn_ok,
)


class CheckError(Exception):
    """A check could not give a verdict on an answer (its function raised): the
    question's error, not a pass and not a fail."""


def _parse_number(raw: str) -> float | None:
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None


_PROJECT_ROOTS: set[str] = set()  # folders put on sys.path for a project's own modules


def load_function(
    spec: str, root: Path | None = None, what: str = "check function"
) -> Callable[..., Any]:
    """Import ``package.module:function``, or raise an InputError that names it.

    With ``root`` (the project folder), modules are imported from there first,
    as a Python system target is. Anything that goes wrong while importing
    (a missing module, a syntax error, code that raises or exits at import) is
    an InputError: the user's configuration, not a crash.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"{what} {spec!r} must look like package.module:function")
    if root is not None:
        _use_project_root(root, module_name)
    module = sys.modules.get(module_name)
    if module is None:
        try:
            importlib.invalidate_caches()  # a module file written since the last import
            module = importlib.import_module(module_name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SyntaxError, an exception or sys.exit() at import time
            reason = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
            raise InputError(
                f"cannot import {module_name!r} for {what} {spec!r}: {reason}"
            ) from None
    func = getattr(module, attr, None)
    if not callable(func):
        raise InputError(f"{what} {spec!r}: {module_name} has no function {attr!r}")
    return func


def _use_project_root(root: Path, module_name: str) -> None:
    """Put the project folder first on sys.path; forget a same-named module that an
    earlier project in this process imported from its own folder."""
    folder = str(Path(root).resolve())
    # an earlier project's folder is not this one's: left on sys.path, a module this
    # project lacks would still import from there (a fresh process would not find it)
    sys.path[:] = [p for p in sys.path if p == folder or p not in _PROJECT_ROOTS]
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
    _PROJECT_ROOTS.add(folder)
    top = module_name.split(".")[0]
    cached = sys.modules.get(top)
    origin = getattr(cached, "__file__", None)
    if cached is None or origin is None:
        return
    home = str(Path(origin).resolve().parent)
    if top in sys.builtin_module_names or home == folder:
        return
    # The project's own file shadows a same-named module cached from anywhere else (another
    # project, a test's folder), as it would in a fresh process with the folder first.
    own = (Path(folder) / f"{top}.py").is_file() or (Path(folder) / top / "__init__.py").is_file()
    if own or any(Path(home).is_relative_to(r) for r in _PROJECT_ROOTS - {folder}):
        for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
            del sys.modules[name]


def resolve_functions(
    checks: Sequence[Any], root: Path | None = None, seen: set[str] | None = None
) -> None:
    """Import every ``python`` check's function now, so a missing one is exit 2
    before the run, not a surprise halfway through scoring. Functions named in
    ``seen`` are skipped, and each one imported is added to it."""
    for check in checks:
        if isinstance(check, PythonCheck) and (seen is None or check.function not in seen):
            load_function(check.function, root, f"check {check.label!r}: function")
            if seen is not None:
                seen.add(check.function)


def run_check(check: Any, answer: str, case: Any = None) -> list[str]:
    """Problems the check finds in the answer; [] is a pass."""
    label = check.name or check.type
    if isinstance(check, Contains):
        if check.regex:
            hit = re.search(check.value, answer, re.I) is not None
        else:
            # the fact matcher's rules: "30 days" is not in "130 days", "Straße" is in "STRASSE"
            from ragrail.text.matching import contains

            hit = contains(check.value, answer)
        if check.type == "contains" and not hit:
            return [f'{label}: does not contain "{check.value}"']
        if check.type == "not_contains" and hit:
            return [f'{label}: contains "{check.value}"']
        return []
    if isinstance(check, IsJson | JsonSchema):
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            return [f"{label}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]
        if isinstance(check, JsonSchema):
            import jsonschema

            try:
                errors = sorted(
                    jsonschema.Draft202012Validator(check.json_schema).iter_errors(data),
                    key=lambda e: [str(p) for p in e.path],
                )
            except Exception as exc:  # e.g. a $ref that cannot be resolved
                raise CheckError(
                    f"check {label!r}: the schema could not be applied: {type(exc).__name__}: {exc}"
                ) from None
            return [
                f"{label}: {'/'.join(map(str, e.path)) or '(root)'}: {e.message}"
                for e in errors[:3]
            ]
        return []
    if isinstance(check, NoPII):
        region = check.region.upper() if check.region else None
        return [f"{label}: {p}" for p in find_pii(answer, check.kinds, region)]
    if isinstance(check, NumberBound):
        problems = []
        for m in re.finditer(check.pattern, answer):
            value = _parse_number(m.group(1) if m.groups() else m.group(0))
            if value is None:
                continue
            if check.max is not None and value > check.max:
                problems.append(f"{label}: {value:g} is above the maximum {check.max:g}")
            if check.min is not None and value < check.min:
                problems.append(f"{label}: {value:g} is below the minimum {check.min:g}")
        return problems
    if isinstance(check, PythonCheck):
        return _run_function(check, label, answer, case)
    raise TypeError(f"unknown check {check!r}")  # pragma: no cover


def _run_function(check: PythonCheck, label: str, answer: str, case: Any) -> list[str]:
    """Call a check function; anything but a list of problems or a bool is a CheckError."""
    func = load_function(check.function, what=f"check {label!r}: function")
    try:
        verdict = func(answer, case)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code: even sys.exit() must not end the run
        raise CheckError(
            f"check {label!r} ({check.function}) raised {type(exc).__name__}: {exc}"
        ) from None
    if isinstance(verdict, bool):
        return [] if verdict else [f"{label}: {check.function} returned False"]
    if verdict is None:
        return []
    if isinstance(verdict, list | tuple):
        return [f"{label}: {p}" for p in verdict]
    # a string would otherwise be read as one problem per character
    raise CheckError(
        f"check {label!r} ({check.function}) returned {type(verdict).__name__}; "
        "expected a list of problems or a bool"
    )
