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

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
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
