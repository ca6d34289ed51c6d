"""Systems under test other than the built-in pipeline.

``OutputsFile``: precomputed outputs, one JSON object per line:

    {"id": "case-id", "answer": "...", "contexts": [{"id": "doc#1", "source": "doc",
     "text": "...", "score": 0.9}]}

``id`` may be replaced by ``question`` (matched exactly). Context order is
rank order; ``score`` is optional. This is also how results from other tools
are imported: write their answers and retrieved passages in this shape.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragrail.errors import InputError
from ragrail.fileio import BOM, parse_json, read_text, scrub_surrogates
from ragrail.golden import Case
from ragrail.results import RetrievedChunk, Trace

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
        # a lone surrogate (from a "\\ud800" in a reply) is kept as U+FFFD: as such
        # it could never be saved in the results, the history or a baseline
        return OutputRecord.model_validate(scrub_surrogates(data))
    except ValidationError as exc:
        raise InputError(f"{target} returned an invalid {_invalid_field(exc)}") from None


def _invalid_field(exc: ValidationError) -> str:
    """``'contexts.0.score': Input should be a finite number (got nan)``."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"])
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, float | int) and not isinstance(got, bool) else ""
    return f"{field!r}: {err['msg']}{shown}"


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
        text = read_text(path, "outputs file").removeprefix(BOM)
        id_lines: dict[str, int] = {}
        question_lines: dict[str, int] = {}  # lines with a question and no id
        # split on "\n" only: str.splitlines() also breaks at U+2028 and other characters
        # that may stand unescaped inside a JSON string
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            data = parse_json(line, path, line=lineno)
            if not isinstance(data, dict):
                raise InputError(
                    f"each line must be a JSON object, not {type(data).__name__}", where
                )
            try:
                record = OutputRecord.model_validate(data)
            except ValidationError as exc:
                raise InputError(f"field {_invalid_field(exc)}", where) from None
            if record.id is None and record.question is None:
                raise InputError("each line needs an 'id' or a 'question'", where)
            if record.id is not None:
                _unique(id_lines, record.id, "id", lineno, where)
                self.records[record.id] = record
            if record.question is not None:
                question = record.question.strip()
                if record.id is None:
                    _unique(question_lines, question, "question", lineno, where)
                self.by_question.setdefault(question, record)

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


def _unique(seen: dict[str, int], key: str, what: str, lineno: int, where: str) -> None:
    """Refuse a second line for the same case: which of the two to score would be a guess."""
    if key in seen:
        raise InputError(
            f"duplicate {what} {key!r} on lines {seen[key]} and {lineno}; keep one", where
        )
    seen[key] = lineno


class _Job:
    """One piece of the user's code to run on a worker thread, and what came of it."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.seconds = 0.0

    def run(self) -> None:
        started = time.perf_counter()
        try:
            self.value = self.fn(*self.args)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: user code
            self.error = exc
        finally:
            self.seconds = time.perf_counter() - started
            self.done.set()


class _Worker:
    """A daemon thread that runs the user's code, one job at a time.

    The user's code never runs on the main thread: whatever it raises
    (``SystemExit``, ``KeyboardInterrupt`` included) is caught and kept as that
    question's error, a real Ctrl-C still reaches the main thread, and a call
    that never returns can be abandoned (a daemon thread does not keep the
    process alive). Importing the target and calling it happen on the same
    thread, so objects bound to the thread that made them (sqlite connections)
    keep working.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        thread = threading.Thread(target=self._serve, name="ragrail-target", daemon=True)
        thread.start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()

    def submit(self, fn: Callable[..., Any], *args: Any) -> _Job:
        job = _Job(fn, args)
        self._jobs.put(job)
        return job

    def close(self) -> None:
        self._jobs.put(None)


def describe_failure(exc: BaseException) -> str:
    """One line for what the user's code raised, as a question's error."""
    from ragrail.crash import one_line, safe_str

    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) raised by the system under test"
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt raised by the system under test"
    text = one_line(safe_str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _raise_site(exc: BaseException, root: Path | None) -> str | None:
    """``file:line`` where ``exc`` was raised: in the project folder if any frame is, else
    the innermost frame outside the import machinery."""
    site = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<"):
            here = f"{filename}:{tb.tb_lineno}"
            in_root = root is not None and Path(filename).resolve().is_relative_to(root.resolve())
            if in_root or site is None or not site[1]:
                site = (here, in_root)
        tb = tb.tb_next
    return site[0] if site else None


def load_target(target: str, root: Path | None = None) -> Callable[..., Any]:
    """Import ``system.target`` (``package.module:function``).

    Anything that goes wrong, a syntax error, a missing module, a module that
    raises (or calls ``sys.exit``) while it loads, is an ``InputError`` naming
    ``system.target`` and, where known, the file and line.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise InputError(f"system.target {target!r} must look like package.module:function")
    if root is not None:
        from ragrail.scoring.checks import _use_project_root

        # an earlier project in this process may have imported a module of the same name
        _use_project_root(root, module_name)
    try:
        importlib.invalidate_caches()  # a module file written since the last import
        module = importlib.import_module(module_name)
    except SyntaxError as exc:
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else None
        raise InputError(
            f"system.target {target!r}: syntax error in {module_name}: {exc.msg}", where
        ) from None
    except ImportError as exc:
        where = _raise_site(exc, root) if exc.name != module_name else None
        raise InputError(
            f"cannot import {module_name!r} for system.target {target!r}: {exc}", where
        ) from None
    except BaseException as exc:  # the module ran and failed: still a configuration problem
        what = (
            f"called sys.exit({exc.code!r})"
            if isinstance(exc, SystemExit)
            else f"raised {describe_failure(exc)}"
        )
        raise InputError(
            f"system.target {target!r}: importing {module_name} {what}", _raise_site(exc, root)
        ) from None
    func = getattr(module, attr, None)
    if not callable(func):
        raise InputError(f"system.target {target!r}: {module_name} has no function {attr!r}")
    return func


def callable_name(func: Callable[..., Any]) -> str:
    """``module:qualname`` of a function given as an object (its class's for an instance)."""
    named = func if hasattr(func, "__qualname__") else type(func)
    module = getattr(named, "__module__", None) or "?"
    return f"{module}:{getattr(named, '__qualname__', type(func).__name__)}"


def is_async(func: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one."""
    import inspect

    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - the method, not callable()
    )


class CallableSystem:
    """A Python function ``question -> {answer, contexts}``, sync or async.

    ``target`` is ``package.module:function``, imported with the project folder
    on ``sys.path``, or the function itself (from the Python API). Whatever the
    function raises (``SystemExit`` and ``KeyboardInterrupt`` included), and a
    call that runs past ``timeout``
    seconds, is an error for that question (exit 3); the run goes on. A
    function that cannot be imported, or returns the wrong shape, is a
    configuration error (exit 2).

    A sync function is called on a worker thread, one question at a time (as
    if called in a loop: no thread-safety needed); one that hangs is abandoned
    there and the next question gets a fresh thread. An async function runs on
    an event loop in a worker thread, up to ``concurrency`` questions at once,
    each under ``asyncio.timeout``; if the loop itself stops turning (a
    blocking call inside the coroutine), the unfinished questions are errors.
    """

    name = "python"
    kind = "python callable"

    def __init__(
        self,
        target: str | Callable[..., Any],
        root: Path | None = None,
        concurrency: int = 8,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        import sys

        self.concurrency = concurrency
        self.timeout = timeout
        self._worker: _Worker | None = None
        if not isinstance(target, str):
            self.target = callable_name(target)
            self.func: Callable[..., Any] = target
            return
        if root is not None and str(root) not in sys.path:
            sys.path.insert(0, str(root))
        self.target = target
        self._worker = _Worker()
        job = self._worker.submit(load_target, target, root)
        job.done.wait()
        if job.error is not None:
            self._close()
            raise job.error
        self.func = job.value

    @property
    def label(self) -> str:
        return f"python callable {self.target}"

    def _close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _timed_out(self) -> str:
        return f"timed out after {self.timeout:g} s (system.timeout)"

    def traces(self, cases: list[Case]) -> list[Trace]:
        try:
            if is_async(self.func):
                return self._async_traces(cases)
            return [self._one(case) for case in cases]
        finally:
            self._close()

    def _one(self, case: Case) -> Trace:
        if self._worker is None:
            self._worker = _Worker()
        job = self._worker.submit(self.func, case.question)
        if not job.done.wait(self.timeout):
            self._close()  # stuck in the user's code: abandon the thread (it ends if it returns)
            return Trace(case_id=case.id, error=self._timed_out(), latency_ms=self.timeout * 1000)
        if job.error is not None:
            return Trace(
                case_id=case.id, error=describe_failure(job.error), latency_ms=job.seconds * 1000
            )
        return record_to_trace(case, parse_output(job.value, self.target), job.seconds * 1000)

    def _async_traces(self, cases: list[Case]) -> list[Trace]:
        """Run the coroutine function over every case on a worker thread's event loop,
        watching from this thread that the loop keeps turning."""
        import asyncio

        outcomes: dict[int, tuple[Any, str | None, float]] = {}
        in_flight: dict[int, float] = {}
        finished = threading.Event()
        beat = [time.monotonic()]  # when the event loop last turned

        async def call(question: str) -> tuple[Any, str | None]:
            deadline = asyncio.timeout(self.timeout)
            try:
                async with deadline:
                    return await self.func(question), None
            except BaseException as exc:  # user code: a question's error, whatever it is
                task = asyncio.current_task()
                if isinstance(exc, asyncio.CancelledError) and task and task.cancelling():
                    raise  # a real cancellation of this run, not the user's doing
                return None, self._timed_out() if deadline.expired() else describe_failure(exc)

        async def heartbeat() -> None:
            while True:
                beat[0] = time.monotonic()
                await asyncio.sleep(0.05)

        async def run_all() -> None:
            sem = asyncio.Semaphore(self.concurrency)
            pulse = asyncio.create_task(heartbeat())

            async def one(i: int, question: str) -> None:
                async with sem:
                    in_flight[i] = time.monotonic()
                    value, error = await call(question)
                    outcomes[i] = (value, error, (time.monotonic() - in_flight.pop(i)) * 1000)

            try:
                await asyncio.gather(*(one(i, c.question) for i, c in enumerate(cases)))
            finally:
                pulse.cancel()
                finished.set()

        if self._worker is None:
            self._worker = _Worker()
        job = self._worker.submit(asyncio.run, run_all())
        # asyncio.timeout only fires when the loop turns; a coroutine that blocks
        # (time.sleep, a busy loop) stops it. Blocked for well past the timeout, with no
        # way back: give up on the loop from here.
        stalled_after = self.timeout * 1.5 + 1.0
        stalled = False
        while not job.done.wait(0.1):
            if finished.is_set():
                job.done.wait(2.0)  # asyncio.run's cleanup; do not wait on a hung executor
                break
            if time.monotonic() - beat[0] > stalled_after:
                stalled = True
                self._close()  # its event loop is stuck in the user's code: abandon it
                break
        hung = set(in_flight) if stalled else set()
        if stalled:
            missing = "not run: another question blocked the event loop"
        elif job.error is not None:
            missing = f"the event loop stopped: {describe_failure(job.error)}"
        else:
            missing = "not run: the event loop stopped early"
        blocked = f"{self._timed_out()}; the event loop was blocked (blocking code in async?)"
        traces = []
        for i, case in enumerate(cases):
            value, error, latency = outcomes.get(i, (None, blocked if i in hung else missing, 0.0))
            if error is not None:
                traces.append(Trace(case_id=case.id, error=error, latency_ms=latency))
            else:
                traces.append(record_to_trace(case, parse_output(value, self.target), latency))
        return traces


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
        problem = url_problem(cfg.url)
        if problem is not None:  # checked here too for a config built in code
            raise InputError(f"system.url {problem}")
        self.cfg = cfg
        headers = {k: expand_env(v, k) for k, v in cfg.headers.items()}
        from_env = tuple(
            os.environ[m.group(1)] for v in cfg.headers.values() for m in _ENV.finditer(v)
        )
        self.provider = EndpointProvider(
            cfg.url, headers, cfg.body, cfg.question_field, cfg.timeout, from_env
        )

    @property
    def label(self) -> str:
        return f"http endpoint {self.cfg.url}"

    def _parse(self, text: str) -> OutputRecord | str:
        """The reply as an output record, or why it is not one (that question's error).

        A reply that is not JSON, or lacks the answer or the passages, fails
        that question; a field of the wrong type is a configuration error.
        """
        from ragrail.providers import get_path

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
        if contexts is _MISSING:
            return f"the reply has no {c.contexts_field!r} (system.contexts_field)"
        if not isinstance(contexts, list):
            raise InputError(
                f"system.contexts_field {c.contexts_field!r} is not a list in the reply"
            )
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


def url_problem(url: str) -> str | None:
    """Why ``system.url`` cannot be POSTed to, or None when it can."""
    from urllib.parse import urlsplit

    shown = repr(url) if len(url) <= 200 else repr(url[:200] + "…")
    if not url.strip():
        return "is empty; it needs a full URL such as http://localhost:8000/ask"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return f"{shown} contains spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{shown} is not a valid URL ({exc})"
    if "://" not in url:
        return f"{shown} has no scheme; it needs http:// or https:// in front"
    if parts.scheme.lower() not in ("http", "https"):
        return f"{shown} is not an HTTP URL ({parts.scheme}://); it needs http:// or https://"
    if not parts.hostname:
        return f"{shown} has no host; it needs a full URL such as http://localhost:8000/ask"
    del port  # read only to make urlsplit check it
    return None


def make_system(cfg: Any, root: Path) -> Any:
    """The non-pipeline system a project's ``[system]`` table names."""
    if cfg.kind == "outputs":
        if not cfg.path:
            raise InputError('[system] kind = "outputs" needs path = "FILE.jsonl"')
        return OutputsFile(root / cfg.path)
    if cfg.kind == "python":
        if not cfg.target:
            raise InputError('[system] kind = "python" needs target = "package.module:function"')
        return CallableSystem(cfg.target, root, cfg.concurrency, cfg.timeout)
    if cfg.kind == "http":
        return HttpSystem(cfg)
    raise InputError(f"unknown system kind {cfg.kind!r}")
