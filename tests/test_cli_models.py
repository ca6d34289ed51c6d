"""End-to-end real-answer runs against a local fake API (no network)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.fake_llm import FakeLLM, Reply, paste_top_chunk, question_of

KEY = "sk-ant-test-SECRET-never-print-me"


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def fixed_usage(req):
    reply = paste_top_chunk(req)
    reply.input_tokens, reply.output_tokens = 250, 150
    return reply


def test_claude_run_calls_11_times_scores_costs_and_caches(cli, tmp_path):
    out = tmp_path / "r.json"
    with FakeLLM(fixed_usage) as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--json", str(out), cwd=tmp_path)
        assert r.code == 0, r.err
        assert len(fake.calls("anthropic")) == 11  # bank-transfer never reaches the model
        assert {c.body["model"] for c in fake.received} == {"claude-opus-5"}
        # the key reaches the API (this SDK sends it as a bearer token or x-api-key)...
        assert all(
            KEY in (c.headers.get("x-api-key", ""), c.headers.get("authorization", ""))
            or c.headers.get("authorization") == f"Bearer {KEY}"
            for c in fake.received
        )
        assert "Answers from: Claude (Anthropic Messages API) (claude-opus-5)" in r.out
        assert "calls             11 made, 0 cached, 0 failed" in r.out
        assert "tokens            2,750 in, 1,650 out" in r.out
        # 11 x (250 x $5 + 150 x $25) / 1e6
        assert "cost              $0.0550" in r.out
        # The fake pastes the top chunk, so the scores match the stand-in's...
        assert re.search(r"answers pass\s+67%", r.out)
        # ...but a Claude run is not compared with a stand-in baseline on answers.
        assert "answers not compared" in " ".join(r.out.split())
        assert "hit rate       91% (unchanged)" in r.out

        r2 = cli("demo", "--claude", "--base-url", fake.url, cwd=tmp_path)
        assert r2.code == 0
        assert len(fake.received) == 11  # the unchanged re-run made no call
        assert "calls             0 made, 11 cached, 0 failed" in r2.out

    data = json.loads(out.read_text())
    assert data["usage"]["calls"] == 11 and data["usage"]["cost_usd"] == pytest.approx(0.055)
    lost = next(c for c in data["cases"] if c["id"] == "lost-phone")
    assert lost["trace"]["usage"] == {
        "input_tokens": 250,
        "output_tokens": 150,
        "cost_usd": pytest.approx(0.005),
        "cached": False,
        "attempts": 1,
    }
    for blob in (
        out.read_bytes(),
        (tmp_path / ".ragrail" / "cache.sqlite").read_bytes(),
        (r.out + r.err + r2.out + r2.err).encode(),
    ):
        assert KEY.encode() not in blob


def test_a_case_whose_calls_keep_failing_is_an_error_and_exits_3(cli, tmp_path):
    def script(req):
        if "lost my phone" in question_of(req.prompt):
            return Reply(status=500, headers={"retry-after": "0"})
        return paste_top_chunk(req)

    out = tmp_path / "r.json"
    with FakeLLM(script) as fake:
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--max-retries",
            "2",
            "--json",
            str(out),
            cwd=tmp_path,
        )
    assert r.code == 3
    row = next(ln for ln in r.out.splitlines() if ln.startswith("  lost-phone"))
    assert "ERROR" in row and "HTTP 500" in row and "after 3 attempts" in row
    assert re.search(r"errors\s+1 ", r.out)
    assert re.search(
        r"answers pass\s+73%.*\(8 of 11\)", r.out
    )  # the error is not in the denominator...
    assert "1 question(s) failed to run" in r.err  # ...and is reported, not dropped
    data = json.loads(out.read_text())
    assert data["totals"]["n_errors"] == 1
    assert "NaN" not in out.read_text()


def test_dry_run_sends_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # a dry run needs no key
    with FakeLLM() as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--dry-run", cwd=tmp_path)
        assert r.code == 0, r.err
        assert fake.received == []
    assert "calls             11 to make, 0 answered from the cache" in r.out
    assert "1 never reach the model" in r.out
    assert "cost              ~$0.0" in r.out


def test_dry_run_counts_cached_calls(cli, tmp_path):
    with FakeLLM() as fake:
        cli("demo", "--claude", "--base-url", fake.url, cwd=tmp_path)
        r = cli(
            "demo", "--claude", "--base-url", fake.url, "--dry-run", "--top-k", "1", cwd=tmp_path
        )
        assert len(fake.received) == 11
    # top_k 1 builds other prompts, except for the two questions whose search found
    # a single chunk above 0.2 at top_k 3 as well: those are cached already.
    assert "calls             9 to make, 2 answered from the cache" in r.out
    r = cli("demo", "--claude", "--base-url", fake.url, "--dry-run", cwd=tmp_path)
    assert "calls             0 to make, 11 answered from the cache" in r.out


def test_missing_key_is_a_clear_error_before_any_work(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with FakeLLM() as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, cwd=tmp_path)
        assert fake.received == []
    assert r.code == 2
    assert r.err.strip() == (
        "ragrail: error: ANTHROPIC_API_KEY is not set: export it before using --answerer anthropic"
    )
    assert r.out == ""


def test_openai_compatible_server(cli, tmp_path):
    with FakeLLM(fixed_usage) as fake:
        r = cli(
            "demo",
            "--answerer",
            "openai",
            "--model",
            "local-llama",
            "--base-url",
            fake.openai_url,
            cwd=tmp_path,
        )
        assert r.code == 0, r.err
        assert len(fake.calls("openai")) == 11
        assert fake.received[0].headers["authorization"] == f"Bearer {KEY}"
    assert "OpenAI-compatible server (local-llama)" in r.out
    assert "cost              unknown (no price for this model" in r.out


def test_config_prices_override(cli, tmp_path):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    cfg = dest / "ragrail.toml"
    cfg.write_text(cfg.read_text() + "\n[prices.local-llama]\ninput = 2.0\noutput = 4.0\n")
    with FakeLLM(fixed_usage) as fake:
        r = cli(
            "run",
            "--answerer",
            "openai",
            "--model",
            "local-llama",
            "--base-url",
            fake.openai_url,
            cwd=dest,
        )
    # 11 x (250 x 2 + 150 x 4) / 1e6
    assert "cost              $0.0121" in r.out


def test_repeats_mark_a_flaky_case(cli, tmp_path):
    right = "Sign in with one of your backup codes [two-factor#2]."
    wrong = "Scan the QR code [two-factor#1]."

    def script(req):
        if "lost my phone" in question_of(req.prompt):
            return [
                Reply(text=right),
                Reply(text=wrong),
                Reply(text=right),
                Reply(text=wrong),
                Reply(text=right),
            ]
        return paste_top_chunk(req)

    with FakeLLM(script) as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--repeats", "5", cwd=tmp_path)
        assert len(fake.received) == 55
    row = next(ln for ln in r.out.splitlines() if ln.startswith("  lost-phone"))
    assert row.split()[1:3] == ["hit", "3/5"]
    assert "flaky (60% pass)" in row
    assert re.search(r"flaky\s+1 ", r.out)


def test_repeated_runs_compare_with_the_fisher_rule(cli, tmp_path):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    with FakeLLM(paste_top_chunk) as fake:
        r = cli(
            "run", "--claude", "--base-url", fake.url, "--repeats", "3", "--save-baseline", cwd=dest
        )
        assert r.code == 0, r.err
        baseline = json.loads((dest / "baseline.json").read_text())
        assert baseline["config"]["answerer"] == "anthropic" and baseline["config"]["repeats"] == 3

    def worse(req):
        if "How long does the password reset link last?" in req.prompt:
            return Reply(text="Soon [reset-password#1].")
        return paste_top_chunk(req)

    with FakeLLM(worse) as fake:
        r = cli("run", "--claude", "--base-url", fake.url, "--repeats", "3", "--no-cache", cwd=dest)
    assert r.code == 1
    assert "WORSE:  link-expiry: answer pass rate 3/3 -> 0/3" in r.out


def test_rerun_failures_prints_the_answers(cli, tmp_path):
    with FakeLLM() as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--rerun-failures", "2", cwd=tmp_path)
        assert len(fake.received) == 11 + 4 * 2  # four failing questions, two re-runs each
    assert "Re-runs of failing questions" in r.out
    assert "  lost-phone: 0 of 2 re-runs pass" in r.out


def test_ctrl_c_keeps_finished_calls_and_a_rerun_resumes(tmp_path):
    with FakeLLM(latency=0.4) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "NO_COLOR": "1"}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragrail",
                "demo",
                "--claude",
                "--base-url",
                fake.url,
                "--concurrency",
                "1",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.time() + 60
        while len(fake.received) < 4 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "run the same command again to resume" in err
        assert "Traceback" not in err
        sent_first = len(fake.received)
        assert sent_first < 11
        done = subprocess.run(
            [sys.executable, "-m", "ragrail", "demo", "--claude", "--base-url", fake.url],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        resumed = len(fake.received) - sent_first
        # finished calls came from the cache; only the rest (plus the one in flight) was sent
        assert resumed <= 11 - (sent_first - 1)
        assert f"{11 - resumed} cached" in done.stdout


def test_cache_stats_and_clear(cli, tmp_path):
    r = cli("cache", "stats", cwd=tmp_path)
    assert "no cache yet" in r.out
    with FakeLLM() as fake:
        cli("demo", "--claude", "--base-url", fake.url, cwd=tmp_path)
        r = cli("cache", "stats", cwd=tmp_path)
        assert "11 cached replies" in r.out and "claude-opus-5" in r.out
        r = cli("cache", "clear", cwd=tmp_path)
        assert r.code == 0 and "cleared 11 cached replies" in r.out
        cli("demo", "--claude", "--base-url", fake.url, cwd=tmp_path)
        assert len(fake.received) == 22  # after clearing, every call is made again


def test_sdk_base_url_environment_variable_is_honoured(cli, tmp_path, monkeypatch):
    with FakeLLM() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        r = cli("demo", "--claude", cwd=tmp_path)
        assert r.code == 0, r.err
        assert len(fake.received) == 11
