"""The compact baseline: what it keeps, that re-accepting a run rewrites the same bytes,
that old baselines compare the same, and that a hand-edited one is refused by field."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ragrail.diff import compare
from ragrail.errors import InputError, SystemFailure
from ragrail.project import example_dir
from ragrail.records.results import load_run
from ragrail.store.baseline import (
    Baseline,
    fingerprint_docs,
    fingerprint_file,
    load_baseline,
    rounded,
    save_baseline,
)
from ragrail.store.baseline.records import run_text
from tests.fake_llm import FakeLLM, Reply, paste_top_chunk
from tests.helpers import KITEBASE_V1, digest

WHOLE_RUN = KITEBASE_V1
LEFT_OUT = ("created_at", "ragrail_version", "latency_ms", "usage", "prompt", "trace", "stats")


@pytest.fixture
def top_k_1_run(cli, tmp_path: Path):
    """The Kitebase demo at --top-k 1, as a whole run (its --json results)."""
    out = tmp_path / "top1.json"
    r = cli("demo", "--top-k", "1", "--json", str(out), "--no-history")
    assert r.code == 1, r.out + r.err
    return load_run(out, "results")


# ---------------------------------------------------------------- what the file keeps


def test_the_bundled_kitebase_baseline_is_compact_and_under_8_kb():
    path = example_dir("kitebase") / "baseline.json"
    assert path.stat().st_size < 8 * 1024
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert (data["format"], data["version"]) == ("ragrail-baseline", 3)
    for word in LEFT_OUT:
        assert f'"{word}"' not in text, word
    assert data["totals"]["hit_rate"] == 0.909091 and data["totals"]["answers_passed"] == 8
    assert data["fingerprints"]["golden"] == fingerprint_file(
        example_dir("kitebase") / "golden.json"
    )


def test_keys_are_sorted_at_every_level():
    def check(value: object) -> None:
        if isinstance(value, dict):
            assert list(value) == sorted(value), list(value)
            for v in value.values():
                check(v)
        elif isinstance(value, list):
            for v in value:
                check(v)

    for name in ("kitebase", "kitebase-chat", "late-refund", "multilingual"):
        check(json.loads((example_dir(name) / "baseline.json").read_text(encoding="utf-8")))


def test_each_question_is_a_block_whose_lines_are_near_its_id():
    lines = (example_dir("kitebase") / "baseline.json").read_text(encoding="utf-8").splitlines()
    start = lines.index('  "cases": [') + 1
    end = lines.index("  ],")
    blocks: list[list[str]] = [[]]
    for line in lines[start:end]:
        blocks[-1].append(line)
        if line.startswith("    }"):
            blocks.append([])
    blocks.pop()
    assert len(blocks) == 12
    for block in blocks:
        at = next(i for i, ln in enumerate(block) if ln.startswith('      "id": '))
        # git shows three lines of context: any changed line has its question's id in view
        assert all(abs(i - at) <= 3 for i in range(1, len(block) - 1)), block


@pytest.mark.parametrize("name", ["kitebase", "kitebase-chat", "late-refund", "multilingual"])
def test_each_bundled_baseline_is_what_save_baseline_writes_for_its_example(cli, tmp_path, name):
    dest = tmp_path / name
    assert cli("example", name, str(dest)).code == 0
    r = cli("run", "--save-baseline", "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert (dest / "baseline.json").read_bytes() == (
        example_dir(name) / "baseline.json"
    ).read_bytes()


# ---------------------------------------------------------------- accepting a run again


def test_accepting_an_unchanged_run_twice_writes_the_same_bytes(cli, project):
    baseline = project / "baseline.json"
    baseline.unlink()
    assert cli("run", "--save-baseline", cwd=project).code == 0
    first = baseline.read_bytes()
    assert cli("run", "--save-baseline", cwd=project).code == 0
    assert baseline.read_bytes() == first
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".baseline")) == []


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_git_diff_is_clean_after_accepting_an_unchanged_run_twice(cli, project):
    assert git("init", "-q", cwd=project).returncode == 0
    assert cli("run", "--save-baseline", cwd=project).code == 0
    assert git("add", "baseline.json", cwd=project).returncode == 0
    assert git("commit", "-q", "-m", "accept", cwd=project).returncode == 0
    assert cli("run", "--save-baseline", cwd=project).code == 0
    clean = git("diff", "--exit-code", "baseline.json", cwd=project)
    assert clean.returncode == 0, clean.stdout

    # a change of retrieval shows in the diff, each changed line beside its question's id
    assert cli("run", "--top-k", "1", "--save-baseline", cwd=project).code == 0
    changed = git("diff", "--exit-code", "-U3", "baseline.json", cwd=project)
    assert changed.returncode == 1
    hunks = re.split(r"^@@.*$", changed.stdout, flags=re.M)[1:]
    assert hunks
    field = r'^[-+] {6}"(answer|cause|errored|metrics|retrieval)": '
    case_hunks = [h for h in hunks if re.search(field, h, flags=re.M)]
    assert case_hunks
    for hunk in case_hunks:  # a question's changed line: its id in the same hunk
        assert '"id": ' in hunk, hunk
    ids = set(re.findall(r'^ +"id": "([^"]+)"', changed.stdout, flags=re.M))
    assert {"lost-phone", "change-sign-in-email", "secure-account"} <= ids
    assert '-    "top_k": 3\n' in changed.stdout and '+    "top_k": 1\n' in changed.stdout


def test_a_real_model_run_saved_twice_is_byte_identical_though_its_latency_differs(
    cli, project, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    baseline = project / "baseline.json"
    args = ("run", "--claude", "--save-baseline", "--no-cache", "--no-history")
    with FakeLLM(paste_top_chunk, latency=0.01) as fake:
        assert cli(*args, "--base-url", fake.url, cwd=project).code == 0
    first = baseline.read_bytes()
    with FakeLLM(paste_top_chunk, latency=0.05) as fake:
        r = cli(*args, "--base-url", fake.url, "--json", "run.json", cwd=project)
        assert r.code == 0, r.err
    assert baseline.read_bytes() == first
    # the whole run, with its latency and usage, is still in the --json results
    run = load_run(project / "run.json", "results")
    assert run.usage is not None and run.usage.calls > 0 and run.usage.input_tokens
    assert any(c.trace.latency_ms >= 50 for c in run.cases)
    assert b'"anthropic"' in first and b"latency" not in first


def test_a_real_model_answer_that_changes_shows_as_that_question_only(cli, project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    baseline = project / "baseline.json"
    args = ("run", "--claude", "--save-baseline", "--no-cache", "--no-history")
    with FakeLLM(paste_top_chunk) as fake:
        assert cli(*args, "--base-url", fake.url, cwd=project).code == 0
    before = load_baseline(baseline)

    def worse(req):
        if "How long does the password reset link last?" in req.prompt:
            return Reply(text="Soon [reset-password#1].")
        return paste_top_chunk(req)

    with FakeLLM(worse) as fake:
        assert cli(*args, "--base-url", fake.url, cwd=project).code == 0
    after = load_baseline(baseline)
    changed = [a.id for a, b in zip(before.cases, after.cases, strict=True) if a != b]
    assert changed == ["link-expiry"]


# ---------------------------------------------------------------- old baselines, compare


def diff_lines(diff) -> tuple:
    return (
        [c.line() for c in diff.changes],
        diff.new_cases,
        diff.removed_cases,
        diff.config_changes,
        diff.answers_compared,
        diff.answer_flips,
        diff.summary(),
    )


def test_an_old_whole_run_baseline_and_the_compact_one_compare_the_same(top_k_1_run):
    whole = load_run(WHOLE_RUN)
    from_old = load_baseline(WHOLE_RUN)
    compact = load_baseline(example_dir("kitebase") / "baseline.json")
    assert isinstance(from_old, Baseline) and from_old.fingerprints == {
        "docs": None,
        "golden": None,
    }
    expected = diff_lines(compare(top_k_1_run, whole))
    assert [line for line in expected[0] if line.startswith("WORSE")] == [
        "WORSE:  lost-phone: retrieval 100% -> 0%",
        "WORSE:  change-sign-in-email: retrieval 100% -> 0%",
        "WORSE:  secure-account: retrieval 50% -> 0%",
    ]
    assert diff_lines(compare(top_k_1_run, from_old)) == expected
    assert diff_lines(compare(top_k_1_run, compact)) == expected


def test_the_demo_against_an_old_baseline_prints_what_it_printed(cli, tmp_path, project):
    (project / "old.json").write_bytes(WHOLE_RUN.read_bytes())
    old = cli("run", "--top-k", "1", "--baseline", "old.json", "--no-history", cwd=project)
    new = cli("run", "--top-k", "1", "--no-history", cwd=project)
    assert old.code == new.code == 1
    assert len(re.findall(r"^\s*WORSE", new.out, flags=re.M)) == 3
    assert old.out == new.out


def test_a_compact_baseline_round_trips_and_saves_the_same_bytes_again(tmp_path, top_k_1_run):
    path = tmp_path / "b.json"
    saved = save_baseline(top_k_1_run, path)
    assert load_baseline(path) == saved == Baseline.from_run(top_k_1_run)
    first = path.read_bytes()
    save_baseline(load_baseline(path), path)
    assert path.read_bytes() == first


def test_scores_are_kept_to_six_significant_digits_and_compare_so():
    assert rounded(2 / 3) == 0.666667
    assert rounded(-0.0) == 0.0 and str(rounded(-0.0)) == "0.0"
    assert rounded(249.0909090909091) == 249.091
    assert rounded(1e-9 / 3) == 3.33333e-10
    with pytest.raises(ValueError):
        rounded(float("nan"))


def test_a_recall_equal_to_six_digits_is_unchanged_and_a_real_drop_is_worse(top_k_1_run):
    base = Baseline.from_run(top_k_1_run)
    case = next(c for c in top_k_1_run.cases if c.id == "secure-account")
    saved = next(c for c in base.cases if c.id == "secure-account")
    case.retrieval_recall, saved.retrieval_recall = 2 / 3, rounded(2 / 3)
    assert [c.line() for c in compare(top_k_1_run, base).changes] == []
    case.retrieval_recall = 2 / 3 - 1e-9  # below the precision kept: float noise, no change
    assert [c.line() for c in compare(top_k_1_run, base).changes] == []
    case.retrieval_recall = 1 / 3
    assert [c.line() for c in compare(top_k_1_run, base).changes] == [
        "WORSE:  secure-account: retrieval 67% -> 33%"
    ]


def test_a_compact_baseline_is_not_a_run_for_show_or_report(project):
    with pytest.raises(InputError, match="compact baseline"):
        load_run(project / "baseline.json", "results")


# ---------------------------------------------------------------- refusing what would not load


def test_a_run_with_a_nan_score_is_not_saved_and_the_old_baseline_stays(project, top_k_1_run):
    path = project / "baseline.json"
    before = digest(path)
    top_k_1_run.cases[4].correctness = float("nan")  # assignment is not validated
    with pytest.raises(SystemFailure, match=r"not saved: .*secure-account.*nan.*unchanged"):
        save_baseline(top_k_1_run, path)
    assert digest(path) == before
    assert [p.name for p in project.iterdir() if p.name.startswith(".baseline")] == []


def test_a_run_with_an_out_of_range_score_is_not_saved(project, top_k_1_run):
    path = project / "baseline.json"
    before = digest(path)
    top_k_1_run.cases[0].retrieval_recall = 1.5  # finite, written, refused by the read-back
    with pytest.raises(SystemFailure, match=r"does not read back .*cases\.0\.retrieval\.recall"):
        save_baseline(top_k_1_run, path)
    assert digest(path) == before


EDITS = [
    ("recall-above-one", lambda d: d["cases"][1]["retrieval"].update(recall=1.5),
     "'cases.1.retrieval.recall' (case 'link-expiry'): Input should be less than or equal to 1 (got 1.5)"),
    ("recall-negative", lambda d: d["cases"][0]["retrieval"].update(recall=-0.1),
     "'cases.0.retrieval.recall' (case 'no-recovery-email'): Input should be greater than or equal to 0"),
    ("recall-bool", lambda d: d["cases"][0]["retrieval"].update(recall=True),
     "'cases.0.retrieval.recall' (case 'no-recovery-email'): Input should be a valid number"),
    ("passes-above-runs", lambda d: d["cases"][0]["answer"].update(passes=2),
     "'cases.0.answer.passes' (case 'no-recovery-email'): 2 is more than answer.runs (1)"),
    ("retrieved-above-facts", lambda d: d["cases"][0]["retrieval"].update(retrieved=2),
     "'cases.0.retrieval.retrieved' (case 'no-recovery-email'): 2 is more than retrieval.facts"),
    ("runs-float", lambda d: d["cases"][0]["answer"].update(runs=1.0),
     "'cases.0.answer.runs' (case 'no-recovery-email'): Input should be a valid integer"),
    ("runs-huge", lambda d: d["cases"][0]["answer"].update(runs=2**60),
     "'cases.0.answer.runs' (case 'no-recovery-email'): Input should be less than or equal to"),
    ("metric-above-one", lambda d: d["cases"][0]["metrics"].update(correctness=1.01),
     "'cases.0.metrics.correctness' (case 'no-recovery-email'): Input should be less than or equal to 1"),
    ("unknown-metric", lambda d: d["cases"][0]["metrics"].update(latency_ms=3.0),
     "unknown field 'cases.0.metrics.latency_ms'"),
    ("unknown-case-field", lambda d: d["cases"][0].update(trace={}), "unknown field 'cases.0.trace'"),
    ("missing-case-field", lambda d: d["cases"][0].pop("errored") and None, "'cases.0.errored' (case 'no-recovery-email') is missing"),
    ("case-not-object", lambda d: d["cases"].__setitem__(3, []), "'cases.3': Input should be an object"),
    ("cases-not-list", lambda d: d.update(cases={}), "'cases': Input should be a valid list"),
    ("duplicate-ids", lambda d: d["cases"].append(d["cases"][1]), "case 'link-expiry' twice (cases.1 and cases.12)"),
    ("totals-above-one", lambda d: d["totals"].update(recall=1.2), "'totals.recall': Input should be less than or equal to 1"),
    ("totals-passed-above-answers", lambda d: d["totals"].update(answers_passed=99), "answers_passed (99) is more than n_answers"),
    ("totals-stats", lambda d: d["totals"].update(stats={}), "unknown field 'totals.stats'"),
    ("config-top-k-zero", lambda d: d["config"].update(top_k=0), "'config.top_k': Input should be greater than or equal to 1"),
    ("config-missing", lambda d: d.pop("config") and None, "'config' is missing"),
    ("fingerprint-bad", lambda d: d["fingerprints"].update(golden="sha256:xyz"), "'fingerprints.golden'"),
    ("fingerprint-extra", lambda d: d["fingerprints"].update(outputs=None), "unknown field 'fingerprints.outputs'"),
    ("version-future", lambda d: d.update(version=4), "version 4; this ragrail reads 2 and 3"),
    ("checks-not-object", lambda d: d["cases"][0]["answer"].update(checks=[]), "'cases.0.answer.checks'"),
    ("checks-over-runs", lambda d: d["cases"][0]["answer"]["checks"].update(citation=2), "'cases.0.answer.checks.citation'"),
    ("checks-judge-over-one", lambda d: d["cases"][0]["answer"]["checks"].update({"judge: polite": 2}), "1 (a judge criterion)"),
    ("checks-negative", lambda d: d["cases"][0]["answer"]["checks"].update(citation=-1), "greater than or equal to 0"),
    ("found-not-strings", lambda d: d["cases"][0]["retrieval"].update(found=[1]), "'cases.0.retrieval.found'"),
    ("found-absent-v3", lambda d: d["cases"][0]["retrieval"].pop("found"), "'cases.0.retrieval.found' (case"),
    ("v3-fields-in-v2", lambda d: d.update(version=2), 'a version 3 field: does the file say \"version\": 2?'),
    ("fact-over-runs", lambda d: d["cases"][0]["answer"]["checks"].update({"fact: x": 5}), "5 is more than answer.runs (1)"),
    ("version-true", lambda d: d.update(version=True), "version true"),
    ("format-other", lambda d: d.update(format="promptfoo"), 'format "promptfoo"'),
    ("unknown-top-field", lambda d: d.update(created_at="today"), "unknown field 'created_at'"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "edit", "message"), EDITS, ids=[e[0] for e in EDITS])
def test_a_hand_edited_compact_baseline_is_refused_naming_the_field(project, name, edit, message):
    path = project / "baseline.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_baseline(path)
    assert message in info.value.message, info.value.message
    assert info.value.where == str(path)


def test_a_nan_in_a_compact_baseline_names_its_line_and_field(project):
    path = project / "baseline.json"
    text = path.read_text(encoding="utf-8").replace('"recall": 0.5', '"recall": NaN', 1)
    path.write_text(text, encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "NaN" in t)
    with pytest.raises(InputError) as info:
        load_baseline(path)
    assert info.value.where is not None and info.value.where.startswith(f"{path}:{line}:")
    assert "'cases.4.retrieval.recall': NaN is not valid JSON" in info.value.message


def test_a_hand_edited_baseline_is_exit_2_and_a_save_leaves_it_untouched(cli, project):
    path = project / "baseline.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"recall": 1.0', '"recall": 1e400', 1))
    before = digest(path)
    r = cli("run", "--save-baseline", cwd=project)
    assert r.code == 2
    assert "cases.0.retrieval.recall" in r.err and "finite" in r.err and "Traceback" not in r.err
    assert digest(path) == before


def test_integers_typed_for_rates_are_read_as_numbers(project):
    path = project / "baseline.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"recall": 1.0', '"recall": 1'), encoding="utf-8")
    loaded = load_baseline(path)
    assert loaded.cases[0].retrieval_recall == 1.0
    assert isinstance(loaded.cases[0].retrieval_recall, float)


# ---------------------------------------------------------------- fingerprints


def test_the_docs_fingerprint_follows_the_documents_a_run_reads(project):
    docs = project / "docs"
    first = fingerprint_docs(docs)
    assert first is not None and re.fullmatch(r"sha256:[0-9a-f]{64}", first)
    (docs / "photo.png").write_bytes(b"\x89PNG")  # not a document: not read, not hashed
    assert fingerprint_docs(docs) == first
    target = docs / "two-factor.md"
    target.write_text(target.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert fingerprint_docs(docs) != first
    assert fingerprint_docs(project / "missing") is None


def test_line_ends_do_not_change_a_fingerprint(tmp_path):
    unix, windows = tmp_path / "a.json", tmp_path / "b.json"
    unix.write_bytes(b'[\n  {"id": "a"}\n]\n')
    windows.write_bytes(b'[\r\n  {"id": "a"}\r\n]\r\n')
    assert fingerprint_file(unix) == fingerprint_file(windows)
    assert fingerprint_file(tmp_path / "missing.json") is None


def test_a_saved_baseline_records_the_fingerprints_of_its_inputs(cli, project):
    golden = project / "golden.json"
    cases = json.loads(golden.read_text(encoding="utf-8"))
    golden.write_text(json.dumps(cases[:11], indent=2), encoding="utf-8")
    assert cli("run", "--save-baseline", "--no-history", cwd=project).code == 0
    saved = load_baseline(project / "baseline.json")
    assert saved.fingerprints == {
        "docs": fingerprint_docs(project / "docs"),
        "golden": fingerprint_file(golden),
    }
    assert len(saved.cases) == 11


# ---------------------------------------------------------------- the writer


def test_a_run_is_written_straight_as_its_baseline_would_be_byte_for_byte(top_k_1_run):
    cases = top_k_1_run.cases
    cases[0].correctness = None  # left out of its metrics
    cases[1].context_precision = -0.0  # written 0.0
    cases[2].retrieval_recall = 2 / 3 - 1e-12  # rounded as 2/3 is
    cases[3].faithfulness = 1  # an integer, equal to the 1.0 of others: written 1.0
    cases[4].problems = ['missing "x"', "ключ"]
    cases[5].retrieval_recall = None
    prints = {"docs": None, "golden": "sha256:" + "0" * 64}
    text = run_text(top_k_1_run, prints)
    assert text == Baseline.from_run(top_k_1_run, prints).to_text()
    assert '"faithfulness": 1.0' in text.split('"id": ')[4] and '"recall": 0.666667' in text


def test_saving_returns_the_baseline_it_read_back(tmp_path, top_k_1_run):
    path = tmp_path / "b.json"
    saved = save_baseline(top_k_1_run, path)
    assert saved == load_baseline(path) == Baseline.from_run(top_k_1_run)
    again = save_baseline(saved, path)
    assert again == saved and again is not saved


def test_ids_and_texts_that_look_like_json_keep_the_layout_and_round_trip(tmp_path, top_k_1_run):
    tricky = [
        'a", "cause": "x',
        "line\nbreak",
        '}, {"answer": ',
        "ключ \u2028 \u202e",
        "back\\slash\\",
    ]
    for case, text in zip(top_k_1_run.cases, tricky, strict=False):
        case.id = text
        case.problems = [text, "plain"]
        case.cause = text
    path = tmp_path / "b.json"
    saved = save_baseline(top_k_1_run, path)
    loaded = load_baseline(path)
    assert loaded == saved
    assert [c.id for c in loaded.cases[:5]] == tricky
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sum(1 for ln in lines if ln.startswith('      "id": ')) == 12
    assert "ключ" in path.read_text(encoding="utf-8")  # readable, not \u-escaped


def test_an_old_baseline_is_written_compact_on_the_next_save(cli, project):
    path = project / "baseline.json"
    path.write_bytes(WHOLE_RUN.read_bytes())
    assert cli("run", "--save-baseline", "--no-history", cwd=project).code == 0
    assert path.read_bytes() == (example_dir("kitebase") / "baseline.json").read_bytes()


def test_saving_and_loading_leave_the_garbage_collector_as_they_found_it(tmp_path, top_k_1_run):
    import gc

    path = tmp_path / "b.json"
    assert gc.isenabled()
    save_baseline(top_k_1_run, path)
    load_baseline(path)
    assert gc.isenabled()
    gc.disable()
    try:
        save_baseline(top_k_1_run, path)
        load_baseline(path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_rounding_is_stable_once_rounded():
    for value in (2 / 3, 1 / 7, 0.1 + 0.2, 249.0909090909091, 1e-7 / 3, 123456789.0):
        once = rounded(value)
        assert rounded(once) == once
        assert float(repr(once)) == once
