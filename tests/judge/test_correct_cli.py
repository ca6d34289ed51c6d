"""End to end against the local test server: a judge validated on human labels has its
judged totals corrected (PPI++) in every report; without a validation they say
"uncorrected"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragrail.judge.ppi import planned_labels_to_halve, ppi_mean
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
            json.dumps(
                {
                    "id": f"q{i:02d}",
                    "answer": f"Answer {i}: 10% back [policy#1].",
                    "contexts": [ctx],
                }
            )
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


def labelled(i: int) -> tuple[float, float]:
    return float(JUDGE[i]), float(HUMAN[i])


def expected_correction(judge: dict[int, bool], lam: float | None = None):
    """PPI++ on this project's numbers (its maths is hand-checked in test_ppi.py); classic
    PPI with ``lam=1`` (a run other than the labelled one)."""
    return ppi_mean(
        [float(judge[i]) for i in range(N)],
        [labelled(i)[0] for i in LABELLED],
        [labelled(i)[1] for i in LABELLED],
        lam=lam,
    )


def test_run_prints_raw_uncorrected_then_corrected_after_validate(cli, tmp_path):
    dest = project(tmp_path / "p")
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"q{i:02d},polite,{'pass' if HUMAN[i] else 'fail'}\n" for i in LABELLED)
    )
    judge = ("--judge", "claude", "--judge-base-url")
    with FakeLLM(judge_script) as fake:
        # no validation yet: the raw figure, said to be uncorrected
        r = cli("run", *judge, fake.url, "--json", str(tmp_path / "before.json"), cwd=dest)
        assert r.code == 0, r.out + r.err
        assert re.search(r"polite\s+75%\s+\[\d+%, \d+%\]\s+n=40\s+pass, uncorrected", r.out)
        assert "no human labels stored for this judge" in r.out
        assert json.loads((tmp_path / "before.json").read_text())["judge_corrected"] == {}

        r = cli(
            "judge",
            "validate",
            "--labels",
            str(tmp_path / "labels.csv"),
            *judge,
            fake.url,
            "--run",
            "latest",
            "--json",
            str(tmp_path / "validation.json"),
            cwd=dest,
        )
        assert r.code == 0, r.out + r.err
        # on the 20 labels the judge passes 15, people 12: +15 points
        assert re.search(r"judge bias\s+\+15\s", r.out)
        halve = planned_labels_to_halve(
            [labelled(i)[0] for i in LABELLED], [labelled(i)[1] for i in LABELLED], N
        )
        assert halve is not None and halve > 0
        assert f"{halve} more would halve the interval of a corrected total (a run of 40" in r.out
        (stored,) = json.loads((tmp_path / "validation.json").read_text())["criteria"]
        assert (stored["labels_to_halve"], stored["run_size"]) == (halve, N)

        r = cli(
            "run",
            *judge,
            fake.url,
            "--json",
            str(tmp_path / "after.json"),
            "--markdown",
            str(tmp_path / "summary.md"),
            cwd=dest,
        )
        assert r.code == 0, r.out + r.err
    est = expected_correction(JUDGE)
    shown = f"corrected {est.estimate:.1%} [{est.low:.1%}, {est.high:.1%}], 20 human labels"
    assert f"polite            raw 75.0%, {shown}" in r.out
    assert "uncorrected" not in r.out
    # by hand: the judge passes 75% of the labelled answers as of all 40, so whatever λ the
    # estimate is the people's rate on the labels, 12 of 20 (the README shows this line)
    assert "raw 75.0%, corrected 60.0% [42.0%, 78.0%], 20 human labels" in r.out
    # the correction moves the lenient judge's 75% towards the people's 60%
    assert est.estimate < 0.7
    c = json.loads((tmp_path / "after.json").read_text())["judge_corrected"]["judge_polite"]
    assert c["estimate"] == pytest.approx(est.estimate) and c["raw"] == 0.75
    assert (c["n_judged"], c["n_labelled"], c["method"]) == (40, 20, "ppi++")
    assert c["low"] == pytest.approx(est.low) and c["high"] == pytest.approx(est.high)
    md = (tmp_path / "summary.md").read_text()
    assert f"| polite | 75.0% | {est.estimate:.1%} | [{est.low:.1%}, {est.high:.1%}] | 20 |" in md

    html = tmp_path / "report.html"
    r = cli("report", "-o", str(html), cwd=dest)
    assert r.code == 0, r.err
    page = html.read_text()
    assert "id='judge-totals'" in page and f">{est.estimate:.1%}<" in page


def test_diff_of_two_corrected_runs_is_paired(cli, tmp_path):
    """Two runs judged by the same validated judge: `ragrail diff` shows the corrected
    change with a paired interval (same labels, the same 40 questions). Run 2 has the
    labelled run's answers and verdicts (PPI++); run 3's judge passes 10 fewer, so it is
    another run: classic PPI, and the difference keeps the labels' term (λ_2 - 1)·mean
    f(X) (ragrail.judge.ppi_change)."""
    dest = project(tmp_path / "p")
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"q{i:02d},polite,{'pass' if HUMAN[i] else 'fail'}\n" for i in LABELLED)
    )
    stricter = {i: i < 20 for i in range(N)}  # after a prompt change: 10 fewer passes
    state = {"judge": JUDGE}

    def script(req) -> Reply:
        i = int(re.search(r"Answer (\d+):", req.prompt).group(1))
        verdict = {"criterion": "polite", "pass": state["judge"][i], "reason": "tone"}
        return Reply(text=json.dumps({"verdicts": [verdict]}))

    judge = ("--judge", "claude", "--judge-base-url")
    with FakeLLM(script) as fake:
        r = cli("run", *judge, fake.url, cwd=dest)
        assert r.code == 0, r.err
        labels = str(tmp_path / "labels.csv")
        assert cli("judge", "validate", "--labels", labels, *judge, fake.url, cwd=dest).code == 0
        assert cli("run", *judge, fake.url, cwd=dest).code == 0  # run 2: corrected
        state["judge"] = stricter
        assert cli("run", *judge, fake.url, "--no-cache", cwd=dest).code == 0  # run 3
        r = cli("diff", "2", "3", "--json", str(tmp_path / "diff.json"), cwd=dest)
    # each question whose criterion the stricter judge now fails lost a check: WORSE
    assert r.code == 1, r.out + r.err
    assert [line.strip() for line in r.out.splitlines() if "WORSE:" in line] == [
        f"WORSE:  q{i}: judge criterion 'polite' no longer passes"
        for i in range(N)
        if JUDGE[i] and not stricter[i]
    ]
    (change,) = json.loads((tmp_path / "diff.json").read_text())["judge_changes"]
    assert change["paired"] and change["n_judged"] == 40 and change["n_labelled"] == 20
    before, after = expected_correction(JUDGE), expected_correction(stricter, lam=1.0)
    # classic PPI: 20/40 + (12/20 - 15/20) = 0.35; PPI++ tuned on the labels gave 0.49,
    # most of the way back to run 2's 0.60 (the frozen total of issue 24)
    assert after.estimate == pytest.approx(0.35)
    assert change["baseline"] == pytest.approx(before.estimate)
    assert change["now"] == pytest.approx(after.estimate)
    assert change["difference"] == pytest.approx(after.estimate - before.estimate)
    # D = mean f_3 - λ_2·mean f_2 - (1 - λ_2)·mean f(X), and mean f_2 = mean f(X) = 0.75
    assert change["difference"] == pytest.approx(0.5 - 0.75)
    assert change["low"] < change["difference"] < change["high"] < 0 and change["significant"]
    text = " ".join(r.out.split())  # as wrapped to the terminal
    assert (
        f"judge: polite pass rate (corrected): {before.estimate:.1%} -> {after.estimate:.1%}"
        in text
    )
    assert "paired over 40 questions and the same 20 labels (the interval leaves out 0)" in text
    assert "assumes the judge errs on this run as it did on the labelled one" in text
