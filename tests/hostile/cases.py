"""The hostile-input table: what a careless or malicious user can hand ragrail, and the exit
code the contract promises for each (0 no regression, 1 regression, 2 input or usage error,
3 the system under test, a model, the disk or ragrail itself failed).

Each case builds a fresh project in a temporary folder, spoils one thing in it, runs one
command and states the exit code. The runner (test_hostile.py) also checks that nothing
printed a traceback, that an exit 2 or 3 says why in a line starting with ``ragrail:``,
and that an exit 2 left every file of the project byte-identical.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

OK, REGRESSION, USAGE, FAILURE = 0, 1, 2, 3

Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Hostile:
    id: str
    code: int
    setup: Setup | None = None
    args: tuple[str, ...] = ("run",)
    project: str = "kitebase"  # kitebase | outputs | python | http
    says: str | None = None  # a fragment the error line must contain (case-insensitive)
    forbid: str | None = None  # a regex no line of the output may match (forged verdicts)
    subprocess: bool = False  # run in a child process (hangs, exits, signals)
    env: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- small editors


def write(name: str, text: str | bytes) -> Setup:
    def setup(p: Path) -> None:
        target = p / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")

    return setup


def edit_golden(change: Callable[[list[dict]], object]) -> Setup:
    def setup(p: Path) -> None:
        cases = json.loads((p / "golden.json").read_text(encoding="utf-8"))
        out = change(cases)
        data = cases if out is None else out
        (p / "golden.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    return setup


# A baseline as ragrail wrote it before baselines were compact: a whole saved run.
WHOLE_RUN_BASELINE = Path(__file__).parent.parent / "data" / "baselines" / "kitebase-v1.json"


def edit_baseline(change: Callable[[dict], object]) -> Setup:
    """Replace baseline.json with an old-style one (a whole saved run), edited."""

    def setup(p: Path) -> None:
        data = json.loads(WHOLE_RUN_BASELINE.read_text(encoding="utf-8"))
        out = change(data)
        (p / "baseline.json").write_text(
            json.dumps(data if out is None else out, allow_nan=True), encoding="utf-8"
        )

    return setup


def config_add(text: str) -> Setup:
    """Append TOML to ragrail.toml (top-level keys must come before the first table)."""

    def setup(p: Path) -> None:
        cfg = p / "ragrail.toml"
        cfg.write_text(cfg.read_text(encoding="utf-8") + "\n" + text + "\n", encoding="utf-8")

    return setup


def config_replace(old: str, new: str) -> Setup:
    def setup(p: Path) -> None:
        cfg = p / "ragrail.toml"
        text = cfg.read_text(encoding="utf-8")
        assert old in text, (old, text)
        cfg.write_text(text.replace(old, new), encoding="utf-8")

    return setup


def golden_file(name: str, text: str | bytes) -> Setup:
    """Use another golden-set file (format by extension)."""

    def setup(p: Path) -> None:
        write(name, text)(p)
        config_replace('golden = "golden.json"', f'golden = "{name}"')(p)

    return setup


def both(*setups: Setup) -> Setup:
    def setup(p: Path) -> None:
        for s in setups:
            s(p)

    return setup


def set_case(i: int, **fields: object) -> Setup:
    def change(cases: list[dict]) -> None:
        cases[i].update(fields)

    return edit_golden(change)


def drop_field(i: int, name: str) -> Setup:
    def change(cases: list[dict]) -> None:
        del cases[i][name]

    return edit_golden(change)


def first_case(change: Callable[[dict], None]) -> Setup:
    def edit(data: dict) -> None:
        change(data["cases"][0])

    return edit_baseline(edit)


def edit_compact(change: Callable[[dict], object]) -> Setup:
    """Edit the project's own (compact) baseline.json."""

    def setup(p: Path) -> None:
        data = json.loads((p / "baseline.json").read_text(encoding="utf-8"))
        assert data["format"] == "ragrail-baseline", "the template's baseline is not compact"
        out = change(data)
        (p / "baseline.json").write_text(
            json.dumps(data if out is None else out, allow_nan=True, indent=2), encoding="utf-8"
        )

    return setup


def compact_case(part: str | None, **fields: object) -> Setup:
    """Set fields of the compact baseline's first case (``part``: its retrieval or answer)."""

    def edit(data: dict) -> None:
        case = data["cases"][0]
        (case if part is None else case[part]).update(fields)

    return edit_compact(edit)


def baseline_text(old: str, new: str) -> Setup:
    """Replace the first ``old`` in the project's baseline.json by ``new``, as text."""

    def setup(p: Path) -> None:
        text = (p / "baseline.json").read_text(encoding="utf-8")
        assert old in text, old
        (p / "baseline.json").write_text(text.replace(old, new, 1), encoding="utf-8")

    return setup


def outputs_line(i: int, text: str) -> Setup:
    """Replace line i (0-based) of outputs.jsonl with raw text."""

    def setup(p: Path) -> None:
        lines = (p / "outputs.jsonl").read_text(encoding="utf-8").split("\n")
        lines[i] = text
        (p / "outputs.jsonl").write_text("\n".join(lines), encoding="utf-8")

    return setup


def target(body: str) -> Setup:
    """The Python system's module: ``bot.answer(question)``."""
    return write("bot.py", body)


def mkfifo(name: str) -> Setup:
    def setup(p: Path) -> None:
        os.mkfifo(p / name)

    return setup


def mkdir(name: str) -> Setup:
    def setup(p: Path) -> None:
        (p / name).mkdir(parents=True, exist_ok=True)

    return setup


LOG_ROW = '{"id": "c%d", "timestamp": 1704067200, "version": "v%d", "question": "q%d", "answer": "a"}\n'


def ingested(p: Path) -> None:
    """A project whose .ragrail/logs.sqlite holds two versions' conversations."""
    from ragrail.online.ingest import ingest
    from ragrail.online.store import LogStore, log_path
    from ragrail.project import LogsConfig

    log = p / "log.jsonl"
    log.write_text("".join(LOG_ROW % (i, i % 2, i) for i in range(6)), encoding="utf-8")
    with LogStore(log_path(p / ".ragrail")) as store:
        ingest([log], LogsConfig(), store, workers=1)


def ingested_then(sql: str) -> Setup:
    """``ingested``, then one SQL statement on its database: rows as an older ragrail left
    them (ingest itself no longer stores such rows)."""

    def setup(p: Path) -> None:
        import sqlite3

        ingested(p)
        db = sqlite3.connect(p / ".ragrail" / "logs.sqlite")
        with db:
            db.execute(sql)
        db.close()

    return setup


def reply_cache(p: Path) -> None:
    """The project's reply cache, .ragrail/cache.sqlite: a SQLite file in WAL mode."""
    from ragrail.calls.cache import ResponseCache

    ResponseCache(p / ".ragrail" / "cache.sqlite").close()


# c1's time as an ISO time with an offset before year 1 was stored by an older ragrail
TIME_BEFORE_YEAR_1 = ingested_then("UPDATE conversations SET at = -62135600400 WHERE id = 'c1'")
# line 3 of 51 opens a quote that never closes
CSV_QUOTE_LEFT_OPEN = "id,timestamp,question,answer\n" + "".join(
    f"c{i},1704067200,q{i},a{i}\n" for i in range(1, 51)
).replace("c2,1704067200,q2,", 'c2,1704067200,"never closed,')


def symlink(name: str, to: str) -> Setup:
    def setup(p: Path) -> None:
        (p / name).symlink_to(to)

    return setup


DEEP = "[" * 100_000 + "]" * 100_000
GOOD_CONTEXT = {"id": "x#1", "source": "x", "text": "some text", "score": 0.5}


def golden_raw(old: str, new: str) -> Setup:
    """Replace the first ``old`` in golden.json by ``new``, as text (for what json.dumps
    cannot write: a key given twice, a lone surrogate escape)."""

    def setup(p: Path) -> None:
        text = (p / "golden.json").read_text(encoding="utf-8")
        assert old in text, old
        (p / "golden.json").write_text(text.replace(old, new, 1), encoding="utf-8")

    return setup


def history_db(version: int | None = None, row: dict | None = None) -> Setup:
    """A run history: ragrail's own schema, then ``user_version`` set by hand, or one
    hand-written ``runs`` row (``row``: column -> value, JSON columns as text)."""

    def setup(p: Path) -> None:
        import sqlite3

        from ragrail.store.history import History

        path = p / ".ragrail" / "history.sqlite"
        History(path).close()
        db = sqlite3.connect(path)
        if row is not None:
            base = {"created_at": "2026-01-01T00:00:00", "name": "x", "config": "{}",
                    "totals": "{}", "result": "{}"}
            cols = {**base, **row}
            db.execute(
                f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                tuple(cols.values()),
            )
            db.commit()
        if version is not None:
            db.execute(f"PRAGMA user_version = {version}")
        db.close()

    return setup


def recorded_runs(*outputs_edits: Setup) -> Setup:
    """Record one run of the (outputs) project per edit, each after applying it."""

    def setup(p: Path) -> None:
        import subprocess
        import sys

        for edit in outputs_edits:
            edit(p)
            subprocess.run(
                [sys.executable, "-m", "ragrail", "run"], cwd=p, capture_output=True, timeout=120
            )

    return setup


def good_output(case_id: str, **extra: object) -> str:
    return json.dumps({"id": case_id, "answer": "I don't know.", "contexts": [], **extra})


def edit_json(name: str, change: Callable[[dict], object]) -> Setup:
    """Edit a JSON file the setup made (a shard's results)."""

    def setup(p: Path) -> None:
        data = json.loads((p / name).read_text(encoding="utf-8"))
        out = change(data)
        (p / name).write_text(json.dumps(data if out is None else out), encoding="utf-8")

    return setup


def sharded(n: int, then: Setup | None = None) -> Setup:
    """Run every shard of the project (``run --shard i/n --json s{i}.json``), then ``then``."""

    def setup(p: Path) -> None:
        from ragrail.cli import main

        old = Path.cwd()
        os.chdir(p)
        try:
            for i in range(n):
                try:
                    main(["run", "--shard", f"{i}/{n}", "--json", f"s{i}.json"])
                except SystemExit as exc:
                    assert exc.code == 0, f"shard {i}/{n} exited {exc.code}"
        finally:
            os.chdir(old)
        if then is not None:
            then(p)

    return setup


OI_SPAN = {"context": {"trace_id": "t1", "span_id": "s1"}, "span_kind": "RETRIEVER", "attributes": {"input": {"value": "How do I reset my password?"}, "openinference": {"span": {"kind": "RETRIEVER"}}}}


# ---------------------------------------------------------------- the table

CASES: list[Hostile] = [
    # --- controls: the untouched projects behave
    Hostile("control-kitebase", OK),
    Hostile("control-outputs", OK, project="outputs"),
    Hostile("control-python", OK, project="python"),
    # --- golden.json: syntax
    Hostile("golden-empty-file", USAGE, write("golden.json", ""), says="golden.json"),
    Hostile("golden-whitespace", USAGE, write("golden.json", "  \n\t\n"), says="golden.json"),
    Hostile("golden-truncated", USAGE, write("golden.json", '[{"id": "a", "question": "q"'), says="golden.json:1"),
    Hostile("golden-trailing-comma", USAGE, write("golden.json", '[{"id": "a", "question": "q"},]'), says="golden.json:1"),
    Hostile("golden-single-quotes", USAGE, write("golden.json", "[{'id': 'a'}]"), says="golden.json:1"),
    Hostile("golden-nan-literal", USAGE, write("golden.json", '[{"id": "a", "question": "q", "facts": [NaN]}]'), says="golden.json"),
    Hostile("golden-infinity-literal", USAGE, write("golden.json", '[{"id": "a", "question": "q", "x": Infinity}]'), says="golden.json"),
    Hostile("golden-deep-nesting", USAGE, write("golden.json", DEEP), says="golden.json"),
    Hostile("golden-deep-nesting-in-case", USAGE, write("golden.json", '[{"id": "a", "question": "q", "facts": ' + DEEP + "}]"), says="golden.json"),
    Hostile("golden-latin1-bytes", USAGE, write("golden.json", b'[{"id": "caf\xe9", "question": "q"}]'), says="golden.json"),
    Hostile("golden-nul-byte", USAGE, write("golden.json", b'[{"id": "a\x00", "question": "q"}]'), says="golden.json"),
    Hostile("golden-utf16", USAGE, write("golden.json", '[{"id": "a", "question": "q"}]'.encode("utf-16")), says="golden.json"),
    Hostile("golden-top-level-object", USAGE, write("golden.json", '{"id": "a", "question": "q"}'), says="golden.json"),
    Hostile("golden-top-level-string", USAGE, write("golden.json", '"hello"'), says="golden.json"),
    Hostile("golden-top-level-number", USAGE, write("golden.json", "42"), says="golden.json"),
    Hostile("golden-top-level-null", USAGE, write("golden.json", "null"), says="golden.json"),
    Hostile("golden-empty-array", USAGE, write("golden.json", "[]"), says="golden.json"),
    Hostile("golden-item-not-object", USAGE, write("golden.json", '["just a question"]'), says="golden.json"),
    Hostile("golden-is-a-folder", USAGE, both(lambda p: (p / "golden.json").unlink(), mkdir("golden.json")), says="golden.json"),
    Hostile("golden-missing", USAGE, lambda p: (p / "golden.json").unlink(), says="golden.json"),
    Hostile("golden-is-a-fifo", USAGE, both(lambda p: (p / "golden.json").unlink(), mkfifo("golden.json")), says="golden.json"),
    Hostile("golden-dangling-symlink", USAGE, both(lambda p: (p / "golden.json").unlink(), symlink("golden.json", "nowhere.json")), says="golden.json"),
    # BOM is how Windows editors save UTF-8: it must be accepted
    Hostile("golden-utf8-bom-accepted", OK, lambda p: (p / "golden.json").write_bytes(b"\xef\xbb\xbf" + (p / "golden.json").read_bytes())),
    # --- golden.json: schema
    Hostile("golden-missing-id", USAGE, drop_field(0, "id"), says="golden.json"),
    Hostile("golden-missing-question", USAGE, drop_field(1, "question"), says="question"),
    Hostile("golden-blank-question", USAGE, set_case(0, question="   "), says="question"),
    Hostile("golden-question-number", USAGE, set_case(0, question=42), says="question"),
    Hostile("golden-question-null", USAGE, set_case(0, question=None), says="question"),
    Hostile("golden-id-number", USAGE, set_case(0, id=7), says="id"),
    Hostile("golden-id-empty", USAGE, set_case(0, id=""), says="id"),
    Hostile("golden-duplicate-id", USAGE, set_case(1, id="no-recovery-email"), says="no-recovery-email"),
    Hostile("golden-sources-string", USAGE, set_case(0, sources="account-recovery"), says="sources"),
    Hostile("golden-facts-string", USAGE, set_case(0, facts="30 minutes"), says="facts"),
    Hostile("golden-facts-nested", USAGE, set_case(0, facts=[["a"]]), says="facts"),
    Hostile("golden-fact-blank", USAGE, set_case(0, facts=[" "]), says="facts"),
    Hostile("golden-fact-number", USAGE, set_case(0, facts=[30]), says="facts"),
    Hostile("golden-fact-bad-regex", USAGE, set_case(0, facts=[{"regex": "(unclosed"}]), says="golden.json:1"),
    Hostile("golden-fact-regex-matches-empty", USAGE, set_case(0, facts=[{"regex": "x*"}]), says="empty string"),
    Hostile("golden-fact-any-empty", USAGE, set_case(0, facts=[{"any": []}]), says="facts.0"),
    Hostile("golden-fact-unknown-form", USAGE, set_case(0, facts=[{"all": ["a"]}]), says="facts.0"),
    Hostile("golden-fact-invisible-only", USAGE, set_case(0, facts=["\u200b"]), says="facts.0"),
    Hostile("csv-facts-bad-json-cell", USAGE, golden_file("golden.csv", 'id,question,sources,facts\na,How long?,reset-password,"[""30 minutes"", {""any"": ]"\n'), says="golden.csv:2"),
    Hostile("csv-facts-bad-regex-cell", USAGE, golden_file("golden.csv", 'id,question,sources,facts\na,How long?,reset-password,"[{""regex"": ""(""}]"\n'), says="golden.csv:2"),
    Hostile("config-abstain-phrase-blank", USAGE, config_add('[scoring]\nabstain_phrases = ["\u200b"]'), says="abstain_phrases"),
    # expected behaviour (issue 14): expect is one of four words, and fits the sources
    Hostile("golden-expect-unknown", USAGE, set_case(0, expect="maybe"), says="golden.json:1"),
    Hostile("golden-expect-unknown-names-field", USAGE, set_case(0, expect="Escalate"), says="field 'expect'"),
    Hostile("golden-expect-not-string", USAGE, set_case(0, expect=["escalate"]), says="expect"),
    Hostile("golden-expect-abstain-with-sources", USAGE, set_case(0, expect="abstain"), says="give no sources"),
    Hostile("golden-expect-answer-without-sources", USAGE, golden_file("golden.yaml", "- id: a\n  question: How long?\n  sources: [reset-password]\n- id: b\n  question: Who?\n  expect: answer\n"), says="golden.yaml:4"),
    Hostile("csv-expect-bad-value", USAGE, golden_file("golden.csv", "id,question,sources,facts,expect\na,How long?,reset-password,30 minutes,answer\nb,Who?,,,escalated\n"), says="golden.csv:3"),
    Hostile("jsonl-expect-bad-value", USAGE, golden_file("golden.jsonl", '{"id": "a", "question": "How long?", "sources": ["reset-password"]}\n{"id": "b", "question": "Who?", "expect": "deflect"}\n'), says="golden.jsonl:2"),
    Hostile("golden-expect-escalate-but-answered-is-regression", REGRESSION, set_case(0, expect="escalate"), forbid=None),
    Hostile("golden-expect-answer-explicit-same-as-default", OK, set_case(0, expect="answer")),
    Hostile("config-refuse-phrase-blank", USAGE, config_add('[scoring]\nrefuse_phrases = [" ... "]'), says="refuse_phrases"),
    Hostile("config-escalate-phrases-not-list", USAGE, config_add('[scoring]\nescalate_phrases = "I escalated"'), says="escalate_phrases"),
    Hostile("outputs-escalated-not-bool", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "x", "escalated": "yes"})), project="outputs", says="outputs.jsonl:1"),
    Hostile("outputs-escalated-true-ok", OK, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "I don't know.", "escalated": True})), project="outputs", args=("run", "--baseline", "none.json")),
    Hostile("golden-tags-object", USAGE, set_case(0, tags={"a": 1}), says="tags"),
    Hostile("golden-checks-not-list", USAGE, set_case(0, checks="no_pii"), says="checks"),
    Hostile("golden-check-unknown-type", USAGE, set_case(0, checks=[{"type": "telepathy"}]), says="checks"),
    Hostile("golden-check-bad-regex", USAGE, set_case(0, checks=[{"type": "contains", "value": "([", "regex": True}]), says="regex"),
    Hostile("golden-check-bad-schema", USAGE, set_case(0, checks=[{"type": "json_schema", "schema": {"type": 12}}]), says="schema"),
    Hostile("golden-check-number-bad-pattern", USAGE, set_case(0, checks=[{"type": "number", "pattern": "(", "max": 3}]), says="pattern"),
    Hostile("golden-check-function-missing", USAGE, set_case(0, checks=[{"type": "python", "function": "nosuchmod:f"}]), says="nosuchmod"),
    Hostile("golden-unknown-field", USAGE, set_case(0, answer_me="now"), says="answer_me"),
    Hostile("golden-huge-question-ok", OK, set_case(0, question="how long does the reset link last? " * 20_000), args=("run", "--baseline", "none.json")),
    # --- golden in other formats
    Hostile("jsonl-bad-line", USAGE, golden_file("golden.jsonl", '{"id": "a", "question": "q"}\n{"id": "b", "question":\n'), says="golden.jsonl:2"),
    Hostile("jsonl-nan", USAGE, golden_file("golden.jsonl", '{"id": "a", "question": "q", "w": NaN}\n'), says="golden.jsonl:1"),
    Hostile("jsonl-array-line", USAGE, golden_file("golden.jsonl", '[1, 2]\n'), says="golden.jsonl:1"),
    Hostile("jsonl-duplicate-id", USAGE, golden_file("golden.jsonl", '{"id": "a", "question": "q"}\n{"id": "a", "question": "r"}\n'), says="golden.jsonl"),
    Hostile("jsonl-bom-accepted", OK, golden_file("golden.jsonl", '\ufeff{"id": "a", "question": "How long does the reset link last?", "sources": ["reset-password"], "facts": ["30 minutes"]}\n'), args=("run", "--baseline", "none.json")),
    Hostile("jsonl-u2028-in-string-accepted", OK, golden_file("golden.jsonl", '{"id": "a", "question": "How long does the reset\u2028link last?", "sources": ["reset-password"], "facts": ["30 minutes"]}\n'), args=("run", "--baseline", "none.json")),
    Hostile("jsonl-deep", USAGE, golden_file("golden.jsonl", DEEP + "\n"), says="golden.jsonl"),
    Hostile("yaml-duplicate-key", USAGE, golden_file("golden.yaml", "- id: a\n  question: q\n  question: r\n"), says="golden.yaml:3"),
    Hostile("yaml-tab-indent", USAGE, golden_file("golden.yaml", "- id: a\n\tquestion: q\n"), says="golden.yaml"),
    Hostile("yaml-python-tag", USAGE, golden_file("golden.yaml", "- id: !!python/object/apply:os.system ['true']\n  question: q\n"), says="golden.yaml"),
    Hostile("yaml-not-a-list", USAGE, golden_file("golden.yaml", "id: a\nquestion: q\n"), says="golden.yaml"),
    Hostile("yaml-scalar", USAGE, golden_file("golden.yaml", "just words\n"), says="golden.yaml"),
    Hostile("yaml-empty", USAGE, golden_file("golden.yaml", ""), says="golden.yaml"),
    Hostile("yaml-billion-laughs", USAGE, golden_file("golden.yaml", "a: &a ['x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"), says="golden.yaml"),
    Hostile("yaml-question-list", USAGE, golden_file("golden.yaml", "- id: a\n  question: [1, 2]\n"), says="question"),
    Hostile("yaml-bom-accepted", OK, golden_file("golden.yaml", "\ufeff- id: a\n  question: How long does the password reset link last?\n  sources: [reset-password]\n  facts: ['30 minutes']\n"), args=("run", "--baseline", "none.json")),
    Hostile("csv-unterminated-quote", USAGE, golden_file("golden.csv", 'id,question,sources,facts\na,"How long is the link,reset-password,30 minutes\n'), says="golden.csv"),
    Hostile("csv-extra-field", USAGE, golden_file("golden.csv", "id,question,sources,facts\na,How long?,reset-password,30 minutes,surprise\n"), says="golden.csv:2"),
    Hostile("csv-no-question-column", USAGE, golden_file("golden.csv", "id,sources,facts\na,reset-password,30 minutes\n"), says="question"),
    Hostile("csv-header-only", USAGE, golden_file("golden.csv", "id,question,sources,facts\n"), says="golden.csv"),
    Hostile("csv-empty", USAGE, golden_file("golden.csv", ""), says="golden.csv"),
    Hostile("csv-duplicate-id", USAGE, golden_file("golden.csv", "id,question,sources,facts\na,q one,x,y\na,q two,x,y\n"), says="golden.csv"),
    Hostile("csv-huge-cell-accepted", OK, golden_file("golden.csv", 'id,question,sources,facts\na,"How long does the password reset link last? ' + "padding " * 16_400 + '",reset-password,30 minutes\n'), args=("run", "--baseline", "none.json")),
    Hostile("csv-quoted-header-accepted", OK, golden_file("golden.csv", '"id","question","sources","facts"\n"a","How long does the password reset link last?","reset-password","30 minutes"\n'), args=("run", "--baseline", "none.json")),
    Hostile("csv-bom-accepted", OK, golden_file("golden.csv", "\ufeffid,question,sources,facts\na,How long does the password reset link last?,reset-password,30 minutes\n"), args=("run", "--baseline", "none.json")),
    Hostile("golden-unknown-extension", USAGE, golden_file("golden.xml", "<cases/>"), says="golden.xml"),
    # --- ragrail.toml
    Hostile("config-invalid-toml", USAGE, config_add("this is = = not toml"), says="ragrail.toml"),
    Hostile("config-unknown-key", USAGE, config_add("[pipeline2]\nx = 1"), says="pipeline2"),
    Hostile("config-unknown-pipeline-key", USAGE, config_replace("top_k = 3", "top_k = 3\ntopk = 4"), says="topk"),
    Hostile("config-top-k-zero", USAGE, config_replace("top_k = 3", "top_k = 0"), says="top_k"),
    Hostile("config-top-k-string", USAGE, config_replace("top_k = 3", 'top_k = "three"'), says="top_k"),
    Hostile("config-top-k-float", USAGE, config_replace("top_k = 3", "top_k = 2.5"), says="top_k"),
    Hostile("config-min-score-nan", USAGE, config_replace("min_score = 0.2", "min_score = nan"), says="min_score"),
    Hostile("config-min-score-inf", USAGE, config_replace("min_score = 0.2", "min_score = inf"), says="min_score"),
    Hostile("config-min-score-negative", USAGE, config_replace("min_score = 0.2", "min_score = -0.5"), says="min_score"),
    Hostile("config-chunk-words-negative", USAGE, config_replace("chunk_words = 0", "chunk_words = -5"), says="chunk_words"),
    Hostile("config-unknown-retriever", USAGE, config_replace('retriever = "standin"', 'retriever = "grep"'), says="retriever"),
    Hostile("config-unknown-answerer", USAGE, config_replace('name = "standin"', 'name = "oracle"'), says="answerer"),
    Hostile("config-timeout-nan", USAGE, config_add("timeout = nan"), says="timeout"),
    Hostile("config-timeout-zero", USAGE, config_add("timeout = 0"), says="timeout"),
    Hostile("config-concurrency-zero", USAGE, config_add("concurrency = 0"), says="concurrency"),
    Hostile("config-rpm-zero", USAGE, config_add("rpm = 0"), says="answerer.rpm"),
    Hostile("config-tpm-string", USAGE, config_add('tpm = "lots"'), says="answerer.tpm"),
    Hostile("config-judge-rpm-negative", USAGE, config_add('[judge]\nprovider = "anthropic"\nrpm = -60'), says="judge.rpm"),
    Hostile("config-price-nan", USAGE, config_add('[prices."m"]\ninput = nan\noutput = 1'), says="input"),
    Hostile("config-docs-missing", USAGE, config_replace('docs = "docs"', 'docs = "nope"'), says="nope"),
    Hostile("config-docs-is-file", USAGE, config_replace('docs = "docs"', 'docs = "golden.json"'), says="golden.json"),
    Hostile("config-docs-empty-folder", USAGE, both(mkdir("empty"), config_replace('docs = "docs"', 'docs = "empty"')), says="empty"),
    Hostile("config-golden-is-docs", USAGE, config_replace('golden = "golden.json"', 'golden = "docs"'), says="docs"),
    Hostile("config-latin1", USAGE, lambda p: (p / "ragrail.toml").write_bytes(b'name = "caf\xe9"\n'), says="ragrail.toml"),
    Hostile("config-is-folder", USAGE, args=("run", "--config", "docs"), says="docs"),
    Hostile("config-missing", USAGE, args=("run", "--config", "nope.toml"), says="nope.toml"),
    Hostile("config-check-bad-regex", USAGE, config_add('[[checks]]\ntype = "contains"\nvalue = "(unclosed"\nregex = true'), says="regex"),
    Hostile("config-check-not-contains-bad-regex", USAGE, config_add('[[checks]]\ntype = "not_contains"\nvalue = "*"\nregex = true'), says="regex"),
    Hostile("config-check-schema-not-schema", USAGE, config_add('[[checks]]\ntype = "json_schema"\nschema = {type = "banana"}'), says="schema"),
    Hostile("config-check-function-missing-module", USAGE, config_add('[[checks]]\ntype = "python"\nfunction = "nosuch.module:f"'), says="nosuch"),
    Hostile("config-check-function-no-colon", USAGE, config_add('[[checks]]\ntype = "python"\nfunction = "justaname"'), says="justaname"),
    Hostile("config-check-function-missing-attr", USAGE, both(write("mychecks.py", "def other(a, c):\n    return []\n"), config_add('[[checks]]\ntype = "python"\nfunction = "mychecks:polite"')), says="polite"),
    Hostile("config-check-function-syntax-error", USAGE, both(write("mychecks.py", "def polite(a, c)\n    return []\n"), config_add('[[checks]]\ntype = "python"\nfunction = "mychecks:polite"')), says="mychecks"),
    Hostile("config-check-number-min-nan", USAGE, config_add('[[checks]]\ntype = "number"\nmin = nan'), says="min"),
    Hostile("config-system-kind-unknown", USAGE, config_add('[system]\nkind = "magic"'), says="kind"),
    # a check function that raises is that question's error, never exit 1
    Hostile("config-check-function-raises", FAILURE, both(write("mychecks.py", "def polite(answer, case):\n    raise ValueError('boom')\n"), config_add('[[checks]]\ntype = "python"\nfunction = "mychecks:polite"')), says="error"),
    Hostile("config-check-function-imports-from-project", OK, both(write("mychecks.py", "def polite(answer, case):\n    return []\n"), config_add('[[checks]]\ntype = "python"\nfunction = "mychecks:polite"'))),
    # --- flags
    Hostile("flag-top-k-zero", USAGE, args=("run", "--top-k", "0"), says="top-k"),
    Hostile("flag-top-k-negative", USAGE, args=("run", "--top-k", "-1"), says="top-k"),
    Hostile("flag-top-k-word", USAGE, args=("run", "--top-k", "three"), says="top-k"),
    Hostile("flag-top-k-huge-ok", OK, args=("run", "--top-k", "1000000", "--baseline", "none.json")),
    Hostile("flag-min-score-nan", USAGE, args=("run", "--min-score", "nan"), says="min-score"),
    Hostile("flag-min-score-inf", USAGE, args=("run", "--min-score", "inf"), says="min-score"),
    Hostile("flag-min-score-two", USAGE, args=("run", "--min-score", "2"), says="min-score"),
    Hostile("flag-timeout-nan", USAGE, args=("run", "--claude", "--timeout", "nan"), says="timeout"),
    Hostile("flag-timeout-inf", USAGE, args=("run", "--claude", "--timeout", "inf"), says="timeout"),
    Hostile("flag-timeout-zero", USAGE, args=("run", "--claude", "--timeout", "0"), says="timeout"),
    Hostile("flag-concurrency-zero", USAGE, args=("run", "--claude", "--concurrency", "0"), says="concurrency"),
    Hostile("flag-rpm-zero", USAGE, args=("run", "--claude", "--rpm", "0"), says="rpm"),
    Hostile("flag-tpm-inf", USAGE, args=("run", "--claude", "--tpm", "inf"), says="tpm"),
    Hostile("flag-judge-rpm-nan", USAGE, args=("run", "--judge", "claude", "--judge-rpm", "nan"), says="judge-rpm"),
    Hostile("flag-repeats-zero", USAGE, args=("run", "--repeats", "0"), says="repeats"),
    Hostile("flag-chunk-words-negative", USAGE, args=("run", "--chunk-words", "-3"), says="chunk-words"),
    Hostile("flag-unknown", USAGE, args=("run", "--frobnicate"), says="frobnicate"),
    Hostile("flag-unknown-command", USAGE, args=("frobnicate",), says="frobnicate"),
    Hostile("flag-unknown-retriever", USAGE, args=("run", "--retriever", "grep"), says="retriever"),
    Hostile("flag-unknown-example", USAGE, args=("run", "--example", "nope"), says="nope"),
    Hostile("flag-claude-and-openai", USAGE, args=("run", "--claude", "--answerer", "openai"), says="claude"),
    Hostile("flag-example-and-config", USAGE, args=("run", "--example", "kitebase", "--config", "ragrail.toml"), says="example"),
    Hostile("flag-dry-run-standin", USAGE, args=("run", "--dry-run"), says="dry-run"),
    Hostile("flag-judge-model-without-judge", USAGE, args=("run", "--judge-model", "x"), says="judge"),
    Hostile("flag-judge-openai-without-model", USAGE, args=("run", "--judge", "openai"), says="judge-model"),
    Hostile("flag-base-url-empty", USAGE, args=("run", "--claude", "--base-url", ""), says="base-url"),
    Hostile("flag-judge-base-url-blank", USAGE, args=("run", "--judge", "claude", "--judge-base-url", " "), says="judge-base-url"),
    Hostile("flag-docs-missing", USAGE, args=("run", "--docs", "nowhere"), says="nowhere"),
    Hostile("flag-golden-missing", USAGE, args=("run", "--golden", "nowhere.json"), says="nowhere.json"),
    Hostile("flag-save-baseline-on-example", USAGE, args=("run", "--example", "kitebase", "--save-baseline"), says="example"),
    Hostile("flag-top-k-on-outputs-system", USAGE, args=("run", "--top-k", "2"), project="outputs", says="top-k"),
    # --- outputs the user names
    Hostile("out-json-is-folder", USAGE, mkdir("out"), args=("run", "--json", "out"), says="out"),
    Hostile("out-junit-is-folder", USAGE, mkdir("out"), args=("run", "--junit", "out"), says="out"),
    Hostile("out-markdown-is-folder", USAGE, mkdir("out"), args=("run", "--markdown", "out"), says="out"),
    Hostile("out-json-is-fifo", USAGE, mkfifo("pipe"), args=("run", "--json", "pipe"), says="pipe"),
    Hostile("out-junit-is-device", USAGE, args=("run", "--junit", "/dev/full"), says="/dev/full"),
    Hostile("out-markdown-is-device", USAGE, args=("run", "--markdown", "/dev/null"), says="/dev/null"),
    Hostile("out-json-parent-is-file", USAGE, args=("run", "--json", "golden.json/out.json"), says="golden.json"),
    Hostile("out-baseline-is-folder-save", USAGE, both(lambda p: (p / "baseline.json").unlink(), mkdir("baseline.json")), args=("run", "--save-baseline"), says="baseline.json"),
    Hostile("out-report-o-folder", USAGE, mkdir("out"), args=("report", "-o", "out"), says="out"),
    Hostile("out-report-o-fifo", USAGE, mkfifo("pipe"), args=("report", "-o", "pipe"), says="pipe"),
    Hostile("out-report-o-device", USAGE, args=("report", "-o", "/dev/full"), says="/dev/full"),
    Hostile("out-json-new-folder-ok", OK, args=("run", "--json", "deep/er/out.json")),
    # --- baselines: hand-edited, broken, from another version
    Hostile("baseline-empty", USAGE, write("baseline.json", ""), says="baseline.json"),
    Hostile("baseline-invalid-json", USAGE, write("baseline.json", "{"), says="baseline.json:1"),
    Hostile("baseline-array", USAGE, write("baseline.json", "[]"), says="baseline.json"),
    Hostile("baseline-string", USAGE, write("baseline.json", '"x"'), says="baseline.json"),
    Hostile("baseline-deep", USAGE, write("baseline.json", DEEP), says="baseline.json"),
    Hostile("baseline-is-folder", USAGE, both(lambda p: (p / "baseline.json").unlink(), mkdir("baseline.json")), says="baseline.json"),
    Hostile("baseline-latin1", USAGE, write("baseline.json", b'{"x": "\xe9"}'), says="baseline.json"),
    Hostile("baseline-recall-nan", USAGE, first_case(lambda c: c.update(retrieval_recall=float("nan"))), says="retrieval_recall"),
    Hostile("baseline-recall-inf", USAGE, first_case(lambda c: c.update(retrieval_recall=float("inf"))), says="retrieval_recall"),
    Hostile("baseline-recall-above-one", USAGE, first_case(lambda c: c.update(retrieval_recall=1.5)), says="retrieval_recall"),
    Hostile("baseline-recall-negative", USAGE, first_case(lambda c: c.update(retrieval_recall=-0.5)), says="retrieval_recall"),
    Hostile("baseline-recall-string", USAGE, first_case(lambda c: c.update(retrieval_recall="high")), says="retrieval_recall"),
    Hostile("baseline-passes-above-runs", USAGE, first_case(lambda c: c.update(answer_passes=5, answer_runs=1)), says="answer_passes"),
    Hostile("baseline-negative-runs", USAGE, first_case(lambda c: c.update(answer_runs=-1)), says="answer_runs"),
    Hostile("baseline-case-not-object", USAGE, edit_baseline(lambda d: d["cases"].__setitem__(0, 7)), says="baseline.json"),
    Hostile("baseline-cases-missing", USAGE, edit_baseline(lambda d: d.__delitem__("cases")), says="'cases' is missing"),
    Hostile("baseline-duplicate-case-ids", USAGE, edit_baseline(lambda d: d["cases"].append(d["cases"][0])), says="no-recovery-email"),
    Hostile("baseline-future-version", USAGE, edit_baseline(lambda d: d.update(schema_version=999)), says="schema_version"),
    Hostile("baseline-totals-nan", USAGE, edit_baseline(lambda d: d["totals"].update(hit_rate=float("nan"))), says="baseline.json"),
    Hostile("baseline-whole-run-compares-ok", OK, edit_baseline(lambda d: None)),
    Hostile("baseline-whole-run-regression", REGRESSION, edit_baseline(lambda d: None), args=("run", "--top-k", "1")),
    Hostile("baseline-whole-run-resave-compact-ok", OK, edit_baseline(lambda d: None), args=("run", "--save-baseline")),
    # --- the compact baseline (format "ragrail-baseline", version 2), hand-edited
    Hostile("baseline-compact-recall-nan", USAGE, compact_case("retrieval", recall=float("nan")), says="cases.0.retrieval.recall"),
    Hostile("baseline-compact-recall-inf", USAGE, compact_case("retrieval", recall=float("inf")), says="cases.0.retrieval.recall"),
    Hostile("baseline-compact-recall-huge", USAGE, baseline_text('"recall": 1.0', '"recall": 1e400'), says="retrieval.recall"),
    Hostile("baseline-compact-recall-above-one", USAGE, compact_case("retrieval", recall=1.5), says="retrieval.recall"),
    Hostile("baseline-compact-recall-negative", USAGE, compact_case("retrieval", recall=-0.5), says="retrieval.recall"),
    Hostile("baseline-compact-recall-string", USAGE, compact_case("retrieval", recall="high"), says="retrieval.recall"),
    Hostile("baseline-compact-hit-string", USAGE, compact_case("retrieval", hit="yes"), says="retrieval.hit"),
    Hostile("baseline-compact-retrieved-above-facts", USAGE, compact_case("retrieval", retrieved=5), says="retrieval.retrieved"),
    Hostile("baseline-compact-passes-above-runs", USAGE, compact_case("answer", passes=5, runs=1), says="answer.passes"),
    Hostile("baseline-compact-negative-runs", USAGE, compact_case("answer", runs=-1), says="answer.runs"),
    Hostile("baseline-compact-huge-runs", USAGE, compact_case("answer", runs=10**400), says="answer.runs"),
    Hostile("baseline-compact-problems-not-strings", USAGE, compact_case("answer", problems=[1]), says="answer.problems"),
    Hostile("baseline-compact-errored-string", USAGE, compact_case(None, errored="no"), says="cases.0.errored"),
    Hostile("baseline-compact-metric-above-one", USAGE, edit_compact(lambda d: d["cases"][0]["metrics"].update(context_precision=2.0)), says="metrics.context_precision"),
    Hostile("baseline-compact-metric-nan", USAGE, edit_compact(lambda d: d["cases"][0]["metrics"].update(correctness=float("nan"))), says="metrics.correctness"),
    Hostile("baseline-compact-unknown-metric", USAGE, edit_compact(lambda d: d["cases"][0]["metrics"].update(bonus=0.5)), says="metrics.bonus"),
    Hostile("baseline-compact-unknown-case-field", USAGE, compact_case(None, trace={}), says="cases.0.trace"),
    Hostile("baseline-compact-missing-answer", USAGE, edit_compact(lambda d: d["cases"][0].__delitem__("answer")), says="'cases.0.answer' (case 'no-recovery-email') is missing"),
    Hostile("baseline-compact-case-not-object", USAGE, edit_compact(lambda d: d["cases"].__setitem__(0, 7)), says="cases.0"),
    Hostile("baseline-compact-cases-missing", USAGE, edit_compact(lambda d: d.__delitem__("cases")), says="'cases' is missing"),
    Hostile("baseline-compact-duplicate-case-ids", USAGE, edit_compact(lambda d: d["cases"].append(d["cases"][0])), says="no-recovery-email"),
    Hostile("baseline-compact-future-version", USAGE, edit_compact(lambda d: d.update(version=4)), says="version 4"),
    Hostile("baseline-compact-version-string", USAGE, edit_compact(lambda d: d.update(version="2")), says="version"),
    Hostile("baseline-compact-totals-nan", USAGE, edit_compact(lambda d: d["totals"].update(hit_rate=float("nan"))), says="totals.hit_rate"),
    Hostile("baseline-compact-totals-above-one", USAGE, edit_compact(lambda d: d["totals"].update(recall=1.5)), says="totals.recall"),
    Hostile("baseline-compact-config-top-k-zero", USAGE, edit_compact(lambda d: d["config"].update(top_k=0)), says="config.top_k"),
    Hostile("baseline-compact-bad-fingerprint", USAGE, edit_compact(lambda d: d["fingerprints"].update(docs="md5:x")), says="fingerprints.docs"),
    Hostile("baseline-compact-unknown-top-field", USAGE, edit_compact(lambda d: d.update(created_at="2026-01-01")), says="created_at"),
    Hostile("baseline-compact-integer-rates-ok", OK, compact_case("retrieval", recall=1)),
    Hostile("baseline-compact-read-as-results", USAGE, args=("report", "--from-json", "baseline.json", "-o", "r.html"), says="compact baseline"),
    Hostile("baseline-dangling-symlink-save-ok", OK, both(lambda p: (p / "baseline.json").unlink(), symlink("baseline.json", "kept/base.json"), mkdir("kept")), args=("run", "--save-baseline")),
    # --- documents
    Hostile("docs-binary-file", USAGE, write("docs/logo.md", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe"), says="logo.md"),
    Hostile("docs-names-share-a-slug", USAGE, write("docs/Reset Password.md", "# Reset\n\nAnother page.\n"), says="reset-password#"),
    Hostile("docs-latin1", USAGE, write("docs/old.md", b"# Old\n\nCaf\xe9 prices.\n"), says="old.md"),
    Hostile("docs-only-other-files-ok", OK, write("docs/notes.pdf", b"%PDF-1.4 not read")),
    Hostile("docs-empty-markdown-ok", OK, write("docs/empty.md", "")),
    Hostile("docs-headings-only-ok", OK, write("docs/heads.md", "# A\n## B\n### C\n")),
    Hostile("docs-huge-line-ok", OK, write("docs/huge.md", "# Huge\n\n" + "word " * 200_000 + "\n")),
    Hostile("docs-html-script-ok", OK, write("docs/evil.html", "<h1>Evil</h1><script>alert(1)</script><p>text</p>")),
    Hostile("docs-symlink-loop-ok", OK, symlink("docs/loop", ".")),
    # --- precomputed outputs
    Hostile("outputs-nan-score", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "x", "contexts": [{**GOOD_CONTEXT, "score": "NaN-placeholder"}]}).replace('"NaN-placeholder"', "NaN")), project="outputs", says="score"),
    Hostile("outputs-infinity-score", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "x", "contexts": [{**GOOD_CONTEXT, "score": "X"}]}).replace('"X"', "-Infinity")), project="outputs", says="score"),
    Hostile("outputs-huge-score-number-ok", OK, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "I don't know.", "contexts": [{**GOOD_CONTEXT, "score": 1e300}]})), project="outputs", args=("run", "--baseline", "none.json")),
    Hostile("outputs-bad-json-line", USAGE, outputs_line(1, '{"id": "x", '), project="outputs", says="outputs.jsonl:2"),
    Hostile("outputs-duplicate-id", USAGE, outputs_line(1, good_output("no-recovery-email")), project="outputs", says="no-recovery-email"),
    Hostile("outputs-answer-number", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": 5, "contexts": []})), project="outputs", says="answer"),
    Hostile("outputs-contexts-string", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "x", "contexts": "ctx"})), project="outputs", says="contexts"),
    Hostile("outputs-context-no-text", USAGE, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "x", "contexts": [{"id": "a"}]})), project="outputs", says="text"),
    Hostile("outputs-line-is-array", USAGE, outputs_line(0, "[1]"), project="outputs", says="outputs.jsonl:1"),
    Hostile("outputs-deep", USAGE, outputs_line(0, DEEP), project="outputs", says="outputs.jsonl:1"),
    Hostile("outputs-missing-file", USAGE, lambda p: (p / "outputs.jsonl").unlink(), project="outputs", says="outputs.jsonl"),
    Hostile("outputs-u2028-accepted", OK, outputs_line(0, json.dumps({"id": "no-recovery-email", "answer": "I don't\u2028know.", "contexts": []}, ensure_ascii=False)), project="outputs", args=("run", "--baseline", "none.json")),
    Hostile("outputs-missing-case-errors", FAILURE, outputs_line(0, ""), project="outputs"),
    Hostile("outputs-error-field-is-error", FAILURE, outputs_line(0, json.dumps({"id": "no-recovery-email", "error": "upstream 500"})), project="outputs"),
    # --- Python systems under test
    Hostile("python-sys-exit-0", FAILURE, target("import sys\ndef answer(q):\n    sys.exit(0)\n"), project="python", subprocess=True),
    Hostile("python-sys-exit-1", FAILURE, target("import sys\ndef answer(q):\n    sys.exit(1)\n"), project="python", subprocess=True),
    Hostile("python-keyboard-interrupt-in-target", FAILURE, target("def answer(q):\n    raise KeyboardInterrupt\n"), project="python", subprocess=True),
    Hostile("python-base-exception", FAILURE, target("class Odd(BaseException):\n    pass\ndef answer(q):\n    raise Odd()\n"), project="python", subprocess=True),
    Hostile("python-raises", FAILURE, target("def answer(q):\n    raise RuntimeError('db down')\n"), project="python"),
    Hostile("python-returns-none", USAGE, target("def answer(q):\n    return None\n"), project="python", says="returned"),
    Hostile("python-returns-string", USAGE, target("def answer(q):\n    return 'hello'\n"), project="python", says="returned"),
    Hostile("python-returns-nan-score", USAGE, target("def answer(q):\n    return {'answer': 'x', 'contexts': [{'id': 'a', 'text': 't', 'score': float('nan')}]}\n"), project="python", says="score"),
    Hostile("python-returns-bad-contexts", USAGE, target("def answer(q):\n    return {'answer': 'x', 'contexts': [1, 2]}\n"), project="python", says="contexts"),
    Hostile("python-recursion", FAILURE, target("def answer(q):\n    return answer(q)\n"), project="python", subprocess=True),
    Hostile("python-infinite-loop-times-out", FAILURE, both(target("def answer(q):\n    while True:\n        pass\n"), config_add("timeout = 1")), project="python", subprocess=True),
    Hostile("python-syntax-error", USAGE, target("def answer(q)\n    return {}\n"), project="python", says="bot.py"),
    Hostile("python-import-raises", USAGE, target("raise RuntimeError('import-time failure')\n"), project="python", says="bot"),
    Hostile("python-exit-at-import", USAGE, target("import sys\nsys.exit(0)\n"), project="python", says="bot", subprocess=True),
    Hostile("python-missing-module", USAGE, lambda p: (p / "bot.py").unlink(), project="python", says="bot"),
    Hostile("python-missing-function", USAGE, target("def reply(q):\n    return {}\n"), project="python", says="answer"),
    Hostile("python-target-not-callable", USAGE, target("answer = 42\n"), project="python", says="answer"),
    Hostile("python-target-no-colon", USAGE, config_replace('target = "bot:answer"', 'target = "bot.answer"'), project="python", says="target"),
    # --- HTTP systems
    Hostile("http-url-not-a-url", USAGE, config_replace('url = "http://127.0.0.1:9/ask"', 'url = "not a url"'), project="http", says="url"),
    Hostile("http-url-file-scheme", USAGE, config_replace('url = "http://127.0.0.1:9/ask"', 'url = "file:///etc/passwd"'), project="http", says="url"),
    Hostile("http-url-no-host", USAGE, config_replace('url = "http://127.0.0.1:9/ask"', 'url = "http:///ask"'), project="http", says="url"),
    Hostile("http-url-missing", USAGE, config_replace('url = "http://127.0.0.1:9/ask"\n', ""), project="http", says="url"),
    Hostile("http-connection-refused", FAILURE, project="http"),
    Hostile("http-env-var-missing", USAGE, config_add('[system.headers]\nAuthorization = "Bearer ${RAGRAIL_TEST_NO_SUCH_VAR}"'), project="http", says="RAGRAIL_TEST_NO_SUCH_VAR"),
    # --- history and other commands
    Hostile("history-corrupt-file-run-goes-on", OK, write(".ragrail/history.sqlite", b"this is not a database at all" * 100)),
    Hostile("history-is-folder-run-goes-on", OK, mkdir(".ragrail/history.sqlite/x")),
    Hostile("cache-corrupt-file-run-goes-on", OK, write(".ragrail/cache.sqlite", b"garbage" * 1000)),
    Hostile("state-dir-is-file-run-goes-on", OK, write(".ragrail", "not a folder")),
    Hostile("show-no-history", USAGE, args=("show",), says="run"),
    Hostile("show-bad-ref", USAGE, args=("show", "banana"), says="history"),
    Hostile("show-ref-negative", USAGE, args=("show", "-5")),
    Hostile("diff-bad-refs", USAGE, args=("diff", "1", "2"), says="run"),
    Hostile("report-no-history", USAGE, args=("report",), says="run"),
    Hostile("history-limit-zero", USAGE, args=("history", "--limit", "0"), says="limit"),
    Hostile("lint-bad-golden", USAGE, write("golden.json", "{"), args=("lint",), says="golden.json"),
    Hostile("add-duplicate-id", USAGE, args=("add", "--id", "lost-phone", "--question", "again?"), says="lost-phone"),
    Hostile("add-blank-question", USAGE, args=("add", "--id", "new", "--question", "  "), says="question"),
    Hostile("add-to-broken-golden", USAGE, write("golden.json", "[{"), args=("add", "--id", "new", "--question", "q?"), says="golden.json"),
    Hostile("example-into-existing-file", USAGE, args=("example", "kitebase", "golden.json"), says="golden.json"),
    Hostile("example-unknown", USAGE, args=("example", "nope", "dest"), says="nope"),
    Hostile("judge-validate-no-labels", USAGE, args=("judge", "validate", "--labels", "nope.jsonl"), says="labels"),
    Hostile("judge-validate-bad-labels", USAGE, write("labels.jsonl", "{not json\n"), args=("judge", "validate", "--labels", "labels.jsonl"), says="labels.jsonl"),
    Hostile("cache-stats-empty-ok", OK, args=("cache", "stats")),
    # --- text that tries to forge the verdict
    Hostile("id-with-newline-forges-nothing", OK, set_case(0, id="x\nWORSE:  fake: retrieval 100% -> 0%"), args=("run", "--baseline", "none.json"), forbid=r"^\s*WORSE"),
    Hostile("id-with-escape-codes-ok", OK, set_case(0, id="x\x1b[2J\x1b[31mred"), args=("run", "--baseline", "none.json", "--junit", "j.xml"), forbid="\x1b\\[2J"),
    Hostile("id-with-bidi-ok", OK, set_case(0, id="abc\u202edcba"), args=("run", "--baseline", "none.json", "--markdown", "m.md")),
    # --- a second hostile pass (after issue 10): outputs over inputs
    Hostile("out-json-over-golden", USAGE, args=("run", "--json", "golden.json"), says="golden set"),
    Hostile("out-json-over-baseline", USAGE, args=("run", "--json", "baseline.json"), says="--save-baseline"),
    Hostile("out-junit-over-project-file", USAGE, args=("run", "--junit", "ragrail.toml"), says="project file"),
    Hostile("out-markdown-into-docs", USAGE, args=("run", "--markdown", "docs/summary.md"), says="docs folder"),
    Hostile("out-json-and-markdown-same-file", USAGE, args=("run", "--json", "out.x", "--markdown", "out.x"), says="same file"),
    Hostile("out-json-same-as-saved-baseline", USAGE, args=("run", "--save-baseline", "--json", "baseline.json"), says="same file"),
    Hostile("out-json-over-outputs-file", USAGE, args=("run", "--json", "outputs.jsonl"), project="outputs", says="outputs file"),
    Hostile("out-report-over-golden", USAGE, args=("report", "-o", "golden.json"), says="golden set"),
    Hostile("out-sweep-csv-over-baseline", USAGE, args=("sweep", "--csv", "baseline.json"), says="baseline"),
    # model base URLs that cannot be URLs: a setting to fix (2), not every call failing (3)
    Hostile("flag-base-url-not-a-url", USAGE, args=("run", "--claude", "--base-url", "not a url"), env={"ANTHROPIC_API_KEY": "sk-test"}, says="--base-url"),
    Hostile("flag-base-url-file-scheme", USAGE, args=("run", "--answerer", "openai", "--model", "m", "--base-url", "file:///etc"), env={"OPENAI_API_KEY": "sk-test"}, says="not an HTTP URL"),
    Hostile("env-base-url-not-a-url", USAGE, args=("run", "--claude"), env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "not a url"}, says="ANTHROPIC_BASE_URL"),
    Hostile("flag-judge-base-url-no-scheme", USAGE, args=("run", "--judge", "claude", "--judge-base-url", "localhost"), env={"ANTHROPIC_API_KEY": "sk-test"}, says="--judge-base-url"),
    Hostile("config-answerer-base-url-ftp", USAGE, config_replace('name = "standin"', 'name = "anthropic"\nbase_url = "ftp://x"'), env={"ANTHROPIC_API_KEY": "sk-test"}, says="base_url"),
    Hostile("flag-repeats-huge", USAGE, args=("run", "--repeats", "99999999999"), says="repeats"),
    Hostile("flag-rerun-failures-huge", USAGE, args=("run", "--claude", "--rerun-failures", "10000000"), says="rerun-failures"),
    # hand-edited whole-run baselines: out of range is refused, naming the field
    Hostile("baseline-top-k-zero", USAGE, edit_baseline(lambda d: d["config"].update(top_k=0)), says="config.top_k"),
    Hostile("baseline-repeats-zero", USAGE, edit_baseline(lambda d: d["config"].update(repeats=0)), says="config.repeats"),
    Hostile("baseline-negative-calls", USAGE, edit_baseline(lambda d: d.update(usage={"calls": -5})), says="usage.calls"),
    Hostile("baseline-count-with-400-digits", USAGE, first_case(lambda c: c.update(answer_runs=10**400, answer_passes=1)), says="answer_runs"),
    Hostile("baseline-schema-version-true", USAGE, edit_baseline(lambda d: d.update(schema_version=True)), says="schema_version true"),
    Hostile("baseline-key-twice", USAGE, baseline_text('"format"', '"format": "x", "format"'), says="given twice"),
    # strict JSON: a key twice (the first value silently lost), a lone surrogate (unsavable)
    Hostile("golden-key-twice", USAGE, golden_raw('"question":', '"question": "first?", "question":'), says="'0.question' is given twice"),
    Hostile("golden-lone-surrogate", USAGE, golden_raw('"question": "', '"question": "\\ud800'), says="golden.json:2"),
    Hostile("outputs-lone-surrogate", USAGE, outputs_line(0, '{"id": "no-recovery-email", "answer": "x\\udc00", "contexts": []}'), project="outputs", says="outputs.jsonl:1"),
    Hostile("python-returns-lone-surrogate-ok", OK, target("def answer(q):\n    return {'answer': \"I don't know.\\ud800\", 'contexts': []}\n"), project="python", args=("run", "--baseline", "none.json", "--json", "out.json")),
    # judge labels as strict as golden sets
    Hostile("labels-line-not-object", USAGE, write("labels.jsonl", "[1, 2]\n"), args=("judge", "validate", "--labels", "labels.jsonl"), says="labels.jsonl:1"),
    Hostile("labels-line-deep", USAGE, write("labels.jsonl", DEEP + "\n"), args=("judge", "validate", "--labels", "labels.jsonl"), says="labels.jsonl:1"),
    Hostile("labels-key-twice", USAGE, write("labels.jsonl", '{"case_id": "a", "case_id": "b", "criterion": "c", "verdict": "pass"}\n'), args=("judge", "validate", "--labels", "labels.jsonl"), says="given twice"),
    Hostile("labels-case-id-list", USAGE, write("labels.jsonl", '{"case_id": ["a"], "criterion": "c", "verdict": "pass"}\n'), args=("judge", "validate", "--labels", "labels.jsonl"), says="case_id"),
    Hostile("labels-csv-extra-field", USAGE, write("labels.csv", "case_id,criterion,verdict\na,c,pass,surprise\n"), args=("judge", "validate", "--labels", "labels.csv"), says="labels.csv:2"),
    Hostile("labels-csv-unterminated-quote", USAGE, write("labels.csv", 'case_id,criterion,verdict\na,c,"pass\n'), args=("judge", "validate", "--labels", "labels.csv"), says="labels.csv:2"),
    # run histories edited by hand
    Hostile("history-negative-version", USAGE, history_db(version=-1), args=("history",), says="edited by hand"),
    Hostile("history-negative-version-run", USAGE, history_db(version=-1), says="edited by hand"),
    Hostile("history-row-counts-not-numbers-ok", OK, history_db(row={"totals": '{"n_errors": "lots", "n_answers": [1]}'}), args=("history",)),
    Hostile("history-row-repeats-text-ok", OK, history_db(row={"config": '{"repeats": "x"}'}), args=("history",)),
    # the run being compared had errors: `diff` says so and exits 3, as `run` did
    Hostile("diff-errored-run-is-3", FAILURE, recorded_runs(lambda p: None, outputs_line(0, "")), args=("diff", "1", "2"), project="outputs", says="failed to run"),
    # sweep's own copies of the table (.ragrail/sweep.*): unwritable is a warning, not exit 2
    Hostile("sweep-state-dir-is-file-ok", OK, write(".ragrail", "not a folder"), args=("sweep",), says="the table was not saved"),
    Hostile("sweep-json-flag-unwritable", USAGE, write(".ragrail", "not a folder"), args=("sweep", "--json", ".ragrail/t.json"), says="--json table"),
    # numbers far past any sense are still numbers: no overflow, no crash
    Hostile("flag-top-k-21-digits-ok", OK, args=("run", "--top-k", "999999999999999999999", "--baseline", "none.json")),
    Hostile("flag-chunk-words-21-digits-ok", OK, args=("run", "--chunk-words", "999999999999999999999", "--baseline", "none.json")),
    Hostile("python-timeout-1e300-ok", OK, project="python", args=("run", "--timeout", "1e300", "--baseline", "none.json")),
    # the project file as Windows editors and careless generators write it
    Hostile("config-utf8-bom-accepted", OK, lambda p: (p / "ragrail.toml").write_bytes(b"\xef\xbb\xbf" + (p / "ragrail.toml").read_bytes())),
    Hostile("config-nested-too-deep", USAGE, config_add("[prices]\nm = " + "[" * 5000 + "]" * 5000), says="nested too deeply"),
    # a baseline that shares no question with the run compared nothing: said, not silent
    Hostile("baseline-of-another-project-warns", OK, lambda p: (p / "baseline.json").write_bytes((Path(__file__).parents[2] / "src/ragrail/examples/late-refund/baseline.json").read_bytes()), says="nothing was compared"),
    # a Python target that ends, moves or silences ragrail itself
    Hostile("python-os-exit-0", FAILURE, target("import os\ndef answer(q):\n    os._exit(0)\n"), project="python", subprocess=True, says="failed to run"),
    Hostile("python-os-exit-at-import", USAGE, target("import os\nos._exit(0)\n"), project="python", subprocess=True, says="os._exit(0)"),
    Hostile("python-chdir-outputs-stay-put", OK, both(mkdir("elsewhere"), target("import os\ndef answer(q):\n    if os.path.isdir('elsewhere'):\n        os.chdir('elsewhere')\n    return {'answer': \"I don't know.\", 'contexts': []}\n"), lambda p: None), project="python", args=("run", "--json", "out.json", "--no-history"), subprocess=True),
    Hostile("python-replaces-stdout-verdict-still-printed", REGRESSION, target("import io, sys\ndef answer(q):\n    sys.stdout = io.StringIO()\n    return {'answer': 'nothing useful', 'contexts': []}\n"), project="python", subprocess=True, says=None),
    Hostile("python-returns-dict-that-raises", USAGE, target("class D(dict):\n    def items(self):\n        raise RuntimeError('boom')\n    def keys(self):\n        raise RuntimeError('boom')\ndef answer(q):\n    return D(answer='x', contexts=[])\n"), project="python", says="raised RuntimeError when read"),
    # a reason quoting a user's path stays one line
    Hostile("error-line-with-newline-in-path", USAGE, args=("run", "--golden", "a\nWORSE:  x: 100% -> 0%.json"), says="golden", forbid=r"^\s*WORSE"),
    # outputs files read line by line, golden arrays item by item (issue 13): positions stay exact
    Hostile("outputs-crlf-line-ends-ok", OK, lambda p: (p / "outputs.jsonl").write_bytes((p / "outputs.jsonl").read_bytes().replace(b"\n", b"\r\n")), project="outputs"),
    Hostile("outputs-no-final-newline-ok", OK, lambda p: (p / "outputs.jsonl").write_bytes((p / "outputs.jsonl").read_bytes().rstrip(b"\n")), project="outputs"),
    Hostile("outputs-bad-utf8-names-its-line", USAGE, lambda p: (p / "outputs.jsonl").write_bytes((p / "outputs.jsonl").read_bytes().replace(b"I don't know.", b"I don\xfft know.", 3).replace(b"I don\xfft know.", b"I don't know.", 2)), project="outputs", says="outputs.jsonl:3:"),
    Hostile("golden-deep-in-third-case-names-its-line", USAGE, write("golden.json", '[\n{"id": "a", "question": "q"},\n{"id": "b", "question": "r"},\n{"id": "c", "question": "s", "facts": ' + DEEP + "}\n]"), says="golden.json:4"),
    Hostile("golden-control-char-message-whole", USAGE, golden_raw('"question": "', '"question": "\x00'), says="invalid control character", forbid=r"character at$"),
    Hostile("id-with-tab-escaped-in-table", OK, set_case(0, id="x\ty"), args=("run", "--baseline", "none.json"), forbid="\t"),
    # production logs (issue 14): bad rows are warnings, a file with none readable is exit 2
    Hostile("logs-ingest-bad-rows-ok", OK, write("log.jsonl", b'{"id": "c1", "timestamp": 1704067200, "question": "q", "answer": "a"}\n{"id": \xff}\n[1]\nNaN\n'), args=("logs", "ingest", "log.jsonl"), says="3 bad"),
    Hostile("logs-ingest-no-valid-row", USAGE, write("log.jsonl", '{"id": "a"}\n{"id": "b", "timestamp": NaN}\n'), args=("logs", "ingest", "log.jsonl"), says="log.jsonl:1"),
    Hostile("logs-ingest-empty-file", USAGE, write("log.csv", ""), args=("logs", "ingest", "log.csv"), says="no rows"),
    Hostile("logs-ingest-folder", USAGE, mkdir("log.jsonl"), args=("logs", "ingest", "log.jsonl"), says="directory"),
    Hostile("logs-ingest-unknown-format", USAGE, write("log.txt", '{"id": "c1", "timestamp": 1704067200, "question": "q", "answer": "a"}\n'), args=("logs", "ingest", "log.txt"), says="format"),
    Hostile("online-json-onto-the-log-database", USAGE, ingested, args=("online", "--json", ".ragrail/logs.sqlite"), says="would overwrite the log database"),
    Hostile("online-html-onto-the-golden-set", USAGE, ingested, args=("online", "--html", "golden.json"), says="would overwrite the golden set"),
    Hostile("online-compare-one-version-twice", USAGE, ingested, args=("online", "--compare", "v1", "v1"), says="two different versions"),
    Hostile("logs-db-is-a-folder", USAGE, both(write("log.jsonl", LOG_ROW % (1, 1, 1)), mkdir("db.sqlite")), args=("logs", "ingest", "log.jsonl", "--db", "db.sqlite"), says="directory"),
    Hostile("logs-ingest-cost-too-large-is-a-bad-row", OK, write("log.jsonl", LOG_ROW % (1, 1, 1) + '{"id": "c2", "timestamp": 1704067200, "question": "q", "answer": "a", "cost": 1e308}\n'), args=("logs", "ingest", "log.jsonl"), says="cost: number too large"),
    Hostile("logs-redact-pattern-invalid", USAGE, both(write("log.jsonl", '{"id": "c1", "timestamp": 1704067200, "question": "q", "answer": "a"}\n'), config_add("\n[logs]\nredact = ['(x']\n")), args=("logs", "ingest", "log.jsonl"), says="logs.redact"),
    # shards (issue 15): a bad slice or an incomplete, foreign or broken set is exit 2
    Hostile("shard-syntax-bad", USAGE, args=("run", "--shard", "1-3", "--json", "s.json"), says="--shard"),
    Hostile("shard-index-not-below-n", USAGE, args=("run", "--shard", "3/3", "--json", "s.json"), says="--shard"),
    Hostile("shard-of-zero", USAGE, args=("run", "--shard", "0/0", "--json", "s.json"), says="--shard"),
    Hostile("shard-huge-n-ok", OK, args=("run", "--shard", "5/999999999", "--json", "s.json")),
    Hostile("shard-with-save-baseline", USAGE, args=("run", "--shard", "0/2", "--save-baseline", "--json", "s.json"), says="save-baseline"),
    Hostile("shard-without-json", USAGE, args=("run", "--shard", "0/2"), says="--json"),
    Hostile("shard-json-over-golden", USAGE, args=("run", "--shard", "0/2", "--json", "golden.json"), says="golden set"),
    Hostile("merge-a-golden-set", USAGE, args=("merge", "golden.json"), says="not a shard"),
    Hostile("merge-a-missing-file", USAGE, args=("merge", "nope.json"), says="nope.json"),
    Hostile("merge-a-folder", USAGE, mkdir("s.json"), args=("merge", "s.json"), says="s.json"),
    Hostile("merge-broken-json", USAGE, write("s.json", '{"shard": '), args=("merge", "s.json"), says="s.json"),
    Hostile("merge-bad-shard-field", USAGE, write("s.json", '{"shard": {"index": -1}}'), args=("merge", "s.json"), says="shard.index"),
    Hostile("merge-shard-field-not-object", USAGE, write("s.json", '{"shard": [1]}'), args=("merge", "s.json"), says="shard"),
    # a Ray address with no port to reach is a mistake before any connection (Ray installed or not)
    Hostile("ray-address-port-zero", USAGE, args=("run", "--backend", "ray", "--address", "127.0.0.1:0")),
    # issue 29: no command overwrites what it reads or keeps (the whole table: tests/test_outputs.py)
    Hostile("export-trec-run-file-over-golden", USAGE, args=("export", "trec", "--run-file", "golden.json"), says="would overwrite the golden set"),
    Hostile("export-trec-qrels-over-history", USAGE, recorded_runs(lambda p: None), args=("export", "trec", "--qrels", ".ragrail/history.sqlite"), says="would overwrite the run history", project="outputs"),
    Hostile("export-ragas-over-baseline", USAGE, args=("export", "ragas", "-o", "baseline.json"), says="would overwrite the baseline"),
    Hostile("export-ragas-over-project-file", USAGE, args=("export", "ragas", "-o", "ragrail.toml"), says="would overwrite the project file"),
    Hostile("export-ragas-over-its-own-run", USAGE, write("results.json", "{}"), args=("export", "ragas", "--run", "results.json", "-o", "results.json"), says="would overwrite the results being exported"),
    Hostile("export-ragas-over-ingested-export", USAGE, ingested, args=("export", "ragas", "-o", "log.jsonl"), says="would overwrite an ingested log export"),
    Hostile("export-trec-into-docs", USAGE, args=("export", "trec", "--run-file", "docs/run.txt"), says="docs folder"),
    Hostile("history-json-over-golden", USAGE, recorded_runs(lambda p: None), args=("history", "--json", "golden.json"), says="would overwrite the golden set", project="outputs"),
    Hostile("history-json-into-docs", USAGE, recorded_runs(lambda p: None), args=("history", "--json", "docs/h.txt"), says="docs folder", project="outputs"),
    Hostile("show-json-over-baseline", USAGE, recorded_runs(lambda p: None), args=("show", "--json", "baseline.json"), says="would overwrite the baseline", project="outputs"),
    Hostile("diff-json-over-project-file", USAGE, recorded_runs(lambda p: None), args=("diff", "1", "--json", "ragrail.toml"), says="would overwrite the project file", project="outputs"),
    Hostile("lint-json-over-the-golden-set-it-lints", USAGE, args=("lint", "--json", "golden.json"), says="would overwrite the golden set"),
    Hostile("cache-stats-json-over-baseline", USAGE, args=("cache", "stats", "--json", "baseline.json"), says="would overwrite the baseline"),
    Hostile("judge-validate-json-over-golden", USAGE, args=("judge", "validate", "--labels", "labels.csv", "--json", "golden.json"), says="would overwrite the golden set"),
    Hostile("run-json-over-history", USAGE, recorded_runs(lambda p: None), args=("run", "--json", ".ragrail/history.sqlite"), says="would overwrite the run history", project="outputs"),
    Hostile("run-no-history-json-over-log-database", USAGE, ingested, args=("run", "--no-history", "--json", ".ragrail/logs.sqlite"), says="would overwrite the log database"),
    Hostile("report-over-log-database", USAGE, ingested, args=("report", "-o", ".ragrail/logs.sqlite"), says="would overwrite the log database"),
    Hostile("run-junit-over-ingested-export", USAGE, ingested, args=("run", "--junit", "log.jsonl"), says="would overwrite an ingested log export"),
    Hostile("run-json-over-any-sqlite-database", USAGE, lambda p: __import__("sqlite3").connect(p / "mine.db").execute("CREATE TABLE t (x)").connection.commit(), args=("run", "--json", "mine.db"), says="would overwrite a SQLite database"),
    Hostile("run-junit-in-proc-is-2", USAGE, args=("run", "--junit", "/proc/x.xml"), says="takes no new file"),
    # issue 29: logs and online
    Hostile("logs-ingest-csv-quote-left-open-loses-no-row", OK, write("log.csv", CSV_QUOTE_LEFT_OPEN), args=("logs", "ingest", "log.csv"), says="lines 4-51 were read again as rows"),
    Hostile("logs-ingest-iso-time-before-year-1-is-a-bad-row", OK, write("log.jsonl", LOG_ROW % (1, 1, 1) + '{"id": "c2", "timestamp": "0001-01-01T00:00:00+01:00", "question": "q", "answer": "a"}\n'), args=("logs", "ingest", "log.jsonl"), says="timestamp: out of range for a date"),
    Hostile("online-time-before-year-1-stored-earlier-left-out", OK, TIME_BEFORE_YEAR_1, args=("online",), says="1 conversation(s) left out (first: 'c1')"),
    Hostile("sample-time-before-year-1-stored-earlier-left-out", OK, TIME_BEFORE_YEAR_1, args=("sample", "-n", "3", "-o", "s.csv"), says="left out (first: 'c1')"),
    Hostile("logs-score-time-before-year-1-stored-earlier-left-out", OK, TIME_BEFORE_YEAR_1, args=("logs", "score"), says="left out (first: 'c1')"),
    Hostile("add-from-log-time-before-year-1-stored-earlier", USAGE, TIME_BEFORE_YEAR_1, args=("add", "--from-log", "c1"), says="'c1' cannot be used: its time is not a date"),
    Hostile("logs-score-unknown-version", USAGE, ingested, args=("logs", "score", "--version", "v7"), says="(versions: v0, v1)"),
    Hostile("sample-unknown-version-writes-nothing", USAGE, ingested, args=("sample", "-n", "3", "-o", "s.csv", "--version", "v7"), says="(versions: v0, v1)"),
    Hostile("logs-ingest-db-is-the-reply-cache", USAGE, both(write("log.jsonl", LOG_ROW % (1, 1, 1)), reply_cache), args=("logs", "ingest", "log.jsonl", "--db", ".ragrail/cache.sqlite"), says="not a ragrail log database"),
    Hostile("logs-score-judge-unreachable", FAILURE, both(ingested_then("""UPDATE conversations SET contexts = '[["x#1","x","a"]]'"""), config_add('[judge]\nprovider = "anthropic"\nbase_url = "http://127.0.0.1:9"\nmax_retries = 0')), args=("logs", "score", "--judge-sample", "5"), env={"ANTHROPIC_API_KEY": "sk-test"}, says="the judge failed on 5 conversation(s)"),
    # issue 29: shards, Ray, API
    # merge checks the golden set as it is now: a case added, removed or edited after the
    # shards ran is exit 2 naming it, not "No regressions" on the questions that did run
    Hostile("merge-after-a-case-was-added", USAGE, sharded(2, edit_golden(lambda cs: cs.append({**cs[0], "id": "added-later", "question": "Added later?"}))), args=("merge", "s0.json", "s1.json"), says="1 case ('added-later') not evaluated"),
    Hostile("merge-after-a-case-was-removed", USAGE, sharded(2, edit_golden(lambda cs: cs[1:])), args=("merge", "s0.json", "s1.json"), says="evaluated but no longer in it"),
    Hostile("merge-after-a-question-was-edited", USAGE, sharded(2, set_case(2, question="What if my phone was stolen?")), args=("merge", "s0.json", "s1.json"), says="1 case ('lost-phone') edited since the shards ran"),
    Hostile("merge-blames-the-tampered-second-shard", USAGE, sharded(2, edit_json("s1.json", lambda d: d["shard"]["positions"].reverse())), args=("merge", "s0.json", "s1.json"), says="s1.json: is not shard 1/2"),
    Hostile("merge-other-golden-with-golden-flag-ok", OK, both(edit_golden(lambda cs: cs[:4]), sharded(2), lambda p: (p / "golden.json").rename(p / "small.json"), write("golden.json", "[]")), args=("merge", "s0.json", "s1.json", "--golden", "small.json", "--no-history", "--baseline", "none.json")),
    # a shard where a whole run is read says to merge first, not "unknown field 'shard'"
    Hostile("shard-as-the-baseline", USAGE, sharded(1), args=("run", "-b", "s0.json"), says="s0.json: baseline is shard 0/1 of a sharded run"),
    Hostile("shard-exported", USAGE, sharded(1), args=("export", "ragas", "--run", "s0.json", "-o", "r.jsonl"), says="`ragrail merge"),
    # a malformed Ray address is exit 2 before any connection, Ray installed or not (one with
    # a trailing space skipped the probe, and ray.init retried it for minutes)
    Hostile("ray-address-trailing-space", USAGE, args=("run", "--backend", "ray", "--address", "127.0.0.1:6379 "), says="has spaces around it"),
    Hostile("ray-address-without-port", USAGE, args=("run", "--backend", "ray", "--address", "headnode"), says="is not HOST:PORT"),
    Hostile("ray-address-an-http-url", USAGE, args=("run", "--backend", "ray", "--address", "http://127.0.0.1:8265"), says="is not HOST:PORT"),
    Hostile("ray-run-table-address-trailing-space", USAGE, config_add('[run]\nbackend = "ray"\naddress = "127.0.0.1:6379 "'), says="run.address"),
    # OpenInference documents in a shape once read as none: the retrieval lost, exit 0
    Hostile("openinference-documents-a-string", USAGE, write("t.jsonl", json.dumps({**OI_SPAN, "attributes": {**OI_SPAN["attributes"], "retrieval": {"documents": "Reset it from the login page."}}}) + "\n"), args=("import", "openinference", "t.jsonl", "--outputs", "o.jsonl"), says="t.jsonl:1: field 'retrieval.documents' must be a list of documents"),
    Hostile("openinference-documents-one-object", USAGE, write("t.jsonl", json.dumps({**OI_SPAN, "attributes": {**OI_SPAN["attributes"], "retrieval": {"documents": {"document": {"content": "x"}}}}}) + "\n"), args=("import", "openinference", "t.jsonl", "--outputs", "o.jsonl"), says="must be a list of documents"),
    # a number once called null
    Hostile("import-contexts-a-number-named-a-number", USAGE, write("d.jsonl", '{"user_input": "q?", "response": "a", "retrieved_contexts": 5}\n'), args=("import", "ragas", "d.jsonl", "--outputs", "o.jsonl"), says="must be a list of texts, not a number"),
]
