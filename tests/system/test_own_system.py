"""Evaluate your own system: init, add, the four system kinds, retrievers, sweep."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers import run_shell


def test_from_an_empty_folder_to_a_red_check(cli, tmp_path):
    assert cli("init", cwd=tmp_path).code == 0
    written = ("ragrail.toml", "golden.json", ".github/workflows/evals.yml", ".ragrail/.gitignore")
    for name in written:
        assert (tmp_path / name).is_file()
    docs = tmp_path / "docs"
    assert docs.is_dir() and not any(docs.iterdir())  # no placeholder among the user's documents
    (docs / "shipping.md").write_text(
        "# Shipping times\n\nStandard shipping takes 3 to 5 business days.\n"
    )
    (docs / "returns.md").write_text(
        "# Returns\n\nReturn any item within 30 days for a full refund.\n"
    )
    (docs / "gift-cards.md").write_text(
        "# Gift cards\n\nGift cards never expire and work in every store.\n"
    )
    cases = [
        (
            "shipping-time",
            "How long does standard shipping take?",
            "shipping",
            "3 to 5 business days",
        ),
        ("return-window", "How many days do I have to return an item?", "returns", "30 days"),
        ("gift-card-expiry", "Do gift cards expire?", "gift-cards", "never expire"),
        (
            "return-refund",
            "Do I get a full refund when I return an item?",
            "returns",
            "full refund",
        ),
    ]
    for cid, question, source, fact in cases:
        r = cli(
            "add",
            "--id",
            cid,
            "--question",
            question,
            "--source",
            source,
            "--fact",
            fact,
            cwd=tmp_path,
        )
        assert r.code == 0, r.err
    assert cli("lint", cwd=tmp_path).code == 0
    r = cli("run", "--save-baseline", cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    assert "Saved baseline" in r.out

    (docs / "gift-cards.md").write_text("# Gift cards\n\nGift cards work in every store.\n")
    r = cli("run", cwd=tmp_path)
    assert r.code == 1
    worse = [ln.strip() for ln in r.out.splitlines() if ln.strip().startswith("WORSE")]
    assert worse and all("gift-card-expiry" in w for w in worse)


def test_init_refuses_to_overwrite(cli, tmp_path):
    (tmp_path / "golden.json").write_text("[]")
    r = cli("init", cwd=tmp_path)
    assert r.code == 2 and "would overwrite" in r.err
    assert not (tmp_path / "ragrail.toml").exists()
    assert (tmp_path / "golden.json").read_text() == "[]"


def test_add_refuses_duplicates_and_keeps_the_file(cli, tmp_path):
    cli("init", cwd=tmp_path)
    before = (tmp_path / "golden.json").read_text()
    r = cli("add", "--id", "off-topic-weather", "--question", "Anything?", cwd=tmp_path)
    assert r.code == 2 and "already exists" in r.err
    again = "what will the weather be like tomorrow?"
    r = cli("add", "--id", "other", "--question", again, cwd=tmp_path)
    assert r.code == 2 and "already asks this question" in r.err
    assert (tmp_path / "golden.json").read_text() == before


# ------------------------------------------------------------- four system kinds


SCORED = (
    "retrieval_recall",
    "retrieval_hit",
    "answer_pass",
    "problems",
    "context_precision",
    "reciprocal_rank",
    "faithfulness",
    "correctness",
    "cause",
)


def scores(path) -> dict[str, tuple]:
    data = json.loads(path.read_text())
    return {c["id"]: tuple(json.dumps(c[k]) for k in SCORED) for c in data["cases"]}


@pytest.fixture
def reference(cli, tmp_path):
    """Kitebase through the built-in pipeline, and its outputs as a JSONL file."""
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    out = tmp_path / "pipeline.json"
    assert cli("run", "--json", str(out), cwd=dest).code == 0
    outputs = {}
    for case in json.loads(out.read_text())["cases"]:
        t = case["trace"]
        outputs[case["question"]] = {
            "answer": t["answer"],
            "contexts": [
                {k: c[k] for k in ("id", "source", "text", "score")} for c in t["retrieved"]
            ],
        }
    return dest, out, outputs


def set_system(dest, table: str) -> None:
    cfg = dest / "ragrail.toml"
    text = cfg.read_text().replace("[pipeline]", table + "\n[pipeline]")
    cfg.write_text(text)


def test_the_same_outputs_score_the_same_through_every_system_kind(cli, reference, tmp_path):
    dest, pipeline_json, outputs = reference
    expected = scores(pipeline_json)

    # 1. a JSONL outputs file
    lines = [json.dumps({"question": q, **o}) for q, o in outputs.items()]
    (dest / "outputs.jsonl").write_text("\n".join(lines) + "\n")
    # 2. a Python callable, importable from the project folder
    (dest / "mybot.py").write_text(
        "import json, pathlib\n"
        "OUT = json.loads(pathlib.Path(__file__).with_name('outputs.json').read_text())\n"
        "def answer(question):\n    return OUT[question]\n"
        "async def answer_async(question):\n    return OUT[question]\n"
    )
    (dest / "outputs.json").write_text(json.dumps(outputs))
    # 3. an HTTP service on 127.0.0.1, with another field layout
    server = serve(
        lambda body: {
            "result": {"text": outputs[body["query"]["q"]]["answer"]},
            "passages": [
                {
                    "doc_id": c["id"],
                    "doc": c["source"],
                    "content": c["text"],
                    "relevance": c["score"],
                }
                for c in outputs[body["query"]["q"]]["contexts"]
            ],
        }
    )
    os.environ["KB_TOKEN"] = "secret-token-123"
    try:
        systems = {
            "outputs": '[system]\nkind = "outputs"\npath = "outputs.jsonl"\n',
            "python": '[system]\nkind = "python"\ntarget = "mybot:answer"\n',
            "python-async": '[system]\nkind = "python"\ntarget = "mybot:answer_async"\n',
            "http": (
                f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/ask"\n'
                'question_field = "query.q"\nanswer_field = "result.text"\ncontexts_field = "passages"\n'
                'context_id_field = "doc_id"\ncontext_source_field = "doc"\ncontext_text_field = "content"\n'
                'context_score_field = "relevance"\nheaders = {Authorization = "Bearer ${KB_TOKEN}"}\n'
            ),
        }
        original = (dest / "ragrail.toml").read_text()
        for kind, table in systems.items():
            (dest / "ragrail.toml").write_text(original)
            set_system(dest, table)
            out = tmp_path / f"{kind}.json"
            r = cli("run", "--json", str(out), cwd=dest)
            assert r.code == 0, (kind, r.out, r.err)
            assert scores(out) == expected, kind
        assert all(h == "Bearer secret-token-123" for h in server.auth_headers)
        assert "secret-token-123" not in out.read_text()
    finally:
        os.environ.pop("KB_TOKEN", None)
        server.shutdown()


def serve(handler_fn, content_type: str = "application/json", raw: bytes | None = None):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            server.auth_headers.append(self.headers.get("authorization"))
            data = raw if raw is not None else json.dumps(handler_fn(body)).encode()
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.auth_headers = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_failing_callable_is_an_error_for_that_case(cli, tmp_path):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    (dest / "flaky.py").write_text("def answer(q):\n    raise RuntimeError('index offline')\n")
    set_system(dest, '[system]\nkind = "python"\ntarget = "flaky:answer"\n')
    r = cli("run", cwd=dest)
    assert r.code == 3
    assert "RuntimeError: index offline" in r.out


# ------------------------------------------------------------- bad config


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        (
            '[system]\nkind = "python"\ntarget = "no_such_module:answer"\n',
            "cannot import 'no_such_module'",
        ),
        ('[system]\nkind = "python"\ntarget = "nocolon"\n', "package.module:function"),
        ('[system]\nkind = "carrier-pigeon"\n', "system.kind"),
        ('[system]\nkind = "http"\n', "needs url"),
        (
            '[system]\nkind = "http"\nurl = "http://127.0.0.1:9/x"\nheaders = {X = "${NOPE_NOT_SET}"}\n',
            "system.headers.X: environment variable NOPE_NOT_SET is not set",
        ),
    ],
)
def test_bad_system_config_is_one_line_and_exit_2(cli, tmp_path, table, needle):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    set_system(dest, table)
    r = cli("run", cwd=dest)
    assert r.code == 2, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.err


def test_wrong_type_in_config(cli, tmp_path):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    cfg = dest / "ragrail.toml"
    cfg.write_text(cfg.read_text().replace("top_k = 3", 'top_k = "three"'))
    r = cli("run", cwd=dest)
    assert r.code == 2 and "key 'pipeline.top_k'" in r.err


def test_endpoint_returning_html_is_each_questions_error(tmp_path, cli):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    server = serve(
        None, content_type="text/html", raw=b"<!doctype html><html><body>Login</body></html>"
    )
    out = tmp_path / "out.json"
    try:
        set_system(
            dest, f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n'
        )
        r = run_shell("run", "--json", str(out), cwd=dest)
    finally:
        server.shutdown()
    assert r.code == 3, r.err
    assert "Traceback" not in r.err
    errors = trace_errors(out)
    assert len(errors) == 12
    assert all(
        "the reply is HTML, not JSON: is system.url the API endpoint" in e for e in errors.values()
    )


# ------------------------------------------------------------- retrievers and sweep


def test_bm25_retriever_runs(cli):
    r = cli("demo", "--retriever", "bm25")
    assert r.code in (0, 1)
    assert "Kitebase bot" in r.out


def test_dense_retriever_makes_paraphrase_a_hit(cli):
    if os.environ.get("RAGRAIL_REQUIRE_SEMANTIC") != "1":
        pytest.importorskip("sentence_transformers")
    r = cli("demo", "--retriever", "dense")
    row = next(ln for ln in r.out.splitlines() if ln.startswith("  paraphrase "))
    assert row.split()[1] == "hit", r.out


def test_sweep_grid_has_18_rows_and_the_default_row_matches_demo(cli, tmp_path):
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    r = cli(
        "sweep",
        "--example",
        "kitebase",
        "--chunk-words",
        "0,25,50",
        "--top-k",
        "1,3,5",
        "--retriever",
        "standin,bm25",
        "--json",
        str(out_json),
        "--csv",
        str(out_csv),
    )
    assert r.code == 0, r.err
    rows = json.loads(out_json.read_text())
    assert len(rows) == 18
    assert len(out_csv.read_text().strip().splitlines()) == 19  # header + 18
    table = [ln for ln in r.out.splitlines() if ln.startswith("  chunks by") or "-word" in ln]
    assert len(table) == 18
    default = next(
        x for x in rows if x["chunk_words"] == 0 and x["retriever"] == "standin" and x["top_k"] == 3
    )
    assert round(default["hit_rate"] * 100) == 91 and round(default["recall"] * 100) == 86
    assert round(default["answer_pass_rate"] * 100) == 67
    assert rows[0]["recall"] >= rows[-1]["recall"]  # best first


def test_sweep_rejects_unknown_retriever(cli):
    r = cli("sweep", "--example", "kitebase", "--retriever", "standin,magic")
    assert r.code == 2 and "unknown retriever 'magic'" in r.err


# ------------------------------------------------------------- the system cannot fake a verdict


def trace_errors(path) -> dict[str, str | None]:
    """Each case's trace error from a --json results file."""
    return {c["id"]: c["trace"]["error"] for c in json.loads(path.read_text())["cases"]}


def python_project(cli, tmp_path, module: str, source: str, settings: str = ""):
    """Kitebase with `module.py` as its system under test (target `module:answer`).

    Module names differ per test: in-process runs share one `sys.modules`."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    (dest / f"{module}.py").write_text(source)
    set_system(dest, f'[system]\nkind = "python"\ntarget = "{module}:answer"\n{settings}')
    return dest


IDK = 'return {"answer": "I do not know.", "contexts": []}'


@pytest.mark.parametrize("code", [0, 1, None, "bye"])
def test_sys_exit_in_every_question_is_12_error_rows_and_exit_3(cli, tmp_path, code):
    module = f"exits_{str(code).lower()}"
    dest = python_project(
        cli, tmp_path, module, f"import sys\ndef answer(q):\n    sys.exit({code!r})\n"
    )
    out = tmp_path / "out.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert len(errors) == 12
    assert all(
        e == f"SystemExit({code!r}) raised by the system under test" for e in errors.values()
    )
    rows = [ln for ln in r.out.splitlines() if "ERROR  SystemExit(" in ln]
    assert len(rows) == 12
    assert "Traceback" not in r.err


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        ("KeyboardInterrupt", "KeyboardInterrupt raised by the system under test"),
        ("GeneratorExit('closed')", "GeneratorExit: closed"),
        ("Odd('strange')", "Odd: strange"),
        ("Unprintable()", "Unprintable: <unprintable Unprintable>"),
    ],
)
def test_any_base_exception_is_that_questions_error(cli, tmp_path, raised, expected):
    name = "raises_" + raised.split("(")[0].lower()
    source = (
        "class Odd(BaseException):\n    pass\n"
        "class Unprintable(Exception):\n    def __str__(self):\n        raise RuntimeError\n"
        "def answer(q):\n"
        f"    if 'phone' in q:\n        raise {raised}\n"
        f"    {IDK}\n"
    )
    dest = python_project(cli, tmp_path, name, source)
    out = tmp_path / "out.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert errors.pop("lost-phone") == expected
    assert set(errors.values()) == {None}  # every other question ran
    assert "interrupted" not in r.err


def test_async_target_base_exceptions_are_question_errors(cli, tmp_path):
    source = (
        "import sys\n"
        "async def answer(q):\n"
        "    if 'phone' in q:\n        raise KeyboardInterrupt\n"
        "    if 'email' in q:\n        sys.exit(0)\n"
        f"    {IDK}\n"
    )
    dest = python_project(cli, tmp_path, "async_raiser", source)
    out = tmp_path / "out.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert errors["lost-phone"] == "KeyboardInterrupt raised by the system under test"
    email = [k for k, v in errors.items() if v == "SystemExit(0) raised by the system under test"]
    assert set(email) == {"no-recovery-email", "change-sign-in-email"}
    assert sum(v is None for v in errors.values()) == 9


def test_a_hung_sync_target_times_out_and_the_run_goes_on(tmp_path, cli):
    source = f"def answer(q):\n    while 'phone' in q:\n        pass\n    {IDK}\n"
    dest = python_project(cli, tmp_path, "spins", source, "timeout = 1\n")
    out = tmp_path / "out.json"
    started = time.monotonic()
    r = run_shell("run", "--json", str(out), cwd=dest)  # a process of its own: the loop never ends
    assert time.monotonic() - started < 30
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert errors.pop("lost-phone") == "timed out after 1 s (system.timeout)"
    assert set(errors.values()) == {None}


def test_an_async_target_that_blocks_its_event_loop_cannot_hang_the_run(tmp_path, cli):
    source = f"async def answer(q):\n    while 'phone' in q:\n        pass\n    {IDK}\n"
    dest = python_project(cli, tmp_path, "blocks_loop", source, "timeout = 1\nconcurrency = 1\n")
    out = tmp_path / "out.json"
    started = time.monotonic()
    r = run_shell("run", "--json", str(out), cwd=dest)
    assert time.monotonic() - started < 30
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert errors["lost-phone"].startswith("timed out after 1 s (system.timeout); the event loop")
    order = list(errors)
    after = order[order.index("lost-phone") + 1 :]
    assert all(errors[c] == "not run: another question blocked the event loop" for c in after)
    assert all(errors[c] is None for c in order[: order.index("lost-phone")])


def test_slow_async_question_times_out_and_the_timeout_flag_overrides_the_config(cli, tmp_path):
    source = (
        "import asyncio\n"
        "async def answer(q):\n"
        "    if 'phone' in q:\n        await asyncio.sleep(30)\n"
        f"    {IDK}\n"
    )
    dest = python_project(cli, tmp_path, "slow_async", source, "timeout = 25\n")
    out = tmp_path / "out.json"
    started = time.monotonic()
    r = cli("run", "--timeout", "0.5", "--json", str(out), cwd=dest)
    assert time.monotonic() - started < 10
    assert r.code == 3, r.out + r.err
    errors = trace_errors(out)
    assert errors.pop("lost-phone") == "timed out after 0.5 s (system.timeout)"
    assert set(errors.values()) == {None}


def test_a_sync_target_runs_on_the_thread_that_imported_it(cli, tmp_path):
    # sqlite objects refuse other threads: the import and every call share one worker thread
    source = (
        "import sqlite3\n"
        "DB = sqlite3.connect(':memory:')\n"
        "def answer(q):\n"
        "    (text,) = DB.execute('select ?', ('I do not know.',)).fetchone()\n"
        "    return {'answer': text, 'contexts': []}\n"
    )
    dest = python_project(cli, tmp_path, "uses_sqlite", source)
    out = tmp_path / "out.json"
    r = cli("run", "--json", str(out), cwd=dest)
    assert set(trace_errors(out).values()) == {None}, r.out
    assert r.code in (0, 1)


@pytest.mark.parametrize(
    ("name", "source", "needles"),
    [
        ("bad_syntax", "def answer(q)\n    return q\n", ["bad_syntax.py:1:", "syntax error"]),
        (
            "bad_raises",
            "x = 1\nraise RuntimeError('index missing')\n",
            ["bad_raises.py:2:", "importing bad_raises raised RuntimeError: index missing"],
        ),
        (
            "bad_exits",
            "import sys\nsys.exit(0)\n",
            ["bad_exits.py:2:", "importing bad_exits called sys.exit(0)"],
        ),
        (
            "bad_imports",
            "import no_such_dependency_zz\n",
            ["bad_imports.py:1:", "No module named 'no_such_dependency_zz'"],
        ),
        ("bad_attr", "answer = 42\n", ["has no function 'answer'"]),
    ],
)
def test_a_target_that_cannot_load_is_exit_2_naming_it(cli, tmp_path, name, source, needles):
    dest = python_project(cli, tmp_path, name, source)
    before = (dest / "baseline.json").read_bytes()
    r = cli("run", "--save-baseline", cwd=dest)
    assert r.code == 2, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.err
    assert f"system.target '{name}:answer'" in lines[0]
    assert all(n in lines[0] for n in needles), lines[0]
    assert (dest / "baseline.json").read_bytes() == before


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("not a url", "contains spaces"),
        ("file:///etc/passwd", "is not an HTTP URL (file://)"),
        ("ftp://example.com/x", "is not an HTTP URL (ftp://)"),
        ("localhost:8000/ask", "has no scheme"),
        ("http://", "has no host"),
        ("https:///path", "has no host"),
        ("http://example.com:99999/", "is not a valid URL"),
        ("http://[::1/", "is not a valid URL"),
        ("", "is empty"),
    ],
)
def test_an_invalid_url_is_a_config_error_naming_system_url(cli, tmp_path, url, needle):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    set_system(dest, f'[system]\nkind = "http"\nurl = "{url}"\n')
    before = (dest / "baseline.json").read_bytes()
    started = time.monotonic()
    r = cli("run", "--save-baseline", cwd=dest)
    assert time.monotonic() - started < 5  # refused up front, never retried as a network failure
    assert r.code == 2, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.err
    assert "ragrail.toml: key 'system.url':" in lines[0] and needle in lines[0]
    assert not (dest / ".ragrail" / "history.sqlite").exists()
    assert (dest / "baseline.json").read_bytes() == before


def test_url_problem_accepts_real_urls_and_http_system_checks_too():
    from ragrail.errors import InputError
    from ragrail.project import SystemConfig
    from ragrail.system.adapters import HttpSystem, url_problem

    for url in ("http://127.0.0.1:8000/ask", "https://rag.example.com/v1/ask?x=1", "HTTP://h"):
        assert url_problem(url) is None, url
    cfg = SystemConfig(kind="http", url="http://h/x").model_copy(update={"url": "file:///x"})
    with pytest.raises(InputError, match=r"system\.url 'file:///x' is not an HTTP URL"):
        HttpSystem(cfg)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (b"", "the reply was empty, not JSON"),
        (b"Internal error", "the reply is not JSON (Expecting value at line 1 column 1)"),
        (b'{"contexts": []}', "the reply has no 'answer' (system.answer_field)"),
        (b'{"answer": "x"}', "the reply has no 'contexts' (system.contexts_field)"),
        (b"[1, 2]", "the reply has no 'answer' (system.answer_field)"),
    ],
)
def test_a_200_reply_without_the_mapped_fields_is_that_questions_error(
    cli, tmp_path, reply, expected
):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    server = serve(None, raw=reply)
    out = tmp_path / "out.json"
    try:
        set_system(
            dest, f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n'
        )
        r = cli("run", "--json", str(out), cwd=dest)
    finally:
        server.shutdown()
    assert r.code == 3, r.out + r.err
    assert set(trace_errors(out).values()) == {expected}
    assert len(server.auth_headers) == 12  # one call per question: a bad reply is not retried


def test_a_second_project_with_the_same_module_name_imports_its_own(cli, tmp_path):
    """Two projects in one process, each with its own `samename.py` target: the second
    run must call its own module, not the one the first project left in sys.modules."""
    first = python_project(cli, tmp_path / "one", "samename", f"def answer(q):\n    {IDK}\n")
    second = python_project(
        cli, tmp_path / "two", "samename", "def answer(q):\n    raise RuntimeError('second project')\n"
    )
    out1, out2 = tmp_path / "1.json", tmp_path / "2.json"
    first_run = cli("run", "--no-history", "--baseline", "none.json", "--json", str(out1), cwd=first)
    assert first_run.code == 0, first_run.err
    r = cli("run", "--no-history", "--json", str(out2), cwd=second)
    assert r.code == 3, r.out + r.err
    assert set(trace_errors(out2).values()) == {"RuntimeError: second project"}
    assert set(trace_errors(out1).values()) == {None}


def test_a_target_that_moves_or_silences_ragrail_changes_neither_outputs_nor_verdict(
    cli, tmp_path
):
    """The target changes the working folder and replaces sys.stdout: --json still lands
    where it was named, and the scorecard is still printed."""
    dest = python_project(
        cli,
        tmp_path,
        "wanders",
        "import io, os, sys\n"
        "def answer(q):\n"
        "    os.makedirs('elsewhere', exist_ok=True)\n"
        "    os.chdir('elsewhere')\n"
        "    sys.stdout = io.StringIO()\n"
        f"    {IDK}\n",
    )
    r = cli("run", "--no-history", "--baseline", "none.json", "--json", "out.json", cwd=dest)
    assert r.code == 0, r.err
    assert (dest / "out.json").is_file()
    assert not (dest / "elsewhere" / "out.json").exists()
    assert "12 golden questions" in " ".join(r.out.split())  # the header may wrap


def test_os_exit_in_a_target_is_that_questions_error_not_the_end_of_the_run(cli, tmp_path):
    """os._exit(0) skips every except and finally: unguarded, the run ended green with
    nothing evaluated. It is each question's error, and the run exits 3."""
    import os

    dest = python_project(
        cli, tmp_path, "exits_hard", "import os\ndef answer(q):\n    os._exit(0)\n"
    )
    real_exit = os._exit
    out = tmp_path / "out.json"
    r = cli("run", "--no-history", "--json", str(out), cwd=dest)
    assert os._exit is real_exit  # put back once the run is over
    assert r.code == 3, r.out + r.err
    assert set(trace_errors(out).values()) == {"os._exit(0) called by the system under test"}


def test_an_endpoint_whose_passages_are_not_objects_is_a_config_error(tmp_path, cli):
    """contexts: [null, 5] once read as two empty passages: retrieval silently lost."""
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    server = serve(lambda body: {"answer": "x", "contexts": [None, 5]})
    try:
        set_system(
            dest, f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n'
        )
        r = cli("run", "--no-history", cwd=dest)
    finally:
        server.shutdown()
    assert r.code == 2, r.out + r.err
    assert "item 0 of the reply's list is null, not an object with 'text'" in r.err


def test_an_endpoint_that_echoes_its_token_never_gets_it_into_the_results(tmp_path, cli):
    """A header value taken from the environment is a secret: a reply that quotes it is
    kept with the secret redacted."""
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    server = serve(lambda body: {"answer": "your token: Bearer tok-echo-7777", "contexts": []})
    os.environ["KB_ECHO_TOKEN"] = "tok-echo-7777"
    out = tmp_path / "out.json"
    try:
        set_system(
            dest,
            f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n'
            'headers = {Authorization = "Bearer ${KB_ECHO_TOKEN}"}\n',
        )
        r = cli("run", "--no-history", "--baseline", "none.json", "--json", str(out), cwd=dest)
    finally:
        os.environ.pop("KB_ECHO_TOKEN", None)
        server.shutdown()
    assert r.code == 0, r.out + r.err
    assert "tok-echo-7777" not in out.read_text() + r.out + r.err
    assert "your token: Bearer [redacted]" in out.read_text()
