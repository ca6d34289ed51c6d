"""Provider batches (``--batch``): the calls go out as one Anthropic Message Batch or one
OpenAI Batch API job, at the batch price (half the direct one: calls.prices).

A batch is submitted once. Its id is written (atomically) to ``.ragrail/batches/``
under a name made of what is asked, before any waiting, so an interrupted or killed
run, started again, picks up the same batch and never pays twice; the file goes
once every reply is cached. While the provider works, a progress line is shown at
each poll, the polls spaced by backoff (``batch_poll`` seconds doubling to
``batch_poll_max``). Each reply is validated and cached like a direct one. An item
that failed, expired or was unusable is then asked again directly (an unusable one
with the problem in a follow-up, as a direct call would be): it is never dropped.
Each batch API request (submit, poll, fetch) is retried as a call is (429, 5xx,
timeouts), and a failure that persists fails the items, never the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ragrail.calls.providers import (
    Completion,
    Followup,
    Provider,
    ReplyError,
    _messages,
    anthropic_completion,
    correction,
    openai_completion,
)
from ragrail.calls.usage import CallResult, cache_row, call_cost

# calls.layer's CallLayer and CallRequest: the layer imports this module (lazily), so
# this one names them without importing them (no import cycle, even for type checking)
CallLayer = Any
CallRequest = Any

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """One item's end: a reply, or why there is none (``expired``, an API error)."""

    completion: Completion | None
    error: str | None = None


# ---------------------------------------------------------------- the two APIs


class _Batches:
    def __init__(self, provider: Provider, settings: Any) -> None:
        self.provider = provider
        self.settings = settings

    async def submit(self, items: Sequence[tuple[str, CallRequest]]) -> str:
        raise NotImplementedError

    async def poll(self, batch_id: str) -> tuple[bool, int, int]:
        """(ended, items finished, items in all)."""
        raise NotImplementedError

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        raise NotImplementedError


class AnthropicBatches(_Batches):
    async def submit(self, items: Sequence[tuple[str, CallRequest]]) -> str:
        p, s = self.provider, self.settings
        extra = {}
        if s.temperature is not None and p._accepts("temperature"):  # type: ignore[attr-defined]
            extra["temperature"] = s.temperature
        requests = [
            {
                "custom_id": cid,
                "params": {
                    "model": p.model,
                    "max_tokens": s.max_tokens,
                    "messages": _messages(r.prompt, None, r.history or ()),
                    **extra,
                },
            }
            for cid, r in items
        ]
        batch = await p.client.messages.batches.create(requests=requests)
        return str(batch.id)

    async def poll(self, batch_id: str) -> tuple[bool, int, int]:
        b = await self.provider.client.messages.batches.retrieve(batch_id)
        c = b.request_counts
        done = c.succeeded + c.errored + c.canceled + c.expired
        return b.processing_status == "ended", done, done + c.processing

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        decoder = await self.provider.client.messages.batches.results(batch_id)
        async for item in decoder:
            result = item.result
            if result.type == "succeeded":
                out[item.custom_id] = _completed(partial(anthropic_completion, result.message))
            elif result.type == "errored":
                err = getattr(getattr(result, "error", None), "error", None)
                out[item.custom_id] = Outcome(None, f"batch item {getattr(err, 'type', 'error')}")
            else:  # expired, canceled
                out[item.custom_id] = Outcome(None, f"batch item {result.type}")
        return out


class OpenAIBatches(_Batches):
    ENDPOINT = "/v1/chat/completions"

    async def submit(self, items: Sequence[tuple[str, CallRequest]]) -> str:
        p, s = self.provider, self.settings
        extra = {} if s.temperature is None else {"temperature": s.temperature}
        lines = [
            json.dumps(
                {
                    "custom_id": cid,
                    "method": "POST",
                    "url": self.ENDPOINT,
                    "body": {
                        "model": p.model,
                        "max_tokens": s.max_tokens,
                        "messages": _messages(r.prompt, None, r.history or ()),
                        **extra,
                    },
                },
                ensure_ascii=False,
            )
            for cid, r in items
        ]
        data = ("\n".join(lines) + "\n").encode()
        upload = await p.client.files.create(file=("ragrail-batch.jsonl", data), purpose="batch")
        batch = await p.client.batches.create(
            input_file_id=upload.id, endpoint=self.ENDPOINT, completion_window="24h"
        )
        return str(batch.id)

    async def poll(self, batch_id: str) -> tuple[bool, int, int]:
        b = await self.provider.client.batches.retrieve(batch_id)
        c = b.request_counts
        done, total = (c.completed + c.failed, c.total) if c is not None else (0, 0)
        ended = b.status in ("completed", "failed", "expired", "cancelled")
        return ended, done, total

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        b = await self.provider.client.batches.retrieve(batch_id)
        out: dict[str, Outcome] = {}
        for file_id in (b.output_file_id, b.error_file_id):
            if not file_id:
                continue
            content = await self.provider.client.files.content(file_id)
            for line in content.text.splitlines():
                row = _json_line(line)
                cid = row.get("custom_id")
                if not isinstance(cid, str):
                    continue
                response = row.get("response") or {}
                body = response.get("body") if isinstance(response, dict) else None
                if isinstance(response, dict) and response.get("status_code") == 200:
                    out[cid] = _completed(partial(_openai_reply, body))
                    continue
                error = row.get("error") or (body or {}).get("error") or {}
                code = error.get("code") or error.get("type") if isinstance(error, dict) else None
                status = response.get("status_code") if isinstance(response, dict) else None
                out[cid] = Outcome(None, f"batch item {code or f'HTTP {status}'}")
        return out


def _openai_reply(body: Any) -> Completion:
    from openai.types.chat import ChatCompletion

    return openai_completion(ChatCompletion.model_validate(body))


def _json_line(line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except ValueError:
        return {}
    return row if isinstance(row, dict) else {}


def _completed(read: Callable[[], Completion]) -> Outcome:
    try:
        return Outcome(read())
    except ReplyError as exc:  # empty: paid for, asked again directly
        return Outcome(Completion("", exc.input_tokens, exc.output_tokens), str(exc))
    except ValueError as exc:  # a body that is not a reply
        return Outcome(None, f"malformed batch item: {str(exc)[:120]}")


def batches_of(provider: Provider, settings: Any) -> _Batches | None:
    kind = {"anthropic": AnthropicBatches, "openai": OpenAIBatches}.get(provider.name)
    return kind(provider, settings) if kind is not None else None


# ---------------------------------------------------------------- resumable state


def state_path(folder: Path, provider: Provider, params: dict[str, Any], ids: list[str]) -> Path:
    """Where the batch of these calls is remembered: named by everything that was asked."""
    what = json.dumps(
        [provider.name, provider.base_url or "", provider.model, params, sorted(set(ids))],
        sort_keys=True,
    )
    return folder / f"{provider.name}-{hashlib.sha256(what.encode()).hexdigest()[:24]}.json"


def read_state(path: Path) -> str | None:
    """The batch id remembered at ``path``; None when there is none (or it is unreadable:
    then a new batch is submitted, as there is no way to find the old one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    batch_id = data.get("batch_id") if isinstance(data, dict) else None
    return batch_id if isinstance(batch_id, str) and batch_id else None


def write_state(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` whole or not at all (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".batch-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- the run


def default_progress(line: str) -> None:
    sys.stderr.write(f"ragrail: {line}\n")
    sys.stderr.flush()


async def run_batch(layer: CallLayer, requests: Sequence[CallRequest]) -> list[CallResult]:
    """Every call of ``requests`` (or its cached reply), the uncached ones in one batch."""
    api = batches_of(layer.provider, layer.settings)
    assert api is not None
    keys = [layer.key(r) for r in requests]
    results: list[CallResult | None] = [layer.from_cache(k) for k in keys]
    todo: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        hit = results[i]
        if hit is None:
            todo.setdefault(key, []).append(i)
        else:
            layer.done(hit)
    if not todo:
        return [r for r in results if r is not None]
    items = [(key, requests[idx[0]]) for key, idx in todo.items()]
    started = time.perf_counter()
    outcomes = await _batch_outcomes(layer, api, items)
    sem = asyncio.Semaphore(max(1, layer.settings.concurrency))

    async def finish(key: str, req: CallRequest) -> CallResult:
        result = await _finish(layer, req, outcomes.get(key), sem, started)
        if result.error is None and layer.cache is not None:
            layer.cache.put(key, layer.provider.name, layer.provider.model, cache_row(result))
        return result

    done = await asyncio.gather(*(finish(k, r) for k, r in items))
    for (key, _), result in zip(items, done, strict=True):
        first, *rest = todo[key]
        results[first] = result
        layer.done(result)
        for i in rest:  # the same call asked twice: sent once, the others as cached
            copy = replace(result, cached=True, attempts=0, requests=0, latency_ms=0.0)
            results[i] = copy
            layer.done(copy)
    if layer.batch_state is not None:
        layer.batch_state.unlink(missing_ok=True)
    return [r for r in results if r is not None]


async def _batch_outcomes(
    layer: CallLayer, api: _Batches, items: list[tuple[str, CallRequest]]
) -> dict[str, Outcome]:
    """Submit the batch (or pick up the one an earlier run submitted), wait, read it."""
    s, say = layer.settings, layer.on_wait or default_progress
    folder = layer.batch_dir()
    path = state_path(folder, layer.provider, s.params(), [k for k, _ in items]) if folder else None
    layer.batch_state = path
    batch_id = read_state(path) if path is not None else None
    try:
        if batch_id is None:
            batch_id = await _retrying(layer, lambda: api.submit(items))
            if path is not None:
                write_state(path, {"batch_id": batch_id, "items": len(items), "at": time.time()})
            say(f"batch {batch_id}: {len(items)} calls submitted to {layer.provider.name}")
        else:
            say(f"batch {batch_id}: resuming the batch an earlier run submitted")
        delay, t0 = s.batch_poll, time.monotonic()
        while True:
            ended, finished, total = await _retrying(layer, lambda: api.poll(batch_id))
            if ended:
                break
            say(
                f"batch {batch_id}: {finished}/{total or len(items)} done, "
                f"{time.monotonic() - t0:.0f} s; next check in {delay:.0f} s"
            )
            await layer.sleep(delay)
            delay = min(delay * 2, s.batch_poll_max)
        return await _retrying(layer, lambda: api.results(batch_id))
    except _Gave_up as exc:  # every item then goes directly, nothing is lost
        say(f"batch failed ({exc}); making the calls directly")
        if path is not None and batch_id is None:
            path.unlink(missing_ok=True)
        return {}


class _Gave_up(Exception):
    pass


async def _retrying(layer: CallLayer, op: Callable[[], Awaitable[T]]) -> T:
    """A batch API request, retried as a call is; _Gave_up when it keeps failing."""
    for attempt in range(1, layer.settings.max_retries + 2):
        try:
            return await op()
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            failure = layer.provider.classify(exc)
            if not failure.retryable or attempt > layer.settings.max_retries:
                raise _Gave_up(layer.provider.redact(failure.message)) from None
            await layer.sleep(layer.backoff(attempt, failure.retry_after))
    raise AssertionError("unreachable")  # pragma: no cover


async def _finish(
    layer: CallLayer,
    req: CallRequest,
    outcome: Outcome | None,
    sem: asyncio.Semaphore,
    started: float,
) -> CallResult:
    """A batch item's result: its reply when usable, else the call made directly (an
    unusable reply re-asked with the problem, as a direct call would be), its batch
    part's tokens and cost added."""
    price = layer.price
    got = outcome.completion if outcome is not None else None
    part = CallResult(text=None, attempts=0, batch=True)
    followup = None
    if got is not None:
        part = CallResult(
            text=got.text,
            input_tokens=got.input_tokens,
            output_tokens=got.output_tokens,
            cost_usd=call_cost(
                price, got.input_tokens, got.output_tokens, got.cache_read, got.cache_write, True
            ),
            attempts=1,
            cache_read_tokens=got.cache_read,
            cache_write_tokens=got.cache_write,
            batch=True,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        problem = outcome.error if outcome is not None else None
        if problem is None and layer.validate is not None:
            problem = layer.validate(got.text)
            if problem is not None:
                followup = Followup(got.text, correction(problem), layer.json_replies)
        if problem is None:
            return replace(part, text=layer.provider.redact(got.text))
    elif outcome is not None:  # an item that errored or expired was sent too, unbilled
        part = replace(part, attempts=1, cost_usd=call_cost(price, 0, 0))
    async with sem:
        direct = await layer.call_direct(req, followup)
    return _merged(part, direct) if part.attempts else direct


def _merged(part: CallResult, direct: CallResult) -> CallResult:
    def add(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a + b

    known = part.cost_usd is not None and direct.cost_usd is not None
    return replace(
        direct,
        input_tokens=add(part.input_tokens, direct.input_tokens),
        output_tokens=add(part.output_tokens, direct.output_tokens),
        cost_usd=(part.cost_usd or 0.0) + (direct.cost_usd or 0.0) if known else None,
        attempts=part.attempts + direct.attempts,
        requests=part.attempts + max(direct.requests, direct.attempts),
        cache_read_tokens=part.cache_read_tokens + direct.cache_read_tokens,
        cache_write_tokens=part.cache_write_tokens + direct.cache_write_tokens,
        batch=False,  # partly at the direct price: its cost is the sum, not halved again
    )
