"""Evaluate your own system: init, add, the four system kinds, retrievers, sweep."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import run_shell


def test_from_an_empty_folder_to_a_red_check(cli, tmp_path):
    assert cli("init", cwd=tmp_path).code == 0
    for name in ("ragrail.toml", "golden.json", "docs/example.md", ".github/workflows/evals.yml"):
        assert (tmp_path / name).is_file()
    docs = tmp_path / "docs"
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
    r = cli("add", "--id", "example-question", "--question", "Anything?", cwd=tmp_path)
    assert r.code == 2 and "already exists" in r.err
    r = cli("add", "--id", "other", "--question", "how do i change my password?", cwd=tmp_path)
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


def test_endpoint_returning_html_is_a_config_error(tmp_path, cli):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    server = serve(
        None, content_type="text/html", raw=b"<!doctype html><html><body>Login</body></html>"
    )
    try:
        set_system(
            dest, f'[system]\nkind = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n'
        )
        r = run_shell("run", cwd=dest)
    finally:
        server.shutdown()
    assert r.code == 2
    assert r.err.strip().count("\n") == 0
    assert "returned HTML, not JSON" in r.err and "system.url" in r.err


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
