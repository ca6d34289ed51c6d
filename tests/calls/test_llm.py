"""The shared call layer against a local fake API, through the real SDKs."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time

import pytest

from ragrail.calls.cache import ResponseCache, cache_key
from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
from ragrail.calls.prices import Price
from ragrail.calls.providers import make_provider
from tests.fake_llm import FakeLLM, Reply

KEY = "sk-test-DO-NOT-LEAK-42"


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def layer(fake: FakeLLM, api: str = "anthropic", cache=None, **settings) -> tuple[CallLayer, list]:
    url = fake.anthropic_url if api == "anthropic" else fake.openai_url
    provider = make_provider(api, "test-model", url, settings.pop("timeout", 5.0))
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    lay = CallLayer(
        provider, CallSettings(**settings), cache=cache, price=Price(5.0, 25.0), sleep=record_sleep
    )
    return lay, waits


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_usage_and_cost_come_from_the_api(api):
    with FakeLLM(lambda r: Reply(text="ok", input_tokens=1000, output_tokens=200)) as fake:
        lay, _ = layer(fake, api)
        [res] = lay.run([CallRequest("hello")])
    assert res.text == "ok" and res.error is None and res.attempts == 1
    assert (res.input_tokens, res.output_tokens) == (1000, 200)
    assert res.cost_usd == pytest.approx(1000 * 5 / 1e6 + 200 * 25 / 1e6)
    assert fake.calls(api)[0].body["model"] == "test-model"


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "fault",
    [
        Reply(status=429, headers={"retry-after": "7"}),
        Reply(status=529),
        Reply(status=500),
        Reply(raw=b"{not json"),
        Reply(drop=True),
        Reply(delay=1.5, text="too late"),
    ],
    ids=["429", "529", "500", "malformed", "dropped", "slow"],
)
def test_transient_faults_are_retried(api, fault):
    with FakeLLM(lambda r: [fault, fault, Reply(text="finally")]) as fake:
        lay, waits = layer(fake, api, timeout=0.5, max_retries=4)
        [res] = lay.run([CallRequest("p")])
    assert res.error is None and res.text == "finally"
    assert res.attempts == 3 and len(fake.received) == 3
    assert len(waits) == 2
    if fault.headers.get("retry-after"):
        assert waits == [7.0, 7.0]  # the server's retry-after is honoured
    else:
        # exponential backoff with jitter: attempt n waits base * 2**(n-1) * U(0.5, 1)
        assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0


def test_a_call_that_keeps_failing_is_an_error_not_a_pass():
    with FakeLLM(lambda r: Reply(status=503)) as fake:
        lay, _waits = layer(fake, max_retries=2)
        [res] = lay.run([CallRequest("p")])
    assert res.text is None
    assert res.error == "HTTP 503 api_error (after 3 attempts)"
    assert len(fake.received) == 3 and lay.usage.errors == 1


def test_client_errors_are_not_retried():
    with FakeLLM(lambda r: Reply(status=400)) as fake:
        lay, waits = layer(fake, max_retries=4)
        [res] = lay.run([CallRequest("p")])
    assert res.error.startswith("HTTP 400") and res.attempts == 1 and waits == []


def test_retry_after_above_the_cap_is_capped_and_reported_once(recwarn):
    busy = Reply(status=429, headers={"retry-after": "3600"})
    with FakeLLM(lambda r: [busy, busy, Reply(text="ok")]) as fake:
        lay, waits = layer(fake, max_retries=4)
        [res] = lay.run([CallRequest("p")])
    assert res.text == "ok" and waits == [60.0, 60.0]
    said = [str(w.message) for w in recwarn.list]
    assert said == ["server asked to wait 3600s; capped at 60s"]  # one line, not one per retry


def test_retry_after_within_the_cap_is_honoured_silently(recwarn):
    with FakeLLM(
        lambda r: [Reply(status=529, headers={"retry-after": "2"}), Reply(text="ok")]
    ) as fake:
        lay, waits = layer(fake)
        lay.run([CallRequest("p")])
    assert waits == [2.0] and recwarn.list == []


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("shape", ["null", "[]", "no_choices", "empty string"])
def test_an_empty_reply_is_a_failed_call_retried_then_a_plain_error(api, shape):
    empty = Reply(text="", input_tokens=40, output_tokens=0)
    if shape != "empty string":
        empty.shape = shape
    with FakeLLM(lambda r: empty) as fake:
        lay, waits = layer(fake, api, max_retries=2)
        [res] = lay.run([CallRequest("p")])
    assert res.text is None
    assert res.error == "empty reply from the model (after 3 attempts)"
    assert fake.count == 3 and len(waits) == 2
    # the empty replies were still paid for: 3 x 40 input tokens at $5 per million
    assert (res.input_tokens, res.output_tokens) == (120, 0)
    u = lay.usage.summary()
    assert (u.calls, u.errors, u.retries, u.input_tokens) == (3, 1, 2, 120)
    assert u.cost_usd == pytest.approx(120 * 5 / 1e6)


def test_an_empty_reply_then_a_real_one_is_an_answer():
    with FakeLLM(lambda r: [Reply(shape="[]"), Reply(text="fine")]) as fake:
        lay, _ = layer(fake, "openai")
        [res] = lay.run([CallRequest("p")])
    assert (res.text, res.error, res.attempts) == ("fine", None, 2)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("content_type", ["text/html", "application/json"])
def test_an_html_page_is_a_failed_call_with_a_plain_reason(api, content_type):
    page = Reply(
        raw=b"<!doctype html><html><body>Welcome!</body></html>", content_type=content_type
    )
    with FakeLLM(lambda r: page) as fake:
        lay, _ = layer(fake, api, max_retries=1)
        [res] = lay.run([CallRequest("p")])
    assert res.text is None and fake.count == 2
    assert res.error == (
        "the server answered with HTML, not JSON (is base_url right?) (after 2 attempts)"
    )


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_reply_without_usage_has_unknown_tokens_and_cost_never_zero(api):
    with FakeLLM(lambda r: Reply(text="ok", usage=False)) as fake:
        lay, _ = layer(fake, api)
        [res] = lay.run([CallRequest("p"), CallRequest("q")])[:1]
    assert res.text == "ok" and res.input_tokens is None and res.cost_usd is None
    u = lay.usage.summary()
    assert u.calls == 2
    assert (u.input_tokens, u.output_tokens, u.cost_usd) == (None, None, None)


def test_failed_calls_of_an_unpriced_model_cost_unknown_not_zero():
    with FakeLLM(lambda r: Reply(status=500)) as fake:
        lay, _ = layer(fake, max_retries=1)
        lay.price = None
        lay.run([CallRequest("p")])
    u = lay.usage.summary()
    assert (u.calls, u.errors) == (2, 1)
    assert u.cost_usd is None  # unknown: the model has no price, whether its calls failed or not
    with FakeLLM(lambda r: Reply(status=500)) as fake:
        lay, _ = layer(fake, max_retries=1)
        lay.run([CallRequest("p")])
    # a priced model's failed calls reported no usage: the API bills them nothing
    assert lay.usage.summary().cost_usd == 0.0


def _json_or_complain(text: str) -> str | None:
    return None if text.startswith("{") else "no JSON object in the reply"


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_rejected_reply_is_reasked_with_the_problem_in_a_followup(api):
    def script(req):
        return Reply(text='{"ok": true}') if req.followup else Reply(text="Sure! Looks fine.")

    with FakeLLM(script) as fake:
        lay, waits = layer(fake, api, temperature=0.0)
        lay.validate, lay.json_replies = _json_or_complain, True
        [res] = lay.run([CallRequest("judge this")])
    assert res.text == '{"ok": true}' and res.attempts == 2 and waits == []
    first, second = fake.received
    assert first.followup is None and second.prompt == "judge this"
    # not the identical request again: the model sees its reply and what was wrong with it
    assert [m["role"] for m in second.body["messages"]] == ["user", "assistant", "user"]
    assert second.body["messages"][1]["content"] == "Sure! Looks fine."
    assert "no JSON object in the reply" in second.followup and "JSON" in second.followup
    # structured output where the API has it (OpenAI-compatible), nowhere else
    if api == "openai":
        assert second.body["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in second.body
    assert "response_format" not in first.body
    # both replies were paid for: the tokens are the sum the server reported for the two
    assert lay.usage.summary().calls == 2 and res.input_tokens == fake.reported_tokens()[0]


def test_a_server_that_refuses_json_mode_is_reasked_without_it():
    def script(req):
        if "response_format" in req.body:
            return Reply(status=400)
        return Reply(text='{"ok": 1}') if req.followup else Reply(text="prose")

    with FakeLLM(script) as fake:
        lay, _ = layer(fake, "openai", concurrency=1)  # one at a time: "b" comes after
        lay.validate, lay.json_replies = _json_or_complain, True
        [res] = lay.run([CallRequest("a"), CallRequest("b")])[:1]
    assert res.text == '{"ok": 1}' and res.error is None
    # one refusal, then the provider stops asking for response_format
    assert sum(1 for r in fake.received if "response_format" in r.body) == 1


def test_reruns_have_their_own_cache_indexes(tmp_path):
    path = tmp_path / "c.sqlite"
    with FakeLLM(lambda r: Reply(text="x")) as fake:
        lay, _ = layer(fake, cache=ResponseCache(path))
        lay.run([CallRequest("p", repeat=r) for r in range(3)])  # --repeats 3
        lay2, _ = layer(fake, cache=ResponseCache(path))
        res = lay2.run([CallRequest("p", repeat=r, namespace="rerun") for r in range(2)])
        assert fake.count == 5 and not any(r.cached for r in res)  # new calls, not repeats'
        lay3, _ = layer(fake, cache=ResponseCache(path))
        assert all(r.cached for r in lay3.run([CallRequest("p", repeat=1, namespace="rerun")]))
    assert cache_key("a", None, "m", "p", {}, 1) != cache_key("a", None, "m", "p", {}, 1, "rerun")
    # the default namespace keeps the keys older caches were written with
    old = hashlib.sha256(
        json.dumps(
            {
                "provider": "a",
                "base_url": "",
                "model": "m",
                "prompt": "p",
                "params": {},
                "repeat": 1,
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()
    assert cache_key("a", None, "m", "p", {}, 1) == old


def test_concurrency_is_bounded():
    active, peak, lock = [0], [0], threading.Lock()

    def script(req):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return Reply(text="x")

    with FakeLLM(script) as fake:
        lay, _ = layer(fake, concurrency=3)
        results = lay.run([CallRequest(f"p{i}") for i in range(12)])
    assert all(r.error is None for r in results)
    assert peak[0] == 3


def test_results_keep_request_order():
    with FakeLLM(
        lambda r: Reply(text=r.prompt.upper(), delay=0.02 if r.prompt == "a" else 0)
    ) as fake:
        lay, _ = layer(fake, concurrency=4)
        assert [r.text for r in lay.run([CallRequest(p) for p in "abcd"])] == list("ABCD")


def test_cache_makes_reruns_free_and_is_keyed_on_everything(tmp_path):
    path = tmp_path / ".ragrail" / "cache.sqlite"
    with FakeLLM(lambda r: Reply(text="cached?")) as fake:
        lay, _ = layer(fake, cache=ResponseCache(path))
        lay.run([CallRequest("p"), CallRequest("p", repeat=1)])
        assert len(fake.received) == 2
        lay2, _ = layer(fake, cache=ResponseCache(path))
        res = lay2.run([CallRequest("p"), CallRequest("p", repeat=1)])
        assert len(fake.received) == 2 and all(r.cached for r in res)
        assert lay2.usage.calls == 0 and lay2.usage.cached == 2
        assert lay2.usage.cached_cost_usd > 0 and lay2.usage.cost_usd == 0
        # another max_tokens, model or provider is another key
        lay3, _ = layer(fake, cache=ResponseCache(path), max_tokens=99)
        lay3.run([CallRequest("p")])
        assert len(fake.received) == 3
        lay4, _ = layer(fake, "openai", cache=ResponseCache(path))
        lay4.run([CallRequest("p")])
        assert len(fake.received) == 4
    assert KEY.encode() not in path.read_bytes()


def test_failed_calls_are_not_cached(tmp_path):
    path = tmp_path / "c.sqlite"
    with FakeLLM(lambda r: [Reply(status=500), Reply(text="ok")]) as fake:
        lay, _ = layer(fake, cache=ResponseCache(path), max_retries=0)
        assert lay.run([CallRequest("p")])[0].error
        lay2, _ = layer(fake, cache=ResponseCache(path), max_retries=0)
        assert lay2.run([CallRequest("p")])[0].text == "ok"


def test_an_empty_reply_in_an_older_cache_is_asked_again(tmp_path):
    path = tmp_path / "c.sqlite"
    with FakeLLM(lambda r: Reply(text="real")) as fake:
        lay, _ = layer(fake, cache=ResponseCache(path))
        old = {"text": "", "input_tokens": 9, "output_tokens": 0}
        lay.cache.put(lay.key(CallRequest("p")), "anthropic", "test-model", old)
        [res] = lay.run([CallRequest("p")])
    assert (res.text, res.cached, fake.count) == ("real", False, 1)


def test_corrupt_cache_is_set_aside_with_a_warning(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.warns(UserWarning, match="could not be read"):
        cache = ResponseCache(path)
    assert cache.count() == 0
    assert len(list(tmp_path.glob("cache.sqlite.corrupt-*"))) == 1
    sqlite3.connect(path).execute("SELECT * FROM responses")


def test_missing_key_fails_before_any_work(monkeypatch):
    from ragrail.errors import InputError

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY is not set"):
        make_provider("anthropic", None, None, 5.0)


def _anthropic_body(text: str, usage: dict) -> bytes:
    body = {"id": "m", "type": "message", "role": "assistant", "model": "x",
            "content": [{"type": "text", "text": text}], "usage": usage}
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -100, "output_tokens": 5},
        {"input_tokens": 10**30, "output_tokens": 5},
        {"input_tokens": 10**400, "output_tokens": 5},
        {"input_tokens": 1.5, "output_tokens": 5},
        {"input_tokens": "12", "output_tokens": 5},
    ],
    ids=["negative", "1e30", "400-digits", "fraction", "text"],
)
def test_a_usage_count_that_cannot_be_one_is_unknown_not_a_crash(usage):
    """A server's garbage usage (negative, absurd, not a whole number) is "unknown":
    10**400 once overflowed the cost, 10**30 failed the results' validation."""
    with FakeLLM(lambda r: Reply(raw=_anthropic_body("ok", usage))) as fake:
        lay, _ = layer(fake)
        [res] = lay.run([CallRequest("p")])
    assert res.text == "ok" and res.error is None
    assert res.input_tokens is None and res.cost_usd is None
    assert lay.usage.summary().input_tokens is None


def test_a_lone_surrogate_in_a_reply_is_kept_as_a_replacement_character():
    """"\\ud800" in a reply's JSON: no UTF-8 file could hold it, so saving the run crashed."""
    raw = b'{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"a\\ud800b"}],"usage":{"input_tokens":1,"output_tokens":1}}'
    with FakeLLM(lambda r: Reply(raw=raw)) as fake:
        lay, _ = layer(fake)
        [res] = lay.run([CallRequest("p")])
    assert res.text == "a\ufffdb"
    res.text.encode("utf-8")  # savable


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_server_that_echoes_the_api_key_never_gets_it_into_a_result_or_the_cache(
    api, tmp_path
):
    def echo(req):
        sent = req.headers.get("x-api-key") or req.headers.get("authorization", "")
        return Reply(text=f"your key is {sent}")

    def refuse(req):
        sent = req.headers.get("x-api-key") or req.headers.get("authorization", "")
        body = {"error": {"message": f"bad key {sent}"}}
        return Reply(status=400, raw=json.dumps(body).encode())

    cache = ResponseCache(tmp_path / "cache.sqlite")
    with FakeLLM(echo) as fake:
        lay, _ = layer(fake, api, cache=cache)
        [res] = lay.run([CallRequest("p")])
    assert KEY not in (res.text or "") and "[redacted]" in (res.text or "")
    cache.close()
    assert KEY.encode() not in (tmp_path / "cache.sqlite").read_bytes()
    with FakeLLM(refuse) as fake:
        lay, _ = layer(fake, api)
        [res] = lay.run([CallRequest("p")])
    assert res.error is not None and KEY not in res.error
