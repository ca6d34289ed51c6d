"""Saved runs (baselines, --json results): read strictly, written only when they read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragrail.errors import InputError, SystemFailure
from ragrail.records.results import load_run
from tests.helpers import KITEBASE_V1, digest, one_error_line

# A whole saved run as `--save-baseline` wrote it before baselines were compact: what
# `--json` writes today, and what an old baseline.json holds.
WHOLE_RUN = KITEBASE_V1


@pytest.fixture
def project(cli, tmp_path) -> Path:
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    (dest / "baseline.json").write_bytes(WHOLE_RUN.read_bytes())
    return dest


@pytest.fixture
def saved(project: Path) -> dict[str, Any]:
    return json.loads((project / "baseline.json").read_text())


def first_case(**fields: Any):
    def edit(data: dict[str, Any]) -> None:
        data["cases"][0].update(fields)

    return edit


def totals(**fields: Any):
    def edit(data: dict[str, Any]) -> None:
        data["totals"].update(fields)

    return edit


EDITS = [
    ("recall-above-one", first_case(retrieval_recall=1.5), "cases.0.retrieval_recall", "got 1.5"),
    (
        "recall-negative",
        first_case(retrieval_recall=-0.5),
        "cases.0.retrieval_recall",
        "greater than or equal to 0",
    ),
    ("recall-nan", first_case(retrieval_recall=float("nan")), "cases.0.retrieval_recall", "NaN"),
    (
        "recall-inf",
        first_case(retrieval_recall=float("inf")),
        "cases.0.retrieval_recall",
        "Infinity",
    ),
    ("recall-string", first_case(retrieval_recall="high"), "cases.0.retrieval_recall", "number"),
    (
        "negative-runs",
        first_case(answer_runs=-1),
        "cases.0.answer_runs",
        "greater than or equal to 0",
    ),
    (
        "passes-above-runs",
        first_case(answer_passes=5, answer_runs=1),
        "answer_passes (5)",
        "answer_runs (1)",
    ),
    (
        "precision-above-one",
        first_case(context_precision=2),
        "cases.0.context_precision",
        "less than or equal to 1",
    ),
    (
        "latency-negative",
        lambda d: d["cases"][0]["trace"].update(latency_ms=-3),
        "trace.latency_ms",
        "greater than or equal to 0",
    ),
    (
        "score-nan",
        lambda d: d["cases"][0]["trace"]["retrieved"][0].update(score=float("nan")),
        "cases.0.trace.retrieved.0.score",
        "NaN",
    ),
    (
        "rank-zero",
        lambda d: d["cases"][0]["trace"]["retrieved"][0].update(rank=0),
        "retrieved.0.rank",
        "greater than or equal to 1",
    ),
    (
        "pass-rate-above-one",
        totals(answer_pass_rate=1.2),
        "totals.answer_pass_rate",
        "less than or equal to 1",
    ),
    ("hit-rate-nan", totals(hit_rate=float("nan")), "totals.hit_rate", "NaN"),
    ("negative-errors", totals(n_errors=-2), "totals.n_errors", "greater than or equal to 0"),
    ("passed-above-answers", totals(answers_passed=99), "answers_passed (99)", "n_answers"),
    (
        "stat-n-negative",
        lambda d: d["totals"].setdefault("stats", {}).update(recall={"value": 0.5, "n": -1}),
        "totals.stats.recall.n",
        "greater than or equal to 0",
    ),
    ("duplicate-case-ids", lambda d: d["cases"].append(d["cases"][0]), "twice", "cases.0"),
    ("case-not-object", lambda d: d["cases"].__setitem__(0, 7), "field 'cases.0'", "dictionary"),
    ("cases-missing", lambda d: d.pop("cases"), "field 'cases' is missing", ""),
    ("unknown-field", first_case(bonus=1), "unknown field 'cases.0.bonus'", ""),
    ("future-version", lambda d: d.update(schema_version=999), "schema_version 999", ""),
]


@pytest.mark.parametrize(("name", "edit", "field", "detail"), EDITS, ids=[e[0] for e in EDITS])
def test_a_hand_edited_baseline_out_of_range_is_exit_2_naming_the_field(
    cli, project, saved, name, edit, field, detail
):
    assert saved["cases"][0]["trace"]["retrieved"], "the first case needs a retrieved chunk"
    edit(saved)
    baseline = project / "baseline.json"
    baseline.write_text(json.dumps(saved, indent=2, allow_nan=True))
    before = digest(baseline)
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2, r.out + r.err
    line = one_error_line(r.err)
    assert "baseline.json" in line and field in line and detail in line
    assert digest(baseline) == before
    # the same file read as --json results by `report --from-json`
    r = cli("report", "--from-json", str(baseline), "-o", str(project / "r.html"), cwd=project)
    assert r.code == 2 and field in one_error_line(r.err)
    assert not (project / "r.html").exists()


def test_a_nan_literal_is_named_with_its_line_column_and_case(project, saved):
    path = project / "baseline.json"
    saved["cases"][2]["retrieval_recall"] = float("nan")
    path.write_text(json.dumps(saved, indent=2, allow_nan=True))
    with pytest.raises(InputError) as info:
        load_run(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "NaN" in t)
    assert info.value.where is not None and info.value.where.startswith(f"{path}:{line}:")
    assert "field 'cases.2.retrieval_recall': NaN is not valid JSON" in info.value.message


def test_an_out_of_range_value_names_the_case_id(project, saved):
    saved["cases"][1]["retrieval_recall"] = 1.5
    path = project / "baseline.json"
    path.write_text(json.dumps(saved))
    with pytest.raises(InputError, match=f"case {saved['cases'][1]['id']!r}"):
        load_run(path)


def test_a_saved_run_round_trips_and_its_file_reads_back(project):
    path = project / "baseline.json"
    run = load_run(path)
    out = project / "copy.json"
    run.save(out)
    assert load_run(out, "results") == run


def test_save_refuses_a_run_that_would_not_read_back_and_keeps_the_old_file(project):
    path = project / "baseline.json"
    run = load_run(path)
    before = digest(path)
    run.cases[0].retrieval_recall = float("nan")  # assignment is not validated
    with pytest.raises(SystemFailure, match=r"not saved: .*cases\.0\.retrieval_recall.*NaN"):
        run.save(path, "baseline")
    assert digest(path) == before
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".baseline")) == []

    run = load_run(path)
    run.totals.hit_rate = 3.0  # out of range, but serialisable: the read-back validates
    with pytest.raises(SystemFailure, match=r"totals\.hit_rate"):
        run.save(path, "baseline")
    assert digest(path) == before


def test_a_run_never_saves_nan_as_null(project):
    run = load_run(project / "baseline.json")
    run.cases[0].correctness = float("inf")
    text = run.to_json()
    assert "Infinity" in text and "null" not in text.split('"correctness"')[1][:10]


def test_the_pieces_of_a_saved_run_are_its_json_exactly(project, monkeypatch):
    import ragrail.records.results as results

    run = load_run(project / "baseline.json")
    assert b"".join(run.json_pieces()).decode() == run.to_json()
    monkeypatch.setattr(results, "JSON_BLOCK", 5)  # 12 cases: blocks of 5, 5 and 2
    assert b"".join(run.json_pieces()).decode() == run.to_json()
    for kept in (0, 1):
        part = run.model_copy(update={"cases": run.cases[:kept]})
        assert b"".join(part.json_pieces()).decode() == part.to_json()


def test_a_large_run_is_saved_with_the_quick_check_and_still_refuses_nan(project, monkeypatch):
    import ragrail.records.results as results

    monkeypatch.setattr(results, "READ_BACK_UP_TO", 0)  # every run counts as large
    path = project / "baseline.json"
    run = load_run(path)
    out = project / "large.json"
    run.save(out)
    assert load_run(out, "results") == run

    before = digest(out)
    run.cases[-1].faithfulness = float("nan")
    with pytest.raises(SystemFailure, match=r"not saved: .*faithfulness.*NaN"):
        run.save(out)
    assert digest(out) == before

    run = load_run(path)
    run.cases[1].id = run.cases[0].id
    with pytest.raises(SystemFailure, match="names a case twice"):
        run.save(out)
    assert digest(out) == before


def test_a_large_run_whose_text_says_nan_is_still_saved(project, monkeypatch):
    # the byte scan finds "NaN" and "Infinity" in an answer: the full read-back runs, and passes
    import ragrail.records.results as results

    monkeypatch.setattr(results, "READ_BACK_UP_TO", 0)
    run = load_run(project / "baseline.json")
    run.cases[0].trace.answer = "The balance showed NaN, then -Infinity."
    run.cases[-1].id = "NaN Infinity"
    out = project / "large.json"
    run.save(out)
    assert load_run(out, "results") == run
    assert not [p.name for p in project.iterdir() if p.name.endswith(".tmp")]


def test_what_a_system_reports_is_saved_only_when_it_reported_it():
    from ragrail.records.results import RunConfig

    base = {
        "name": "n", "chunking": "python callable", "top_k": 3, "min_score": 0.0,
        "retriever": "python", "answerer": "python", "answerer_label": "python", "n_chunks": 9,
        "n_cases": 2,
    }  # fmt: skip
    plain = json.loads(RunConfig(**base).model_dump_json())  # as before the new fields
    assert set(plain) == {*base, "chunk_words", "model", "repeats"}
    full = RunConfig(**base, index_size=40, settings={"top_k": 3, "x": "y"}, citations="off")
    saved = json.loads(full.model_dump_json())
    assert (saved["index_size"], saved["settings"], saved["citations"]) == (
        40, {"top_k": 3, "x": "y"}, "off",
    )  # fmt: skip
    assert RunConfig.model_validate(saved) == full
    with pytest.raises(ValueError, match="settings"):
        RunConfig(**base, settings={"nested": {"a": 1}})
