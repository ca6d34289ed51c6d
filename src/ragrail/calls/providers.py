"""Model providers behind the shared call layer, through the official SDKs.

Each provider turns one prompt into text plus the API's own usage counts,
and classifies failures as retryable or not. The SDKs are imported only
here, and only when a provider is created, so offline runs never pay for
them. API keys come from the environment alone and are handed to the SDK
client; they are never stored on the provider, in results or in the cache.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragrail.errors import InputError

KEY_VARS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_VARS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
DEFAULT_MODELS = {"anthropic": "claude-opus-5"}


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int | None  # None: the server did not report usage (unknown, not 0)
    output_tokens: int | None
    # of input_tokens, those read from / written to the provider's prompt cache
    cache_read: int = 0
    cache_write: int = 0
    requests: int = 1  # requests this reply took (2: a JSON-mode ask refused with HTTP 400)


@dataclass(frozen=True)
class Followup:
    """A second ask in the same conversation: the reply that could not be used, and
    what was wrong with it. Asking the identical prompt again at temperature 0 gets the
    identical reply; showing the model its mistake does not."""

    previous: str
    correction: str
    json_mode: bool = False  # ask for structured JSON output where the server supports it


def correction(problem: str) -> str:
    """The follow-up message that re-asks for a reply the caller could not parse."""
    return (
        f"Your reply could not be used: {problem}. Reply again with only the JSON object "
        "the instructions above ask for, with nothing before or after it."
    )


@dataclass(frozen=True)
class Failure:
    """A classified call failure."""

    message: str
    retryable: bool
    retry_after: float | None = None
    input_tokens: int | None = None  # what a failed reply cost, when the server said
    output_tokens: int | None = None
    requests: int = 1  # requests the failed attempt sent (2 after a refused JSON-mode ask)


class ReplyError(Exception):
    """A reply that arrived but cannot be used (empty, HTML, the wrong shape).

    Retried like a dropped connection; carries the usage the server reported,
    since such a reply may still have been paid for.
    """

    def __init__(
        self, message: str, input_tokens: int | None = None, output_tokens: int | None = None
    ) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


EMPTY_REPLY = "empty reply from the model"


def not_json_reply(body: str) -> ReplyError:
    """The error for a 200 reply whose body is not JSON: usually a web page at a wrong base URL."""
    if body.lstrip()[:1] == "<":
        return ReplyError("the server answered with HTML, not JSON (is base_url right?)")
    return ReplyError("the server answered with something that is not JSON (is base_url right?)")


class Provider:
    """Base class: ``name``, ``model``, ``base_url`` and an async ``complete``."""

    name: str = ""

    def __init__(self, model: str, base_url: str | None, timeout: float) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self._client: Any = None

    def _make_client(self) -> Any:
        raise NotImplementedError

    def secrets(self) -> tuple[str, ...]:
        """Values that must never reach a result, a cache row or the screen (API keys)."""
        return ()

    def redact(self, text: str | None) -> str | None:
        """``text`` with every secret replaced: a hostile or misconfigured server can
        echo the key back in a reply or an error message."""
        if not text:
            return text
        for secret in self.secrets():
            if len(secret) >= 8 and secret in text:  # a short value would blot out words
                text = text.replace(secret, "[redacted]")
        return text

    @property
    def client(self) -> Any:
        # Made lazily inside the running event loop: an async HTTP client
        # belongs to one loop, and each CallLayer.run() starts a new one.
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def complete(
        self,
        prompt: str,
        max_tokens: int,
        temperature: float | None,
        followup: Followup | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Completion:
        raise NotImplementedError

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def classify(self, exc: BaseException) -> Failure:
        """Map an SDK exception to a Failure; both SDKs share the same error shapes."""
        sent = 1 + int(getattr(exc, "ragrail_refused_json_mode", 0))
        failure = self._classify(exc)
        return failure if sent == 1 else dataclasses.replace(failure, requests=sent)

    def _classify(self, exc: BaseException) -> Failure:
        if isinstance(exc, ReplyError):
            return Failure(str(exc), True, None, exc.input_tokens, exc.output_tokens)
        status = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None)
        if status is not None:
            retry_after = _retry_after(response)
            retryable = status in (408, 409, 429) or status >= 500
            return Failure(f"HTTP {status}{_error_kind(exc)}", retryable, retry_after)
        kind = type(exc).__name__
        if "Timeout" in kind:
            return Failure(f"timed out after {self.timeout:g} s", True)
        if "Connection" in kind:
            return Failure(f"connection failed: {_short(exc)}", True)
        if isinstance(exc, ValueError) or "Validation" in kind:
            # A reply the SDK could not parse (malformed JSON): worth another try.
            doc = getattr(exc, "doc", None)  # json.JSONDecodeError keeps the body it read
            if isinstance(doc, str) and doc.lstrip()[:1] == "<":
                return Failure(str(not_json_reply(doc)), True)
            return Failure(f"malformed reply: {_short(exc)}", True)
        return Failure(f"{kind}: {_short(exc)}", False)


def _error_kind(exc: BaseException) -> str:
    """The API's own error type or message, if the body had one (" overloaded_error")."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            kind = err.get("type") or err.get("message")
            if kind:
                return f" {str(kind)[:80]}"
    return ""


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "")


def _retry_after(response: Any) -> float | None:
    """Seconds the server asked to wait: ``retry-after`` as seconds or an HTTP date."""
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if value is None:
        return None
    seconds: float | None
    try:
        seconds = float(value)
    except ValueError:
        seconds = _seconds_until(value)
    if seconds is None or math.isnan(seconds):
        return None
    return max(0.0, seconds)  # an infinite wait is capped by the call layer, and reported


def _seconds_until(http_date: str) -> float | None:
    import email.utils
    import time

    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - time.time()


NO_ANSWER = "(no answer)"  # an earlier turn that got none: chat APIs refuse empty messages


def _messages(
    prompt: str, followup: Followup | None, history: Sequence[tuple[str, str]] = ()
) -> list[dict[str, str]]:
    """The conversation to send: a conversation's earlier turns (each question a user
    message, the answer given an assistant message), the prompt, and for a re-ask the
    unusable reply and why."""
    messages = []
    for question, answer in history:
        messages.append({"role": "user", "content": question.strip() or NO_ANSWER})
        messages.append({"role": "assistant", "content": answer.strip() or NO_ANSWER})
    messages.append({"role": "user", "content": prompt})
    if followup is not None:
        messages.append({"role": "assistant", "content": followup.previous.strip() or "(empty)"})
        messages.append({"role": "user", "content": followup.correction})
    return messages


MAX_TOKENS_REPORTED = 2**53  # beyond this a count is garbage (and overflows a cost)


def _tokens(usage: Any, name: str) -> int | None:
    """A usage count from a reply, or None when the server left it out or sent one
    that cannot be a count (negative, not whole, absurdly large): unknown, not 0."""
    value = getattr(usage, name, None) if usage is not None else None
    ok = (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS_REPORTED
    )
    return value if ok else None


def _completion(
    text: str, n_in: int | None, n_out: int | None, read: int = 0, write: int = 0
) -> Completion:
    """A reply's text (lone surrogates made U+FFFD: no file could hold them) and usage."""
    from ragrail.jsonio import scrub_surrogates

    return Completion(scrub_surrogates(text), n_in, n_out, read, write)


def anthropic_usage(usage: Any) -> tuple[int | None, int | None, int, int]:
    """(input, output, cache read, cache write) from a Messages reply's usage. Anthropic
    counts cache reads and writes apart from ``input_tokens``: they are added in, so
    ``input`` is the whole prompt as with OpenAI, and each part is priced apart."""
    n_in, n_out = _tokens(usage, "input_tokens"), _tokens(usage, "output_tokens")
    read = _tokens(usage, "cache_read_input_tokens") or 0
    write = _tokens(usage, "cache_creation_input_tokens") or 0
    if n_in is not None:
        n_in += read + write
    return n_in, n_out, read, write


def openai_usage(usage: Any) -> tuple[int | None, int | None, int]:
    """(input, output, cached input) from a Chat Completions reply's usage: the cached
    tokens (``prompt_tokens_details.cached_tokens``) are part of ``prompt_tokens``."""
    n_in, n_out = _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens")
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
        cached = cached if isinstance(cached, int) and not isinstance(cached, bool) else None
    else:
        cached = _tokens(details, "cached_tokens")
    cached = cached or 0
    return n_in, n_out, min(cached, n_in) if n_in is not None else 0


def _api_key(provider: str, setting: str = "") -> str:
    var = KEY_VARS[provider]
    key = os.environ.get(var, "").strip()
    if not key:
        flag = "--judge" if setting == JUDGE_URL else "--answerer"
        raise InputError(f"{var} is not set: export it before using {flag} {provider}")
    return key


ANSWERER_URL = "--base-url ([answerer] base_url)"
JUDGE_URL = "--judge-base-url ([judge] base_url)"


def _base_url(provider: str, given: str | None, setting: str) -> str | None:
    """The API base URL to call: ``given``, else the provider's environment variable.

    One that cannot be an HTTP URL (``not a url``, ``file:///...``, no host) is an
    InputError naming where it came from: retried as a network failure, it would
    read as every call failing (exit 3) instead of a setting to fix (exit 2).
    """
    from ragrail.calls.urls import url_problem

    var = BASE_URL_VARS[provider]
    url, source = (given, setting) if given else (os.environ.get(var), var)
    if url is None:
        return None
    problem = url_problem(url)
    if problem is not None:
        raise InputError(f"{source}: the {provider} API base URL {problem}")
    return url


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(
        self, model: str, base_url: str | None, timeout: float, setting: str = ANSWERER_URL
    ) -> None:
        self._key = _api_key("anthropic", setting)  # a missing key fails before any work
        super().__init__(model, _base_url("anthropic", base_url, setting), timeout)

    def secrets(self) -> tuple[str, ...]:
        return (self._key,)

    def _accepts(self, name: str) -> bool:
        import inspect

        return name in inspect.signature(self.client.messages.create).parameters

    def _make_client(self) -> Any:
        import anthropic

        # Retries are the call layer's job (it counts and shows them): the SDK makes one try.
        return anthropic.AsyncAnthropic(
            api_key=self._key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    async def complete(
        self,
        prompt: str,
        max_tokens: int,
        temperature: float | None,
        followup: Followup | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Completion:
        kwargs: dict[str, Any] = {}
        if temperature is not None and self._accepts("temperature"):
            # Newer Messages APIs dropped sampling parameters; send one only where it exists.
            kwargs["temperature"] = temperature
        # The Messages API has no JSON mode to ask for: a re-ask relies on the follow-up.
        msg = await self.client.messages.create(
            model=self.model,
            max_tokens=max_tokens,
            messages=_messages(prompt, followup, history),
            **kwargs,
        )
        return anthropic_completion(msg)


def anthropic_completion(msg: Any) -> Completion:
    """Text and usage from a Messages reply; a reply with no text is a failed call."""
    if isinstance(msg, str):  # the SDK hands back a body it could not read as JSON
        raise not_json_reply(msg)
    n_in, n_out, read, write = anthropic_usage(getattr(msg, "usage", None))
    blocks = getattr(msg, "content", None)
    if not isinstance(blocks, list):
        blocks = []
    text = "".join(t for t in (getattr(b, "text", None) for b in blocks) if isinstance(t, str))
    if not text.strip():
        raise ReplyError(EMPTY_REPLY, n_in, n_out)
    return _completion(text, n_in, n_out, read, write)


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(
        self, model: str, base_url: str | None, timeout: float, setting: str = ANSWERER_URL
    ) -> None:
        self._key = _api_key("openai", setting)
        super().__init__(model, _base_url("openai", base_url, setting), timeout)
        self.json_mode_ok = True  # until the server refuses response_format once

    def secrets(self) -> tuple[str, ...]:
        return (self._key,)

    def _make_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key=self._key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    async def complete(
        self,
        prompt: str,
        max_tokens: int,
        temperature: float | None,
        followup: Followup | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Completion:
        kwargs: dict[str, Any] = {}
        if temperature is not None:
            kwargs["temperature"] = temperature
        messages = _messages(prompt, followup, history)
        if followup is not None and followup.json_mode and self.json_mode_ok:
            try:
                resp = await self.client.chat.completions.create(
                    model=self.model,
                    max_tokens=max_tokens,
                    messages=messages,
                    response_format={"type": "json_object"},
                    **kwargs,
                )
                return openai_completion(resp)
            except Exception as exc:
                if getattr(exc, "status_code", None) not in (400, 422):
                    raise
                # This server does not take response_format: ask without it from now on.
                self.json_mode_ok = False
            # The refused request was sent too: it is counted as one (README: calls
            # counts requests sent), on the reply or on the failure of the second ask.
            try:
                resp = await self.client.chat.completions.create(
                    model=self.model, max_tokens=max_tokens, messages=messages, **kwargs
                )
                return dataclasses.replace(openai_completion(resp), requests=2)
            except Exception as exc:
                exc.ragrail_refused_json_mode = 1  # type: ignore[attr-defined]
                raise
        resp = await self.client.chat.completions.create(
            model=self.model, max_tokens=max_tokens, messages=messages, **kwargs
        )
        return openai_completion(resp)


def openai_completion(resp: Any) -> Completion:
    """Text and usage from a Chat Completions reply; a reply with no text is a failed call."""
    if isinstance(resp, str):  # the SDK hands back a body it could not read as JSON
        raise not_json_reply(resp)
    n_in, n_out, read = openai_usage(getattr(resp, "usage", None))
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ReplyError(EMPTY_REPLY, n_in, n_out)
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if isinstance(content, list):  # some servers send content parts
        content = "".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(getattr(p, "text", ""))
            for p in content
        )
    if not isinstance(content, str) or not content.strip():
        raise ReplyError(EMPTY_REPLY, n_in, n_out)
    return _completion(content, n_in, n_out, read)


def make_provider(
    name: str,
    model: str | None,
    base_url: str | None,
    timeout: float,
    setting: str = ANSWERER_URL,
) -> Provider:
    """The provider ``name``; ``setting`` names where ``base_url`` came from, for errors."""
    if name == "anthropic":
        return AnthropicProvider(model or DEFAULT_MODELS["anthropic"], base_url, timeout, setting)
    if name == "openai":
        if not model:
            raise InputError("--answerer openai needs --model NAME (the server's model name)")
        return OpenAIProvider(model, base_url, timeout, setting)
    raise InputError(f"unknown provider {name!r}; choose anthropic or openai")


class EndpointProvider(Provider):
    """A user's RAG service over HTTP: POST a JSON body with the question, get JSON back.

    The reply body is returned as the completion's text (the system adapter
    parses it); retries, timeouts and concurrency come from the call layer.
    """

    name = "http"

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any],
        question_field: str,
        timeout: float,
        secrets: tuple[str, ...] = (),
        messages: Callable[[Sequence[tuple[str, str]]], tuple[str, Any] | None] | None = None,
    ) -> None:
        """``secrets``: the header values taken from the environment (``${VAR}``).
        ``messages``: for a turn of a conversation, the body field and value that carry
        its earlier turns (None: none is sent)."""
        super().__init__(model="endpoint", base_url=url, timeout=timeout)
        self._headers = headers  # may hold secrets from the environment: never logged or stored
        self._body = body
        self._question_field = question_field
        self._secrets = tuple(secrets)
        self._messages = messages

    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def _make_client(self) -> Any:
        import httpx

        return httpx.AsyncClient(timeout=self.timeout, headers=self._headers)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def complete(
        self,
        prompt: str,
        max_tokens: int,
        temperature: float | None,
        followup: Followup | None = None,
        history: Sequence[tuple[str, str]] | None = None,
    ) -> Completion:
        # set_path writes into nested objects: never into the ones every request shares
        body = copy.deepcopy(self._body)
        set_path(body, self._question_field, prompt)
        # only a turn of a conversation carries a history (its first turn an empty one)
        field = None if history is None or self._messages is None else self._messages(history)
        if field is not None:
            set_path(body, *field)
        response = await self.client.post(self.base_url, json=body)
        response.raise_for_status()
        return Completion(response.text, 0, 0)

    def classify(self, exc: BaseException) -> Failure:
        import httpx

        if isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            retryable = status in (408, 409, 429) or status >= 500
            return Failure(
                f"HTTP {status} from {self.base_url}", retryable, _retry_after(exc.response)
            )
        if isinstance(exc, httpx.TimeoutException):
            return Failure(f"timed out after {self.timeout:g} s", True)
        if isinstance(exc, httpx.TransportError):
            return Failure(f"connection failed: {_short(exc) or type(exc).__name__}", True)
        return Failure(f"{type(exc).__name__}: {_short(exc)}", False)


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating the levels."""
    keys = dotted.split(".")
    for key in keys[:-1]:
        data = data.setdefault(key, {})
    data[keys[-1]] = value


def get_path(data: Any, dotted: str) -> Any:
    """Read ``a.b.0.c`` from nested dicts and lists; None when absent."""
    for key in dotted.split("."):
        if isinstance(data, dict):
            data = data.get(key)
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            return None
    return data
