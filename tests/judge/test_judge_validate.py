"""``ragrail judge validate``: the judge's bias (judge - human) with its paired t interval,
and the labelled pairs stored in the history for the PPI correction."""

from __future__ import annotations

import json
import re

import pytest

from ragrail.judge.validate import judge_bias
from ragrail.store.history import History
from tests.fake_llm import FakeLLM
from tests.judge.test_judge import KEY, RUBRIC, forty_case_run, late_refund, rubric_judge

T_975_9 = 2.2621571627982  # Student's t, 97.5th percentile, 9 degrees of freedom


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_judge_bias_is_the_mean_difference_with_a_paired_t_interval():
    # judge passes 3 the people fail, fails 1 they pass: d = +1 x3, -1 x1, 0 x6
    pairs = [(1.0, 0.0)] * 3 + [(0.0, 1.0)] + [(1.0, 1.0)] * 4 + [(0.0, 0.0)] * 2
    mean, ci = judge_bias(pairs)
    # by hand: mean 0.2; sd^2 = (4 - 10 * 0.2^2) / 9 = 0.4; se = sqrt(0.4 / 10) = 0.2
    assert mean == pytest.approx(0.2)
    assert ci == pytest.approx((0.2 - T_975_9 * 0.2, 0.2 + T_975_9 * 0.2))
    # 1-5 scores: d = 1, 1, 2, 0 -> mean 1, sd^2 = (0 + 0 + 1 + 1) / 3, t(0.975, 3) = 3.182446
    mean, ci = judge_bias([(4, 3), (5, 4), (3, 1), (2, 2)], span=4.0)
    half = 3.1824463052837 * (2 / 3) ** 0.5 / 2
    assert mean == 1.0 and ci == pytest.approx((1 - half, 1 + half))


def test_judge_bias_of_one_pair_has_no_interval_and_of_none_is_none():
    assert judge_bias([(1.0, 0.0)]) == (1.0, None)
    assert judge_bias([]) is None
    # a judge that always agrees: bias 0, but two agreements do not prove it never errs:
    # the half-width is Wilson's upper bound for 0 disagreements of 2,
    # z^2 / (n + z^2) = 3.8415 / 5.8415 = 0.6576 (not zero, not NaN)
    mean, ci = judge_bias([(1.0, 1.0), (0.0, 0.0)])
    z2 = 1.959963984540054**2
    assert mean == 0.0 and ci == pytest.approx((-z2 / (2 + z2), z2 / (2 + z2)))


def test_validate_prints_the_bias_writes_it_to_json_and_stores_the_pairs(cli, tmp_path):
    dest = late_refund(cli, tmp_path, RUBRIC)
    forty_case_run(tmp_path / "labelled.json")
    human = {i: i < 6 for i in range(10)}  # 6 pass, 4 fail
    judge = {i: (human[i] or i in (6, 7, 8)) and i != 0 for i in range(10)}
    (tmp_path / "labels.csv").write_text(
        "case_id,criterion,verdict\n"
        + "".join(f"case-{i:02d},polite,{'pass' if human[i] else 'fail'}\n" for i in range(10))
    )

    def verdict(answer: str) -> bool:
        m = re.search(r"Answer number (\d+)", answer)
        assert m is not None
        return judge[int(m.group(1))]

    out = tmp_path / "v.json"
    with FakeLLM(rubric_judge(verdict)) as fake:
        r = cli(
            "judge", "validate", "--labels", str(tmp_path / "labels.csv"),
            "--run", str(tmp_path / "labelled.json"),
            "--judge", "claude", "--judge-base-url", fake.url, "--json", str(out),
            cwd=dest,
        )  # fmt: skip
    assert r.code == 0, r.out + r.err
    # by hand (the test above): +0.2, [0.2 -+ 2.262 * 0.2] = [-25, +65] points
    low, high = 0.2 - T_975_9 * 0.2, 0.2 + T_975_9 * 0.2
    assert re.search(r"judge bias\s+\+20  \[-25, \+65\]  \(points of the pass rate", r.out)
    data = json.loads(out.read_text())
    [crit] = data["criteria"]
    assert crit["bias"] == pytest.approx(0.2)
    assert crit["bias_ci"] == pytest.approx([low, high])
    assert "pairs" not in crit  # stored in the history, not repeated in the report

    store = History(dest / ".ragrail" / "history.sqlite")
    try:
        pairs = store.validation_pairs(crit["judge_key"], "polite")
        assert sorted(pairs) == [
            (f"case-{i:02d}", float(judge[i]), float(human[i])) for i in range(10)
        ]
        assert store.validation_pairs(crit["judge_key"], "other") == []
        assert store.validation_pairs("another judge", "polite") == []
        [(details,)] = store.db.execute("SELECT details FROM judge_validations").fetchall()
        assert "pairs" not in json.loads(details) and json.loads(details)["bias"] == 0.2
    finally:
        store.close()


SCORED = """
[judge]
faithfulness = false

[[judge.criteria]]
name = "helpful"
description = "The answer helps."
scale = "1-5"
"""


@pytest.mark.parametrize(
    ("rubric", "rows", "line", "message"),
    [
        # a score on a pass/fail criterion would be read as another kind of verdict
        (RUBRIC, ["case-00,polite,pass", "case-01,polite,3"], 3, "verdict 3 on pass/fail"),
        (RUBRIC, ["case-00,faithfulness,4"], 2, "verdict 4 on pass/fail criterion 'faithfulness'"),
        # "pass" is 1.0, which on a 1-5 scale is the worst score: refused, not misread
        (SCORED, ["case-00,helpful,5", "case-01,helpful,pass"], 3, "verdict pass on 1-5"),
        (SCORED, ["case-00,helpful,0"], 2, "verdict 0 on 1-5 criterion 'helpful'"),
    ],
)
def test_a_label_off_its_criterions_scale_is_exit_2_before_any_call(
    cli, tmp_path, rubric, rows, line, message
):
    dest = late_refund(cli, tmp_path, rubric)
    forty_case_run(tmp_path / "labelled.json")
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,criterion,verdict\n" + "".join(f"{r}\n" for r in rows))
    with FakeLLM(rubric_judge(lambda answer: True)) as fake:
        r = cli(
            "judge", "validate", "--labels", str(labels),
            "--run", str(tmp_path / "labelled.json"),
            "--judge", "claude", "--judge-base-url", fake.url, cwd=dest,
        )  # fmt: skip
        assert fake.received == []
    assert r.code == 2, r.out + r.err
    assert f"{labels}:{line}" in r.err and message in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert not (dest / ".ragrail" / "history.sqlite").exists()


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ([("faithfulness", "d")], "'faithfulness' is the claim-level judge's name"),
        ([("tone", "d"), ("tone", "e")], "'tone' is defined twice"),
    ],
)
def test_criteria_are_named_once_and_never_faithfulness(cli, tmp_path, criteria, message):
    """A verdict, a validation and a corrected total are found by the criterion's name."""
    extra = "[judge]\n" + "".join(
        f'[[judge.criteria]]\nname = "{n}"\ndescription = "{d}"\n' for n, d in criteria
    )
    dest = late_refund(cli, tmp_path, extra)
    r = cli("run", "--judge", "claude", "--judge-base-url", "http://127.0.0.1:9", cwd=dest)
    assert r.code == 2 and message in r.err and "ragrail.toml" in r.err
    assert "Traceback" not in r.err


def test_labels_naming_a_case_not_in_the_run_name_the_file_and_line(cli, tmp_path):
    dest = late_refund(cli, tmp_path, RUBRIC)
    forty_case_run(tmp_path / "labelled.json")
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,criterion,verdict\ncase-00,polite,pass\n質問01,polite,fail\n")
    r = cli(
        "judge", "validate", "--labels", str(labels), "--run", str(tmp_path / "labelled.json"),
        "--judge", "claude", "--judge-base-url", "http://127.0.0.1:9", cwd=dest,
    )  # fmt: skip
    assert r.code == 2 and f"{labels}:3" in r.err and "not in the run: 質問01" in r.err
    assert len(r.err.strip().splitlines()) == 1
