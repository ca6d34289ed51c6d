"""The one output rule (ragrail.outputs.guard_outputs), as a table: every writing flag of
every command, pointed at every file the project reads or keeps, is exit 2 before any work,
names what it would have replaced, and leaves every file byte-identical."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from ragrail.cli import main
from ragrail.errors import InputError
from ragrail.outputs import guard_outputs
from ragrail.project import example_dir
from tests.helpers import tree_state

OUT = "{out}"

# Every command and flag that writes a file, with {out} where the path goes.
WRITERS: list[tuple[str, ...]] = [
    ("run", "--json", OUT),
    ("run", "--no-history", "--json", OUT),
    ("run", "--junit", OUT),
    ("run", "--markdown", OUT),
    ("run", "--shard", "0/2", "--json", OUT),
    ("merge", "s0.json", "s1.json", "--json", OUT),
    ("merge", "s0.json", "s1.json", "--junit", OUT),
    ("merge", "s0.json", "s1.json", "--markdown", OUT),
    ("sweep", "--top-k", "1,3", "--json", OUT),
    ("sweep", "--top-k", "1,3", "--csv", OUT),
    ("report", "-o", OUT),
    ("history", "--json", OUT),
    ("show", "--json", OUT),
    ("diff", "1", "1", "--json", OUT),
    ("lint", "--json", OUT),
    ("cache", "stats", "--json", OUT),
    ("judge", "validate", "--labels", "labels.csv", "--json", OUT),
    ("judge", "pairwise", "1", "1", "--json", OUT),
    ("online", "--json", OUT),
    ("online", "--html", OUT),
    ("sample", "-n", "1", "-o", OUT),
    ("export", "trec", "--run-file", OUT),
    ("export", "trec", "--qrels", OUT),
    ("export", "ragas", "-o", OUT),
    ("import", "ragas", "ext.jsonl", "--golden", OUT),
    ("import", "ragas", "ext.jsonl", "--outputs", OUT),
]

# Every file the project reads or keeps, with what the refusal must call it.
PROTECTED: list[tuple[str, str]] = [
    ("golden.json", "the golden set"),
    ("baseline.json", "the baseline"),
    ("ragrail.toml", "the project file"),
    ("docs/notes.md", "docs folder"),
    (".ragrail/history.sqlite", "the run history"),
    (".ragrail/history.sqlite-wal", "the run history's journal"),
    (".ragrail/cache.sqlite", "the reply cache"),
    (".ragrail/embeddings.sqlite", "the embeddings cache"),
    (".ragrail/logs.sqlite", "the log database"),
    ("log.jsonl", "an ingested log export"),
    ("other.sqlite", "a SQLite database"),
]

# The project's own golden set is what an import is for: --force replaces it, and
# without --force an import refuses it as an existing file.
IMPORT_OWN = {(("import", "ragas", "ext.jsonl", "--golden", OUT), "golden.json"): "--force"}

LOG_ROW = '{"id": "c%d", "timestamp": 1704067200, "version": "v1", "question": "q", "answer": "a"}\n'


def _cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0


def _sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Kitebase project holding one of everything ragrail reads or keeps."""
    root = tmp_path_factory.mktemp("outputs") / "p"
    shutil.copytree(example_dir("kitebase"), root)
    old = Path.cwd()
    os.chdir(root)
    try:
        assert _cli("run", "--json", "results.json") == 0
        for i in (0, 1):
            assert _cli("run", "--shard", f"{i}/2", "--json", f"s{i}.json") == 0
        (root / "log.jsonl").write_text(LOG_ROW % 1 + LOG_ROW % 2, encoding="utf-8")
        assert _cli("logs", "ingest", "log.jsonl") == 0
    finally:
        os.chdir(old)
    _sqlite(root / ".ragrail" / "cache.sqlite")
    _sqlite(root / ".ragrail" / "embeddings.sqlite")
    _sqlite(root / "other.sqlite")
    (root / "labels.csv").write_text("case_id,criterion,verdict\n", encoding="utf-8")
    (root / "ext.jsonl").write_text(
        json.dumps({"user_input": "q?", "retrieved_contexts": ["c"], "response": "a"}) + "\n",
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize("kept", PROTECTED, ids=[p for p, _ in PROTECTED])
@pytest.mark.parametrize("writer", WRITERS, ids=[" ".join(w[:-1]) for w in WRITERS])
def test_no_writing_flag_replaces_what_the_project_reads_or_keeps(
    writer: tuple[str, ...], kept: tuple[str, str], project: Path, capsys, monkeypatch
) -> None:
    path, called = kept
    monkeypatch.chdir(project)
    args = [path if a == OUT else a for a in writer]
    before = tree_state(project)
    capsys.readouterr()
    code = _cli(*args)
    err = capsys.readouterr().err
    shown = f"ragrail {' '.join(args)} -> exit {code}\n{err}"
    assert code == 2, shown
    errors = [ln for ln in err.splitlines() if ln.startswith("ragrail: error")]
    assert len(errors) == 1, shown
    expected = IMPORT_OWN.get((writer, path))
    if expected is not None:
        assert expected in errors[0], shown
    elif path.startswith("docs/"):
        assert "docs folder" in errors[0], shown
    else:
        assert f"would overwrite {called}" in errors[0], shown
    assert tree_state(project) == before, "an exit 2 changed the project's files"
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args, what",
    [
        (("export", "ragas", "--run", "results.json", "-o", "results.json"), "results being exported"),
        (("report", "--from-json", "results.json", "-o", "results.json"), "--from-json results"),
        (("judge", "validate", "--run", "results.json", "--labels", "labels.csv", "--json", "labels.csv"), "labels file"),
        (("judge", "validate", "--run", "results.json", "--labels", "labels.csv", "--json", "results.json"), "results file"),
        (("judge", "pairwise", "results.json", "1", "--json", "results.json"), "RUN_A's results"),
        (("merge", "s0.json", "s1.json", "--json", "s1.json"), "shard results"),
        (("lint", "--golden", "golden.json", "--json", "golden.json"), "golden set"),
        (("run", "--baseline", "results.json", "--json", "results.json"), "the baseline"),
    ],
)
def test_the_files_a_command_was_given_to_read_are_refused_too(
    args: tuple[str, ...], what: str, project: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(project)
    before = tree_state(project)
    capsys.readouterr()
    code = _cli(*args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"would overwrite {what}" in err or f"would overwrite the {what}" in err, err
    assert tree_state(project) == before


def test_an_export_recorded_by_a_log_database_elsewhere_is_kept(tmp_path: Path) -> None:
    """--db names another database: its exports are protected as the default one's are."""
    export = tmp_path / "day1.jsonl"
    export.write_text(LOG_ROW % 1, encoding="utf-8")
    db = tmp_path / "elsewhere" / "my-logs.sqlite"
    assert _cli("logs", "ingest", str(export), "--db", str(db)) == 0
    with pytest.raises(InputError, match="an ingested log export"):
        guard_outputs([(export, "--json")], None, log_dbs=[db])
    with pytest.raises(InputError, match="the log database"):
        guard_outputs([(db, "--json")], None, log_dbs=[db])
    # an unrelated file is still writable, and nothing was created by looking
    assert guard_outputs([(tmp_path / "fine.json", "--json")], None, log_dbs=[db]) == [
        tmp_path / "fine.json"
    ]
    assert not (tmp_path / "fine.json").exists()


def test_standard_output_is_never_a_clash_but_only_one_output_may_take_it(tmp_path: Path) -> None:
    assert guard_outputs([(Path("-"), "--json"), (None, "--csv")], None) == [None, None]
    with pytest.raises(InputError, match="only one output"):
        guard_outputs([(Path("-"), "--json a"), (Path("-"), "--json b")], None)


def test_a_baseline_asked_to_be_replaced_is_let_through(tmp_path: Path) -> None:
    from ragrail.outputs import check_run_outputs

    root = tmp_path / "p"
    shutil.copytree(example_dir("kitebase"), root)
    from ragrail.project import load_config

    project = load_config(root / "ragrail.toml")
    check_run_outputs(project, [], project.baseline, save_baseline=True)
    with pytest.raises(InputError, match="use --save-baseline to replace it"):
        check_run_outputs(project, [(project.baseline, "--json results")], project.baseline, False)


def test_a_folder_that_takes_no_new_file_is_exit_2_not_3(tmp_path: Path) -> None:
    """Permissions say yes to root in /proc: the probe file finds out before any work."""
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    with pytest.raises(InputError, match="takes no new file"):
        guard_outputs([(Path("/proc/x.xml"), "--junit report")], None)


def test_an_existing_output_nobody_may_read_is_replaced_not_called_unreadable(
    project: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """A write replaces the file whole: whether it can be read is no business of an output
    flag (click's Path type would say 'is not readable')."""
    target = tmp_path / "write-only.json"
    target.write_text("old", encoding="utf-8")
    real_access = os.access

    def access(path, mode, *args, **kwargs):  # type: ignore[no-untyped-def]
        if mode == os.R_OK and str(path).endswith("write-only.json"):
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert _cli("history", "--json", str(target)) == 0, capsys.readouterr().err
    assert json.loads(target.read_text(encoding="utf-8"))


def _link(name: str, to: str):
    def setup(p: Path) -> None:
        (p / name).symlink_to(p / to)

    return setup


def _copy(name: str, to: str):
    def setup(p: Path) -> None:
        shutil.copy(p / name, p / to)

    return setup


def _mkdir(name: str):
    def setup(p: Path) -> None:
        (p / name).mkdir(parents=True, exist_ok=True)

    return setup


# Ways around the rule a hostile pass found, each with what the refusal must say.
AROUND = [
    ("markdown-dash-links-to-golden", _link("-", "golden.json"), ("run", "--markdown", "-"), "the golden set"),
    ("junit-dash-links-to-history", _link("-", ".ragrail/history.sqlite"), ("run", "--junit", "-"), "the run history"),
    ("report-dash-links-to-golden", _link("-", "golden.json"), ("report", "-o", "-"), "the golden set"),
    ("sweep-default-json-links-to-golden", _link(".ragrail/sweep.json", "golden.json"), ("sweep", "--top-k", "1,3"), "the golden set"),
    ("sweep-default-csv-links-to-baseline", _link(".ragrail/sweep.csv", "baseline.json"), ("sweep", "--top-k", "1,3"), "the baseline"),
    ("golden-override-keeps-the-projects", _copy("golden.json", "g2.json"), ("run", "--golden", "g2.json", "--json", "golden.json"), "the golden set"),
    ("lint-golden-override-keeps-the-projects", _copy("golden.json", "g2.json"), ("lint", "--golden", "g2.json", "--json", "golden.json"), "the golden set"),
    ("docs-override-keeps-the-projects", _mkdir("docs2"), ("run", "--docs", "docs", "--json", "docs/x.md"), "docs folder"),
    ("import-over-its-own-input", None, ("import", "ragas", "golden.json", "--golden", "golden.json", "--force"), "the file being imported"),
    ("save-baseline-onto-the-reply-cache", lambda p: (p / ".ragrail/cache.sqlite").unlink(), ("run", "--save-baseline", "-b", ".ragrail/cache.sqlite"), "the reply cache"),
    ("save-baseline-onto-a-journal", None, ("run", "--save-baseline", "-b", ".ragrail/logs.sqlite-wal"), "journal"),
    ("example-json-over-this-folders-golden", None, ("run", "--example", "kitebase", "--no-history", "--json", "golden.json"), "the golden set"),
    ("history-example-over-this-folders-project-file", None, ("history", "--example", "kitebase", "--json", "ragrail.toml"), "the project file"),
    ("json-to-this-process-stdout", None, ("history", "--json", "/dev/stdout"), "own output stream"),
    ("json-onto-another-databases-journal", None, ("run", "--json", "other.sqlite-wal"), "journal"),
    ("logs-db-into-docs", None, ("logs", "ingest", "log.jsonl", "--db", "docs/new.md"), "docs folder"),
    ("logs-db-a-journal", None, ("logs", "ingest", "log.jsonl", "--db", ".ragrail/history.sqlite-wal"), "journal"),
    ("logs-db-the-project-file", None, ("logs", "ingest", "log.jsonl", "--db", "ragrail.toml"), "the project file"),
    ("logs-db-the-history", None, ("logs", "ingest", "log.jsonl", "--db", ".ragrail/history.sqlite"), "the run history"),
]


@pytest.mark.parametrize("setup, args, says", [a[1:] for a in AROUND], ids=[a[0] for a in AROUND])
def test_no_way_around_the_rule(setup, args, says, project: Path, tmp_path: Path, capsys, monkeypatch):
    copy = tmp_path / "p"
    shutil.copytree(project, copy, symlinks=True)
    if setup is not None:
        setup(copy)
    monkeypatch.chdir(copy)
    before = tree_state(copy)
    capsys.readouterr()
    code = _cli(*args)
    err = capsys.readouterr().err
    assert code == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("ragrail: error")]
    assert len(errors) == 1 and says in errors[0], err
    assert tree_state(copy) == before


def test_the_api_keeps_a_loaded_results_file_and_this_folders_project(project: Path, tmp_path: Path, monkeypatch):
    import ragrail

    copy = tmp_path / "p"
    shutil.copytree(project, copy, symlinks=True)
    monkeypatch.chdir(copy)
    before = tree_state(copy)
    result = ragrail.load_results("results.json")
    for target, says in (("golden.json", "the golden set"), ("ragrail.toml", "the project file"), ("results.json", "loaded from")):
        with pytest.raises(InputError, match=says):
            ragrail.save_baseline(result, target)
    assert tree_state(copy) == before
    ragrail.save_baseline(result, "baseline.json")  # what it is for: replacing a baseline
    result.save("again.json")  # a str path from a notebook
    assert (copy / "again.json").is_file()


def test_a_big_log_database_costs_the_check_nothing_more(tmp_path: Path) -> None:
    """Only the outputs are looked up among the ingested exports."""
    import sqlite3

    db = tmp_path / "logs.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ingested_files (path TEXT PRIMARY KEY, at REAL NOT NULL)")
    con.executemany("INSERT INTO ingested_files VALUES (?, 0)", ((f"/x/{i}.jsonl",) for i in range(100_000)))
    con.execute("INSERT INTO ingested_files VALUES (?, 0)", (str(tmp_path / "kept.jsonl"),))
    con.commit()
    con.close()
    from ragrail.outputs import ingested

    assert ingested(db, [tmp_path / "kept.jsonl", tmp_path / "new.json"]) == {tmp_path / "kept.jsonl"}
