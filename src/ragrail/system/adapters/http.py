"""An HTTP endpoint as the system under test: one POST per question through the shared
call layer."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragrail.calls.urls import url_problem
from ragrail.errors import InputError
from ragrail.records.case import Case
from ragrail.records.results import Trace
from ragrail.system.adapters.records import OutputRecord, parse_output, record_to_trace
from ragrail.system.rounds import turns_of

if TYPE_CHECKING:
    from ragrail.project import SystemConfig

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, key: str) -> str:
    """Replace ``${VAR}`` with the environment's value; a missing variable is an error."""

    def sub(m: re.Match[str]) -> str:
        var = m.group(1)
        if var not in os.environ:
            raise InputError(f"system.headers.{key}: environment variable {var} is not set")
        return os.environ[var]

    return _ENV.sub(sub, value)


class HttpSystem:
    """A user's RAG service: one POST per question, through the shared call layer
    (concurrency, timeouts, retries with backoff). Replies are never cached: the
    point is to test the service as it is now."""

    name = "http"
    kind = "http endpoint"

    def __init__(self, cfg: SystemConfig) -> None:
        from ragrail.calls.providers import EndpointProvider

        if not cfg.url:
            raise InputError('[system] kind = "http" needs url = "http://..."')
        problem = url_problem(cfg.url)
        if problem is not None:  # checked here too for a config built in code
            raise InputError(f"system.url {problem}")
        self.cfg = cfg
        headers = {k: expand_env(v, k) for k, v in cfg.headers.items()}
        from_env = tuple(
            os.environ[m.group(1)] for v in cfg.headers.values() for m in _ENV.finditer(v)
        )
        self.provider = EndpointProvider(
            cfg.url,
            headers,
            cfg.body,
            cfg.question_field,
            cfg.timeout,
            from_env,
            messages=self._messages if cfg.messages_field else None,
        )

    def _messages(self, history: Sequence[tuple[str, str]]) -> tuple[str, Any]:
        """Where a turn of a conversation sends its earlier turns, and what: each
        ``{"question", "answer"}`` ("pairs"), or a user and an assistant message each
        ``{"role", "content"}`` ("chat"), in the order they were asked."""
        if self.cfg.messages_format == "chat":
            value: list[dict[str, str]] = []
            for question, answer in history:
                value.append({"role": "user", "content": question})
                value.append({"role": "assistant", "content": answer})
        else:
            value = [{"question": q, "answer": a} for q, a in history]
        return self.cfg.messages_field, value

    @property
    def label(self) -> str:
        return f"http endpoint {self.cfg.url}"

    def _parse(self, text: str) -> OutputRecord | str:
        """The reply as an output record, or why it is not one (that question's error).

        A reply that is not JSON, or lacks the answer or the passages, fails
        that question; a field of the wrong type is a configuration error.
        """
        from ragrail.calls.providers import get_path

        if not text.strip():
            return "the reply was empty, not JSON"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if text.lstrip()[:1] == "<":
                return "the reply is HTML, not JSON: is system.url the API endpoint, not a web page"
            return f"the reply is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        except RecursionError:
            return "the reply is JSON nested too deeply to read"
        c = self.cfg
        answer = _find(data, c.answer_field)
        if answer is _MISSING:
            return f"the reply has no {c.answer_field!r} (system.answer_field)"
        contexts = _find(data, c.contexts_field)
        stages = _find(data, c.stages_field) if c.stages_field else None
        if contexts is _MISSING and isinstance(stages, list) and stages:
            contexts = None  # the last stage's are the answer's (records.record_to_trace)
        elif contexts is _MISSING:
            return f"the reply has no {c.contexts_field!r} (system.contexts_field)"
        if contexts is not None and not isinstance(contexts, list):
            raise InputError(
                f"system.contexts_field {c.contexts_field!r} is not a list in the reply"
            )
        if answer is not None and not isinstance(answer, str):
            raise InputError(f"system.answer_field {c.answer_field!r} is not a string in the reply")
        escalated = _find(data, c.escalated_field) if c.escalated_field else None
        if escalated is _MISSING:
            escalated = None  # a reply that does not say it escalated
        elif escalated is not None and not isinstance(escalated, bool):
            raise InputError(
                f"system.escalated_field {c.escalated_field!r} is {_kind(escalated)} in the "
                'reply, not true/false (escalated_field = "" reads no such field)'
            )
        odd = next((i for i, x in enumerate(contexts or []) if not isinstance(x, dict)), None)
        if odd is not None and contexts is not None:
            # read as an object it would be an empty passage: retrieval silently lost
            raise InputError(
                f"system.contexts_field {c.contexts_field!r}: item {odd} of the reply's list "
                f"is {_kind(contexts[odd])}, not an object with "
                f"{c.context_text_field!r} (system.context_text_field)"
            )

        def passages(items: list[Any]) -> list[dict[str, Any]]:
            return [
                {
                    "id": str(get_path(x, c.context_id_field) or f"context#{i}"),
                    "source": get_path(x, c.context_source_field),
                    "text": str(get_path(x, c.context_text_field) or ""),
                    "score": get_path(x, c.context_score_field),
                }
                if isinstance(x, dict)
                else x  # refused by parse_output, naming the field
                for i, x in enumerate(items, start=1)
            ]

        record = {"id": "-", "answer": answer, "escalated": escalated, **self._about(data)}
        if contexts is not None:
            record["contexts"] = passages(contexts)
        if stages is not None and stages is not _MISSING:
            # each stage {name, contexts}, its passages read as the contexts' are
            record["stages"] = (
                [
                    {**st, "contexts": passages(st["contexts"])}
                    if isinstance(st, dict) and isinstance(st.get("contexts"), list)
                    else st
                    for st in stages
                ]
                if isinstance(stages, list)
                else stages
            )
        return parse_output(record, f"system.url {c.url}")

    def _about(self, data: Any) -> dict[str, Any]:
        """What the reply adds beyond the answer, where it says it: the contexts its answer
        used (``cited_field``: their ids), its index's size (``index_size_field``) and its
        own settings (``settings_field``). Absent or null: not said; a field path of ""
        reads nothing."""
        c, out = self.cfg, {}
        for key, path in (
            ("cited", c.cited_field),
            ("index_size", c.index_size_field),
            ("settings", c.settings_field),
        ):
            value = _find(data, path) if path else None
            if value is not _MISSING and value is not None:
                out[key] = value
        cited = out.get("cited")
        if cited is not None:
            ok = isinstance(cited, list) and all(
                isinstance(x, str | int) and not isinstance(x, bool) for x in cited
            )
            if not ok:
                raise InputError(
                    f"system.cited_field {c.cited_field!r} is {_kind(cited)} in the reply, not "
                    'a list of context ids (cited_field = "" reads no such field)'
                )
            out["cited"] = [str(x) for x in cited]  # ids as the contexts' are read: text
        return out

    def traces(self, cases: list[Case]) -> list[Trace]:
        from ragrail.calls.layer import CallLayer, CallRequest, CallSettings

        settings = CallSettings(
            concurrency=self.cfg.concurrency,
            timeout=self.cfg.timeout,
            max_retries=self.cfg.max_retries,
        )
        layer = CallLayer(provider=self.provider, settings=settings)
        results = layer.run(
            [
                CallRequest(prompt=c.question, tag=c.id, history=turns_of(c) if c.turn else None)
                for c in cases
            ]
        )
        traces = []
        for case, res in zip(cases, results, strict=True):
            if res.error is not None:
                traces.append(Trace(case_id=case.id, error=res.error, latency_ms=res.latency_ms))
                continue
            parsed = self._parse(res.text or "")
            if isinstance(parsed, str):
                traces.append(Trace(case_id=case.id, error=parsed, latency_ms=res.latency_ms))
            else:
                traces.append(record_to_trace(case, parsed, res.latency_ms))
        return traces


_MISSING: Any = object()


def _find(data: Any, dotted: str) -> Any:
    """``a.b.0.c`` in a reply: the value (None for JSON null), or ``_MISSING`` when absent."""
    for key in dotted.split("."):
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            return _MISSING
    return data


def _kind(value: Any) -> str:
    """A JSON value's kind, as a reader of the reply would name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return "a string" if isinstance(value, str) else "a list"
