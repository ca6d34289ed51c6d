"""Sweeping the minimum score: one more axis, with the abstain cases that pass and the
answerable cases that lose retrieval per row."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from ragrail.golden import parse_golden
from ragrail.reports.terminal import sweep_table
from ragrail.sweep import run_sweep, unusable_thresholds
from ragrail.system.answerers.standin import StandinAnswerer
from ragrail.system.pipeline import PipelineSettings

# One article of six content words: refund, payment, arrive, thirty, calendar, day.
ARTICLE = "# Refund payments\n\nRefund payments arrive in thirty calendar days.\n"
CASES = [
    # {refund, payment, arrive} shared: 3 / sqrt(3 * 6) = 0.707
    {
        "id": "when",
        "question": "When do refund payments arrive?",
        "sources": ["refunds"],
        "facts": ["thirty calendar days"],
    },
    # {refund} shared of {pay, refund, bank, cheque}: 1 / sqrt(4 * 6) = 0.204
    {"id": "cheque", "question": "Can I pay a refund by bank cheque?", "sources": []},
]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, object]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text(ARTICLE, encoding="utf-8")
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(CASES), encoding="utf-8")
    return docs, parse_golden(path.read_text(encoding="utf-8"), path)


def test_each_threshold_is_a_row_with_its_abstain_passes_and_lost_cases(project):
    docs, golden = project
    rows = run_sweep(
        "t",
        golden,
        PipelineSettings(docs=docs),
        chunk_words=[0],
        top_ks=[3],
        retrievers=["standin"],
        answerer=StandinAnswerer(),
        min_scores=[0.0, 0.5, 0.9],
    )
    by_min = {r.min_score: r for r in rows}
    assert sorted(by_min) == [0.0, 0.5, 0.9]
    # 0: the abstain case retrieves the article (0.204 > 0) and answers from it
    assert (by_min[0.0].abstain_passed, by_min[0.0].abstain_cases) == (0, 1)
    assert by_min[0.0].answerable_lost == 0 and by_min[0.0].answer_pass_rate == 0.5
    # 0.5: between 0.204 and 0.707, the threshold that works
    assert (by_min[0.5].abstain_passed, by_min[0.5].answerable_lost) == (1, 0)
    assert by_min[0.5].answer_pass_rate == 1.0 and by_min[0.5].recall == 1.0
    # 0.9: above 0.707, the answerable case loses its fact
    assert (by_min[0.9].abstain_passed, by_min[0.9].answerable_lost) == (1, 1)
    assert by_min[0.9].recall == 0.0
    assert rows[0].min_score == 0.5  # best first: full recall, then answers


def test_a_threshold_above_a_retrievers_scale_is_skipped_for_it_only(project):
    docs, golden = project
    assert unusable_thresholds(["standin", "bm25"], [0.5, 2.0]) == [
        ("standin", 2.0, unusable_thresholds(["standin"], [2.0])[0][2])
    ]
    rows = run_sweep(
        "t",
        golden,
        PipelineSettings(docs=docs),
        [0],
        [3],
        ["standin", "bm25"],
        StandinAnswerer(),
        min_scores=[0.5, 2.0],
    )
    assert sorted((r.retriever, r.min_score) for r in rows) == [
        ("bm25", 0.5),
        ("bm25", 2.0),
        ("standin", 0.5),
    ]


def test_the_table_shows_threshold_columns_only_when_thresholds_vary(project):
    docs, golden = project
    args = ("t", golden, PipelineSettings(docs=docs), [0], [3], ["standin"], StandinAnswerer())
    varied = sweep_table(run_sweep(*args, min_scores=[0.0, 0.5]))
    header = varied.splitlines()[0].split()
    assert header[3] == "min" and header[-2:] == ["abstain", "lost"]
    row = next(ln for ln in varied.splitlines() if " 0.5 " in ln)
    assert row.split()[-2:] == ["1/1", "0"]
    single = sweep_table(run_sweep(*args))
    assert "abstain" not in single and "min" not in single.splitlines()[0]


def test_cli_sweeps_min_scores_and_writes_them_to_json_and_csv(cli, tmp_path):
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    r = cli(
        "sweep",
        "--example",
        "kitebase",
        "--retriever",
        "standin,bm25",
        "--top-k",
        "3",
        "--min-score",
        "0,1,1.5",
        "--json",
        str(out_json),
        "--csv",
        str(out_csv),
    )
    assert r.code == 0, r.err
    assert "skipping --min-score 1.5 for standin" in r.err
    rows = json.loads(out_json.read_text())
    assert sorted((x["retriever"], x["min_score"]) for x in rows) == [
        ("bm25", 0.0),
        ("bm25", 1.0),
        ("bm25", 1.5),
        ("standin", 0.0),
        ("standin", 1.0),
    ]
    bm25 = {x["min_score"]: x for x in rows if x["retriever"] == "bm25"}
    # the documented Kitebase threshold: bank-transfer abstains, nothing answerable is lost
    assert (bm25[1.0]["abstain_passed"], bm25[1.0]["abstain_cases"]) == (1, 1)
    assert bm25[1.0]["answerable_lost"] == 0 and bm25[0.0]["abstain_passed"] == 0
    assert bm25[1.0]["recall"] == bm25[0.0]["recall"]
    assert bm25[1.5]["answerable_lost"] > 0 and bm25[1.5]["recall"] < bm25[0.0]["recall"]
    table = [ln for ln in r.out.splitlines() if ln.startswith("  chunks by")]
    assert len(table) == 5
    assert "abstain" in r.out.splitlines()[0] and "lost" in r.out.splitlines()[0]
    written = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert {"min_score", "abstain_passed", "abstain_cases", "answerable_lost"} <= set(written[0])
    assert len(written) == 5


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0,x", "not a comma-separated list of numbers"),
        ("nan", "finite numbers >= 0"),
        ("0,-1", "finite numbers >= 0"),
        (",", "finite numbers >= 0"),
    ],
)
def test_bad_min_score_lists_are_usage_errors(cli, tmp_path, value, says):
    out = tmp_path / "s.json"
    r = cli("sweep", "--example", "kitebase", "--min-score", value, "--json", str(out))
    assert r.code == 2
    assert "--min-score" in r.err and says in r.err
    assert not out.exists() and not (tmp_path / ".ragrail").exists()


def test_no_usable_threshold_at_all_is_a_usage_error(cli, tmp_path):
    out = tmp_path / "s.json"
    r = cli("sweep", "--example", "kitebase", "--min-score", "2,3", "--json", str(out))
    assert r.code == 2 and "--min-score" in r.err and "standin" in r.err
    assert not out.exists()
