"""The shared call layer against a local fake API, through the real SDKs."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from ragrail.cache import ResponseCache
from ragrail.llm import CallLayer, CallRequest, CallSettings
from ragrail.pricing import Price
from ragrail.providers import make_provider
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


def test_retry_after_is_capped():
    with FakeLLM() as fake:
        lay, _ = layer(fake, max_retries=1)
    assert lay.backoff(1, 3600) == lay.settings.retry_after_max


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
