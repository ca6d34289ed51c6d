"""Provider batches (issue 28) against the local fake, through the real SDK clients."""

from __future__ import annotations

import json

import pytest

from ragrail.calls.cache import ResponseCache
from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
from ragrail.calls.prices import Price
from ragrail.calls.providers import make_provider
from tests.fake_llm import FakeLLM, Reply

PRICE = Price(3.0, 15.0)


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-batch-key-0001")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-key-0001")


def _layer(fake, api, tmp_path, batch=True, sleep=None, **settings):
    url = fake.anthropic_url if api == "anthropic" else fake.openai_url
    waits: list[float] = []
    lines: list[str] = []

    async def record(seconds):
        waits.append(seconds)
        if sleep is not None:
            sleep(len(waits))

    lay = CallLayer(
        make_provider(api, "m", url, 5.0),
        CallSettings(batch=batch, **settings),
        cache=ResponseCache(tmp_path / "cache.sqlite"),
        price=PRICE,
        sleep=record,
        on_wait=lines.append,
    )
    return lay, waits, lines


def echo(req):
    return Reply(text=f"re: {req.prompt}", input_tokens=1000, output_tokens=100)


PROMPTS = [CallRequest(f"question {i}\nplease") for i in range(5)]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_batch_gives_the_direct_replies_at_half_price(api, tmp_path):
    with FakeLLM(echo) as fake:
        direct, _, _ = _layer(fake, api, tmp_path / "d", batch=False)
        d = direct.run(PROMPTS)
        lay, _, lines = _layer(fake, api, tmp_path / "b")
        b = lay.run(PROMPTS)
    assert [r.text for r in b] == [r.text for r in d] and all(r.error is None for r in b)
    assert len(fake.batches) == 1 and len(fake.batched) == 5 and fake.count == 5  # 5 direct
    # by hand: 5 x (1000 x $3 + 100 x $15) / 1e6 = $0.0225 direct, half in a batch
    assert direct.usage.cost_usd == pytest.approx(0.0225)
    assert lay.usage.cost_usd == pytest.approx(0.01125)
    assert lay.usage.calls == 5 and lay.usage.batched == 5
    assert any("5 calls submitted" in line for line in lines)
    # the batch's state is gone once every reply is cached
    assert not list((tmp_path / "b" / "batches").glob("*.json"))


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_polls_back_off_and_show_progress(api, tmp_path):
    with FakeLLM(echo, polls_to_end=3) as fake:
        lay, waits, lines = _layer(fake, api, tmp_path, batch_poll=2.0, batch_poll_max=5.0)
        lay.run(PROMPTS)
    assert waits == [2.0, 4.0, 5.0]
    assert sum("0/5 done" in line for line in lines) == 3


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_an_interrupted_run_picks_up_the_same_batch_and_pays_once(api, tmp_path):
    def interrupt(n):
        raise KeyboardInterrupt

    with FakeLLM(echo, polls_to_end=1) as fake:
        lay, _, _ = _layer(fake, api, tmp_path, sleep=interrupt)
        with pytest.raises(KeyboardInterrupt):
            lay.run(PROMPTS)
        [state] = (tmp_path / "batches").glob("*.json")
        batch_id = json.loads(state.read_text())["batch_id"]
        again, _, lines = _layer(fake, api, tmp_path)
        results = again.run(PROMPTS)
    assert len(fake.batches) == 1 and list(fake.batches) == [batch_id]
    assert len(fake.batched) == 5 and fake.count == 0
    assert [r.text for r in results] == [f"re: {p.prompt}" for p in PROMPTS]
    assert any("resuming" in line for line in lines)
    assert again.usage.cost_usd == pytest.approx(0.01125)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_an_expired_item_and_an_errored_item_are_asked_again_directly(api, tmp_path):
    def script(req):
        if "question 2" in req.prompt and req.path == "batch":
            return Reply(status=500)
        return echo(req)

    with FakeLLM(script, expire=lambda r: "question 4" in r.prompt) as fake:
        lay, _, _ = _layer(fake, api, tmp_path)
        results = lay.run(PROMPTS)
    assert all(r.error is None for r in results)
    assert sorted(r.prompt.split()[1] for r in fake.received) == ["2", "4"]  # direct
    assert [r.attempts for r in results] == [1, 1, 2, 1, 2]
    # 3 at half price, 2 in full: (3 x 0.0045) / 2 + 2 x 0.0045
    assert lay.usage.cost_usd == pytest.approx(0.00675 + 0.009)
    assert lay.usage.calls == 7


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_server_error_mid_way_is_retried(api, tmp_path):
    # the 2nd batch API request (the first poll or the batch create) fails with a 500
    with FakeLLM(echo, batch_faults={2: 500}) as fake:
        lay, waits, _ = _layer(fake, api, tmp_path)
        results = lay.run(PROMPTS)
    assert all(r.error is None for r in results) and len(fake.batches) == 1
    assert len(waits) == 1 and fake.count == 0


def test_an_unusable_batch_reply_is_reasked_directly_with_the_problem(tmp_path):
    def script(req):
        return Reply(text='{"ok": 1}') if req.followup else Reply(text="prose")

    with FakeLLM(script) as fake:
        lay, _, _ = _layer(fake, "anthropic", tmp_path)
        lay.validate = lambda t: None if t.startswith("{") else "no JSON object in the reply"
        [res] = lay.run([CallRequest("judge\nthis")])
    assert res.text == '{"ok": 1}' and res.attempts == 2
    [reask] = fake.received
    assert reask.followup is not None and reask.body["messages"][1]["content"] == "prose"


def test_cached_replies_are_not_sent_again(tmp_path):
    with FakeLLM(echo) as fake:
        lay, _, _ = _layer(fake, "anthropic", tmp_path)
        lay.run(PROMPTS[:2])
        again, _, _ = _layer(fake, "anthropic", tmp_path)
        again.run(PROMPTS)
    assert [len(b["items"]) for b in fake.batches.values()] == [2, 3]
    assert again.usage.cached == 2
    # the cached ones cost what they cost: the batch price
    assert again.usage.cached_cost_usd == pytest.approx(2 * 0.0045 / 2)


def test_a_killed_process_is_resumed_without_a_second_batch(tmp_path):
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ragrail.calls.cache import ResponseCache\n"
        "from ragrail.calls.layer import CallLayer, CallRequest, CallSettings\n"
        "from ragrail.calls.providers import make_provider\n"
        "lay = CallLayer(make_provider('anthropic', 'm', sys.argv[1], 5.0),\n"
        "    CallSettings(batch=True, batch_poll=0.2, batch_poll_max=0.2),\n"
        "    cache=ResponseCache(Path(sys.argv[2]) / 'cache.sqlite'))\n"
        "lay.run([CallRequest(f'question {i}\\nplease') for i in range(5)])\n"
    )
    with FakeLLM(echo, polls_to_end=10**6) as fake:
        env = {**os.environ, "PYTHONPATH": str(root / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-c", script, fake.anthropic_url, str(tmp_path)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not fake.batches or len(fake.batch_ops) < 3:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        finally:
            proc.kill()  # SIGKILL: no clean-up runs
            proc.wait()
        fake.polls_to_end = 0
        again, _, _ = _layer(fake, "anthropic", tmp_path)
        results = again.run(PROMPTS)
    assert len(fake.batches) == 1 and len(fake.batched) == 5 and fake.count == 0
    assert [r.text for r in results] == [f"re: {p.prompt}" for p in PROMPTS]
