"""The checks a golden set or project declares (``"checks"`` per case, ``[[checks]]`` for
all), as records: each kind's settings, validated when the golden set or config is read (a
regular expression compiles, a schema is a schema, a function names ``module:function``).
Running them is ``ragrail.scoring.checks``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


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


PIIKind = Literal["email", "phone", "card", "iban", "id"]
# no_pii's default: all ("id": a national identity number, ragrail.text.pii_detect)
PII_KINDS: tuple[PIIKind, ...] = ("email", "phone", "card", "iban", "id")


class NoPII(_Check):
    type: Literal["no_pii"]
    kinds: list[PIIKind] = Field(default_factory=lambda: list(PII_KINDS), min_length=1)
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
