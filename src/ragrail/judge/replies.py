"""The JSON a judge must reply with, and how a reply is read (strictly, with one
line of reason when it is not what was asked for)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ClaimVerdictReply(_Reply):
    claim: str
    supported: bool
    chunk: str | None = None


class ClaimsReply(_Reply):
    claims: list[ClaimVerdictReply]


class CriterionReply(_Reply):
    criterion: str
    passed: bool | None = Field(default=None, alias="pass")
    score: int | None = Field(default=None, ge=1, le=5)
    reason: str = ""


class RubricReply(_Reply):
    verdicts: list[CriterionReply]


class PairReply(_Reply):
    better: Literal["1", "2", "tie"]
    reason: str = ""


_JSON_BLOCK = re.compile(r"\{.*\}", re.S)
Reply = TypeVar("Reply", bound=BaseModel)  # the schema a reply is read with


def parse_reply(text: str | None, schema: type[Reply]) -> Reply:
    """The JSON object in a reply (code fences and prose around it are tolerated),
    validated against ``schema``; raises ValueError with a one-line reason."""
    m = _JSON_BLOCK.search(text or "")
    if m is None:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from None
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}") from None


def checker(
    schema: type[BaseModel], extra: Callable[[Any], str | None] | None = None
) -> Callable[[str], str | None]:
    """A reply check for the call layer: None when the reply parses (and ``extra`` finds
    nothing wrong), else the reason, sent back with the re-ask."""

    def check(text: str) -> str | None:
        try:
            reply = parse_reply(text, schema)
        except ValueError as exc:
            return str(exc)
        return extra(reply) if extra else None

    return check
