"""Shards: `run --shard i/n` on each slice, then `merge`, is the unsharded run."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from ragrail.errors import InputError
from ragrail.scaffold import InstallSource, workflow_text
from ragrail.shard_golden import golden_fingerprint, shard_of
from ragrail.shards import parse_shard

# The timing fields: when the run was made, and how long each call took.
TIMING = re.compile(rb'^\s*"(created_at|latency_ms)": .*\n', re.MULTILINE)


def untimed(path: Path) -> bytes:
    return TIMING.sub(b"", path.read_bytes())


def state(project: Path) -> dict[str, bytes]:
    """Every file of the project (history included), to show a refusal wrote nothing."""
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*") if p.is_file()}


def shard_runs(cli, project: Path, n: int, *flags: str) -> list[Path]:
    paths = []
    for i in range(n):
        path = project / f"shard-{i}.json"
        r = cli("run", "--shard", f"{i}/{n}", "--json", str(path), *flags, cwd=project)
        assert r.code == 0, r.err
        assert "a shard alone is not a verdict" in r.out and "vs baseline" not in r.out
        paths.append(path)
    return paths


def text_of(out: str) -> str:
    """The scorecard and diff, without the line naming the results file."""
    return "\n".join(line for line in out.splitlines() if not line.startswith("Wrote results"))


# ------------------------------------------------------------------ acceptance


@pytest.mark.parametrize(("flags", "code"), [((), 0), (("--top-k", "1"), 1)])
def test_three_shards_merged_are_the_unsharded_run(cli, project, flags, code):
    whole = cli("run", "--json", "all.json", *flags, cwd=project)
    assert whole.code == code, whole.err
    if code:  # --top-k 1 breaks three questions (the README's demo)
        assert "3 questions got worse" in whole.out
    history = project / ".ragrail" / "history.sqlite"
    recorded = history.read_bytes()

    paths = shard_runs(cli, project, 3, *flags)
    assert history.read_bytes() == recorded  # the shards recorded nothing
    sizes = [len(json.loads(p.read_text())["cases"]) for p in paths]
    assert sum(sizes) == 12 and all(sizes)

    merged = cli("merge", *map(str, reversed(paths)), "--json", "merged.json", cwd=project)
    assert merged.code == code, merged.err
    assert text_of(merged.out) == text_of(whole.out)
    assert untimed(project / "merged.json") == untimed(project / "all.json")
    assert b'"created_at"' in (project / "merged.json").read_bytes()  # removed above, not absent
    assert history.read_bytes() != recorded  # the merge is recorded, as a run is
    again = cli("history", "--json", "-", cwd=project)
    runs = json.loads(again.out)
    runs = runs["runs"] if isinstance(runs, dict) else runs
    assert len(runs) == 2


def test_one_shard_of_one_is_the_whole_run(cli, project):
    assert cli("run", "--no-history", "--json", "all.json", cwd=project).code == 0
    (path,) = shard_runs(cli, project, 1)
    assert len(json.loads(path.read_text())["cases"]) == 12
    r = cli("merge", str(path), "--no-history", "--json", "merged.json", cwd=project)
    assert r.code == 0 and "No regressions." in r.out
    assert untimed(project / "merged.json") == untimed(project / "all.json")


def test_an_empty_shard_still_merges(cli, project):
    # 12 questions over 20 shards: some shards have none
    assert cli("run", "--no-history", "--json", "all.json", cwd=project).code == 0
    paths = shard_runs(cli, project, 20)
    assert any(not json.loads(p.read_text())["cases"] for p in paths)
    r = cli("merge", *map(str, paths), "--no-history", "--json", "merged.json", cwd=project)
    assert r.code == 0, r.err
    assert untimed(project / "merged.json") == untimed(project / "all.json")


# ------------------------------------------------------------------ assignment


def test_the_shard_is_the_documented_hash():
    digest = hashlib.sha256(b"lost-phone").hexdigest()
    assert shard_of("lost-phone", 7) == int(digest[:16], 16) % 7
    accented = hashlib.sha256("ü-case".encode()).hexdigest()  # the id as UTF-8
    assert shard_of("ü-case", 5) == int(accented[:16], 16) % 5
    assert shard_of("ü-case", 1) == 0


def test_adding_a_case_moves_no_other_case(cli, project):
    golden = project / "golden.json"
    before = {c["id"]: shard_of(c["id"], 3) for c in json.loads(golden.read_text())}
    cases = json.loads(golden.read_text())
    cases.insert(0, {**cases[0], "id": "new-case", "question": "A brand new question?"})
    golden.write_text(json.dumps(cases))
    path = project / "s.json"
    new_shard = shard_of("new-case", 3)
    for i in range(3):
        r = cli("run", "--shard", f"{i}/3", "--json", str(path), cwd=project)
        assert r.code == 0, r.err
        ids = [c["id"] for c in json.loads(path.read_text())["cases"]]
        assert ids == [c["id"] for c in cases if shard_of(c["id"], 3) == i]
        assert {k for k, s in before.items() if s == i} == set(ids) - {"new-case"}
        assert ("new-case" in ids) == (i == new_shard)


def test_golden_fingerprint_is_order_sensitive():
    assert golden_fingerprint(["a", "b"]) != golden_fingerprint(["b", "a"])
    assert golden_fingerprint(["a\nb"]) != golden_fingerprint(["a", "b"])


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    "spec", ["3/3", "1/0", "-1/3", "a", "1/", "1/3/4", "1 / 3", "١/٣", "1_0/20"]
)
def test_a_bad_shard_is_exit_2_in_one_line(cli, project, spec):
    before = state(project)
    r = cli("run", "--shard", spec, "--json", "s.json", cwd=project)
    assert r.code == 2
    assert r.err.count("\n") == 1 and "--shard" in r.err
    assert state(project) == before


def test_the_shard_can_come_from_the_environment(cli, project, monkeypatch):
    monkeypatch.setenv("RAGRAIL_RUN_SHARD", "0/1")
    r = cli("run", "--json", "s.json", cwd=project)
    assert r.code == 0 and "Shard 0/1: 12 of 12 questions" in r.out
    assert json.loads((project / "s.json").read_text())["shard"]["count"] == 1


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--save-baseline", "--json", "s.json"), "--save-baseline"),
        (("--junit", "j.xml", "--json", "s.json"), "--junit"),
        (("--markdown", "m.md", "--json", "s.json"), "--markdown"),
        ((), "needs --json"),
    ],
)
def test_a_shard_refuses_what_needs_a_verdict(cli, project, flags, says):
    before = state(project)
    r = cli("run", "--shard", "0/3", *flags, cwd=project)
    assert r.code == 2 and says in r.err and r.err.count("\n") == 1
    assert state(project) == before


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("missing", "shard 2/3 missing"),
        ("duplicate", "is shard 1/3 again"),
        ("mixed-n", "every shard must split the golden set the same way"),
        ("other-golden", "ran another golden set"),
        ("other-config", "config.top_k"),
        ("other-model-settings", "model settings (answerer or judge)"),
        ("other-ragrail", "merge with the ragrail that ran the shards"),
        ("not-a-shard", "is not a shard's results"),
        ("wrong-case", "belongs to shard"),
        ("over-a-shard", "would overwrite the shard results"),
        # the golden set changed after the shards ran: "No regressions" on 12 of 13 once
        ("case-added-since", "1 case ('new-case') not evaluated"),
        ("case-removed-since", "1 case ('lost-phone') evaluated but no longer in it"),
        ("case-edited-since", "1 case ('lost-phone') edited since the shards ran"),
        ("facts-edited-since", "1 case ('lost-phone') edited since the shards ran"),
        # blamed on the file that was edited, not on the first one given
        ("second-shard-lost-a-case", "shard-1.json: is not shard 1/3 of the golden set"),
        ("second-shard-positions", "shard-1.json: is not shard 1/3 of the golden set"),
        ("digests-cut", "shard-1.json: has"),
    ],
)
def test_merge_refuses_an_incomplete_or_mixed_set(cli, project, case, says):
    s0, s1, s2 = shard_runs(cli, project, 3)
    files = [s0, s1, s2]
    extra: list[str] = []
    if case == "missing":
        files = [s0, s1]
    elif case == "duplicate":
        files = [s0, s1, s1, s2]
    elif case == "mixed-n":
        other = project / "half.json"
        assert cli("run", "--shard", "0/2", "--json", str(other), cwd=project).code == 0
        files = [other, s1, s2]
    elif case == "other-golden":
        _edit(s1, lambda d: d["shard"].update(golden="0" * 64))
    elif case == "other-config":
        assert cli("run", "--shard", "1/3", "-k", "1", "--json", str(s1), cwd=project).code == 0
    elif case == "other-model-settings":  # changes replies, yet is not in the run's config
        r = cli("run", "--shard", "1/3", "--max-tokens", "64", "--json", str(s1), cwd=project)
        assert r.code == 0, r.err
    elif case == "other-ragrail":
        for path in files:
            _edit(path, lambda d: d.update(ragrail_version="9.9.9"))
    elif case == "not-a-shard":
        assert cli("run", "--no-history", "--json", str(s1), cwd=project).code == 0
    elif case == "wrong-case":
        _edit(s1, lambda d: d["cases"][0].update(id="moved-" + d["cases"][0]["id"]))
    elif case == "over-a-shard":
        extra = ["--json", str(s0)]
    elif case == "case-added-since":
        golden = json.loads((project / "golden.json").read_text())
        golden.append({**golden[0], "id": "new-case", "question": "A new question?"})
        (project / "golden.json").write_text(json.dumps(golden, indent=2))
    elif case == "case-removed-since":
        golden = json.loads((project / "golden.json").read_text())
        golden = [c for c in golden if c["id"] != "lost-phone"]
        (project / "golden.json").write_text(json.dumps(golden, indent=2))
    elif case in ("case-edited-since", "facts-edited-since"):
        golden = json.loads((project / "golden.json").read_text())
        edited = next(c for c in golden if c["id"] == "lost-phone")
        if case == "case-edited-since":
            edited["question"] = "What if my phone is stolen?"
        else:
            edited["facts"] = ["a fact no answer has"]
        (project / "golden.json").write_text(json.dumps(golden, indent=2))
    elif case == "second-shard-lost-a-case":
        def lose(d: dict) -> None:
            for field in ("positions", "digests"):
                d["shard"][field].pop()
            d["cases"].pop()

        _edit(s1, lose)
    elif case == "second-shard-positions":
        _edit(s1, lambda d: d["shard"]["positions"].reverse())
    elif case == "digests-cut":
        _edit(s1, lambda d: d["shard"]["digests"].pop())
    before = state(project)
    r = cli("merge", *map(str, files), *extra, cwd=project)
    assert r.code == 2, r.out + r.err
    assert r.err.count("\n") == 1 and says in r.err, r.err
    if case not in ("missing",):
        assert ".json" in r.err  # names the file
    assert r.out == ""
    assert state(project) == before  # no results, no history


def test_a_golden_set_changed_since_names_the_file_and_line(cli, project):
    paths = shard_runs(cli, project, 2)
    golden = json.loads((project / "golden.json").read_text())
    golden.insert(3, {**golden[0], "id": "added-later", "question": "Added after the shards?"})
    (project / "golden.json").write_text(json.dumps(golden, indent=2))
    r = cli("merge", *map(str, paths), cwd=project)
    assert r.code == 2 and r.out == ""
    line = r.err.strip()
    # the fourth case of an indent-2 array opens on line 32 (each case spans 10 lines)
    assert line.startswith(f"ragrail: error: {project / 'golden.json'}:32: has changed since")
    assert "'added-later'" in line and "run every shard again" in line


def test_merge_checks_the_golden_set_the_shards_ran(cli, project):
    """Shards run on --golden other.json are merged against it (--golden), not against
    the project's golden set."""
    golden = json.loads((project / "golden.json").read_text())
    (project / "other.json").write_text(json.dumps(golden[:5]))
    paths = []
    for i in range(2):
        path = project / f"o-{i}.json"
        r = cli("run", "--shard", f"{i}/2", "-g", "other.json", "--json", str(path), cwd=project)
        assert r.code == 0, r.err
        paths.append(str(path))
    assert cli("merge", *paths, "--no-history", cwd=project).code == 2
    r = cli("merge", *paths, "--golden", "other.json", "--no-history", cwd=project)
    assert r.code == 0, r.err
    assert "(merged 2 shards: 5 questions)" in r.err


def test_shards_written_before_digests_still_merge(cli, project):
    paths = shard_runs(cli, project, 2)
    for path in paths:
        _edit(path, lambda d: d["shard"].pop("digests"))
    r = cli("merge", *map(str, paths), "--no-history", cwd=project)
    assert r.code == 0, r.err


def test_a_case_digest_follows_what_is_evaluated_not_where_it_came_from():
    from ragrail.golden import Case
    from ragrail.shard_golden import case_digest

    case = Case(id="a", question="Q?", sources=["s"], facts=["f"])
    same = Case(id="a", question="Q?", sources=["s"], facts=["f"], provenance={"from": "x"})
    assert case_digest(case) == case_digest(same)
    for other in (
        Case(id="a", question="Q!", sources=["s"], facts=["f"]),
        Case(id="a", question="Q?", sources=["s", "t"], facts=["f"]),
        Case(id="a", question="Q?", sources=["s"], facts=["g"]),
        Case(id="a", question="Q?", sources=["s"], facts=["f"], expect="answer"),
    ):
        assert case_digest(other) != case_digest(case)
    assert len(case_digest(case)) == 16


def test_merge_without_files_is_a_usage_error(cli, project):
    assert cli("merge", cwd=project).code == 2


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--baseline", "{shard}"),
        ("export", "ragas", "--run", "{shard}", "-o", "r.jsonl"),
        ("export", "trec", "--run", "{shard}", "--run-file", "r.txt", "--qrels", "q.txt"),
        ("report", "--from-json", "{shard}", "-o", "r.html"),
    ],
    ids=["baseline", "export-ragas", "export-trec", "report"],
)
def test_a_shard_file_where_a_whole_run_is_read_says_merge_it_first(cli, project, args):
    """Once "unknown field 'shard'": the user could not tell what was wrong."""
    s0, _ = shard_runs(cli, project, 2)
    before = state(project)
    r = cli(*(str(s0) if a == "{shard}" else a for a in args), cwd=project)
    assert r.code == 2, r.out + r.err
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"ragrail: error: {s0}: "), lines
    assert "is shard 0/2 of a sharded run" in lines[0] and "ragrail merge" in lines[0]
    assert "unknown field" not in lines[0]
    assert state(project) == before


def test_parse_shard():
    assert (parse_shard("2/5").index, parse_shard("2/5").count) == (2, 5)
    with pytest.raises(InputError):
        parse_shard("5/5")


# ------------------------------------------------------------------ the CI workflow


def test_the_workflow_shows_a_matrix_of_shards_and_a_merge_job():
    text = workflow_text(InstallSource("ragrail==0.1.0", "here", True))
    default = yaml.safe_load(text)
    assert "shard" not in default["jobs"] and "offline" in default["jobs"]  # opt-in
    start = text.index("  # shard:")
    block = "\n".join(line[4:] for line in text[start:].splitlines() if line.startswith("  # "))
    jobs = yaml.safe_load(block)
    shard, merge = jobs["shard"], jobs["merge"]
    values = shard["strategy"]["matrix"]["shard"]
    assert values == list(range(3)) and shard["strategy"]["fail-fast"] is False
    runs = [s.get("run", "") for s in shard["steps"]]
    assert any("ragrail run --shard ${{ matrix.shard }}/3 --json" in r for r in runs)
    upload = next(s for s in shard["steps"] if "upload-artifact" in s.get("uses", ""))
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "ragrail-shard-*"
    assert upload["with"]["name"].startswith("ragrail-shard-")
    assert merge["needs"] == "shard"
    assert any("ragrail merge shards/shard-*.json" in s.get("run", "") for s in merge["steps"])
