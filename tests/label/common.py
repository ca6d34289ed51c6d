"""What the labelling tests share: a judged run of 10 answers, a scripted judge, and
``ragrail label`` started as a real process (so it can be killed half-way)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ragrail.records.results import CaseResult, RetrievedChunk, Trace
from ragrail.records.verdicts import CriterionResult, JudgeResult
from tests.factories import run_result
from tests.fake_llm import Reply
from tests.helpers import between

KEY = "sk-judge-test-key"
RUBRIC = """
[judge]
faithfulness = false

[[judge.criteria]]
name = "polite"
description = "The answer is polite and professional."
"""
HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'
# the judge's verdicts in the run (and the scripted judge's, for judge validate)
JUDGE = {i: i not in (2, 5, 8) for i in range(10)}


def judged_run(path: Path, hostile: bool = False) -> None:
    """A run of 10 answers ("Answer number i."), each judged on ``polite``."""
    cases = []
    for i in range(10):
        answer = f"Answer number {i}." + (f" {HOSTILE}" if hostile and i == 0 else "")
        passage = "Refunds take 5 days." + (f" {HOSTILE}" if hostile and i == 0 else "")
        cases.append(
            CaseResult(
                id=f"case-{i:02d}",
                question=f"Question number {i}?" + (f" {HOSTILE}" if hostile and i == 0 else ""),
                sources=["doc"],
                facts=["x"],
                trace=Trace(
                    case_id=f"case-{i:02d}",
                    answer=answer,
                    retrieved=[
                        RetrievedChunk(id="doc#1", source="doc", rank=1, score=1.0, text=passage)
                    ],
                ),
                answer_runs=1,
                answer_passes=1,
                answer_pass=True,
                judge=JudgeResult(
                    criteria=[CriterionResult(name="polite", passed=JUDGE[i], reason="tone")]
                ),
            )
        )
    run = run_result(
        cases,
        name="labelled",
        chunking="precomputed",
        min_score=0.0,
        retriever="x",
        answerer="outputs",
        answerer_label="outputs",
        n_chunks=0,
    )
    run.save(path)


def scripted_judge(req) -> Reply:
    m = re.search(r"Answer number (\d+)", between(req.prompt, "answer"))
    assert m is not None
    verdict = JUDGE[int(m.group(1))]
    return Reply(
        text=json.dumps({"verdicts": [{"criterion": "polite", "pass": verdict, "reason": "tone"}]})
    )


class Labeller:
    """``ragrail label ARGS`` as a child process; ``url`` is the page it printed."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PYTHONUNBUFFERED": "1"}
        root = Path(__file__).resolve().parents[2]
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragrail", "label", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.head: list[str] = []
        self.url = ""
        deadline = time.monotonic() + 60
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.head.append(line)
            if line.startswith("Open "):
                self.url = line.removeprefix("Open ").strip()
                return
        self.proc.kill()
        raise AssertionError("ragrail label printed no URL: " + "".join(self.head) + self.err())

    def err(self) -> str:
        try:
            _, err = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return ""
        return err or ""

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def wait(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, "".join(self.head) + out, err
