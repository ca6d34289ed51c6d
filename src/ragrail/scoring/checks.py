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
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragrail.errors import InputError


class CheckError(Exception):
    """A check could not give a verdict on an answer (its function raised): the
    question's error, not a pass and not a fail."""


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    name: str | None = None  # shown in problems; defaults to the kind

    @property
    def label(self) -> str:
        return self.name or self.type  # type: ignore[attr-defined]


def _compile(pattern: str, what: str, label: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"check {label!r}: invalid regex in {what} {pattern!r}: {exc}") from None


class Contains(_Check):
    type: Literal["contains", "not_contains"]
    value: str
    regex: bool = False

    @model_validator(mode="after")
    def _regex_compiles(self) -> Contains:
        if self.regex:
            _compile(self.value, "value", self.label, re.I)
        return self


class IsJson(_Check):
    type: Literal["json"]


class JsonSchema(_Check):
    type: Literal["json_schema"]
    json_schema: dict[str, Any] = Field(alias="schema")

    @model_validator(mode="after")
    def _is_a_schema(self) -> JsonSchema:
        import jsonschema

        try:
            jsonschema.Draft202012Validator.check_schema(self.json_schema)
        except jsonschema.SchemaError as exc:
            at = "/".join(map(str, exc.path))
            raise ValueError(
                f"check {self.label!r}: not a valid JSON schema"
                f"{f' at {at}' if at else ''}: {exc.message}"
            ) from None
        return self


class NoPII(_Check):
    type: Literal["no_pii"]
    kinds: list[Literal["email", "phone", "card", "iban"]] = Field(
        default_factory=lambda: ["email", "phone", "card", "iban"], min_length=1
    )
    # Where numbers written without a country code are dialled ("US", "IN"); with
    # None only numbers written with one (+44 20 7946 0958) can be told from other
    # digits, so those are the only phone numbers found.
    region: str | None = None

    @model_validator(mode="after")
    def _known_region(self) -> NoPII:
        if self.region is not None:
            import phonenumbers

            if self.region.upper() not in phonenumbers.SUPPORTED_REGIONS:
                raise ValueError(
                    f"check {self.label!r}: region {self.region!r} is not a country code "
                    'phone numbers are known for (two letters, e.g. "US", "IN", "GB")'
                )
        return self


class NumberBound(_Check):
    type: Literal["number"]
    pattern: str = r"(-?\d+(?:[.,]\d+)*)"
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _pattern_compiles(self) -> NumberBound:
        _compile(self.pattern, "pattern", self.label)
        return self


class PythonCheck(_Check):
    type: Literal["python"]
    function: str

    @model_validator(mode="after")
    def _looks_like_a_target(self) -> PythonCheck:
        module, _, attr = self.function.partition(":")
        if not module or not attr:
            raise ValueError(
                f"check {self.label!r}: function {self.function!r} must look like "
                "package.module:function"
            )
        return self


CheckSpec = Annotated[
    Contains | IsJson | JsonSchema | NoPII | NumberBound | PythonCheck, Field(discriminator="type")
]

CHECK_TYPES = frozenset(
    t
    for model in (Contains, IsJson, JsonSchema, NoPII, NumberBound, PythonCheck)
    for t in model.model_fields["type"].annotation.__args__  # type: ignore[union-attr]
)


def error_field(loc: Sequence[int | str]) -> str:
    """A validation error's location as a dotted field, without the check type
    pydantic adds after a check's index (``checks.0.contains.value`` reads
    ``checks.0.value``)."""
    parts = [
        str(part)
        for i, part in enumerate(loc)
        if not (
            part in CHECK_TYPES
            and i >= 2
            and loc[i - 2] == "checks"
            and isinstance(loc[i - 1], int)
        )
    ]
    return ".".join(parts)


def error_message(err: Any) -> str:
    """A pydantic error's message without its "Value error, " prefix."""
    return str(err["msg"]).removeprefix("Value error, ")


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A run of digits joined by single spaces or hyphens, not part of a decimal, a date
# (15.01.2024, 01/15/2024) or a time. Possessive, so the whole run is one number or
# none: no card is read out of the middle of a longer run.
_NUMBER_RUN = re.compile(r"(?<![\d.,/+-])\d++(?:[ -]\d++)*+(?![\w]|[.,:/]\d)")
# An IBAN in print (DE89 3704 0044 ...) or electronic form, ASCII upper case
_IBAN_RUN = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,32}(?![A-Z0-9])")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# A label that makes the number after it an identifier, not a card or a phone:
# "Order #4111111111111111", "ISBN 978-3-16-148410-0", "tracking no. 9876543210".
_ID_LABEL = re.compile(
    r"\b(?:order|invoice|tracking|ticket|booking|confirmation|reference|ref|transaction|"
    r"shipment|parcel|consignment|isbn(?:-1[03])?|issn|awb|sku|serial|case|po|pnr|"
    r"receipt|id)\b\W{0,3}(?:(?:number|num|no)\b\W{0,3})?\Z",
    re.I,
)
# ISO 13616 (SWIFT IBAN registry): each country's IBAN length.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    "YE": 30,
}  # fmt: skip


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


def iban_ok(iban: str) -> bool:
    """ISO 13616: a known country, its length, and mod-97 of the rearranged number is 1."""
    iban = iban.replace(" ", "").upper()
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    if not iban.isascii() or not iban.isalnum():
        return False
    return int("".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])) % 97 == 1


def isbn13_ok(digits: str) -> bool:
    """An ISBN-13 (EAN Bookland): 978/979, digits weighted 1, 3, 1, ... sum to 0 mod 10."""
    if len(digits) != 13 or digits[:3] not in ("978", "979"):
        return False
    return sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def card_shaped(run: str) -> bool:
    """13-19 digits written as a card is: all together, in fours (the last group 1-4
    digits) or as 4-6-5 / 4-6-4 (American Express, Diners), one kind of separator."""
    digits = re.sub(r"\D", "", run)
    if not 13 <= len(digits) <= 19:
        return False
    if len({ch for ch in run if not ch.isdigit()}) > 1:
        return False
    groups = [len(g) for g in re.split(r"[ -]", run)]
    if len(groups) == 1:
        return True
    in_fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
    return in_fours or groups in ([4, 6, 5], [4, 6, 4])


def _timestamp(digits: str) -> bool:
    """YYYYMMDDhhmm[ss...]: a compact timestamp, never a card (no card starts 19 or 20)."""
    return (
        digits[:2] in ("19", "20")
        and 1 <= int(digits[4:6]) <= 12
        and 1 <= int(digits[6:8]) <= 31
        and int(digits[8:10]) <= 23
        and int(digits[10:12]) <= 59
    )


def _labelled_id(text: str, start: int) -> bool:
    """Whether the number at ``start`` follows a label such as "Order #" or "ISBN"."""
    return _ID_LABEL.search(text, max(0, start - 40), start) is not None


def find_pii(text: str, kinds: list[str], region: str | None = None) -> list[str]:
    """Problems naming each kind of PII found (the value itself is not echoed in full).

    Phone numbers are those ``phonenumbers`` finds valid: written with their country
    code (``+44 20 7946 0958``), or, with ``region`` (``"US"``), also as dialled in
    that country. A card number is 13-19 digits shaped like one that pass the Luhn
    check; an IBAN passes ISO 13616's length and mod-97 checks. Dates, times, ISBNs
    and numbers labelled as an order, invoice or other reference are never flagged.
    """
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []  # spans already reported, so no number counts twice

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    if "email" in kinds:
        found += [(m.start(), f"e-mail address {_mask(m.group(0))}") for m in _EMAIL.finditer(text)]
    upper = text.translate(_ASCII_UPPER)  # same length: offsets still hold
    for m in _IBAN_RUN.finditer(upper):
        iban = _iban_at(m.group(0))
        if iban:
            taken.append((m.start(), m.start() + len(iban)))
            if "iban" in kinds:
                found.append((m.start(), f"IBAN {_mask(iban.replace(' ', ''))}"))
    for m in _NUMBER_RUN.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if (
            free(m.start(), m.end())
            and not (m.start() and text[m.start() - 1].isalpha())  # SKU4111...: a code
            and card_shaped(m.group(0))
            and luhn_ok(digits)
            and not isbn13_ok(digits)
            and not (len(digits) >= 12 and m.group(0).isdigit() and _timestamp(digits))
            and not _labelled_id(text, m.start())
        ):
            taken.append(m.span())
            if "card" in kinds:
                found.append((m.start(), f"card number {_mask(digits)}"))
    if "phone" in kinds:
        import phonenumbers

        for pm in phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        ):
            if free(pm.start, pm.end) and not _labelled_id(text, pm.start):
                digits = re.sub(r"\D", "", pm.raw_string)
                found.append((pm.start, f"phone number {_mask(digits)}"))
    return [problem for _, problem in sorted(found, key=lambda f: f[0])]


def _iban_at(run: str) -> str | None:
    """The IBAN a candidate run starts with, ending at a group boundary, if any (a run
    can take in a following upper-case word: "DE89 3704 0044 0532 0130 00 OK")."""
    length = IBAN_LENGTHS.get(run[:2])
    if length is None:
        return None
    count = 0
    for i, ch in enumerate(run):
        count += ch != " "
        if count == length:
            head = run[: i + 1]
            at_boundary = i + 1 == len(run) or run[i + 1] == " "
            return head if at_boundary and iban_ok(head) else None
    return None


def _mask(value: str) -> str:
    return value[:2] + "…" + value[-2:] if len(value) > 4 else "…"


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
    if any(Path(home).is_relative_to(r) for r in _PROJECT_ROOTS - {folder}):
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
            from ragrail.scoring.matching import contains

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
