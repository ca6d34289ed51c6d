"""Code checks on answers: declared per case (``"checks"`` in the golden set) or for
the whole golden set (``[[checks]]`` in the config). Each check returns a list of
problems; an empty list is a pass.

Kinds:

- ``contains`` / ``not_contains``: a string (case-insensitive) or, with
  ``regex = true``, a regular expression the answer must (not) match;
- ``json``: the answer parses as JSON; ``json_schema``: and validates against ``schema``;
- ``no_pii``: no e-mail address, phone number or payment-card number (a 13-19
  digit run that passes the Luhn check) in the answer; ``kinds`` narrows it;
- ``number``: every number the ``pattern`` finds (first group, default: any
  number) lies within ``min``/``max``, e.g. a refund of at most the ₹150 cap;
- ``python``: ``function = "package.module:function"`` called as
  ``function(answer, case)``, returning a list of problems (or a bool).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragrail.errors import InputError


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str | None = None  # shown in problems; defaults to the kind


class Contains(_Check):
    type: Literal["contains", "not_contains"]
    value: str
    regex: bool = False


class IsJson(_Check):
    type: Literal["json"]


class JsonSchema(_Check):
    type: Literal["json_schema"]
    json_schema: dict[str, Any] = Field(alias="schema")


class NoPII(_Check):
    type: Literal["no_pii"]
    kinds: list[Literal["email", "phone", "card"]] = Field(
        default_factory=lambda: ["email", "phone", "card"]
    )


class NumberBound(_Check):
    type: Literal["number"]
    pattern: str = r"(-?\d+(?:[.,]\d+)*)"
    min: float | None = None
    max: float | None = None


class PythonCheck(_Check):
    type: Literal["python"]
    function: str


CheckSpec = Annotated[
    Contains | IsJson | JsonSchema | NoPII | NumberBound | PythonCheck, Field(discriminator="type")
]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DIGIT_RUN = re.compile(r"\+?\d[\d\s().-]{6,}\d")


def luhn_ok(digits: str) -> bool:
    """Luhn checksum: double every second digit from the right, subtract 9 above 9,
    and the sum must be a multiple of 10."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


def find_pii(text: str, kinds: list[str]) -> list[str]:
    """Problems naming each kind of PII found (the value itself is not echoed in full)."""
    found = []
    if "email" in kinds:
        found += [f"e-mail address {_mask(m)}" for m in _EMAIL.findall(text)]
    for run in _DIGIT_RUN.findall(text):
        digits = re.sub(r"\D", "", run)
        if "card" in kinds and 13 <= len(digits) <= 19 and luhn_ok(digits):
            found.append(f"card number {_mask(digits)}")
        elif "phone" in kinds and 9 <= len(digits) <= 15 and re.search(r"[\s().+-]", run.strip()):
            found.append(f"phone number {_mask(digits)}")
    return found


def _mask(value: str) -> str:
    return value[:2] + "…" + value[-2:] if len(value) > 4 else "…"


def _parse_number(raw: str) -> float | None:
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None


def load_function(spec: str) -> Callable[..., Any]:
    """Import ``package.module:function``, or raise an InputError that names it."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"check function {spec!r} must look like package.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import {module_name!r} for check {spec!r}: {exc}") from None
    func = getattr(module, attr, None)
    if not callable(func):
        raise InputError(f"{spec!r}: {module_name} has no function {attr!r}")
    return func


def run_check(check: Any, answer: str, case: Any = None) -> list[str]:
    """Problems the check finds in the answer; [] is a pass."""
    label = check.name or check.type
    if isinstance(check, Contains):
        if check.regex:
            hit = re.search(check.value, answer, re.I) is not None
        else:
            hit = check.value.lower() in answer.lower()
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

            errors = sorted(
                jsonschema.Draft202012Validator(check.json_schema).iter_errors(data),
                key=lambda e: list(e.path),
            )
            return [
                f"{label}: {'/'.join(map(str, e.path)) or '(root)'}: {e.message}"
                for e in errors[:3]
            ]
        return []
    if isinstance(check, NoPII):
        return [f"{label}: {p}" for p in find_pii(answer, check.kinds)]
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
        verdict = load_function(check.function)(answer, case)
        if isinstance(verdict, bool):
            return [] if verdict else [f"{label}: {check.function} returned False"]
        return [f"{label}: {p}" for p in verdict or []]
    raise TypeError(f"unknown check {check!r}")  # pragma: no cover
