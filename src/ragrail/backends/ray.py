"""The Ray backend: the golden set in slices, each answered and scored by a Ray task;
the driver gathers the slices in golden-set order and adds them up.

- Model calls: each model's rpm/tpm bucket (:mod:`ragrail.calls.limiter`) lives in one
  Ray actor that every worker asks before each request, so the limits hold for the
  whole cluster; ``concurrency`` is the cluster's too, shared out among the tasks that
  run at once.
- The reply cache: every worker opens the project's SQLite cache file (WAL, busy
  timeout), which is safe for processes on one machine or one local disk. Workers on
  other machines need the project folder at the same path on a disk that supports
  SQLite's locking (not NFS): otherwise run with --no-cache.
- Workers import ragrail from their own Python: every node needs ragrail (and the
  user's system module) installed, the same version as the driver.
- ``ragrail logs score``: the driver streams the log database in batches, a task flags
  each batch (:func:`log_flags`), the driver counts and writes the flags in order.
- The LLM judge of ``run`` (after the answers): each batch of its calls in slices, each
  slice a Ray task with its own judge under one cluster-wide rate limit (:class:`RemoteJudge`);
  the driver applies the verdicts in order. Workers read the judge's API key from their
  own environment.
- Not fanned out: ``logs score --judge-sample``, ``pairwise``, ``validate`` (the
  driver's call layer) and --rerun-failures (refused with this backend).
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragrail.backends.work import Piece, PipelineJob, RemoteLimiter, SystemJob
from ragrail.errors import SystemFailure

if TYPE_CHECKING:
    from ragrail.backends.choice import Backend
    from ragrail.jobs import Evaluation, Prepared, Progress
    from ragrail.online.record import Conversation
    from ragrail.scoring.case import ScoringOptions

# A slice is small enough that the cluster's CPUs share the work evenly (about four
# slices each) and large enough that a task's overhead (a few ms) stays invisible.
SLICES_PER_CPU = 4
MAX_SLICE = 5_000
# Slices sent ahead of the results: bounds what waits in the object store at once.
IN_FLIGHT_PER_CPU = 2
# Logged conversations a task flags: about 0.1 s of scoring, against a task's few ms.
LOG_BATCH = 1_000
# A Ray instance started for the run: small, since it shares the machine with the run.
LOCAL_OBJECT_STORE = 200_000_000


class LimiterActor:
    """One model's rate limiter for the whole cluster (run as an async Ray actor:
    requests wait their turn on its one event loop, first come first served)."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        from ragrail.calls.limiter import RateLimiter

        self.limiter = RateLimiter(rpm=rpm, tpm=tpm)

    async def acquire(self, tokens: int) -> float:
        return await self.limiter.acquire(tokens)

    async def settle(self, estimate: int, n_in: int | None, n_out: int | None) -> None:
        self.limiter.settle(estimate, n_in, n_out)


def connect(address: str | None) -> tuple[Any, bool]:
    """(the ray module, whether this call started Ray): joins the cluster at
    ``address``, or starts a small Ray instance on this machine for the run."""
    import logging
    import os

    import ray

    if ray.is_initialized():
        return ray, False
    options: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "configure_logging": True,
    }
    if address is None:
        options.update(num_cpus=os.cpu_count() or 1, object_store_memory=LOCAL_OBJECT_STORE)
    else:
        from ragrail.backends.address import probe

        probe(address)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise SystemFailure(f"cannot connect to {where}: {exc}") from None
    return ray, True


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def slices(n: int, cpus: int) -> list[range]:
    """Consecutive index ranges covering ``range(n)``: about SLICES_PER_CPU per CPU."""
    size = max(1, min(MAX_SLICE, math.ceil(n / (cpus * SLICES_PER_CPU))))
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


def case_slices(cases: Sequence[Any], cpus: int) -> list[range]:
    """:func:`slices` of the golden set, each slice's end moved past the rest of a
    conversation it cuts (its turns follow each other in the golden set): a task asks
    a conversation's turns in order, each with the answers before it."""
    out: list[range] = []
    start = 0
    for r in slices(len(cases), cpus):
        end = max(r.stop, start)
        while 0 < end < len(cases) and _same_conversation(cases[end - 1], cases[end]):
            end += 1
        if end > start:
            out.append(range(start, end))
            start = end
    return out


def _same_conversation(a: Any, b: Any) -> bool:
    return a.conversation is not None and a.conversation == b.conversation


def gather(
    ray: Any,
    fn: Callable[..., Any],
    shared: Any,
    args: Iterable[tuple[Any, ...]],
    on_done: Callable[[Any], None] | None = None,
    in_flight: int = 4,
) -> list[Any]:
    """``fn(shared, *a)`` for each ``a`` in ``args`` as Ray tasks, at most ``in_flight``
    at once; the results in ``args`` order. A task's own error is raised as itself
    (an input error stays exit 2); Ctrl-C cancels what is still running."""
    remote = ray.remote(fn)
    shared_ref = ray.put(shared)
    queue = list(args)
    out: list[Any] = [None] * len(queue)
    pending: dict[Any, int] = {}
    nxt = 0
    try:
        while nxt < len(queue) or pending:
            while nxt < len(queue) and len(pending) < in_flight:
                pending[remote.remote(shared_ref, *queue[nxt])] = nxt
                queue[nxt] = ()  # its arguments are in the object store now
                nxt += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                index = pending.pop(ref)
                out[index] = _result(ray, ref)
                if on_done is not None:
                    on_done(out[index])
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return out


def _result(ray: Any, ref: Any) -> Any:
    """A task's result; its own error raised as itself (an input error stays exit 2)."""
    from ray.exceptions import RayTaskError

    try:
        return ray.get(ref)
    except RayTaskError as exc:
        cause = exc.as_instanceof_cause() if exc.cause is None else exc.cause
        raise cause from None


def stream(
    ray: Any,
    fn: Callable[..., Any],
    shared: Any,
    args: Iterable[tuple[Any, ...]],
    in_flight: int = 4,
) -> Iterator[Any]:
    """``fn(shared, *a)`` for each ``a`` as Ray tasks, like :func:`gather`, but ``args``
    is read only as tasks are sent (at most ``in_flight`` ahead of the results) and the
    results are yielded one by one, in ``args`` order. What is still running when the
    caller stops (an error, Ctrl-C) is cancelled."""
    remote = ray.remote(fn)
    shared_ref = ray.put(shared)
    source = iter(args)
    pending: deque[Any] = deque()
    try:
        while True:
            while len(pending) < in_flight and (a := next(source, None)) is not None:
                pending.append(remote.remote(shared_ref, *a))
            if not pending:
                return
            yield _result(ray, pending[0])
            pending.popleft()
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def log_flags(
    backend: Backend,
    conversations: Iterable[Conversation],
    options: ScoringOptions,
    batch: int = LOG_BATCH,
) -> Iterator[tuple[Conversation, tuple[str, ...]]]:
    """A :data:`ragrail.online.score.Flagger` on ``backend``'s cluster: the
    conversations in batches of ``batch``, each flagged by a Ray task, given back with
    their flags in the order they came (the driver counts and stores them)."""
    import uuid
    from itertools import islice

    from ragrail.backends.work import LogJob
    from ragrail.scoring.memo import ScoringCache

    # the cache stays here: each worker builds its own (work.log_flags_piece)
    job = LogJob(dataclasses.replace(options, cache=ScoringCache()), uuid.uuid4().hex)
    source = iter(conversations)
    sent: deque[list[Conversation]] = deque()  # the batches out, oldest first

    def batches() -> Iterator[tuple[list[Conversation]]]:
        while part := list(islice(source, batch)):
            sent.append(part)
            yield (part,)

    ray, started = connect(backend.address)
    try:
        in_flight = cluster_cpus(ray) * IN_FLIGHT_PER_CPU
        for flags in stream(ray, _log_task, job, batches(), in_flight):
            yield from zip(sent.popleft(), flags, strict=True)
    finally:
        if started:
            ray.shutdown()


def gather_everywhere(
    backend: Backend, fn: Callable[..., Any], shared: Any, args: Sequence[tuple[Any, ...]]
) -> list[Any]:
    """``fn(shared, *a)`` for each ``a`` as Ray tasks on ``backend``'s cluster, in order
    (a sweep's index groups)."""
    ray, started = connect(backend.address)
    try:
        return gather(ray, fn, shared, args, None, cluster_cpus(ray) * IN_FLIGHT_PER_CPU)
    finally:
        if started:
            ray.shutdown()


def run_on_ray(p: Prepared, evaluation: Evaluation, progress: Progress | None) -> None:
    """Run a prepared evaluation's questions on Ray; sets ``evaluation.result``."""
    ray, started = connect(p.settings.backend.address)
    try:
        if p.system is None and p.project.config.system.kind == "pipeline":
            _pipeline(ray, p, evaluation, progress)
        else:
            _system(ray, p, evaluation)
    finally:
        if started:
            ray.shutdown()


def _pipeline(ray: Any, p: Prepared, evaluation: Evaluation, progress: Progress | None) -> None:
    from contextlib import nullcontext

    from ragrail.calls.layer import CallResult, UsageTotals
    from ragrail.records.results import RunResult
    from ragrail.run import compute_totals, settle_citations

    s, cfg, cases = p.settings, p.project.config, p.golden.cases
    spec, repeats = s.answerer, s.repeats
    cpus = cluster_cpus(ray)
    limiter = None
    if spec.uses_model and (spec.calls.rpm is not None or spec.calls.tpm is not None):
        actor = ray.remote(num_cpus=0)(LimiterActor).remote(spec.calls.rpm, spec.calls.tpm)
        limiter = RemoteLimiter(actor, spec.calls.tpm is not None)
    # the limits are the actor's now, and the concurrency the cluster's, shared out
    calls = dataclasses.replace(
        spec.calls, rpm=None, tpm=None, concurrency=max(1, spec.calls.concurrency // cpus)
    )
    job = PipelineJob(
        cfg.name,
        s.pipeline,
        dataclasses.replace(spec, calls=calls),
        repeats,
        s.scoring,
        len(cases),
        limiter,
    )
    usage = UsageTotals()
    bar = progress or (lambda total, label: nullcontext(None))
    with bar(repeats * len(cases), f"answering ({spec.name}) on Ray") as on_result:

        def done(piece: Piece) -> None:
            if piece.usage is not None:
                usage.absorb(piece.usage)
            if on_result is not None:
                for _ in range(len(piece.results) * repeats):
                    on_result(CallResult(text=None), usage)

        parts = [(cases[r.start : r.stop],) for r in case_slices(cases, cpus)]
        pieces: list[Piece] = gather(
            ray, _pipeline_task, job, parts, done, cpus * IN_FLIGHT_PER_CPU
        )
    results = [r for piece in pieces for r in piece.results]
    config = pieces[0].config if pieces else None
    if config is None:  # an empty golden set: nothing ran, the pipeline is built here
        from ragrail.backends.work import pipeline_for
        from ragrail.run import run_config
        from ragrail.system.answerers import build_answerer

        config = run_config(cfg.name, pipeline_for(job.settings), build_answerer(spec), 0, repeats)
    config, results = settle_citations(config, cases, results, s.scoring)
    result = RunResult(config=config, totals=compute_totals(results), cases=results)
    result.usage = usage.summary() if spec.uses_model else None
    evaluation.result = result


def _system(ray: Any, p: Prepared, evaluation: Evaluation) -> None:
    from ragrail.gcpause import paused_gc
    from ragrail.records.results import RunResult
    from ragrail.run import (
        compute_totals,
        settle_citations,
        system_config,
        with_document_names,
    )
    from ragrail.system.adapters import make_system
    from ragrail.system.adapters.records import warn_unknown_sources
    from ragrail.text.names import DocumentNames

    cases, s, root = p.golden.cases, p.settings, p.project.root
    with paused_gc():  # an outputs file is read here: one trace per line
        system = make_system(s.system, root, p.system)
    # an outputs file is read once, here; a live system is asked by the workers
    outputs = p.system is None and p.project.config.system.kind == "outputs"
    traces: Sequence[Any] | None = system.traces(cases) if outputs else None
    options, compared = with_document_names(s.scoring, cases)
    job = SystemJob(root, s.system, options, p.system, s.repeats)
    cpus = cluster_cpus(ray)
    parts = [
        (cases[r.start : r.stop], None if traces is None else traces[r.start : r.stop])
        for r in case_slices(cases, cpus)
    ]
    del traces
    pieces: list[Piece] = gather(ray, _system_task, job, parts, None, cpus * IN_FLIGHT_PER_CPU)
    results = [r for piece in pieces for r in piece.results]
    config = system_config(p.project.config.name, system, [r.trace for r in results])
    if s.repeats > 1:
        config = config.model_copy(update={"repeats": s.repeats})
    warn_unknown_sources([r.trace for r in results], DocumentNames(options.documents), compared)
    config, results = settle_citations(config, cases, results, options)
    evaluation.result = RunResult(config=config, totals=compute_totals(results), cases=results)


def _pipeline_task(job: PipelineJob, cases: Sequence[Any]) -> Piece:
    from ragrail.backends.work import pipeline_piece

    return pipeline_piece(job, cases)


def _system_task(job: SystemJob, cases: Sequence[Any], traces: Sequence[Any] | None) -> Piece:
    from ragrail.backends.work import system_piece

    return system_piece(job, cases, traces)


def _log_task(job: Any, conversations: Sequence[Any]) -> list[tuple[str, ...]]:
    from ragrail.backends.work import log_flags_piece

    return log_flags_piece(job, conversations)


class RemoteJudge:
    """A judge's ``remote_call`` on a Ray cluster: each :meth:`Judge.call` in slices of
    prompts, each slice a Ray task with its own judge (:func:`work.judge_piece`) under
    the cluster-wide rate limit; the results come back in the prompts' order, so the
    driver applies the verdicts and adds up exactly as it does locally. Connects on the
    first call (a run with nothing to judge never does); :meth:`close` disconnects."""

    def __init__(self, backend: Backend, judge: Any) -> None:
        self.backend, self.judge = backend, judge
        self.ray: Any = None
        self.started = False
        self.job: Any = None

    def _connect(self) -> None:
        from ragrail.backends.work import JudgeJob

        self.ray, self.started = connect(self.backend.address)
        c, cpus = self.judge.config, cluster_cpus(self.ray)
        limiter = None
        if c.rpm is not None or c.tpm is not None:
            actor = self.ray.remote(num_cpus=0)(LimiterActor).remote(c.rpm, c.tpm)
            limiter = RemoteLimiter(actor, c.tpm is not None)
        # the limits are the actor's now, and the concurrency the cluster's, shared out
        config = c.model_copy(
            update={"rpm": None, "tpm": None, "concurrency": max(1, c.concurrency // cpus)}
        )
        cache = self.judge.cache
        self.job = JudgeJob(
            config,
            self.judge.prompts,
            getattr(cache, "path", None) if cache is not None else None,
            self.judge.price,
            self.judge.abstain_phrases,
            limiter,
        )

    def __call__(self, prompts: list[tuple[str, int]], validate: Any) -> tuple[list[Any], Any]:
        from ragrail.calls.layer import UsageTotals

        if self.ray is None:
            self._connect()
        cpus = cluster_cpus(self.ray)
        parts = [(prompts[r.start : r.stop], validate) for r in slices(len(prompts), cpus)]
        pieces = gather(self.ray, _judge_task, self.job, parts, None, cpus * IN_FLIGHT_PER_CPU)
        usage = UsageTotals()
        for _, piece_usage in pieces:
            usage.absorb(piece_usage)
        return [r for results, _ in pieces for r in results], usage

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()
        self.ray, self.started = None, False


@contextmanager
def judge_on_ray(backend: Backend, judge: Any) -> Iterator[None]:
    """While open, ``judge``'s model calls run as Ray tasks on ``backend``'s cluster."""
    remote = RemoteJudge(backend, judge)
    judge.remote_call = remote
    try:
        yield
    finally:
        judge.remote_call = None
        remote.close()


def _judge_task(job: Any, prompts: list[tuple[str, int]], validate: Any) -> tuple[Any, Any]:
    from ragrail.backends.work import judge_piece

    return judge_piece(job, prompts, validate)
