"""A Python function as the system under test, sync or async, run on a worker thread
so whatever it does (raise, exit, hang, block its event loop) is that question's error."""

from __future__ import annotations

import importlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ragrail.errors import InputError
from ragrail.exit_guard import TargetExit, exit_guarded
from ragrail.records.case import Case
from ragrail.records.results import Trace
from ragrail.system.adapters.records import DEFAULT_TIMEOUT, parse_output, record_to_trace


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


@contextmanager
def guarded_process() -> Iterator[None]:
    """While the user's code runs, it cannot end or redirect ragrail: ``os._exit()`` is
    guarded (:func:`exit_guarded`), and the working folder, ``sys.stdout`` and
    ``sys.stderr`` are put back afterwards, so the outputs land where the user named them
    and the scorecard is printed.

    A call abandoned on a thread (a timeout) may still call ``os._exit`` after this
    closes: in ``ragrail``'s own process the CLI keeps the guard open until the command
    ends (:func:`ragrail.cli.entry.main`); in a host process (the Python API) everything is
    put back when the call returns, so the host's own ``os._exit`` works again."""
    import os
    import sys

    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    out, err = sys.stdout, sys.stderr
    with exit_guarded():
        try:
            yield
        finally:
            sys.stdout, sys.stderr = out, err
            if cwd is not None:
                with suppress(OSError):
                    os.chdir(cwd)


def describe_failure(exc: BaseException) -> str:
    """One line for what the user's code raised, as a question's error."""
    from ragrail.crash import one_line, safe_str

    if isinstance(exc, TargetExit):
        return f"os._exit({exc.code!r}) called by the system under test"
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
            else f"called os._exit({exc.code!r})"
            if isinstance(exc, TargetExit)
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


def takes_history(func: Callable[..., Any]) -> bool:
    """Whether ``func`` has a parameter named ``history`` that a keyword can fill."""
    import inspect

    try:
        param = inspect.signature(func).parameters.get("history")
    except (TypeError, ValueError):  # a builtin or a C callable without a signature
        return False
    return param is not None and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)


class CallableSystem:
    """A Python function ``question -> {answer, contexts}``, sync or async.

    A function with a ``history`` parameter gets the conversation so far as
    ``history=[{"question", "answer"}, ...]``: the earlier turns of a golden
    conversation with the answers it gave them (``ragrail.system.rounds``), ``[]`` for
    a first turn or a single question.

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

        self.concurrency = concurrency
        self.timeout = timeout
        self._worker: _Worker | None = None
        self._takes_history: bool | None = None  # read from its signature when first called
        if not isinstance(target, str):
            self.target = callable_name(target)
            self.func: Callable[..., Any] = target
            return
        self.target = target  # load_target puts root first on sys.path
        self._worker = _Worker()
        with guarded_process():  # code at import time runs too
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
        with guarded_process():
            try:
                if is_async(self.func):
                    return self._async_traces(cases)
                return [self._one(case) for case in cases]
            finally:
                self._close()

    def _call(self, case: Case) -> Callable[[], Any]:
        """The call for ``case``: the question, and its history when the function takes one
        (a copy: what the function does to it changes nothing here)."""
        from functools import partial

        if self._takes_history is None:
            self._takes_history = takes_history(self.func)
        if not self._takes_history:
            return partial(self.func, case.question)
        return partial(self.func, case.question, history=[dict(t) for t in case.history])

    def _one(self, case: Case) -> Trace:
        if self._worker is None:
            self._worker = _Worker()
        job = self._worker.submit(self._call(case))
        # a --timeout of 1e300 s is "never": beyond TIMEOUT_MAX the wait itself overflows
        if not job.done.wait(min(self.timeout, threading.TIMEOUT_MAX)):
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

        async def call(case: Case) -> tuple[Any, str | None]:
            deadline = asyncio.timeout(self.timeout)
            try:
                async with deadline:
                    return await self._call(case)(), None
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

            async def one(i: int, case: Case) -> None:
                async with sem:
                    in_flight[i] = time.monotonic()
                    value, error = await call(case)
                    outcomes[i] = (value, error, (time.monotonic() - in_flight.pop(i)) * 1000)

            try:
                await asyncio.gather(*(one(i, c) for i, c in enumerate(cases)))
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
