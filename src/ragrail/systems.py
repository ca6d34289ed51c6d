"""Systems under test other than the built-in pipeline.

``OutputsFile``: precomputed outputs, one JSON object per line:

    {"id": "case-id", "answer": "...", "contexts": [{"id": "doc#1", "source": "doc",
     "text": "...", "score": 0.9}]}

``id`` may be replaced by ``question`` (matched exactly). Context order is
rank order; ``score`` is optional. This is also how results from other tools
are imported: write their answers and retrieved passages in this shape.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail.errors import InputError
from ragrail.fileio import read_text
from ragrail.golden import Case
from ragrail.results import RetrievedChunk, Trace


class OutputContext(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str | None = None
    text: str
    score: float | None = None


class OutputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    error: str | None = None
    contexts: list[OutputContext] = Field(default_factory=list)


def record_to_trace(case: Case, record: OutputRecord, latency_ms: float = 0.0) -> Trace:
    retrieved = [
        RetrievedChunk(
            id=c.id,
            source=c.source or c.id.split("#")[0],
            rank=rank,
            score=c.score if c.score is not None else 0.0,
            text=c.text,
        )
        for rank, c in enumerate(record.contexts, start=1)
    ]
    return Trace(
        case_id=case.id,
        retrieved=retrieved,
        answer=record.answer,
        error=record.error,
        latency_ms=latency_ms,
    )


def parse_output(data: object, target: str) -> OutputRecord:
    """Validate what a user's system returned: {answer, contexts: [{id, source, text, score}]}."""
    if not isinstance(data, dict):
        raise InputError(
            f"{target} returned {type(data).__name__}; expected an object with "
            "'answer' and 'contexts' ([{id, source, text, score}])"
        )
    try:
        return OutputRecord.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{target} returned an invalid {field!r}: {err['msg']}") from None


class OutputsFile:
    """Traces read from a JSONL file instead of produced by running a system."""

    name = "outputs"
    kind = "precomputed"

    @property
    def label(self) -> str:
        return f"precomputed outputs ({self.path.name})"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, OutputRecord] = {}
        self.by_question: dict[str, OutputRecord] = {}
        text = read_text(path, "outputs file")
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = OutputRecord.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", f"{where}:{exc.colno}") from None
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"])
                raise InputError(f"field {field!r}: {err['msg']}", where) from None
            if record.id is None and record.question is None:
                raise InputError("each line needs an 'id' or a 'question'", where)
            if record.id is not None:
                self.records[record.id] = record
            if record.question is not None:
                self.by_question[record.question.strip()] = record

    @property
    def max_contexts(self) -> int:
        return max((len(r.contexts) for r in self.records.values()), default=0)

    @property
    def n_contexts(self) -> int:
        return len(
            {c.id for r in [*self.records.values(), *self.by_question.values()] for c in r.contexts}
        )

    def trace(self, case: Case) -> Trace:
        record = self.records.get(case.id) or self.by_question.get(case.question.strip())
        if record is None:
            return Trace(case_id=case.id, error=f"no output for this case in {self.path.name}")
        return record_to_trace(case, record)

    def traces(self, cases: list[Case]) -> list[Trace]:
        return [self.trace(c) for c in cases]


class CallableSystem:
    """A Python function ``question -> {answer, contexts}``, sync or async.

    ``target`` is ``package.module:function``, imported with the project folder
    on ``sys.path``. An exception inside the function is an error for that case
    (exit 3); a function that cannot be imported, or returns the wrong shape, is
    a configuration error (exit 2).
    """

    name = "python"
    kind = "python callable"

    def __init__(self, target: str, root: Path | None = None, concurrency: int = 8) -> None:
        import sys

        from ragrail.scoring.checks import load_function

        if root is not None and str(root) not in sys.path:
            sys.path.insert(0, str(root))
        self.target = target
        self.func = load_function(target)
        self.concurrency = concurrency

    @property
    def label(self) -> str:
        return f"python callable {self.target}"

    def traces(self, cases: list[Case]) -> list[Trace]:
        import asyncio
        import inspect

        if inspect.iscoroutinefunction(self.func):
            return asyncio.run(self._async_traces(cases))
        return [self._one(case, lambda q: self.func(q)) for case in cases]

    def _one(self, case: Case, call) -> Trace:  # call: question -> result
        import time

        started = time.perf_counter()
        try:
            data = call(case.question)
        except Exception as exc:  # the system under test failed: an error for this case
            return Trace(case_id=case.id, error=f"{type(exc).__name__}: {exc}")
        latency = (time.perf_counter() - started) * 1000
        return record_to_trace(case, parse_output(data, self.target), latency)

    async def _async_traces(self, cases: list[Case]) -> list[Trace]:
        import asyncio
        import time

        sem = asyncio.Semaphore(self.concurrency)

        async def one(case: Case) -> Trace:
            async with sem:
                started = time.perf_counter()
                try:
                    data = await self.func(case.question)
                except Exception as exc:
                    return Trace(case_id=case.id, error=f"{type(exc).__name__}: {exc}")
                latency = (time.perf_counter() - started) * 1000
                return record_to_trace(case, parse_output(data, self.target), latency)

        return list(await asyncio.gather(*(one(c) for c in cases)))


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

    def __init__(self, cfg: Any) -> None:  # cfg: config.SystemConfig
        from ragrail.providers import EndpointProvider

        if not cfg.url:
            raise InputError('[system] kind = "http" needs url = "http://..."')
        self.cfg = cfg
        headers = {k: expand_env(v, k) for k, v in cfg.headers.items()}
        self.provider = EndpointProvider(
            cfg.url, headers, cfg.body, cfg.question_field, cfg.timeout
        )

    @property
    def label(self) -> str:
        return f"http endpoint {self.cfg.url}"

    def _parse(self, text: str) -> OutputRecord:
        from ragrail.providers import get_path

        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            looks = "HTML" if text.lstrip()[:1] == "<" else "something other than JSON"
            raise InputError(
                f"system.url {self.cfg.url} returned {looks}, not JSON: is the URL the API "
                "endpoint, not a web page?"
            ) from None
        c = self.cfg
        contexts = get_path(data, c.contexts_field) or []
        if not isinstance(contexts, list):
            raise InputError(
                f"system.contexts_field {c.contexts_field!r} is not a list in the reply"
            )
        answer = get_path(data, c.answer_field)
        if answer is not None and not isinstance(answer, str):
            raise InputError(f"system.answer_field {c.answer_field!r} is not a string in the reply")
        record = {
            "id": "-",
            "answer": answer,
            "contexts": [
                {
                    "id": str(get_path(x, c.context_id_field) or f"context#{i}"),
                    "source": get_path(x, c.context_source_field),
                    "text": str(get_path(x, c.context_text_field) or ""),
                    "score": get_path(x, c.context_score_field),
                }
                for i, x in enumerate(contexts, start=1)
            ],
        }
        return parse_output(record, f"system.url {c.url}")

    def traces(self, cases: list[Case]) -> list[Trace]:
        from ragrail.llm import CallLayer, CallRequest, CallSettings

        settings = CallSettings(
            concurrency=self.cfg.concurrency,
            timeout=self.cfg.timeout,
            max_retries=self.cfg.max_retries,
        )
        layer = CallLayer(provider=self.provider, settings=settings)
        results = layer.run([CallRequest(prompt=c.question, tag=c.id) for c in cases])
        traces = []
        for case, res in zip(cases, results, strict=True):
            if res.error is not None:
                traces.append(Trace(case_id=case.id, error=res.error, latency_ms=res.latency_ms))
            else:
                traces.append(record_to_trace(case, self._parse(res.text or ""), res.latency_ms))
        return traces


def make_system(cfg: Any, root: Path) -> Any:
    """The non-pipeline system a project's ``[system]`` table names."""
    if cfg.kind == "outputs":
        if not cfg.path:
            raise InputError('[system] kind = "outputs" needs path = "FILE.jsonl"')
        return OutputsFile(root / cfg.path)
    if cfg.kind == "python":
        if not cfg.target:
            raise InputError('[system] kind = "python" needs target = "package.module:function"')
        return CallableSystem(cfg.target, root, cfg.concurrency)
    if cfg.kind == "http":
        return HttpSystem(cfg)
    raise InputError(f"unknown system kind {cfg.kind!r}")
