"""The application layer: one evaluation from Python, without the CLI, and the verdict."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from ragrail import app
from ragrail.errors import EXIT_OK, EXIT_REGRESSION, EXIT_SYSTEM, InputError, SystemFailure
from ragrail.golden import load_golden
from ragrail.project import example_dir

KITEBASE = example_dir("kitebase")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A private copy of the Kitebase example, run from its own folder."""
    dest = tmp_path / "kb"
    shutil.copytree(KITEBASE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(dest)
    return app.load_project(dest / "ragrail.toml")


def _docs_answer(question: str) -> dict:
    """A system under test that always retrieves the refunds article and says so."""
    return {
        "answer": f"You asked: {question}",
        "contexts": [{"id": "refunds#1", "source": "refunds", "text": "Refunds take 5 days."}],
    }


def test_the_pipeline_from_python_gives_the_articles_figures_and_prints_nothing(project, capsys):
    evaluation = app.evaluate(project, app.Overrides(no_history=True))
    totals = evaluation.result.totals
    assert (round(totals.hit_rate * 100), round(totals.recall * 100)) == (91, 86)
    assert round(totals.answer_pass_rate * 100) == 67
    diff = app.compare_with_baseline(evaluation.result, evaluation.baseline)
    assert diff is not None and not diff.regressed
    assert app.exit_code(evaluation.result, diff) == EXIT_OK
    assert capsys.readouterr() == ("", "")  # the library returns; the CLI prints


def test_an_override_is_a_change_the_baseline_catches(project):
    evaluation = app.evaluate(project, app.Overrides(top_k=1, no_history=True))
    diff = app.compare_with_baseline(evaluation.result, project.baseline)
    assert diff is not None and len({c.case_id for c in diff.worse}) == 3
    assert app.exit_code(evaluation.result, diff) == EXIT_REGRESSION


def test_a_plain_function_object_is_the_system_under_test(project):
    # its one source, "refunds", is no Kitebase document: the run says so, once
    with pytest.warns(UserWarning, match=r"12 of the 12 contexts returned name no document"):
        evaluation = app.evaluate(project, system=_docs_answer)
    result = evaluation.result
    assert len(result.cases) == 12
    assert result.config.answerer_label == "python callable tests.app.test_app:_docs_answer"
    first = result.cases[0]
    assert first.trace.answer == f"You asked: {first.question}"
    assert [c.source for c in first.trace.retrieved] == ["refunds"]


def test_an_async_function_object_runs_on_an_event_loop(project):
    seen: list[str] = []

    async def answer(question: str) -> dict:
        await asyncio.sleep(0)
        seen.append(question)
        return {"answer": "no idea", "contexts": []}

    golden = load_golden(project.golden, project.root)
    result = app.evaluate(project, system=answer, golden=golden).result
    assert sorted(seen) == sorted(c.question for c in golden.cases)
    assert all(c.trace.answer == "no idea" for c in result.cases)


def test_a_function_that_raises_is_that_questions_error_and_exit_3(project):
    def flaky(question: str) -> dict:
        if "password" in question.lower():
            raise RuntimeError("backend down")
        return _docs_answer(question)

    with pytest.warns(UserWarning, match="name no document"):
        evaluation = app.evaluate(project, system=flaky)
    errored = [c for c in evaluation.result.cases if c.errored]
    assert errored and all("RuntimeError: backend down" in c.trace.error for c in errored)
    assert app.exit_code(evaluation.result, None) == EXIT_SYSTEM
    assert "failed to run" in app.failures(evaluation.result)


def test_pipeline_flags_do_not_apply_to_a_function(project):
    with pytest.raises(InputError, match="--top-k do not apply"):
        app.evaluate(project, app.Overrides(top_k=1), system=_docs_answer)


def test_a_system_of_the_wrong_kind_is_an_input_error(project):
    with pytest.raises(InputError, match="got int"):
        app.evaluate(project, system=42)


def test_saving_a_baseline_with_errors_is_refused_and_leaves_the_file(project, tmp_path):
    def broken(question: str) -> dict:
        raise RuntimeError("no")

    result = app.evaluate(project, system=broken).result
    target = tmp_path / "baseline.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(SystemFailure, match="not saving a baseline"):
        app.save_baseline(result, target)
    assert target.read_text(encoding="utf-8") == "old"


def test_a_bad_output_path_fails_before_any_work(project, tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    calls: list[str] = []

    def counted(question: str) -> dict:
        calls.append(question)
        return _docs_answer(question)

    with pytest.raises(InputError):
        app.prepare(project, system=counted, outputs=[(folder, "--json results")])
    with pytest.raises(InputError, match="would overwrite the golden set"):
        app.prepare(project, outputs=[(project.golden, "--json results")])
    assert calls == []
    assert not (project.root / ".ragrail").exists()


def test_without_a_baseline_there_is_no_diff(project, tmp_path):
    result = app.evaluate(project, app.Overrides(no_history=True)).result
    assert app.compare_with_baseline(result, tmp_path / "missing.json") is None
    assert app.compare_with_baseline(result, None) is None


def test_record_returns_the_run_id_in_the_projects_history(project):
    evaluation = app.evaluate(project)
    assert app.record(project, evaluation.result) == 1
    assert app.record(project, evaluation.result) == 2
    assert (project.root / ".ragrail" / "history.sqlite").is_file()


def test_load_project_refuses_two_sources_and_a_missing_file(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="contradict"):
        app.load_project(tmp_path / "ragrail.toml", "kitebase")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"no ragrail\.toml in this folder"):
        app.load_project()
    assert app.default_project(tmp_path).golden == tmp_path / "golden.json"


def test_overrides_of_keeps_only_run_settings():
    overrides = app.Overrides.of({"top_k": 2, "json_path": "x", "metrics": True})
    assert overrides == app.Overrides(top_k=2)


def test_the_dry_run_plan_counts_calls_and_sends_nothing(project):
    prepared = app.prepare(project, app.Overrides(claude=True, dry_run=True))
    assert prepared.history is None  # a dry run records nothing
    dry = app.dry_run_plan(prepared)
    assert dry.n_cases == 12 and dry.plan.calls == 12 - dry.skipped
    with pytest.raises(InputError, match="dry run"):
        app.run(prepared)
