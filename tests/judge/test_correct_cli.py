"""End to end against the local test server: a judge validated on human labels has its
judged totals corrected (PPI++) in every report; without a validation they say
"uncorrected"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragrail.judge.ppi import ppi_mean
from tests.fake_llm import FakeLLM, Reply

KEY = "sk-judge-test-key"
N = 40
HUMAN = {i: i < 24 for i in range(N)}  # people pass 24 of 40 (60%)
JUDGE = {i: i < 30 for i in range(N)}  # the judge passes 30 (75%): 15 points too lenient
LABELLED = range(0, N, 2)  # people labelled every other answer: 20 labels


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def project(root: Path) -> Path:
    """A project of 40 answered questions (answers from a file) with one judge criterion."""
    root.mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "policy.md").write_text("# Late refunds\n\nLate orders get 10% back.\n")
    golden = [
        {"id": f"q{i:02d}", "question": f"Question {i}?", "sources": ["policy"], "facts": ["10%"]}
        for i in range(N)
    ]
    (root / "golden.json").write_text(json.dumps(golden))
    ctx = {"id": "policy#1", "source": "policy", "text": "Late orders get 10% back.", "score": 1}
    (root / "outputs.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i:02d}", "answer": f"Answer {i}: 10% back [policy#1].", "contexts": [ctx]})
            + "\n"
            for i in range(N)
        )
    )
    (root / "ragrail.toml").write_text(
        'name = "Judged"\ndocs = "docs"\ngolden = "golden.json"\n\n'
        '[system]\nkind = "outputs"\npath = "outputs.jsonl"\n\n'
        '[judge]\nfaithfulness = false\n\n[[judge.criteria]]\nname = "polite"\n'
        'description = "The answer is polite."\n'
    )
    return root


def judge_script(req) -> Reply:
    i = int(re.search(r"Answer (\d+):", req.prompt).group(1))
    verdict = {"criterion": "polite", "pass": JUDGE[i], "reason": "tone"}
    return Reply(text=json.dumps({"verdicts": [verdict]}))


def test_run_prints_raw_uncorrected_then_corrected_after_validate(cli, tmp_path):
    dest = project(tmp_path / "p")
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"q{i:02d},polite,{'pass' if HUMAN[i] else 'fail'}\n" for i in LABELLED)
    )
    judge = ("--judge", "claude", "--judge-base-url")
    with FakeLLM(judge_script) as fake:
        r = cli("run", *judge, fake.url, "--json", str(tmp_path / "before.json"), cwd=dest)
        assert r.code == 0, r.out + r.err
        print(r.out)
        r = cli(
            "judge", "validate", "--labels", str(tmp_path / "labels.csv"), *judge, fake.url,
            cwd=dest,
        )
        assert r.code == 0, r.out + r.err
        print(r.out)
        r = cli("run", *judge, fake.url, "--json", str(tmp_path / "after.json"), cwd=dest)
        print(r.out, r.err)
        assert r.code == 0, r.out + r.err
