"""Speed work must not move a number: the 2,000 anchor questions score exactly as
before it (values pinned from the run of commit 5968988, traces left out).

The only interval allowed to differ is faithfulness: every one of the 2,000 answers is
faithful, and the old bootstrap printed the degenerate "1.00 [1.00, 1.00]" for it.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))

import anchor_data  # noqa: E402

DEGENERATE_BEFORE = {"faithfulness"}


@pytest.fixture(scope="module")
def run_2000(tmp_path_factory: pytest.TempPathFactory) -> dict:
    project = tmp_path_factory.mktemp("anchor")
    toml = anchor_data.write_project(2000, project)
    out = project / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragrail",
            "run",
            "--config",
            str(toml),
            "--no-history",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def expected() -> dict:
    with gzip.open(HERE / "anchor_2000_expected.json.gz", "rb") as f:
        return json.loads(f.read())


def test_every_question_scores_as_before(run_2000: dict, expected: dict) -> None:
    got = run_2000["cases"]
    assert [c["id"] for c in got] == [c["id"] for c in expected["cases"]]
    for new, old in zip(got, expected["cases"], strict=True):
        # checks were added after the pin (issue 23): they must agree with the verdict
        checks = new.pop("checks")
        held = all(v == 1 for k, v in checks.items() if k != "claims supported")
        assert held == new["answer_pass"], new["id"]
        missing = {
            p.removeprefix('missing "')[:-1] for p in new["problems"] if p[:9] == 'missing "'
        }
        assert missing == {k[6:] for k, v in checks.items() if k.startswith("fact: ") and not v}
        new = {k: v for k, v in new.items() if k != "trace"}
        assert new == old, f"question {old['id']} scores differently"


def test_totals_are_as_before(run_2000: dict, expected: dict) -> None:
    new, old = run_2000["totals"], expected["totals"]
    assert {k: v for k, v in new.items() if k != "stats"} == {
        k: v for k, v in old.items() if k != "stats"
    }
    assert new["stats"].keys() == old["stats"].keys()
    for name, stat in old["stats"].items():
        got = new["stats"][name]
        assert (got["value"], got["n"]) == (stat["value"], stat["n"]), name
        if name in DEGENERATE_BEFORE:
            assert stat["low"] == stat["high"] == 1.0
            assert got["low"] < 1.0 and got["high"] == 1.0, name
        elif (got["low"], got["high"]) != (stat["low"], stat["high"]):
            # issue 24: a column of 0s and 1s is a rate and gets Wilson's interval of its
            # count (before, the bootstrap's): only such a column may have moved
            from ragrail.stats import wilson

            count = got["value"] * got["n"]
            assert abs(count - round(count)) < 1e-9, name
            rate = wilson(round(count), got["n"])
            assert rate is not None and (got["low"], got["high"]) == (rate.low, rate.high), name


def test_anchor_data_is_the_shared_generator(tmp_path: Path) -> None:
    """The first questions of any N are the anchor ones, and the built-in recall holds."""
    first = list(anchor_data.questions(5))
    assert [q["qid"] for q in first] == ["q0", "q1", "q2", "q3", "q4"]
    assert first == list(anchor_data.questions(5))
    assert [q["question"] for q in anchor_data.questions(50)][:5] == [q["question"] for q in first]
