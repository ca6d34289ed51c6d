"""A local HTTP server that speaks the Anthropic Messages API and the OpenAI Chat
Completions API, for tests and benchmarks. It listens on 127.0.0.1 only.

Replies are scripted: ``script(request)`` returns a ``Reply`` (or a list of
them to play in turn for successive calls with the same prompt). Faults are
replies too: a status code with ``retry-after``, a delay past the client's
timeout, a malformed body, an HTML page, an empty reply (``shape``), a reply
without usage counts, a dropped connection. ``faults`` replaces the reply to the
Nth request received (1-based), whatever its prompt; ``slots`` makes a server
that works on that many requests at once (the rest wait, as on a one-GPU box).
The server records every request, the usage it reported for each, and the peak
number of requests it had in hand at once.

Both batch APIs are served too: Anthropic's Message Batches (create, retrieve,
results) and OpenAI's Batch API (files upload, batches create and retrieve, output
and error files). Each item is answered by the same script as a direct request (and
recorded in ``batched``, not ``received``); ``polls_to_end`` retrieves see a batch
in progress before it ends; ``expire(req)`` makes an item expire;
``batch_faults`` replaces the Nth batch API request (1-based) with an HTTP status.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None  # sent as the body instead of a proper reply
    drop: bool = False  # close the connection without answering
    input_tokens: int | None = None
    output_tokens: int | None = None
    content_type: str = "application/json"
    # An empty reply: "null" (content null), "[]" (content []), "no_choices" (OpenAI
    # choices: []); None for a proper reply carrying ``text``.
    shape: str | None = None
    usage: bool = True  # False: the reply has no usage counts (as some servers do)
    # Of the input tokens, those read from / written to a prompt cache: Anthropic reports
    # them beside input_tokens, OpenAI inside prompt_tokens (cached_tokens, reads only).
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class Received:
    api: str  # "anthropic" or "openai"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    reported: tuple[int, int] | None = None  # the usage this server replied with, if any

    @property
    def user_messages(self) -> list[str]:
        return [m["content"] for m in self.body["messages"] if m["role"] == "user"]

    def _prompt_at(self) -> int:
        """Where the task prompt is among the messages: the first user message of several
        lines (the prompts are; a conversation's earlier questions are one line), else the
        first user message."""
        messages = self.body["messages"]
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        return next((i for i in users if "\n" in messages[i]["content"]), users[0])

    @property
    def prompt(self) -> str:
        """The task prompt (a conversation's earlier turns come before it; a re-ask keeps
        it and adds a follow-up)."""
        return str(self.body["messages"][self._prompt_at()]["content"])

    @property
    def history(self) -> list[tuple[str, str]]:
        """A conversation's earlier turns sent before the prompt: (question, answer) pairs."""
        before = self.body["messages"][: self._prompt_at()]
        return [
            (u["content"], a["content"]) for u, a in zip(before[::2], before[1::2], strict=True)
        ]

    @property
    def followup(self) -> str | None:
        """The follow-up message of a re-ask, or None for a first ask."""
        after = self.body["messages"][self._prompt_at() + 1 :]
        users = [m["content"] for m in after if m["role"] == "user"]
        return users[-1] if users else None


def question_of(prompt: str) -> str:
    m = re.search(r"^Question: (.*)$", prompt, re.M)
    return m.group(1).strip() if m else ""


def top_excerpt(prompt: str) -> tuple[str, str] | None:
    m = re.search(r"^\[([^\]]+#\d+)\] (.*?)(?=\n\n\[|\n\nQuestion:)", prompt, re.M | re.S)
    return (m.group(1), m.group(2)) if m else None


def paste_top_chunk(req: Received) -> Reply:
    """Default script: behave like the stand-in (paste the top excerpt, cite it)."""
    top = top_excerpt(req.prompt)
    if top is None:
        return Reply(text="I don't know.")
    cid, text = top
    return Reply(text=f"{text} [{cid}]")


Script = Callable[[Received], "Reply | list[Reply]"]


class FakeLLM:
    def __init__(
        self,
        script: Script = paste_top_chunk,
        latency: float = 0.0,
        faults: dict[int, Reply] | None = None,
        slots: int | None = None,
        polls_to_end: int = 0,
        expire: Callable[[Received], bool] | None = None,
        batch_faults: dict[int, int] | None = None,
    ) -> None:
        self.script = script
        self.latency = latency
        self.faults = faults or {}
        self.received: list[Received] = []
        self.peak = 0  # the most requests in hand at once (answered or waiting for a slot)
        self._active = 0
        self._slots = threading.Semaphore(slots) if slots else None
        self._plays: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.polls_to_end = polls_to_end
        self.expire = expire
        self.batch_faults = batch_faults or {}
        self.batched: list[Received] = []  # batch items answered
        self.batch_ops: list[str] = []  # batch API requests: "POST /v1/batches", ...
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}

    # -- lifecycle
    def __enter__(self) -> FakeLLM:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = _handler_for(self)
        # a listen backlog of 5 (the default) drops connections when 16 clients start at once
        server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 128})
        self._server = server_cls(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def anthropic_url(self) -> str:
        return self.url

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    # -- behaviour
    def reply_for(self, req: Received) -> Reply:
        scripted = self.script(req)
        if isinstance(scripted, Reply):
            return scripted
        with self._lock:
            key = req.prompt
            n = self._plays.get(key, 0)
            self._plays[key] = n + 1
        return scripted[min(n, len(scripted) - 1)]

    def calls(self, api: str | None = None) -> list[Received]:
        return [r for r in self.received if api is None or r.api == api]

    @property
    def count(self) -> int:
        """Requests received, faults and retries included."""
        return len(self.received)

    def reported_tokens(self) -> tuple[int, int]:
        """The input and output tokens this server reported over every reply."""
        pairs = [r.reported for r in self.received if r.reported is not None]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes; without NODELAY, Nagle's
            # algorithm meets the client's delayed ACK and adds ~40 ms per reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            self._batch_api("GET", b"")

        def _batch_api(self, method: str, data: bytes) -> None:
            path = self.path.split("?")[0]
            with fake._lock:
                fake.batch_ops.append(f"{method} {path}")
                status = fake.batch_faults.get(len(fake.batch_ops))
            if status is not None:
                self._send(status, _error_body("anthropic", status))
                return
            answer = _batch_route(fake, method, path, data, self.headers)
            if answer is None:
                self._send(404, {"error": {"message": f"no route {method} {path}"}})
            elif isinstance(answer, bytes):
                self._send_bytes(200, answer, {}, "application/octet-stream")
            else:
                self._send(200, answer)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            data = self.rfile.read(length)
            if "/batches" in self.path or self.path.split("?")[0].endswith("/v1/files"):
                self._batch_api("POST", data)
                return
            body = json.loads(data or b"{}")
            if self.path.endswith("/v1/messages"):
                api = "anthropic"
            elif self.path.endswith("/chat/completions"):
                api = "openai"
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            req = Received(api, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with fake._lock:
                fake.received.append(req)
                number = len(fake.received)
            reply = fake.faults.get(number) or fake.reply_for(req)
            with fake._lock:  # in hand: received, waiting for a slot or being worked on
                fake._active += 1
                fake.peak = max(fake.peak, fake._active)
            if fake._slots is not None:
                fake._slots.acquire()
            try:
                if fake.latency:
                    time.sleep(fake.latency)
                if reply.delay:
                    time.sleep(reply.delay)
            finally:
                # out of hand before the reply goes out, so a client that sends its next
                # request on receiving this reply never sees two in hand
                with fake._lock:
                    fake._active -= 1
                if fake._slots is not None:
                    fake._slots.release()
            self._answer(api, body, req, reply)

        def _answer(self, api: str, body: dict[str, Any], req: Received, reply: Reply) -> None:
            if reply.drop:
                self.connection.shutdown(socket.SHUT_RDWR)
                self.connection.close()
                return
            if reply.raw is not None:
                self._send_bytes(reply.status, reply.raw, reply.headers, reply.content_type)
                return
            if reply.status != 200:
                self._send(reply.status, _error_body(api, reply.status), reply.headers)
                return
            n_in = reply.input_tokens if reply.input_tokens is not None else len(req.prompt) // 4
            n_out = (
                reply.output_tokens
                if reply.output_tokens is not None
                else max(1, len(reply.text) // 4)
            )
            payload = ok_body(api, body.get("model", ""), reply, n_in, n_out)
            _reshape(api, payload, reply.shape)
            if reply.usage:
                req.reported = (n_in, n_out)
            else:
                payload.pop("usage")
            self._send(200, payload, reply.headers)

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), headers or {})

        def _send_bytes(
            self,
            status: int,
            data: bytes,
            headers: dict[str, str],
            content_type: str = "application/json",
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a scripted timeout): nothing to answer

    return Handler


def _batch_route(
    fake: FakeLLM, method: str, path: str, data: bytes, headers: Any
) -> dict[str, Any] | bytes | None:
    """The answer of a batch API request: a JSON object, file bytes, or None (no route)."""
    parts = path.strip("/").split("/")
    if method == "POST" and parts == ["v1", "messages", "batches"]:
        requests = json.loads(data)["requests"]
        items = [(r["custom_id"], r["params"]) for r in requests]
        return _anthropic_batch(fake, _new_batch(fake, "anthropic", items, "msgbatch_"))
    if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4 and method == "GET":
        return _anthropic_batch(fake, _poll(fake, parts[3]))
    if parts[:3] == ["v1", "messages", "batches"] and parts[4:] == ["results"]:
        batch = fake.batches[parts[3]]
        return "".join(json.dumps(_anthropic_item(i)) + "\n" for i in batch["items"]).encode()
    if method == "POST" and parts == ["v1", "files"]:
        import email.parser

        head = f"Content-Type: {headers.get('content-type')}\r\n\r\n".encode()
        msg = email.parser.BytesParser().parsebytes(head + data)
        content = next(
            p.get_payload(decode=True)
            for p in msg.get_payload()
            if p.get_param("name", header="content-disposition") == "file"
        )
        file_id = f"file-{len(fake.files) + 1}"
        fake.files[file_id] = content
        return _file(file_id, content)
    if method == "POST" and parts == ["v1", "batches"]:
        body = json.loads(data)
        lines = fake.files[body["input_file_id"]].decode().splitlines()
        items = [(r["custom_id"], r["body"]) for r in map(json.loads, lines)]
        batch = _new_batch(fake, "openai", items, "batch_")
        batch["input_file_id"] = body["input_file_id"]
        return _openai_batch(fake, batch)
    if parts[:2] == ["v1", "batches"] and len(parts) == 3 and method == "GET":
        return _openai_batch(fake, _poll(fake, parts[2]))
    if parts[:2] == ["v1", "files"] and parts[3:] == ["content"]:
        return fake.files[parts[2]]
    return None


def _new_batch(
    fake: FakeLLM, api: str, items: list[tuple[str, dict[str, Any]]], prefix: str
) -> dict[str, Any]:
    """A batch whose items are answered now, by the script, as direct requests would be."""
    done = []
    for custom_id, params in items:
        req = Received(api, "batch", {}, params)
        if fake.expire is not None and fake.expire(req):
            done.append({"custom_id": custom_id, "api": api, "expired": True})
            continue
        reply = fake.reply_for(req)
        item: dict[str, Any] = {"custom_id": custom_id, "api": api, "status": reply.status}
        if reply.status == 200:
            n_in = reply.input_tokens if reply.input_tokens is not None else len(req.prompt) // 4
            n_out = reply.output_tokens if reply.output_tokens is not None else len(reply.text) // 4
            item["body"] = ok_body(api, params.get("model", ""), reply, n_in, max(1, n_out))
            _reshape(api, item["body"], reply.shape)
            req.reported = (n_in, max(1, n_out))
        done.append(item)
        with fake._lock:
            fake.batched.append(req)
    with fake._lock:
        batch_id = f"{prefix}{len(fake.batches) + 1}"
        fake.batches[batch_id] = {"id": batch_id, "items": done, "polls": 0, "api": api}
    return fake.batches[batch_id]


def _poll(fake: FakeLLM, batch_id: str) -> dict[str, Any]:
    batch = fake.batches[batch_id]
    with fake._lock:
        batch["polls"] += 1
    return batch


def _ended(fake: FakeLLM, batch: dict[str, Any]) -> bool:
    return bool(batch["polls"] > fake.polls_to_end)


def _anthropic_batch(fake: FakeLLM, batch: dict[str, Any]) -> dict[str, Any]:
    ended, items = _ended(fake, batch), batch["items"]
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    for i in items:
        kind = _anthropic_item(i)["result"]["type"]
        counts[kind if ended else "processing"] += 1
    return {
        "id": batch["id"],
        "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": counts,
        "created_at": "2026-01-01T00:00:00Z",
        "expires_at": "2026-01-02T00:00:00Z",
        "ended_at": "2026-01-01T00:10:00Z" if ended else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"{fake.url}/v1/messages/batches/{batch['id']}/results" if ended else None,
    }


def _anthropic_item(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("expired"):
        return {"custom_id": item["custom_id"], "result": {"type": "expired"}}
    if item["status"] != 200:
        error = _error_body("anthropic", item["status"])
        return {"custom_id": item["custom_id"], "result": {"type": "errored", "error": error}}
    return {
        "custom_id": item["custom_id"],
        "result": {"type": "succeeded", "message": item["body"]},
    }


def _openai_batch(fake: FakeLLM, batch: dict[str, Any]) -> dict[str, Any]:
    ended, items = _ended(fake, batch), batch["items"]
    good = [i for i in items if not i.get("expired") and i["status"] == 200]
    bad = [i for i in items if i not in good]
    out_id = err_id = None
    if ended and "output" not in batch:
        batch["output"] = batch["id"] + "-out"
        fake.files[batch["output"]] = "".join(
            json.dumps(
                {
                    "id": f"req-{n}",
                    "custom_id": i["custom_id"],
                    "response": {"status_code": 200, "request_id": "r", "body": i["body"]},
                    "error": None,
                }
            )
            + "\n"
            for n, i in enumerate(good)
        ).encode()
        if bad:
            batch["errors"] = batch["id"] + "-err"
            fake.files[batch["errors"]] = "".join(
                json.dumps(_openai_error_line(i)) + "\n" for i in bad
            ).encode()
    if ended:
        out_id, err_id = batch.get("output") if good else None, batch.get("errors")
    return {
        "id": batch["id"],
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": None,
        "input_file_id": batch.get("input_file_id", ""),
        "completion_window": "24h",
        "status": "completed" if ended else "in_progress",
        "output_file_id": out_id,
        "error_file_id": err_id,
        "created_at": 0,
        "request_counts": {
            "total": len(items),
            "completed": len(good) if ended else 0,
            "failed": len(bad) if ended else 0,
        },
    }


def _openai_error_line(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("expired"):
        error = {"code": "batch_expired", "message": "expired before it ran"}
        return {"id": "req-x", "custom_id": item["custom_id"], "response": None, "error": error}
    response = {"status_code": item["status"], "body": _error_body("openai", item["status"])}
    return {"id": "req-x", "custom_id": item["custom_id"], "response": response, "error": None}


def _file(file_id: str, content: bytes) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": 0,
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def ok_body(api: str, model: str, reply: Reply, n_in: int, n_out: int) -> dict[str, Any]:
    """A proper reply of ``n_in`` prompt tokens (cached ones included) and ``n_out``."""
    text = reply.text
    if api == "anthropic":
        usage: dict[str, Any] = {"input_tokens": n_in - reply.cache_read - reply.cache_write}
        usage["output_tokens"] = n_out
        if reply.cache_read or reply.cache_write:
            usage["cache_read_input_tokens"] = reply.cache_read
            usage["cache_creation_input_tokens"] = reply.cache_write
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
    tokens: dict[str, Any] = {"prompt_tokens": n_in, "completion_tokens": n_out}
    tokens["total_tokens"] = n_in + n_out
    if reply.cache_read:
        tokens["prompt_tokens_details"] = {"cached_tokens": reply.cache_read}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": tokens,
    }


def _reshape(api: str, payload: dict[str, Any], shape: str | None) -> None:
    """Make a proper reply empty in one of the ways real servers do."""
    if shape is None:
        return
    if shape == "no_choices":
        payload["choices"] = []
    elif api == "anthropic":
        payload["content"] = None if shape == "null" else []
    else:
        payload["choices"][0]["message"]["content"] = None if shape == "null" else []


def _error_body(api: str, status: int) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}
    return {"error": {"message": f"scripted {status}", "type": kind, "code": None}}
