"""OpenInference traces (Arize Phoenix, any OpenTelemetry exporter): a run to score.

Read, one span per JSON Lines line or as a JSON array:

- Phoenix spans (``spans_to_jsonl``, the REST API's ``{"data": [...]}``): ``name``,
  ``context: {trace_id, span_id}``, ``parent_id``, ``span_kind``, ``start_time``,
  ``status_code``, ``attributes`` (nested, ``{"input": {"value": ...}}``, or flat,
  ``{"input.value": ...}``);
- a Phoenix spans DataFrame written with ``to_json(orient="records", lines=True)``:
  ``context.trace_id``, ``attributes.input.value``, ``attributes.retrieval.documents``;
- OTLP JSON, as the OpenTelemetry Collector's file exporter writes it (one
  ``{"resourceSpans": [...]}`` a line): ``traceId``, ``spanId``, ``parentSpanId``,
  ``attributes: [{"key": "input.value", "value": {"stringValue": ...}}]``.

Spans are grouped by trace id; each trace is one question. The question is the
root span's ``input.value`` (a JSON input is read for its ``question``, ``query``
or ``input``), else the first ``RETRIEVER`` span's; the answer is the root's
``output.value``, else the last ``LLM`` span's; the passages are the last
``RERANKER``'s ``reranker.output_documents``, else every ``RETRIEVER``'s
``retrieval.documents`` in start order (``document.content``, ``document.id``,
``document.score``; a ``file_name``, ``source`` or ``url`` in
``document.metadata`` names the document when the text alone does not; a passage
keeps its ``document.id``, which the app's answers may cite). A root
span with status ``ERROR`` makes the question an error. Traces hold no labels:
only an outputs file is written (records keyed by trace id, with the question,
so a golden set's cases find theirs by question).
"""

from __future__ import annotations

import json
import math
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.interop.rows import RawCase, RawContext, RawImport, read_items

QUESTION_KEYS = ("question", "query", "input", "user_input", "text", "message", "content")
ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
HINT_KEYS = ("file_name", "filename", "file_path", "source", "url", "path", "document_name")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    kind: str
    start: float
    order: int
    attributes: dict[str, Any]  # flat: "retrieval.documents.0.document.content"
    error: str | None
    name: str
    where: str


@dataclass
class Trace:
    spans: list[Span] = field(default_factory=list)


def read(path: Path) -> RawImport:
    """An OpenInference trace export as raw cases (a run, no labels)."""
    items = read_items(path, "trace file", list_keys=("data", "spans"))
    spans: list[Span] = []
    for item, where in items:
        spans.extend(_spans(item, where, len(spans)))
    traces: dict[str, Trace] = {}
    for span in spans:
        traces.setdefault(span.trace_id, Trace()).spans.append(span)
    cases, skipped = [], 0
    for trace_id, trace in traces.items():
        case = _case(trace_id, trace)
        if case is None:
            skipped += 1
        else:
            cases.append(case)
    notes = []
    if skipped:
        notes.append(
            f"{skipped} trace(s) skipped: no question (no input.value on the root span or "
            "a RETRIEVER span)"
        )
    if not cases and spans:
        raise InputError(
            "no trace has a question (input.value on its root or retriever span)", str(path)
        )
    return RawImport(
        path=path, label="OpenInference traces", cases=cases, notes=notes, labels=False
    )


# ---------------------------------------------------------------- spans in any of the shapes


def _spans(item: Any, where: str, order: int) -> list[Span]:
    if not isinstance(item, dict):
        raise InputError("each line must be a span or an OTLP export object", where)
    if "resourceSpans" in item:
        return _otlp(item, where, order)
    context = item.get("context")
    if not isinstance(context, dict):
        context = {}
    trace_id = context.get("trace_id", item.get("context.trace_id", item.get("trace_id")))
    span_id = context.get("span_id", item.get("context.span_id", item.get("span_id")))
    if not isinstance(trace_id, str) or not isinstance(span_id, str):
        raise InputError(
            "not a span: expected context.trace_id and context.span_id (Phoenix), or an "
            'OTLP export ({"resourceSpans": [...]})',
            where,
        )
    attributes = flatten(item.get("attributes") or {}, where)
    for key, value in item.items():
        if key.startswith("attributes."):
            attributes.update(flatten({key.removeprefix("attributes."): value}, where))
    kind = attributes.get("openinference.span.kind") or item.get("span_kind") or ""
    status = str(item.get("status_code") or "").upper()
    error = str(item.get("status_message") or "error") if status == "ERROR" else None
    parent = item.get("parent_id")
    return [
        Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=parent if isinstance(parent, str) and parent else None,
            kind=str(kind).upper(),
            start=_time(item.get("start_time")),
            order=order,
            attributes=attributes,
            error=error,
            name=str(item.get("name") or ""),
            where=where,
        )
    ]


def _otlp(item: dict[str, Any], where: str, order: int) -> list[Span]:
    """Spans of one OTLP JSON export object (``resourceSpans`` > ``scopeSpans`` > ``spans``)."""
    out: list[Span] = []
    for resource in _list(item.get("resourceSpans"), "resourceSpans", where):
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans"))
        for scope in _list(scopes, "scopeSpans", where):
            for span in _list(scope.get("spans"), "spans", where):
                trace_id, span_id = span.get("traceId"), span.get("spanId")
                if not isinstance(trace_id, str) or not isinstance(span_id, str):
                    raise InputError("an OTLP span needs traceId and spanId", where)
                attributes: dict[str, Any] = {}
                for kv in _list(span.get("attributes"), "attributes", where):
                    if isinstance(kv.get("key"), str):
                        attributes[kv["key"]] = any_value(kv.get("value"))
                status = span.get("status")
                if not isinstance(status, dict):
                    status = {}
                code = status.get("code")
                failed = code in (2, "STATUS_CODE_ERROR", "ERROR")
                parent = span.get("parentSpanId")
                out.append(
                    Span(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_id=parent if isinstance(parent, str) and parent else None,
                        kind=str(attributes.get("openinference.span.kind") or "").upper(),
                        start=_time(span.get("startTimeUnixNano")),
                        order=order + len(out),
                        attributes=flatten(attributes, where),
                        error=str(status.get("message") or "error") if failed else None,
                        name=str(span.get("name") or ""),
                        where=where,
                    )
                )
    return out


def _list(value: Any, key: str, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"OTLP field {key!r} must be a list of objects", where)
    return value


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": "x"}``, ``{"intValue": "3"}``, arrays,
    key-value lists) as a plain value."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values", [])
        return {p.get("key"): any_value(p.get("value")) for p in pairs if isinstance(p, dict)}
    return None


def flatten(value: Any, where: str, prefix: str = "") -> dict[str, Any]:
    """Nested attributes as OpenInference's flat keys: ``{"retrieval": {"documents":
    [{"document": {"content": "x"}}]}}`` is ``retrieval.documents.0.document.content``.
    A list of plain values stays one value."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(flatten(item, where, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            out.update(flatten(item, where, f"{prefix}.{i}" if prefix else str(i)))
    elif prefix:
        out[prefix] = value
    return out


def _time(value: Any) -> float:
    """A start time as a number to sort by: OTLP nanoseconds, an ISO time (Phoenix),
    pandas' epoch milliseconds; 0 when missing (file order then decides)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) / 1e3 if value < 1e14 else float(value) / 1e9
    if isinstance(value, str):
        if value.isdigit():
            return int(value) / 1e9
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


# ---------------------------------------------------------------- a trace as a case


def _case(trace_id: str, trace: Trace) -> RawCase | None:
    spans = sorted(trace.spans, key=lambda s: (s.start, s.order))
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in ids]
    root = roots[0] if roots else spans[0]
    retrievers = [s for s in spans if s.kind == "RETRIEVER"]
    question = _text(root, "input", QUESTION_KEYS)
    if question is None:
        question = next((q for s in retrievers if (q := _text(s, "input", QUESTION_KEYS))), None)
    if question is None or not question.strip():
        return None
    answer = None if root.kind in ("RETRIEVER", "RERANKER") else _text(root, "output", ANSWER_KEYS)
    if answer is None:
        answer = next(
            (a for s in reversed(spans) if s.kind == "LLM" and (a := _llm_output(s))), None
        )
    rerankers = [s for s in spans if s.kind == "RERANKER"]
    if rerankers:
        contexts = _documents(rerankers[-1], "reranker.output_documents")
    else:
        contexts = [c for s in retrievers for c in _documents(s, "retrieval.documents")]
    return RawCase(
        where=min(trace.spans, key=lambda s: s.order).where,
        question=question,
        id=trace_id,
        answer=answer,
        error=root.error,
        contexts=contexts if (retrievers or rerankers) else None,
    )


def _text(span: Span, which: str, keys: tuple[str, ...]) -> str | None:
    """A span's ``input.value`` or ``output.value`` as text; a JSON value is read for
    one of ``keys`` (or its only text field)."""
    value = span.attributes.get(f"{which}.value")
    if isinstance(value, dict):
        return _pick(value, keys)
    if not isinstance(value, str):
        return None
    mime = str(span.attributes.get(f"{which}.mime_type") or "")
    stripped = value.strip()
    if mime == "application/json" or stripped.startswith("{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return value
        if isinstance(parsed, dict):
            return _pick(parsed, keys)
        if isinstance(parsed, str):
            return parsed
    return value


def _pick(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if isinstance(data.get(key), str):
            return data[key]
    texts = [v for v in data.values() if isinstance(v, str)]
    return texts[0] if len(texts) == 1 else None


def _llm_output(span: Span) -> str | None:
    text = _text(span, "output", ANSWER_KEYS)
    if text is not None:
        return text
    n = 0
    last = None
    while f"llm.output_messages.{n}.message.content" in span.attributes:
        last = span.attributes[f"llm.output_messages.{n}.message.content"]
        n += 1
    return last if isinstance(last, str) else None


def _documents(span: Span, key: str) -> list[RawContext]:
    """The documents of a retriever (or reranker) span, in their order."""
    attributes = _document_attributes(span, key)
    out = []
    n = 0
    while any(k.startswith(f"{key}.{n}.") for k in attributes):
        doc = f"{key}.{n}.document"
        content = attributes.get(f"{doc}.content")
        if isinstance(content, str) and content.strip():
            doc_id = attributes.get(f"{doc}.id")
            out.append(
                RawContext(
                    text=content,
                    id=str(doc_id) if doc_id is not None and str(doc_id).strip() else None,
                    score=_score(attributes.get(f"{doc}.score")),
                    hint=_hint(attributes, doc) or (str(doc_id) if doc_id else None),
                )
            )
        n += 1
    return out


def _document_attributes(span: Span, key: str) -> dict[str, Any]:
    """The span's attributes with its documents under ``key`` as flat keys
    (``key.0.document.content``). A list given as JSON text (as a table export writes
    it) is read; any other shape is an InputError naming the span's line and the field:
    read as no documents, the retrieval was silently lost."""
    shape = '[{"document": {"content": ...}}, ...]'
    raw = span.attributes.get(key)
    if isinstance(raw, str) and raw.strip().startswith("["):
        with suppress(ValueError, RecursionError):
            raw = json.loads(raw)
    if isinstance(raw, list) and all(isinstance(d, dict) for d in raw):
        rest = {k: v for k, v in span.attributes.items() if k != key}
        return {**rest, **flatten(raw, span.where, key)}
    if key in span.attributes and raw is not None:
        raise InputError(
            f"field {key!r} must be a list of documents ({shape}), not {_kind(raw)}",
            span.where,
        )
    odd = next(
        (k for k in span.attributes if k.startswith(f"{key}.") and not _indexed(k, key)), None
    )
    if odd is not None:
        raise InputError(
            f"field {key!r} must be a list of documents ({shape}); it is an object ({odd!r})",
            span.where,
        )
    return span.attributes


def _indexed(flat_key: str, key: str) -> bool:
    return flat_key.removeprefix(f"{key}.").partition(".")[0].isdigit()


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    return "a list of plain values" if isinstance(value, list) else type(value).__name__


def _score(value: Any) -> float | None:
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return score if math.isfinite(score) else None


def _hint(attributes: dict[str, Any], doc: str) -> str | None:
    """A document name from ``document.metadata`` (a JSON string, or flattened keys)."""
    meta = attributes.get(f"{doc}.metadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if not isinstance(meta, dict):
        meta = {
            k.removeprefix(f"{doc}.metadata."): v
            for k, v in attributes.items()
            if k.startswith(f"{doc}.metadata.")
        }
    for key in HINT_KEYS:
        if isinstance(meta.get(key), str) and meta[key].strip():
            return meta[key]
    return None
