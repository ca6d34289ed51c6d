"""Exact accounting (issue 28): every request sent is a call, and cached input tokens
are read from the reply and priced as the provider prices them."""

from __future__ import annotations

import pytest

from ragrail.calls.cache import ResponseCache
from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
from ragrail.calls.prices import DEFAULT_PRICES, Price, cost_usd
from ragrail.calls.providers import make_provider
from tests.fake_llm import FakeLLM, Reply


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-accounting-0001")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-accounting-0001")


def _layer(fake, api, price, cache=None, **settings):
    url = fake.anthropic_url if api == "anthropic" else fake.openai_url
    provider = make_provider(api, "m", url, 5.0)

    async def no_wait(_s):
        return None

    return CallLayer(provider, CallSettings(**settings), cache=cache, price=price, sleep=no_wait)


def _json(text):
    return None if text.startswith("{") else "no JSON object in the reply"


def test_the_refused_json_mode_request_is_a_call():
    # 2 prompts, each: prose (1), JSON-mode re-ask refused with 400 (the first only), plain
    # re-ask: 5 requests received; every one of them is a call
    def script(req):
        if "response_format" in req.body:
            return Reply(status=400)
        return Reply(text='{"ok": 1}') if req.followup else Reply(text="prose")

    with FakeLLM(script) as fake:
        lay = _layer(fake, "openai", Price(3.0, 15.0), concurrency=1)
        lay.validate, lay.json_replies = _json, True
        results = lay.run([CallRequest("a"), CallRequest("b")])
    assert [r.error for r in results] == [None, None]
    assert fake.count == 5
    assert lay.usage.summary().calls == 5
    assert results[0].requests == 3 and results[0].attempts == 2


def test_a_refused_json_mode_request_is_counted_when_the_plain_one_fails_too():
    def script(req):
        if "response_format" in req.body:
            return Reply(status=400)
        return Reply(status=401) if req.followup else Reply(text="prose")

    with FakeLLM(script) as fake:
        lay = _layer(fake, "openai", Price(3.0, 15.0))
        lay.validate, lay.json_replies = _json, True
        [res] = lay.run([CallRequest("a")])
    assert res.error is not None and fake.count == 3
    assert lay.usage.summary().calls == 3


def test_anthropic_cache_reads_and_writes_are_priced_apart():
    # 1,000 prompt tokens: 600 read from the cache, 300 written, 100 plain; 50 out.
    # By hand at claude-opus-5 ($5 in, $0.50 read, $6.25 write, $25 out per million):
    # (100*5 + 600*0.5 + 300*6.25 + 50*25) / 1e6 = (500 + 300 + 1875 + 1250) / 1e6
    reply = Reply(text="ok", input_tokens=1000, output_tokens=50, cache_read=600, cache_write=300)
    with FakeLLM(lambda r: reply) as fake:
        lay = _layer(fake, "anthropic", DEFAULT_PRICES["claude-opus-5"])
        [res] = lay.run([CallRequest("p")])
    body = fake.received[0]
    assert body.reported == (1000, 50)
    assert (res.input_tokens, res.cache_read_tokens, res.cache_write_tokens) == (1000, 600, 300)
    assert res.cost_usd == pytest.approx(3925 / 1e6)
    assert lay.usage.cache_read_tokens == 600 and lay.usage.input_tokens == 1000


def test_openai_cached_tokens_are_part_of_the_prompt_and_priced_cached():
    # prompt_tokens 2,000 of which 1,536 cached; at $2 in, $0.50 cached, $8 out:
    # (464*2 + 1536*0.5 + 100*8) / 1e6 = (928 + 768 + 800) / 1e6
    price = Price(2.0, 8.0, cached_input_per_mtok=0.5)
    reply = Reply(text="ok", input_tokens=2000, output_tokens=100, cache_read=1536)
    with FakeLLM(lambda r: reply) as fake:
        lay = _layer(fake, "openai", price)
        [res] = lay.run([CallRequest("p")])
    assert (res.input_tokens, res.cache_read_tokens) == (2000, 1536)
    assert res.cost_usd == pytest.approx(2496 / 1e6)


def test_a_price_without_a_cached_price_bills_cached_tokens_in_full():
    assert cost_usd(Price(3.0, 15.0), 1000, 10, cache_read=900) == pytest.approx(
        (1000 * 3 + 10 * 15) / 1e6
    )


def test_a_cached_reply_keeps_its_cached_tokens_and_cost(tmp_path):
    reply = Reply(text="ok", input_tokens=1000, output_tokens=50, cache_read=600, cache_write=300)
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FakeLLM(lambda r: reply) as fake:
        _layer(fake, "anthropic", DEFAULT_PRICES["claude-opus-5"], cache=cache).run(
            [CallRequest("p")]
        )
        again = _layer(fake, "anthropic", DEFAULT_PRICES["claude-opus-5"], cache=cache)
        [hit] = again.run([CallRequest("p")])
    assert hit.cached and hit.cache_read_tokens == 600
    assert again.usage.summary().cached_cost_usd == pytest.approx(3925 / 1e6)


def test_batch_price_is_half():
    p = DEFAULT_PRICES["claude-opus-5"]
    assert cost_usd(p, 1000, 100, batch=True) == pytest.approx((5000 + 2500) / 1e6 / 2)
