"""The rate limiter (--rpm, --tpm): the bucket math on a fake clock, how the call layer
uses it (every attempt takes a share, a cached reply none, tokens reconciled with the
reported usage), and its settings from flags and ragrail.toml."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from pathlib import Path

import pytest

from ragrail.calls.cache import ResponseCache
from ragrail.calls.layer import CallLayer, CallRequest, CallSettings, correction
from ragrail.calls.limiter import RateLimiter, TokenBucket, estimate_tokens, min_duration
from ragrail.calls.providers import make_provider
from ragrail.errors import InputError
from ragrail.project import load_config
from ragrail.settings import Overrides, answerer_spec, judge_config
from tests.fake_llm import FakeLLM, Received, Reply, paste_top_chunk

KEY = "sk-test-limiter"


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


async def _no_sleep(seconds: float) -> None:
    pass


class FakeTime:
    """A clock that moves only when the limiter sleeps."""

    def __init__(self, late: float = 0.0) -> None:
        self.now = 0.0
        self.late = late  # every sleep overruns by this much, as a busy loop's timers do
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        await asyncio.sleep(0)  # let the others ask and queue, as in a real wait
        self.now += seconds + self.late


def limiter(rpm: float | None = None, tpm: float | None = None, cls=None) -> RateLimiter:
    t = FakeTime()
    return (cls or RateLimiter)(rpm=rpm, tpm=tpm, clock=t.clock, sleep=t.sleep)


def starts(lim: RateLimiter, costs: list[int]) -> list[float]:
    """The fake time at which each request, asking at once and in order, may go."""

    async def one(cost: int) -> float:
        await lim.acquire(cost)
        return lim.clock()

    async def together() -> list[float]:
        return list(await asyncio.gather(*(one(c) for c in costs)))

    return asyncio.run(together())


class CountingLimiter(RateLimiter):
    """Records the estimated tokens of every request that asked to be sent."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.asked: list[int] = []

    async def acquire(self, tokens: int = 0) -> float:
        self.asked.append(tokens)
        return await super().acquire(tokens)


# ---------------------------------------------------------------- the bucket math


def test_rpm_spreads_requests_evenly_with_no_burst():
    lim = limiter(rpm=600)  # one request every 60 / 600 = 0.1 s; capacity 1
    assert starts(lim, [0] * 5) == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert lim.waited == pytest.approx(0.1 + 0.2 + 0.3 + 0.4)  # each counts its time in line


def test_an_idle_rpm_bucket_refills_to_one_request_only():
    t = FakeTime()
    lim = RateLimiter(rpm=60, clock=t.clock, sleep=t.sleep)
    assert lim.try_take() == 0.0
    t.now = 100.0  # a long pause does not bank 100 requests
    assert starts(lim, [0, 0, 0]) == pytest.approx([100.0, 101.0, 102.0])


def test_tpm_bucket_holds_one_second_of_tokens_and_lets_a_large_request_run_into_debt():
    lim = limiter(tpm=6000)  # 100 tokens a second, capacity 100
    # 100 -> 50 -> 0; the third waits for 50 tokens: 0.5 s. 300 > capacity: starts once
    # the bucket is full (1 s after 0.5), leaving -200. 10 tokens after a debt of 200:
    # (10 + 200) / 100 = 2.1 s after 1.5
    assert starts(lim, [50, 50, 50, 300, 10]) == pytest.approx([0, 0, 0.5, 1.5, 3.6])


def test_both_buckets_start_a_request_at_the_later_of_their_times():
    lim = limiter(rpm=60, tpm=600)  # 1 request a second; 10 tokens a second, capacity 10
    # 30 tokens leave -20; 1 token then waits (1 + 20) / 10 = 2.1 s (rpm would allow 1 s)
    # and leaves 0; a third request, free for tpm at 2.1, is held by rpm until 3.1:
    # 1 s after the second's real start, not after the 1 s rpm alone gave it
    assert starts(lim, [30, 1, 0]) == pytest.approx([0, 2.1, 3.1])
    # a debt holds back even a request of no tokens: (0 + 30) / 10 = 3 s
    assert starts(limiter(rpm=60, tpm=600), [40, 0]) == pytest.approx([0, 3])


def test_small_requests_are_held_by_rpm_not_tpm():
    assert starts(limiter(rpm=60, tpm=600), [5, 5, 5]) == pytest.approx([0, 1, 2])


def test_a_request_that_does_not_fit_takes_nothing():
    lim = limiter(rpm=60, tpm=600)
    assert lim.try_take(10) == 0.0
    assert lim.try_take(5) == pytest.approx(1.0)  # rpm: 1 s; tpm: 0.5 s
    assert lim.requests is not None and lim.requests.level == 0.0
    assert lim.tokens is not None and lim.tokens.level == 0.0


def test_settling_gives_back_an_overestimate_and_charges_an_underestimate():
    lim = limiter(tpm=6000)  # capacity 100
    assert lim.try_take(100) == 0.0
    lim.settle(100, 20, 10)  # used 30 of 100: 70 back
    assert lim.tokens is not None and lim.tokens.level == pytest.approx(70)
    lim.settle(50, 100, 50)  # used 150 of an estimated 50: 100 more
    assert lim.tokens.level == pytest.approx(-30)
    lim.settle(80, None, 10)  # unknown usage keeps the estimate
    assert lim.tokens.level == pytest.approx(-30)
    assert lim.try_take(10) == pytest.approx(0.4)  # (10 + 30) / 100


def test_a_refund_never_fills_the_bucket_past_its_capacity():
    bucket = TokenBucket.full(rate=10, capacity=5, now=0.0)
    bucket.take(1, 0.0)
    bucket.give(100, 0.0)
    assert bucket.level == 5
    assert bucket.level_at(50.0) == 5


def test_settle_without_a_tpm_limit_changes_nothing():
    lim = limiter(rpm=60)
    lim.settle(100, 1, 1)
    assert lim.tokens is None and lim.try_take() == 0.0 and lim.try_take() == 1.0


@pytest.mark.parametrize("rate", [0.0, -1.0, math.inf, math.nan])
def test_a_bucket_refuses_a_rate_that_is_not_positive_and_finite(rate):
    with pytest.raises(ValueError):
        TokenBucket.full(rate=rate, capacity=1.0, now=0.0)


def test_no_limits_no_limiter():
    assert RateLimiter.of(None, None) is None
    lim = RateLimiter.of(120, None)
    assert lim is not None and lim.tokens is None and not lim.counts_tokens


def test_acquire_sleeps_the_wait_and_returns_it():
    t = FakeTime()
    lim = RateLimiter(rpm=120, clock=t.clock, sleep=t.sleep)

    async def three() -> list[float]:
        return [await lim.acquire() for _ in range(3)]

    assert asyncio.run(three()) == pytest.approx([0.0, 0.5, 0.5])
    assert t.slept == pytest.approx([0.5, 0.5])  # the first went at once: no sleep
    assert lim.waited == pytest.approx(1.0)


def test_timer_lateness_does_not_add_up_into_a_slower_rate():
    t = FakeTime(late=0.005)
    lim = RateLimiter(rpm=600, clock=t.clock, sleep=t.sleep)
    # each wakes 5 ms late but is counted at its due time: the next is due 0.1 s after
    # that, not after the late wake (which would give 0, 0.105, 0.21, 0.315, 0.42)
    assert starts(lim, [0] * 5) == pytest.approx([0, 0.105, 0.205, 0.305, 0.405])


def test_a_stalled_loop_does_not_release_a_backlog():
    t = FakeTime(late=0.5)  # the loop wakes the waiter half a second late
    lim = RateLimiter(rpm=600, clock=t.clock, sleep=t.sleep)
    # counted when it goes (0.6), so the next waits a full 0.1 s from there
    assert starts(lim, [0] * 3) == pytest.approx([0, 0.6, 1.2])


def test_one_limiter_serves_successive_event_loops():
    lim = limiter(rpm=60)
    assert starts(lim, [0, 0]) == pytest.approx([0, 1])
    assert starts(lim, [0, 0]) == pytest.approx([2, 3])  # no fresh burst in the new loop


def test_estimate_is_a_quarter_of_the_characters_rounded_up_plus_max_tokens():
    assert estimate_tokens(["x" * 400], 512) == 100 + 512
    assert estimate_tokens(["x" * 401, "abc"], 50) == 101 + 1 + 50


def test_min_duration():
    assert min_duration(100, 0, 600, None) == pytest.approx(9.9)  # 99 gaps of 0.1 s
    assert min_duration(1, 0, 600, None) == 0.0
    assert min_duration(0, 0, 600, None) == 0.0
    # 10,000 tokens at 6,000/min: the first 100 at once, the rest at 100/s
    assert min_duration(2, 10_000, 600, 6000) == pytest.approx(99.0)
    assert min_duration(5, 0, None, None) == 0.0


# ---------------------------------------------------------------- through the call layer


def layer(fake: FakeLLM, limiter: RateLimiter | None = None, cache=None, **settings) -> CallLayer:
    provider = make_provider("anthropic", "test-model", fake.anthropic_url, 5.0)
    return CallLayer(
        provider, CallSettings(**settings), cache=cache, limiter=limiter, sleep=_no_sleep
    )


class WindowedServer:
    """Refuses (429) a request when ``limit`` others arrived in the ``window`` seconds
    before it: a real rate check. 120/min is 2 a second; the window is 0.75 s rather
    than 1 s so that a client spaced exactly 0.5 s apart is not refused for a few
    milliseconds of network jitter."""

    def __init__(self, limit: int = 2, window: float = 0.75) -> None:
        self.limit, self.window = limit, window
        self.arrivals: list[float] = []
        self.refused = 0
        self._lock = threading.Lock()

    def __call__(self, req: Received) -> Reply:
        with self._lock:
            now = time.monotonic()
            recent = [t for t in self.arrivals if now - t < self.window]
            self.arrivals.append(now)
            if len(recent) >= self.limit:
                self.refused += 1
                return Reply(status=429)
        return Reply(text="ok", input_tokens=10, output_tokens=5)


def test_the_layer_waits_instead_of_bouncing_off_429s():
    server = WindowedServer()
    with FakeLLM(server) as fake:
        lay = layer(fake, concurrency=8, max_retries=0)
        lay.limiter = RateLimiter(rpm=120)  # a real clock: 6 calls over 2.5 s
        results = lay.run([CallRequest(f"q{i}") for i in range(6)])
    assert server.refused == 0
    assert all(r.error is None for r in results)
    assert len(fake.received) == 6
    # spacing, loosely: six starts 0.5 s apart span 2.5 s
    assert server.arrivals[-1] - server.arrivals[0] > 2.0


def test_without_the_limiter_the_same_calls_bounce():
    server = WindowedServer()
    with FakeLLM(server) as fake:
        results = layer(fake, concurrency=8, max_retries=0).run(
            [CallRequest(f"q{i}") for i in range(6)]
        )
    assert server.refused >= 3  # six at once: the server takes two (three with jitter)
    assert sum(r.error is not None for r in results) == server.refused


def test_every_attempt_takes_a_token_retries_and_reasks_too():
    def script(req: Received) -> list[Reply]:
        if req.prompt == "flaky":
            return [Reply(status=429), Reply(status=500), Reply(text="ok")]
        return [Reply(text="ok")]

    lim = limiter(rpm=600, cls=CountingLimiter)
    with FakeLLM(script) as fake:
        results = layer(fake, lim, max_retries=4).run([CallRequest("flaky"), CallRequest("fine")])
    assert [r.attempts for r in results] == [3, 1]
    assert len(lim.asked) == len(fake.received) == 4


def test_a_cached_reply_takes_no_token(tmp_path):
    lim = limiter(rpm=600, cls=CountingLimiter)
    requests = [CallRequest(f"q{i}") for i in range(3)]
    with FakeLLM(lambda r: Reply(text="ok")) as fake:
        first = layer(fake, lim, cache=ResponseCache(tmp_path / "c.sqlite")).run(requests)
        again = layer(fake, lim, cache=ResponseCache(tmp_path / "c.sqlite")).run(requests)
    assert not any(r.cached for r in first) and all(r.cached for r in again)
    assert len(lim.asked) == len(fake.received) == 3


def test_tokens_are_estimated_then_reconciled_with_the_reported_usage():
    lim = limiter(tpm=60_000)  # capacity 1,000 tokens
    prompt = "x" * 400  # 100 tokens estimated
    with FakeLLM(lambda r: Reply(text="ok", input_tokens=90, output_tokens=20)) as fake:
        [res] = layer(fake, lim, max_tokens=50).run([CallRequest(prompt)])
    assert res.error is None
    # charged 100 + 50 before the call; used 110: 40 back
    assert lim.tokens is not None and lim.tokens.level == pytest.approx(1000 - 150 + 40)


def test_a_reply_without_usage_keeps_its_estimate():
    lim = limiter(tpm=60_000)
    with FakeLLM(lambda r: Reply(text="ok", usage=False)) as fake:
        layer(fake, lim, max_tokens=50).run([CallRequest("x" * 400)])
    assert lim.tokens is not None and lim.tokens.level == pytest.approx(1000 - 150)


def test_a_reask_is_charged_its_followup_too():
    problem = "not JSON"
    lim = limiter(tpm=60_000, cls=CountingLimiter)
    prompt = "y" * 80
    with FakeLLM(lambda r: [Reply(text="bad"), Reply(text="{}")]) as fake:
        lay = layer(fake, lim, max_tokens=50)
        lay.validate = lambda text: None if text == "{}" else problem
        [res] = lay.run([CallRequest(prompt)])
    assert res.error is None and res.attempts == 2
    followup = math.ceil(len("bad") / 4) + math.ceil(len(correction(problem)) / 4)
    assert lim.asked == [20 + 50, 20 + followup + 50]


def test_latency_leaves_out_the_wait_for_the_limiter():
    t = FakeTime()
    lim = RateLimiter(rpm=1, clock=t.clock, sleep=t.sleep)  # the second waits 60 (fake) s
    with FakeLLM(lambda r: Reply(text="ok")) as fake:
        results = layer(fake, lim, concurrency=1).run([CallRequest("a"), CallRequest("b")])
    assert t.slept == [60.0]
    assert all(r.latency_ms < 30_000 for r in results)


def test_the_judge_shares_one_limiter_over_its_batches(tmp_path):
    from ragrail.judge import JudgeConfig
    from ragrail.judge.core import build_judge

    cfg = JudgeConfig(provider="anthropic", model="m", rpm=60, tpm=9000)
    judge = build_judge(cfg, None, {}, tmp_path)
    assert judge.limiter is not None
    assert (judge.limiter.rpm, judge.limiter.tpm) == (60, 9000)
    assert judge._layer(None).limiter is judge._layer(None).limiter is judge.limiter
    assert build_judge(JudgeConfig(provider="anthropic"), None, {}, tmp_path).limiter is None


# ---------------------------------------------------------------- settings


def project(tmp_path: Path, toml: str):
    path = tmp_path / "ragrail.toml"
    path.write_text(toml, encoding="utf-8")
    return load_config(path)


def test_answerer_limits_come_from_the_config_and_a_flag_wins(tmp_path):
    p = project(tmp_path, "[answerer]\nname = 'anthropic'\nrpm = 600\ntpm = 40000.5\n")
    calls = answerer_spec(p).calls
    assert (calls.rpm, calls.tpm) == (600, 40000.5)
    calls = answerer_spec(p, Overrides(rpm=30)).calls
    assert (calls.rpm, calls.tpm) == (30, 40000.5)
    assert answerer_spec(project(tmp_path, "")).calls.rpm is None  # no limit by default


def test_judge_limits_judge_flag_then_judge_table_then_run_flag(tmp_path):
    bare = project(tmp_path, "[judge]\nprovider = 'anthropic'\n")
    cfg = judge_config(bare, Overrides(rpm=100, tpm=5000))
    assert cfg is not None and (cfg.rpm, cfg.tpm) == (100, 5000)  # the run's flags reach it
    cfg = judge_config(bare, Overrides(rpm=100, judge_rpm=7))
    assert cfg is not None and cfg.rpm == 7
    written = project(tmp_path, "[judge]\nprovider = 'anthropic'\nrpm = 50\n")
    cfg = judge_config(written, Overrides(rpm=100))
    assert cfg is not None and cfg.rpm == 50  # [judge] rpm, written, beats the run's --rpm
    assert judge_config(project(tmp_path, ""), Overrides(rpm=100)) is None


def test_judge_limit_flags_need_a_judge(tmp_path):
    with pytest.raises(InputError, match="--judge-rpm, --judge-tpm need --judge"):
        judge_config(project(tmp_path, ""), Overrides(judge_rpm=1, judge_tpm=2))


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[answerer]\nrpm = 0", "answerer.rpm"),
        ("[answerer]\nrpm = -60", "answerer.rpm"),
        ("[answerer]\ntpm = 'lots'", "answerer.tpm"),
        ("[answerer]\ntpm = true", "answerer.tpm"),
        ("[answerer]\nrpm = inf", "answerer.rpm"),
        ("[answerer]\nrpm = nan", "answerer.rpm"),
        ("[judge]\nrpm = 0.0", "judge.rpm"),
        ("[judge]\ntpm = -1", "judge.tpm"),
    ],
)
def test_a_bad_limit_in_the_config_names_the_file_and_the_key(tmp_path, toml, key):
    with pytest.raises(InputError) as err:
        project(tmp_path, toml + "\n")
    assert f"'{key}'" in err.value.message
    assert err.value.where == str(tmp_path / "ragrail.toml")


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--claude", "--rpm", "0"),
        ("run", "--claude", "--rpm", "-5"),
        ("run", "--claude", "--tpm", "inf"),
        ("run", "--claude", "--tpm", "many"),
        ("run", "--judge", "claude", "--judge-rpm", "nan"),
        ("judge", "pairwise", "1", "2", "--judge-tpm", "0"),
    ],
)
def test_a_bad_limit_flag_is_exit_2_naming_it(cli, args):
    r = cli(*args)
    flag = next(a for a in args if a.endswith("pm"))
    assert r.code == 2 and flag in r.err and "Traceback" not in r.err


def test_the_api_checks_limits_as_the_flags_do():
    from ragrail.api import evaluate

    with pytest.raises(InputError, match="rpm=0"):
        evaluate([], rpm=0)
    with pytest.raises(InputError, match="judge_tpm=inf"):
        evaluate([], judge_tpm=math.inf)


def test_dry_run_shows_the_least_time_the_limits_impose(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    r = cli("demo", "--claude", "--dry-run", "--rpm", "60", cwd=tmp_path)
    assert r.code == 0, r.err
    # 11 calls, 10 gaps of 1 s
    assert "rate limits       60 requests/min: the calls take at least 10.0 s" in r.out
    r = cli("demo", "--claude", "--dry-run", cwd=tmp_path)
    assert "rate limits" not in r.out


def test_a_run_with_rpm_spaces_its_calls(cli, tmp_path):
    arrivals: list[float] = []

    def script(req: Received) -> Reply:
        arrivals.append(time.monotonic())
        return paste_top_chunk(req)

    with FakeLLM(script) as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--rpm", "600", cwd=tmp_path)
        assert r.code == 0, r.err
        assert len(fake.received) == 11
    # the flag reaches the layer: 11 calls start 0.1 s apart, over 1.0 s (loosely)
    assert max(arrivals) - min(arrivals) > 0.8


@pytest.mark.parametrize(("rpm", "tpm", "name"), [(5e-324, None, "rpm"), (None, 1e-322, "tpm")])
def test_a_limit_too_small_to_count_in_is_an_input_error_not_a_crash(rpm, tpm, name):
    # positive and finite, so the flag's own check lets it through, but rpm / 60 is 0.0
    with pytest.raises(InputError, match=f"{name} .* too small"):
        RateLimiter.of(rpm, tpm)


def test_a_subnormal_rpm_flag_is_exit_2(cli, tmp_path):
    assert cli("example", "kitebase", str(tmp_path / "kb")).code == 0
    r = cli(
        "run",
        "--claude",
        "--base-url",
        "http://127.0.0.1:9",
        "--rpm",
        "5e-324",
        cwd=tmp_path / "kb",
    )
    assert r.code == 2 and "rpm" in r.err and "Traceback" not in r.err, r.err
