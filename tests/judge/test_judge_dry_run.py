"""--dry-run on a project whose answers are precomputed (issue 28): the judge's calls,
tokens and cost bounds, counted from the very prompts it would send, sending nothing."""

from __future__ import annotations

import re

import pytest

from ragrail.system.prompt import estimate_tokens
from tests.fake_llm import FakeLLM
from tests.judge.test_judge import claims_judge, late_refund


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-judge-dry-run-key")


def test_a_dry_run_counts_the_judges_prompts_on_an_outputs_file(cli, tmp_path):
    dest = late_refund(cli, tmp_path)  # [system] kind = "outputs"
    with FakeLLM(claims_judge) as fake:
        dry = cli("run", "--judge", "claude", "--judge-base-url", fake.url, "--dry-run", cwd=dest)
        assert dry.code == 0, dry.out + dry.err
        assert fake.count == 0  # nothing is sent
        real = cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=dest)
        assert real.code == 0, real.out + real.err
    text = " ".join(dry.out.split())
    assert "judge 4 calls to anthropic claude-opus-5 (at most 12 with retries)" in text
    # the estimate is of the very prompts the run then sent
    sent = sum(estimate_tokens(r.prompt) for r in fake.received)
    shown = int(re.search(r"judge input ~([\d,]+) tokens", text).group(1).replace(",", ""))
    assert shown == sent
    assert "judge cost at most $" in text


def test_a_dry_run_without_a_judge_on_an_outputs_file_says_nothing_is_called(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    r = cli("run", "--dry-run", cwd=dest)
    assert r.code == 2 and "needs a judge" in r.err and "Traceback" not in r.err


def test_a_dry_run_shows_the_batch_price_beside_the_direct_one(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    r = cli("run", "--judge", "claude", "--dry-run", cwd=dest)
    assert r.code == 0, r.out + r.err
    text = " ".join(r.out.split())
    direct = float(re.search(r"judge cost at most \$([\d.]+)", text).group(1))
    batch = float(re.search(r"with --batch at most \$([\d.]+)", text).group(1))
    assert batch == pytest.approx(direct / 2, abs=0.0001)
