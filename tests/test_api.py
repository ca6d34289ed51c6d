"""The Python API: ragrail.evaluate / compare / assert_no_regression / save_baseline, and
RunResult.to_pandas(), on private copies of the Kitebase example."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ragrail
from ragrail.errors import InputError, SystemFailure

KITEBASE = Path(ragrail.__file__).parent / "examples" / "kitebase"
GOLDEN_IDS = [
    "no-recovery-email",
    "link-expiry",
    "lost-phone",
    "change-sign-in-email",
    "secure-account",
    "paraphrase",
    "bank-transfer",
    "sso-reset",
    "downgrade-timing",
    "restore-deleted",
    "export-pages",
    "invite-teammate",
]


@pytest.fixture
def kitebase(tmp_path, monkeypatch) -> Path:
    """A private copy of the Kitebase example, the current folder (as in a notebook)."""
    dest = tmp_path / "kb"
    shutil.copytree(KITEBASE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(dest)
    return dest


def backup_codes(question: str) -> dict:
    """A bot that always retrieves one two-factor chunk and answers from it."""
    return {
        "answer": "Use your backup codes [two-factor#2].",
        "contexts": [
            {
                "id": "two-factor#2",
                "source": "two-factor",
                "text": "Lost your phone? Use one of your backup codes.",
            }
        ],
    }


def _state(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------- evaluate


def test_a_plain_function_gives_totals_and_one_row_per_question(kitebase):
    result = ragrail.evaluate("golden.json", system=backup_codes)
    t = result.totals
    # 11 questions have facts; only lost-phone's ("backup codes", in two-factor) is in the
    # one chunk retrieved, and secure-account's two facts are both missed
    assert (t.n_retrieval, t.hit_rate, t.recall) == (11, 1 / 11, 1 / 11)
    # lost-phone's answer has its fact and cites the chunk; bank-transfer should abstain
    assert (t.answers_passed, t.n_answers, t.n_errors) == (1, 12, 0)
    assert t.causes == {"retrieval miss": 10, "should have said it doesn't know": 1}

    frame = result.to_pandas()
    assert list(frame.index) == GOLDEN_IDS  # one row per question, in golden-set order
    row = frame.loc["lost-phone"]
    assert (bool(row.retrieval_hit), bool(row.answer_pass), row.retrieval_recall) == (
        True,
        True,
        1.0,
    )
    assert row.retrieved == ["two-factor#2"]
    assert row.answer == "Use your backup codes [two-factor#2]."
    assert frame.loc["secure-account", "missed_facts"] == ["recovery email", "authenticator app"]
    assert frame.loc["paraphrase", "cause"] == "retrieval miss"
    # the abstain question has no retrieval verdict: missing, not False, and not averaged
    assert frame["retrieval_hit"].isna().tolist() == [i == "bank-transfer" for i in GOLDEN_IDS]
    assert frame["retrieval_recall"].mean() == pytest.approx(t.recall)
    assert int(frame["answer_pass"].sum()) == t.answers_passed


def test_the_acceptance_one_liner_runs_in_a_fresh_interpreter(kitebase):
    (kitebase / "my_bot.py").write_text(
        "def my_fn(question):\n    return {'answer': 'I do not know.', 'contexts': []}\n",
        encoding="utf-8",
    )
    code = (
        "import ragrail\n"
        "from my_bot import my_fn\n"
        "r = ragrail.evaluate('golden.json', system=my_fn); print(r.totals)\n"
        "print(len(r.to_pandas()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=kitebase, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    totals, rows = out.stdout.strip().splitlines()
    assert totals.startswith("n_cases=12 n_retrieval=11 hit_rate=0.0 recall=0.0")
    assert rows == "12"


def test_an_async_function_gives_the_same_result_as_a_sync_one(kitebase):
    async def answer(question: str) -> dict:
        await asyncio.sleep(0)
        return backup_codes(question)

    sync, not_sync = (ragrail.evaluate("golden.json", system=s) for s in (backup_codes, answer))
    assert not_sync.totals.model_dump() == sync.totals.model_dump()
    assert [c.answer_pass for c in not_sync.cases] == [c.answer_pass for c in sync.cases]


def test_the_project_as_system_runs_the_built_in_pipeline_with_the_articles_figures(kitebase):
    for system in ("ragrail.toml", kitebase, kitebase / "ragrail.toml"):
        t = ragrail.evaluate(system=system).totals
        assert (round(t.hit_rate * 100), round(t.recall * 100)) == (91, 86)
        assert round(t.answer_pass_rate * 100) == 67


def test_an_override_is_a_change_assert_no_regression_catches(kitebase):
    result = ragrail.evaluate(system="ragrail.toml", top_k=1)
    diff = ragrail.compare(result)  # the project's baseline.json, as evaluated against
    assert [c.case_id for c in diff.worse] == [
        "lost-phone",
        "change-sign-in-email",
        "secure-account",
    ]
    with pytest.raises(AssertionError) as failed:
        ragrail.assert_no_regression(result, "baseline.json")
    lines = str(failed.value).splitlines()
    assert lines[0] == "ragrail: 3 questions got worse (changed: top_k 3 -> 1)"
    assert lines[1:] == [
        "WORSE:  lost-phone: retrieval 100% -> 0%",
        "WORSE:  change-sign-in-email: retrieval 100% -> 0%",
        "WORSE:  secure-account: retrieval 50% -> 0%",
    ]


def test_an_unchanged_run_passes_and_returns_its_diff(kitebase):
    diff = ragrail.assert_no_regression(ragrail.evaluate(), "baseline.json")
    assert isinstance(diff, ragrail.Diff)
    assert not diff.changes


def test_a_golden_set_given_as_dicts_or_cases(kitebase):
    cases = json.loads((kitebase / "golden.json").read_text(encoding="utf-8"))[:3]
    result = ragrail.evaluate(cases, system=backup_codes)
    assert [c.id for c in result.cases] == GOLDEN_IDS[:3]
    again = ragrail.evaluate([ragrail.Case(**c) for c in cases], system=backup_codes)
    assert [c.answer_pass for c in again.cases] == [False, False, True]


def test_a_bad_case_in_a_list_is_an_input_error_naming_it(kitebase):
    cases = [
        {"id": "a", "question": "How long does the reset link last?"},
        {"id": "b", "question": "", "facts": ["x"]},
    ]
    with pytest.raises(InputError) as bad:
        ragrail.evaluate(cases, system=backup_codes)
    assert bad.value.where == "<cases>: case #2"
    assert "case 'b'" in bad.value.message and "question" in bad.value.message


def test_a_function_that_raises_is_that_questions_error_and_no_clean_verdict(kitebase):
    def sometimes(question: str) -> dict:
        if "SSO" in question:
            raise RuntimeError("index offline")
        return backup_codes(question)

    result = ragrail.evaluate("golden.json", system=sometimes)
    assert result.totals.n_errors == 1
    assert result.to_pandas().loc["sso-reset", "error"].endswith("RuntimeError: index offline")
    with pytest.raises(AssertionError) as failed:
        ragrail.assert_no_regression(result, result)  # against itself: nothing got worse
    assert str(failed.value).splitlines() == [
        "ragrail: 1 question failed to run",
        f"ERROR:  sso-reset: {result.case('sso-reset').trace.error}",
    ]


def test_compare_with_a_run_result(kitebase):
    before = ragrail.evaluate()
    after = ragrail.evaluate(top_k=1)
    diff = ragrail.compare(after, before)
    assert len(diff.worse) == 3 and diff.regressed
    assert not ragrail.compare(before, after).regressed  # the reverse only fixes


def test_unknown_or_bad_overrides_fail_before_the_system_is_called(kitebase):
    calls: list[str] = []

    def bot(question: str) -> dict:
        calls.append(question)
        return backup_codes(question)

    with pytest.raises(TypeError, match=r"'topk' \(did you mean top_k\?\)"):
        ragrail.evaluate("golden.json", system=bot, topk=1)
    with pytest.raises(TypeError, match="ragrail run --dry-run"):
        ragrail.evaluate("golden.json", system=bot, dry_run=True)
    for bad in ({"top_k": 0}, {"top_k": 1.5}, {"min_score": float("nan")}, {"timeout": 0}):
        with pytest.raises(InputError, match="must be"):
            ragrail.evaluate(system="ragrail.toml", **bad)
    with pytest.raises(InputError, match="retriever='bm2': must be one of standin, bm25, dense"):
        ragrail.evaluate(system="ragrail.toml", retriever="bm2")
    # a pipeline setting for the user's own system would be silently ignored
    with pytest.raises(InputError, match="--top-k do not apply"):
        ragrail.evaluate("golden.json", system=bot, top_k=2)
    assert calls == []


def test_input_errors_are_exceptions_and_write_nothing(kitebase):
    before = _state(kitebase)
    with pytest.raises(InputError, match="golden set not found"):
        ragrail.evaluate("missing.json", system=backup_codes)
    with pytest.raises(InputError, match="not both"):
        ragrail.evaluate(system="ragrail.toml", config="ragrail.toml")
    with pytest.raises(InputError, match=r"no ragrail\.toml in this folder"):
        ragrail.evaluate(system=kitebase / "docs")
    (kitebase / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError) as broken:
        ragrail.evaluate(system="ragrail.toml", baseline="broken.json")
    assert broken.value.where is not None and broken.value.where.startswith("broken.json")
    (kitebase / "broken.json").unlink()
    assert _state(kitebase) == before


def test_compare_with_no_baseline_file_says_how_to_make_one(kitebase):
    result = ragrail.evaluate(system="ragrail.toml")
    with pytest.raises(InputError, match=r"ragrail.save_baseline\(result\)") as missing:
        ragrail.compare(result, "nowhere.json")
    assert missing.value.where == "nowhere.json"


def test_without_a_project_file_there_are_defaults_and_no_default_baseline_to_guess(tmp_path):
    shutil.copytree(KITEBASE / "docs", tmp_path / "docs")
    golden = tmp_path / "golden.json"
    shutil.copy(KITEBASE / "golden.json", golden)
    result = ragrail.evaluate(golden, docs=tmp_path / "docs")
    assert result.config.top_k == 3 and len(result.cases) == 12
    with pytest.raises(InputError, match="no baseline here yet"):
        ragrail.compare(result)  # ./baseline.json, which this folder does not have


def test_save_baseline_then_the_same_run_passes(kitebase):
    (kitebase / "baseline.json").unlink()
    result = ragrail.evaluate(top_k=1)
    written = ragrail.save_baseline(result)
    assert written == kitebase / "baseline.json"
    saved = json.loads(written.read_text(encoding="utf-8"))
    assert saved["config"]["top_k"] == 1
    assert all(saved["fingerprints"].values())  # docs and golden set fingerprinted
    diff = ragrail.assert_no_regression(ragrail.evaluate(top_k=1))
    assert not diff.changes


def test_save_baseline_refuses_to_replace_an_input_or_a_failed_run(kitebase):
    result = ragrail.evaluate()
    before = _state(kitebase)
    with pytest.raises(InputError, match="would overwrite the golden set"):
        ragrail.save_baseline(result, "golden.json")
    with pytest.raises(InputError, match="docs folder"):
        ragrail.save_baseline(result, kitebase / "docs" / "baseline.md")

    def broken(question: str) -> dict:
        raise RuntimeError("down")

    with pytest.raises(SystemFailure, match="failed calls"):
        ragrail.save_baseline(ragrail.evaluate("golden.json", system=broken), "other.json")
    assert _state(kitebase) == before


def test_history_is_recorded_only_when_asked(kitebase):
    ragrail.evaluate()
    assert not (kitebase / ".ragrail" / "history.sqlite").exists()
    ragrail.evaluate(history=True)
    from ragrail.store.history import History

    store = History(kitebase / ".ragrail" / "history.sqlite")
    try:
        assert len(store.rows()) == 1
    finally:
        store.close()


# ---------------------------------------------------------------- the package


def test_to_pandas_without_pandas_names_the_install(kitebase, monkeypatch):
    result = ragrail.evaluate(system=backup_codes, golden="golden.json")
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    with pytest.raises(
        ImportError, match=r"pip install pandas \(or pip install 'ragrail\[pandas\]'\)"
    ):
        result.to_pandas()


def test_import_ragrail_imports_nothing_heavy():
    code = (
        "import sys, ragrail\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('ragrail.') "
        "or m in ('pydantic', 'numpy', 'click'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_every_public_name_resolves_and_compare_stays_the_function():
    assert set(ragrail.__all__) == {"__version__", *ragrail._LAZY}
    for name in ragrail.__all__:
        assert getattr(ragrail, name) is not None
    # the diff module's name is not an API name: importing it shadows nothing
    module = importlib.import_module("ragrail.diff")
    importlib.import_module("ragrail.app")
    assert ragrail.compare is ragrail.api.compare
    assert module.Diff is ragrail.Diff
    assert (Path(ragrail.__file__).parent / "py.typed").is_file()


# A host script that keeps running after the API returns, then ends itself with
# os._exit(0). The guard the API puts on os._exit while the user's function runs must be
# gone by then, or that last call raises TargetExit (a traceback and exit 1).
OS_EXIT_HOST = """
import os, sys, threading, time
import ragrail

real = os._exit
golden = [{"id": "a", "question": "Where is the moon?"}]
idk = {"answer": "I don't know.", "contexts": []}

def slow(question):
    time.sleep(30)  # abandoned on the timeout: still sleeping when the script ends
    return idk

if sys.argv[1] == "timeout":
    result = ragrail.evaluate(golden, slow, timeout=0.3)
    assert result.totals.n_errors == 1, result.totals
else:
    # two threads, their guards opened A then B and closed A then B: B once put back
    # A's guard instead of the real function
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def answer_a(question):
        a_in.set()
        assert b_in.wait(20)
        return idk

    def answer_b(question):
        b_in.set()
        assert a_out.wait(20)
        return idk

    def run_a():
        ragrail.evaluate(golden, answer_a)
        a_out.set()

    def run_b():
        assert a_in.wait(20)
        ragrail.evaluate(golden, answer_b)

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
print("restored" if os._exit is real else "still patched", flush=True)
os._exit(7)
"""


@pytest.mark.parametrize("how", ["timeout", "two-threads"])
def test_the_api_gives_the_host_its_own_os_exit_back(tmp_path, how):
    script = tmp_path / "host.py"
    script.write_text(OS_EXIT_HOST, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script), how], cwd=tmp_path, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == "restored", out.stdout + out.stderr
    assert out.returncode == 7 and "TargetExit" not in out.stderr, out.stderr
