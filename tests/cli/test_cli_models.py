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
    # the error counts as not passing (8 of 12), and is shown apart, never dropped
    assert re.search(r"answers pass\s+67%.*\(8 of 12, 1 error\)", r.out)
    assert r.err.rstrip().endswith("exit 3")
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


def test_rerun_failures_reports_exactly_the_calls_the_server_received_and_their_cost(cli, tmp_path):
    """A fault server: the 3rd request gets a 500 (no usage), every other reply says
    250 tokens in, 150 out. Every request it received is a call in the totals."""
    out = tmp_path / "r.json"
    fault = Reply(status=500, headers={"retry-after": "0"})
    with FakeLLM(fixed_usage, faults={3: fault}) as fake:
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--rerun-failures",
            "2",
            "--json",
            str(out),
            cwd=tmp_path,
        )
        received = fake.count
        reported_in, reported_out = fake.reported_tokens()
    assert r.code == 0, r.err
    # 11 answers + 1 retry of the fault + 4 failing questions x 2 re-runs
    assert received == 11 + 1 + 8
    assert (reported_in, reported_out) == (19 * 250, 19 * 150)
    # by hand: 19 replies x (250 x $5 + 150 x $25) / 1e6 = 19 x $0.005; the 500 costs nothing
    assert "calls             20 made, 0 cached, 0 failed, 1 retries" in r.out
    assert "tokens            4,750 in, 2,850 out" in r.out
    assert "cost              $0.0950" in r.out
    usage = json.loads(out.read_text())["usage"]
    assert usage["calls"] == received and usage["retries"] == 1
    assert usage["cost_usd"] == pytest.approx(0.095)
    assert r.out.index("cost              $0.0950") < r.out.index("Re-runs of failing questions")


def test_rerun_failures_make_new_calls_after_repeats(cli, tmp_path):
    with FakeLLM(fixed_usage) as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--repeats", "3", cwd=tmp_path)
        assert r.code == 0, r.err
        assert fake.count == 33
        r = cli("demo", "--claude", "--base-url", fake.url, "--rerun-failures", "2", cwd=tmp_path)
        # the answers are cached (repeat 0); the re-runs are not --repeats' 1 and 2
        assert fake.count == 33 + 4 * 2
    assert "calls             8 made, 11 cached, 0 failed" in r.out
    assert "cost              $0.0400" in r.out  # 8 x $0.005; the cached 11 are not charged again


def test_a_question_whose_call_failed_is_rerun_too(cli, tmp_path):
    def script(req):
        if "reset link last" in question_of(req.prompt):
            return [Reply(status=500), paste_top_chunk(req)]
        return paste_top_chunk(req)

    with FakeLLM(script) as fake:
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--max-retries",
            "0",
            "--rerun-failures",
            "2",
            cwd=tmp_path,
        )
        assert fake.count == 11 + (4 + 1) * 2  # the four failing and the errored one
    assert r.code == 3  # the re-runs are for reading: the run's error stands
    assert "  link-expiry: 2 of 2 re-runs pass" in r.out
    assert "calls             21 made, 0 cached, 1 failed" in r.out


def test_dry_run_shows_the_rerun_bound_and_the_cost_bound(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with FakeLLM() as fake:
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--dry-run",
            "--rerun-failures",
            "2",
            "--judge",
            "claude",
            cwd=tmp_path,
        )
        assert r.code == 0, r.err
        assert fake.count == 0
    lines = {ln[2:20].strip(): ln[20:] for ln in r.out.splitlines() if ln.startswith("  ")}
    n_in = int(re.search(r"~([\d,]+) tokens", lines["input"]).group(1).replace(",", ""))
    # every question that reaches the model (11) could fail, and is then asked twice more
    assert lines["re-runs"] == "at most 22 calls (11 questions that may fail x 2), 0 cached"
    answers = (n_in * 5 + 11 * 512 * 25) / 1e6  # prompts once, every answer at max_tokens
    reruns = (2 * n_in * 5 + 22 * 512 * 25) / 1e6  # each re-run sends its prompt again
    assert lines["cost"].endswith(f"(at most ${answers:.4f})")
    assert lines["re-run cost"] == f"at most ${reruns:.4f}"
    # the judge: one claims call per question with sources that reaches the model,
    # each retried or re-asked at most twice ([judge] max_retries = 2)
    assert lines["judge"] == "11 calls to anthropic claude-opus-5 (at most 33 with retries)"
    judge = float(lines["judge cost"].removeprefix("at most $"))
    assert lines["total cost"] == f"at most ${answers + reruns + judge:.4f}"


def test_dry_run_after_a_rerun_counts_the_cached_reruns(cli, tmp_path):
    with FakeLLM() as fake:
        cli("demo", "--claude", "--base-url", fake.url, "--rerun-failures", "2", cwd=tmp_path)
        r = cli(
            "demo",
            "--claude",
            "--base-url",
            fake.url,
            "--rerun-failures",
            "2",
            "--dry-run",
            cwd=tmp_path,
        )
    # the 4 failing questions' re-runs are cached; the other 7 could still fail and add 14
    assert "re-runs           at most 14 calls (11 questions that may fail x 2), 8 cached" in r.out


@pytest.mark.parametrize(
    ("api", "reply", "reason"),
    [
        ("anthropic", Reply(shape="null"), "empty reply from the model"),
        ("anthropic", Reply(shape="[]"), "empty reply from the model"),
        ("openai", Reply(shape="null"), "empty reply from the model"),
        ("openai", Reply(shape="[]"), "empty reply from the model"),
        ("openai", Reply(shape="no_choices"), "empty reply from the model"),
        (
            "openai",
            Reply(raw=b"<html><body>It works!</body></html>", content_type="text/html"),
            "the server answered with HTML, not JSON (is base_url right?)",
        ),
    ],
    ids=["anthropic-null", "anthropic-[]", "openai-null", "openai-[]", "choices-[]", "html"],
)
def test_an_empty_or_html_reply_is_an_error_with_a_plain_reason(cli, tmp_path, api, reply, reason):
    def script(req):
        return reply if "lost my phone" in question_of(req.prompt) else fixed_usage(req)

    url_of = {"anthropic": lambda f: f.url, "openai": lambda f: f.openai_url}
    with FakeLLM(script) as fake:
        args = ["--claude"] if api == "anthropic" else ["--answerer", "openai", "--model", "m"]
        r = cli("demo", *args, "--base-url", url_of[api](fake), "--max-retries", "1", cwd=tmp_path)
        lost = [c for c in fake.received if "lost my phone" in question_of(c.prompt)]
        assert len(lost) == 2  # retried once, like any failed call
    assert r.code == 3
    row = next(ln for ln in r.out.splitlines() if ln.startswith("  lost-phone"))
    assert "ERROR" in row
    assert reason in " ".join(r.out.split())
    assert "AttributeError" not in r.out + r.err and "Traceback" not in r.out + r.err


def test_an_unpriced_model_whose_calls_failed_costs_unknown_not_zero(cli, tmp_path):
    with FakeLLM(lambda r: Reply(status=503, headers={"retry-after": "0"})) as fake:
        r = cli(
            "demo",
            "--answerer",
            "openai",
            "--model",
            "local-llama",
            "--base-url",
            fake.openai_url,
            "--max-retries",
            "0",
            cwd=tmp_path,
        )
        assert fake.count == 11
    assert r.code == 3
    assert "calls             11 made, 0 cached, 11 failed" in r.out
    assert "cost              unknown (no price for this model" in r.out
    assert "$0.0000" not in r.out


def test_a_server_that_omits_usage_shows_unknown_tokens_and_cost(cli, tmp_path):
    out = tmp_path / "r.json"

    def script(req):
        reply = paste_top_chunk(req)
        reply.usage = False
        return reply

    with FakeLLM(script) as fake:
        r = cli("demo", "--claude", "--base-url", fake.url, "--json", str(out), cwd=tmp_path)
    assert r.code == 0, r.err
    assert "tokens            unknown (the server did not report usage)" in r.out
    assert "cost              unknown (the server did not report usage)" in r.out
    assert "$0.0000" not in r.out and " 0 in, 0 out" not in r.out
    usage = json.loads(out.read_text())["usage"]
    assert usage["calls"] == 11
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (None, None, None)


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


# SIGTERM delivered while one call's task is running Python code (as while the first
# call imports the SDK): the CLI's handler raises KeyboardInterrupt inside that task.
SIGTERM_IN_A_TASK = """
import asyncio, os, signal, time
from ragrail.calls.layer import CallLayer, CallRequest, CallSettings
from ragrail.calls.providers import Provider
from ragrail.cli.entry import _catch_sigterm

class Busy(Provider):
    name = "busy"

    async def complete(self, prompt, max_tokens, temperature, followup=None):
        if prompt == "p0":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # the handler runs here, inside this task
        await asyncio.sleep(30)

_catch_sigterm()
layer = CallLayer(Busy("m", None, 60.0), CallSettings(concurrency=8, max_retries=0))
try:
    layer.run([CallRequest(f"p{i}") for i in range(8)])
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_sigterm_inside_a_call_stops_every_call_without_a_word():
    proc = subprocess.run(
        [sys.executable, "-c", SIGTERM_IN_A_TASK], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.strip() == "interrupted", proc.stdout + proc.stderr
    assert proc.stderr == ""  # no "Task exception was never retrieved", no "destroyed"


def test_sigterm_during_model_calls_is_one_line_and_exit_130(tmp_path):
    """A cancelled CI job sends SIGTERM while calls are in flight: the handler's
    KeyboardInterrupt once went off inside one asyncio task, and every other task was
    destroyed pending, printing ~97 lines of "Task exception was never retrieved"."""
    with FakeLLM(latency=5.0) as fake:  # slow: every call is still in flight at the signal
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "NO_COLOR": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragrail", "demo", "--claude", "--base-url", fake.url],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.time() + 60
        while len(fake.received) < 4 and time.time() < deadline:
            time.sleep(0.05)
        assert len(fake.received) >= 4, "the run never reached the model calls"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130, err
    assert len(lines) == 1, err
    assert lines[0].startswith("ragrail: ") and "run the same command again to resume" in lines[0]


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


def test_a_check_that_raises_on_a_rerun_answer_is_that_reruns_error(cli, tmp_path):
    """The re-run's answer trips a check function that raises: that re-run shows the
    check's error; the run is not a crash (exit 3 with an internal-error report)."""
    import shutil

    from ragrail.project import example_dir

    project = tmp_path / "p"
    shutil.copytree(example_dir("kitebase"), project)
    (project / "mychecks.py").write_text(
        "def calm(answer, case):\n"
        "    if 'EXPLODE' in answer:\n"
        "        raise ValueError('cannot judge this one')\n"
        "    return True\n",
        encoding="utf-8",
    )
    cfg = project / "ragrail.toml"
    cfg.write_text(
        cfg.read_text(encoding="utf-8")
        + '\n[[checks]]\ntype = "python"\nfunction = "mychecks:calm"\n',
        encoding="utf-8",
    )

    def script(req):
        return [paste_top_chunk(req), Reply(text="EXPLODE")]

    with FakeLLM(script) as fake:
        r = cli(
            "run", "--claude", "--base-url", fake.url, "--rerun-failures", "1",
            "--no-history", cwd=project,
        )
    assert "internal error" not in r.err, r.err
    assert "Re-runs of failing questions" in r.out
    assert "cannot judge this one" in r.out
    assert r.code == 0, r.err  # the re-runs are for reading: they never change the verdict
