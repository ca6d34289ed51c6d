"""What a system under test returns for a question: an answer and its retrieved
contexts, validated strictly, and the trace it becomes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from ragrail.errors import InputError
from ragrail.jsonio import scrub_surrogates
from ragrail.records.case import Case
from ragrail.records.results import Trace

DEFAULT_TIMEOUT = 60.0  # seconds per question for a Python or HTTP system


class OutputContext(BaseModel):
    # allow_inf_nan=False: a NaN or infinite score (from a file, a reply or a Python
    # target) is refused here, naming the field, before it reaches any total
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    source: str | None = None
    text: str
    score: float | None = None


class OutputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    escalated: StrictBool | None = None  # the system handed the question to a person
    error: str | None = None
    contexts: list[OutputContext] = Field(default_factory=list)


def record_to_trace(
    case: Case | str,
    record: OutputRecord,
    latency_ms: float = 0.0,
    shared: dict[str, str] | None = None,
) -> Trace:
    """The trace of a validated record for ``case`` (a case, or its id).

    ``shared`` maps each text to one copy of it: the same chunk retrieved for many
    questions is then held once, not once per question.
    """
    texts = {} if shared is None else shared
    retrieved = [
        {
            "id": texts.setdefault(c.id, c.id),
            "source": texts.setdefault(src := c.source or c.id.split("#")[0], src),
            "rank": rank,
            "score": c.score if c.score is not None else 0.0,
            "text": texts.setdefault(c.text, c.text),
        }
        for rank, c in enumerate(record.contexts, start=1)
    ]
    # one validation call for the trace and its chunks: building each chunk apart
    # cost more than reading the line
    return Trace.model_validate(
        {
            "case_id": case if isinstance(case, str) else case.id,
            "retrieved": retrieved,
            "answer": record.answer,
            "escalated": record.escalated,
            "error": record.error,
            "latency_ms": latency_ms,
        }
    )


def parse_output(data: object, target: str) -> OutputRecord:
    """Validate what a user's system returned: {answer, contexts: [{id, source, text, score}]},
    and optionally ``escalated`` (true/false: it handed the question to a person)."""
    if not isinstance(data, dict):
        raise InputError(
            f"{target} returned {type(data).__name__}; expected an object with "
            "'answer' and 'contexts' ([{id, source, text, score}])"
        )
    try:
        # a lone surrogate (from a "\\ud800" in a reply) is kept as U+FFFD: as such
        # it could never be saved in the results, the history or a baseline
        return OutputRecord.model_validate(scrub_surrogates(data))
    except ValidationError as exc:
        raise InputError(f"{target} returned an invalid {invalid_field(exc)}") from None
    except Exception as exc:  # a dict subclass whose own methods raise while it is read
        from ragrail.crash import one_line, safe_str

        raise InputError(
            f"{target} returned a {type(data).__name__} that raised "
            f"{type(exc).__name__} when read: {one_line(safe_str(exc))}"
        ) from None


def invalid_field(exc: ValidationError) -> str:
    """``'contexts.0.score': Input should be a finite number (got nan)``."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"])
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, float | int) and not isinstance(got, bool) else ""
    return f"{field!r}: {err['msg']}{shown}"
