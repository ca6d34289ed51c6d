"""--batch end to end (issue 28): the same verdicts and results as a direct run, apart
from timing and usage, at half the price; a killed run picks up its batch."""

from __future__ import annotations

import json

import pytest

from tests.fake_llm import FakeLLM, paste_top_chunk
from tests.judge.test_judge import claims_judge, late_refund

VOLATILE = {"latency_ms", "usage", "judge_usage", "started", "finished", "timestamp", "created_at"}


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-judge-batch-key-01")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-batch-key-01")


def stable(data):
    """The results without what a batch may change: timing, usage, cost."""
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE and "time" not in k}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


def test_a_batch_judge_run_equals_the_direct_one_at_half_price(cli, tmp_path):
    runs = {}
    with FakeLLM(claims_judge) as fake:
        for mode in ("direct", "batch"):
            dest = late_refund(cli, tmp_path / mode)
            out = tmp_path / f"{mode}.json"
            args = ["run", "--judge", "claude", "--judge-base-url", fake.url, "--json", str(out)]
            r = cli(*args, *(["--batch"] if mode == "batch" else []), cwd=dest)
            assert r.code == 0, r.out + r.err
            runs[mode] = json.loads(out.read_text())
    assert len(fake.received) == 4 and len(fake.batched) == 4 and len(fake.batches) == 1
    assert stable(runs["batch"]) == stable(runs["direct"])
    d, b = runs["direct"]["judge_usage"], runs["batch"]["judge_usage"]
    assert (b["calls"], b["input_tokens"], b["output_tokens"]) == (4, 1600, 240)
    assert d["cost_usd"] == pytest.approx(4 * (400 * 5 + 60 * 25) / 1e6)
    assert b["cost_usd"] == pytest.approx(d["cost_usd"] / 2)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_batch_answers_equal_direct_answers(cli, tmp_path, api):
    runs = {}
    with FakeLLM(paste_top_chunk) as fake:
        url = fake.anthropic_url if api == "anthropic" else fake.openai_url
        for mode in ("direct", "batch"):
            dest = tmp_path / mode
            assert cli("example", "kitebase", str(dest)).code == 0
            out = tmp_path / f"{mode}.json"
            args = ["run", "--answerer", api, "--model", "m", "--base-url", url]
            args += ["--json", str(out), "--no-history"]
            r = cli(*args, *(["--batch"] if mode == "batch" else []), cwd=dest)
            assert r.code in (0, 1), r.out + r.err
            runs[mode] = json.loads(out.read_text())
    assert len(fake.batches) == 1 and len(fake.batched) == len(fake.received)
    assert stable(runs["batch"]) == stable(runs["direct"])
    assert runs["batch"]["usage"]["cost_usd"] is None or runs["batch"]["usage"]["calls"] > 0
