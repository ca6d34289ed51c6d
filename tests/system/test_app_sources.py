"""An app built the way LlamaIndex or LangChain answer by default: no [id] markers in its
answers, sources as file names, paths or URLs, node ids of its own, and maybe the list of
nodes it used (``cited``). Its right answers pass and its retrieval hits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOCS = {
    "npm-ci": "# npm ci\n\nnpm ci installs exactly what package-lock.json lists.\n",
    "npm-audit": "# npm audit\n\nRun npm audit fix to upgrade vulnerable packages.\n",
    "npm-cache": "# npm cache\n\nnpm keeps its cache in the _cacache folder.\n",
}
GOLDEN = [
    {"id": "exact", "question": "How do I install exactly the lockfile?",
     "sources": ["npm-ci"], "facts": ["package-lock.json"]},
    {"id": "vulns", "question": "How do I fix vulnerable packages?",
     "sources": ["npm-audit"], "facts": ["npm audit fix"]},
    {"id": "cache", "question": "Where is the cache?",
     "sources": ["npm-cache"], "facts": ["_cacache"]},
]  # fmt: skip

# The app: each question's node (a uuid-like id, a source as the framework keeps it) and
# an answer restating the fact, with no citation marker.
APP = """
SOURCE = {SOURCE!r}
CITED = {CITED!r}
SETTINGS = {SETTINGS!r}
INDEX_SIZE = {INDEX_SIZE!r}
NODES = {{"npm-ci": "5f1c0a", "npm-audit": "9b2e41", "npm-cache": "c3d477"}}
ANSWERS = {{
    "How do I install exactly the lockfile?": ("npm-ci", "It installs what package-lock.json lists."),
    "How do I fix vulnerable packages?": ("npm-audit", "Use npm audit fix."),
    "Where is the cache?": ("npm-cache", "In the _cacache folder."),
}}


def answer(question):
    doc, text = ANSWERS[question]
    node = NODES[doc]
    reply = {{
        "answer": text,
        "contexts": [{{"id": node, "source": SOURCE.format(doc), "text": text, "score": 0.9}}],
    }}
    if CITED:
        reply["cited"] = [node]
    if SETTINGS:
        reply["settings"] = SETTINGS
    if INDEX_SIZE is not None:
        reply["index_size"] = INDEX_SIZE
    return reply
"""


def app_project(
    tmp_path: Path,
    source: str,
    cited: bool = False,
    settings: dict | None = None,
    index_size: int | None = None,
    scoring: str = "",
    docs: bool = True,
) -> Path:
    """A project of three npm documents, three questions and an app written as above."""
    dest = tmp_path / "app"
    dest.mkdir(parents=True, exist_ok=True)
    if docs:
        (dest / "docs").mkdir(exist_ok=True)
        for name, text in DOCS.items():
            (dest / "docs" / f"{name}.md").write_text(text)
    (dest / "golden.json").write_text(json.dumps(GOLDEN))
    module = f"llama_app_{abs(hash((str(tmp_path), source, cited, str(settings))))}"
    (dest / f"{module}.py").write_text(
        APP.format(SOURCE=source, CITED=cited, SETTINGS=settings or {}, INDEX_SIZE=index_size)
    )
    (dest / "ragrail.toml").write_text(
        f'name = "npm help"\n\n[system]\nkind = "python"\ntarget = "{module}:answer"\n{scoring}'
    )
    return dest


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "source",
    ["{}.md", "docs/{}.md", "https://docs.npmjs.com/cli/{}.html", "{}", "NPM/{}.MD"],
)
def test_file_names_paths_and_urls_score_as_the_documents_they_name(cli, tmp_path, source):
    dest = app_project(tmp_path, source)
    r = cli("run", "--no-history", "--json", "out.json", cwd=dest)
    assert r.code == 0, r.out + r.err
    out = flat(r.out)
    assert "hit rate@1 100%" in out and "answers pass 100%" in out and "(3 of 3)" in out
    assert (
        "citations: not required, no answer cites a source ([scoring] "
        'require_citation = "auto")' in out
    )
    assert "warning" not in r.err
    run = json.loads((dest / "out.json").read_text())
    assert run["config"]["citations"] == "none cited"
    assert {c["trace"]["retrieved"][0]["source"] for c in run["cases"]} == set(DOCS)
    articles = [c["articles"]["success_at_k"] for c in run["cases"]]
    assert articles == [1.0, 1.0, 1.0]


def test_an_app_that_says_which_nodes_it_used_is_held_to_citing(cli, tmp_path):
    dest = app_project(tmp_path, "docs/{}.md", cited=True)
    r = cli("run", "--no-history", "--json", "out.json", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "answers pass 100%" in flat(r.out) and "citations:" not in r.out
    run = json.loads((dest / "out.json").read_text())
    assert "citations" not in run["config"]  # required: the default, not written
    assert [c["trace"]["cited"] for c in run["cases"]] == [["5f1c0a"], ["9b2e41"], ["c3d477"]]


def test_require_citation_true_fails_every_unmarked_answer(cli, tmp_path):
    dest = app_project(tmp_path, "{}.md", scoring="\n[scoring]\nrequire_citation = true\n")
    r = cli("run", "--no-history", cwd=dest)
    assert "answers pass 0%" in flat(r.out) and r.out.count("no citation") >= 3
    assert "citations:" not in r.out


def test_require_citation_false_says_so(cli, tmp_path):
    dest = app_project(
        tmp_path, "{}.md", cited=True, scoring="\n[scoring]\nrequire_citation = false\n"
    )
    r = cli("run", "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    assert "citations: not required ([scoring] require_citation = false)" in flat(r.out)


def test_sources_that_name_no_document_are_a_loud_warning_not_a_silent_zero(cli, tmp_path):
    dest = app_project(tmp_path, "chunk-{}-7f3a")
    r = cli("run", "--no-history", cwd=dest)
    warning = [ln for ln in r.err.splitlines() if "name no document" in ln]
    assert len(warning) == 1, r.err
    assert "3 of the 3 contexts returned name no document" in warning[0]
    assert "'chunk-npm-ci-7f3a', 'chunk-npm-audit-7f3a', 'chunk-npm-cache-7f3a'" in warning[0]
    assert "the 3 documents in docs/ ('npm-audit', 'npm-cache', 'npm-ci')" in warning[0]
    assert "hit rate@1 0%" in flat(r.out)


def test_without_a_docs_folder_sources_are_read_as_the_golden_sets(cli, tmp_path):
    dest = app_project(tmp_path, "kb/{}.txt", docs=False)
    r = cli("run", "--no-history", cwd=dest)
    assert "hit rate@1 100%" in flat(r.out), r.out + r.err
    bad = app_project(tmp_path / "b", "x-{}", docs=False)
    r = cli("run", "--no-history", cwd=bad)
    assert "compared with the names of the golden set's 3 sources" in r.err


def test_the_header_counts_the_index_when_the_app_reports_it(cli, tmp_path):
    dest = app_project(tmp_path, "{}.md")
    assert "top_k=1, 3 distinct chunks retrieved, 3 golden" in flat(
        cli("run", "--no-history", cwd=dest).out
    )
    sized = app_project(tmp_path / "s", "{}.md", index_size=412)
    assert "top_k=1, 412 chunks, 3 golden" in flat(cli("run", "--no-history", cwd=sized).out)


def test_the_apps_own_settings_show_in_changed_lines(cli, tmp_path):
    dest = app_project(tmp_path, "{}.md", settings={"chunk_size": 512, "splitter": "sentence"})
    r = cli("run", "--save-baseline", "--no-history", cwd=dest)
    assert r.code == 0, r.out + r.err
    baseline = json.loads((dest / "baseline.json").read_text())
    assert baseline["config"]["settings"] == {"chunk_size": 512, "splitter": "sentence"}
    # the app changed: a new module (in-process runs share sys.modules), the same baseline
    changed = app_project(
        tmp_path / "c", "{}.md", settings={"chunk_size": 256, "splitter": "sentence"}
    )
    (changed / "baseline.json").write_bytes((dest / "baseline.json").read_bytes())
    r = cli("run", "--no-history", cwd=changed)
    assert r.code == 0, r.out + r.err
    assert "changed: chunk_size 512 -> 256" in r.out


def test_the_same_app_behind_http_scores_the_same(cli, tmp_path):
    from tests.system.test_own_system import serve

    answers = {g["question"]: g for g in GOLDEN}

    def reply(body: dict) -> dict:
        case = answers[body["question"]]
        doc = case["sources"][0]
        node = {"id": f"uuid-{doc}", "source": f"https://docs.npmjs.com/cli/{doc}.html"}
        return {
            "response": f"Here: {case['facts'][0]}.",
            "source_nodes": [{**node, "text": DOCS[doc], "score": 0.5}],
            "used": [node["id"]],
            "meta": {"index_size": 77},
        }

    server = serve(reply)
    try:
        dest = app_project(tmp_path, "{}.md")
        (dest / "ragrail.toml").write_text(
            'name = "npm help"\n\n[system]\nkind = "http"\n'
            f'url = "http://127.0.0.1:{server.server_port}/query"\n'
            'answer_field = "response"\ncontexts_field = "source_nodes"\n'
            'cited_field = "used"\nindex_size_field = "meta.index_size"\n'
        )
        r = cli("run", "--no-history", "--json", "out.json", cwd=dest)
    finally:
        server.shutdown()
    assert r.code == 0, r.out + r.err
    out = flat(r.out)
    assert "top_k=1, 77 chunks, 3 golden" in out
    assert "hit rate@1 100%" in out and "answers pass 100%" in out and "citations:" not in out
    run = json.loads((dest / "out.json").read_text())
    assert [c["trace"]["cited"] for c in run["cases"]] == [
        ["uuid-npm-ci"], ["uuid-npm-audit"], ["uuid-npm-cache"],
    ]  # fmt: skip


def test_the_same_app_through_the_python_api(tmp_path, monkeypatch):
    import ragrail

    dest = app_project(tmp_path, "{}.md")
    monkeypatch.chdir(dest)
    by_question = {g["question"]: g for g in GOLDEN}

    def answer(question: str) -> dict:
        case = by_question[question]
        doc = case["sources"][0]
        node = {"id": f"n-{doc}", "source": f"docs/{doc}.md", "text": DOCS[doc]}
        return {"answer": f"It is {case['facts'][0]}.", "contexts": [node]}

    result = ragrail.evaluate("golden.json", system=answer)
    assert (result.totals.hit_rate, result.totals.answer_pass_rate) == (1.0, 1.0)
    assert result.config.citations == "none cited"
    assert [c.trace.retrieved[0].source for c in result.cases] == [
        "npm-ci",
        "npm-audit",
        "npm-cache",
    ]
