"""What a system under test returns for a question: an answer and its retrieved
contexts, validated strictly, and the trace it becomes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
)

from ragrail.errors import InputError
from ragrail.jsonio import scrub_surrogates
from ragrail.records.case import Case
from ragrail.records.results import RetrievedChunk, Setting, Trace
from ragrail.text.names import DocumentNames

DEFAULT_TIMEOUT = 60.0  # seconds per question for a Python or HTTP system


class OutputContext(BaseModel):
    # allow_inf_nan=False: a NaN or infinite score (from a file, a reply or a Python
    # target) is refused here, naming the field, before it reaches any total
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    source: str | None = None
    text: str
    score: float | None = None


class OutputStage(BaseModel):
    """One step of the system's retrieval: its name and what it kept, in rank order."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1)
    contexts: list[OutputContext] = Field(default_factory=list)


def _distinct_names(stages: list[OutputStage] | None) -> list[OutputStage] | None:
    names = [s.name for s in stages or []]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:  # totals and the diff are per stage name
        raise ValueError(f"stage {twice!r} is named twice; each stage needs its own name")
    return stages


class OutputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    escalated: StrictBool | None = None  # the system handed the question to a person
    error: str | None = None
    contexts: list[OutputContext] = Field(default_factory=list)
    # the ids of the contexts the answer used (LlamaIndex's source_nodes, a LangChain
    # chain's sources): scored as citations, for an answer that writes no [id] markers
    cited: list[str] | None = None
    # what the system says about itself: its index's size in chunks, its own settings
    index_size: int | None = Field(default=None, ge=0, le=2**53, strict=True)
    settings: dict[str, Setting] | None = None
    # the retrieval pipeline's steps in order ([{name, contexts}]), each scored apart;
    # with no ``contexts``, the last stage's are the answer's
    stages: Annotated[list[OutputStage] | None, AfterValidator(_distinct_names)] = None


# a setting whose name says it is a credential: its value is never kept or shown
_SECRET_NAME = re.compile(r"key|token|secret|passw|credential|auth", re.IGNORECASE)
MASK = "***"


def masked(settings: dict[str, Setting] | None) -> dict[str, Setting] | None:
    """``settings`` with the value of each credential-named one (``api_key``,
    ``auth_token``, ``password``...) replaced by ``***``: a system's settings land in the
    results, the baseline (which is committed) and the reports."""
    if not settings:
        return settings
    return {k: MASK if _SECRET_NAME.search(k) else v for k, v in settings.items()}


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

    def chunks(contexts: list[OutputContext]) -> list[dict[str, object]]:
        return [
            {
                "id": texts.setdefault(c.id, c.id),
                "source": texts.setdefault(src := c.source or c.id.split("#")[0], src),
                "rank": rank,
                "score": c.score if c.score is not None else 0.0,
                "text": texts.setdefault(c.text, c.text),
            }
            for rank, c in enumerate(contexts, start=1)
        ]

    stages = record.stages or []
    contexts = record.contexts
    if stages and "contexts" not in record.model_fields_set:
        contexts = stages[-1].contexts  # the last step's contexts are what the answer got
    # one validation call for the trace and its chunks: building each chunk apart
    # cost more than reading the line
    return Trace.model_validate(
        {
            "case_id": case if isinstance(case, str) else case.id,
            "retrieved": chunks(contexts),
            "stages": [{"name": s.name, "contexts": chunks(s.contexts)} for s in stages],
            "answer": record.answer,
            "escalated": record.escalated,
            "cited": record.cited,
            "error": record.error,
            "latency_ms": latency_ms,
            "index_size": record.index_size,
            "settings": masked(record.settings),
        }
    )


def named_sources(traces: Sequence[Trace], names: DocumentNames) -> list[Trace]:
    """The traces with each context's source read as the document it names
    (:class:`ragrail.text.names.DocumentNames`: by name, file name, path or URL, in any
    case), else as the one its id names; a context naming none keeps its source. A
    ``cited`` source (a file name, a path) is read as the ids of that document's contexts
    (:func:`_cited_ids`). A trace whose sources all stay is returned as it is, not copied."""
    if not len(names):
        return list(traces)
    seen: dict[str, str | None] = {}  # each distinct source is read once per call

    def read(text: str) -> str | None:
        if text not in seen:
            seen[text] = names.find(text)
        return seen[text]

    def renamed(chunks: list[RetrievedChunk]) -> list[RetrievedChunk] | None:
        named = [c.source if c.source in names else read(c.source) or read(c.id) for c in chunks]
        if all(n is None or n == c.source for n, c in zip(named, chunks, strict=True)):
            return None
        return [
            c if n is None or n == c.source else c.model_copy(update={"source": n})
            for n, c in zip(named, chunks, strict=True)
        ]

    out = []
    for trace in traces:
        update: dict[str, object] = {}
        retrieved = renamed(trace.retrieved)
        if retrieved is not None:
            update["retrieved"] = retrieved
        final = trace.retrieved if retrieved is None else retrieved
        cited = _cited_ids(trace.cited, trace.retrieved, final, read)
        if cited is not trace.cited:
            update["cited"] = cited
        samples = [(s, _cited_ids(s.cited, trace.retrieved, final, read)) for s in trace.samples]
        if any(c is not s.cited for s, c in samples):
            update["samples"] = [s.model_copy(update={"cited": c}) for s, c in samples]
        stages = [(s, renamed(s.contexts)) for s in trace.stages]
        if any(r is not None for _, r in stages):
            update["stages"] = [
                s if r is None else s.model_copy(update={"contexts": r}) for s, r in stages
            ]
        out.append(trace.model_copy(update=update) if update else trace)
    return out


def _cited_ids(
    cited: list[str] | None,
    given: list[RetrievedChunk],
    named: list[RetrievedChunk],
    read: Callable[[str], str | None],
) -> list[str] | None:
    """``cited`` with each entry that is no given context's id but a given context's
    source, as returned or as the document it names, read as the ids of the contexts of
    that document: a LangChain chain's sources are file names or paths, not ids. ``given``:
    the contexts as returned, ``named``: the same with their sources read as documents.
    The same list when nothing is read (most runs: ids are cited)."""
    if not cited:
        return cited
    ids = {c.id for c in given}
    if all(x in ids for x in cited):
        return cited
    out: list[str] = []
    for x in cited:
        doc = None if x in ids else read(x)
        same = [] if x in ids else [
            c.id for c, n in zip(given, named, strict=True)
            if c.source == x or (doc is not None and n.source == doc)
        ]  # fmt: skip
        out.extend(same or [x])  # an entry naming nothing given stays: "never given"
    return list(dict.fromkeys(out))


def unknown_sources(traces: Iterable[Trace], names: DocumentNames, compared: str) -> str | None:
    """One line when most contexts returned (more than half, counted over every question)
    name no document of ``names`` after :func:`named_sources`, naming three of them and
    ``compared`` (what the names are: "the 37 documents in docs/"); None otherwise. Their
    article scores and citations would read 0 with no other sign of why."""
    if not len(names):  # nothing to compare with: no documents and no sources
        return None
    total = 0
    unknown: dict[str, int] = {}  # each source that names no document, and its contexts
    for trace in traces:
        for c in trace.retrieved:
            total += 1
            if c.source not in names:
                unknown[c.source] = unknown.get(c.source, 0) + 1
    lost = sum(unknown.values())
    if not total or lost * 2 <= total:
        return None
    shown = ", ".join(repr(s) for s in list(unknown)[:3])
    known = ", ".join(repr(n) for n in names.names[:3])
    more = ", ..." if len(names) > 3 else ""
    return (
        f"{lost} of the {total} contexts returned name no document ({shown}): their sources "
        f"and ids were compared with the names of {compared} ({known}{more}), by name, file "
        "name, path or URL; give each context the document it came from as its source, or "
        "retrieval and citations score 0"
    )


def parse_output(data: object, target: str) -> OutputRecord:
    """Validate what a user's system returned: {answer, contexts: [{id, source, text, score}]},
    and optionally ``escalated`` (true/false: it handed the question to a person), ``cited``
    (the ids of the contexts the answer used), ``index_size`` (the chunks in its index) and
    ``settings`` (its own, a flat object of names to numbers, strings or true/false) and
    ``stages`` (its retrieval's steps in order: [{name, contexts}])."""
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
    return f"{field!r}: {str(err['msg']).removeprefix('Value error, ')}{shown}"


def warn_unknown_sources(traces: Iterable[Trace], names: DocumentNames, compared: str) -> None:
    """A warning when most contexts returned name no document (:func:`unknown_sources`):
    never a silent 0% hit rate."""
    import warnings

    warning = unknown_sources(traces, names, compared)
    if warning is not None:
        warnings.warn(warning, stacklevel=3)
