"""Conversations end to end: each turn asked after the previous answer, with the history,
through the stand-in pipeline, a python target, an HTTP service on 127.0.0.1 and a model
server (tests/fake_llm.py); a regression in turn 2 exits 1 naming that turn."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragrail.system.query import is_follow_up, search_query
from tests.fake_llm import FakeLLM, Received, Reply, paste_top_chunk, question_of
from tests.helpers import between

DOCS = Path(__file__).resolve().parents[2] / "src" / "ragrail" / "examples" / "kitebase" / "docs"
KEY = "sk-test-conversations-0123456789"

GOLDEN = [
    {
        "id": "downgrade",
        "question": "If I downgrade my plan, when does the downgrade start?",
        "sources": ["plans"],
        "facts": ["end of the billing period"],
    },
    {
        "id": "sso-chat",
        "turns": [
            {
                "question": "We sign in with single sign-on through Okta.",
                "sources": ["sso"],
                "facts": ["identity provider"],
            },
            {
                "question": "How do I reset that password?",
                "sources": ["sso"],
                "facts": ["IT admin"],
            },
        ],
    },
    {
        "id": "export-chat",
        "turns": [
            {
                "question": "How do I export all my pages?",
                "sources": ["export-data"],
                "facts": ["ZIP"],
            },
            {
                "question": "And how long does it take?",
                "sources": ["export-data"],
                "facts": ["within an hour"],
            },
        ],
    },
]

# The bot below: finds the article from the whole conversation, as a chat bot must.
BOT = """
import os

TEXT = {
    "export-data": "Download every page and file as one ZIP archive from Settings > Workspace"
    " > Export. Big exports arrive by email as a download link, usually within an hour.",
    "sso": "With single sign-on, your company's identity provider checks who you are. To"
    " reset an SSO password, talk to your IT admin.",
    "plans": "Downgrades apply at the end of the billing period.",
}
KEYS = {"export": "export-data", "sign-on": "sso", "downgrade": "plans"}
CALLS = []


def reply(question, history):
    CALLS.append((question, history))
    said = " ".join([t["question"] for t in history] + [question]).lower()
    source = next((s for k, s in KEYS.items() if k in said), None)
    if source is None:
        return {"answer": "I don't know.", "contexts": []}
    text = TEXT[source]
    answer = text.split(". ")[0] + "." if os.environ.get("CHATBOT_BROKEN") and history else text
    return {"answer": answer, "contexts": [{"id": source + "#1", "source": source, "text": text}]}


def answer(question, history):
    return reply(question, history)


async def answer_async(question, *, history=None):
    return reply(question, history or [])


def no_history(question):
    return reply(question, [])
"""


def project(tmp_path: Path, system: str = "", golden: list[Any] | None = None) -> Path:
    root = tmp_path / "chat"
    root.mkdir()
    (root / "golden.json").write_text(json.dumps(golden or GOLDEN), encoding="utf-8")
    (root / "ragrail.toml").write_text(
        f'name = "chat"\nproduct = "Kitebase"\ndocs = "{DOCS.as_posix()}"\n'
        'golden = "golden.json"\nbaseline = "baseline.json"\n'
        "[pipeline]\ntop_k = 3\nmin_score = 0.2\n" + system,
        encoding="utf-8",
    )
    (root / "chatbot_h.py").write_text(BOT, encoding="utf-8")
    return root


def worse(out: str) -> list[str]:
    """Each WORSE line whole: a narrow terminal wraps one onto indented lines after it."""
    lines: list[str] = []
    inside = False
    for ln in out.splitlines():
        if ln.strip().startswith("WORSE:"):
            lines.append(" ".join(ln.split()))
            inside = True
        elif inside and ln.startswith(" " * 10) and ln.strip():
            lines[-1] += " " + " ".join(ln.split())
        else:
            inside = False
    return lines


def cases_of(path: Path) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in json.loads(path.read_text())["cases"]}


# ---------------------------------------------------------------- the query rewrite


def test_a_follow_up_is_searched_with_the_questions_it_follows() -> None:
    first = "How do I export all my pages?"
    assert search_query("And how long does it take?", [first]) == (
        "How do I export all my pages? And how long does it take?"
    )
    # a question that stands alone is searched alone, a first turn too
    alone = "How do I change the email I sign in with on the web?"
    assert not is_follow_up(alone) and search_query(alone, [first]) == alone
    assert search_query("And Pro?", []) == "And Pro?"
    # back to the last question that was not a follow-up, at most three earlier ones
    chain = ["How much is the Team plan per month?", "And Business?", "Is that yearly?"]
    assert search_query("What about Free?", chain) == " ".join([*chain, "What about Free?"])
    longer = ["a b c d e f g", "x", "y", "z"]
    assert search_query("ok?", longer) == "x y z ok?"


def test_search_queries_follow_each_conversation_in_golden_order() -> None:
    from ragrail.golden import parse_golden
    from ragrail.system.rounds import search_queries

    cases = parse_golden(json.dumps(GOLDEN), Path("golden.json")).cases
    assert search_queries(cases) == [
        GOLDEN[0]["question"],
        "We sign in with single sign-on through Okta.",
        "We sign in with single sign-on through Okta. How do I reset that password?",
        "How do I export all my pages?",
        "How do I export all my pages? And how long does it take?",
    ]


def test_standin_pipeline_follow_ups_find_their_article_only_with_the_history(
    cli, tmp_path
) -> None:
    from ragrail.system.pipeline import Pipeline, PipelineSettings

    alone = Pipeline(PipelineSettings(docs=DOCS, product="Kitebase", min_score=0.2))
    # searched alone, both follow-ups miss their article
    assert alone.retrieve(["How do I reset that password?"])[0][0].source == "reset-password"
    assert alone.retrieve(["And how long does it take?"])[0] == []
    root = project(tmp_path)
    out = tmp_path / "r.json"
    r = cli("run", "--json", str(out), cwd=root)
    assert r.code == 0, r.out + r.err
    got = cases_of(out)
    assert list(got) == [
        "downgrade",
        "sso-chat turn 1",
        "sso-chat turn 2",
        "export-chat turn 1",
        "export-chat turn 2",
    ]
    for case_id in ("sso-chat turn 2", "export-chat turn 2"):
        assert got[case_id]["retrieval_hit"] is True and got[case_id]["answer_pass"] is True
    assert got["sso-chat turn 2"]["trace"]["retrieved"][0]["source"] == "sso"
    # the prompt keeps the turn's own question
    assert question_of(got["export-chat turn 2"]["trace"]["prompt"]) == (
        "And how long does it take?"
    )


# ---------------------------------------------------------------- python targets


def test_python_target_gets_its_own_answers_and_a_turn_2_regression_exits_1(
    cli, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("CHATBOT_BROKEN", raising=False)
    root = project(tmp_path, '[system]\nkind = "python"\ntarget = "chatbot_h:answer"\n')
    r = cli("run", "--save-baseline", cwd=root)
    assert r.code == 0, r.out + r.err
    import chatbot_h  # type: ignore[import-not-found]

    calls = dict(chatbot_h.CALLS)
    assert calls["If I downgrade my plan, when does the downgrade start?"] == []
    assert calls["How do I export all my pages?"] == []
    assert calls["And how long does it take?"] == [
        {"question": "How do I export all my pages?", "answer": chatbot_h.TEXT["export-data"]}
    ]
    # turn 2 is asked once turn 1's answer is in: every first turn comes before any second
    order = [q for q, _ in chatbot_h.CALLS]
    assert max(order.index(g["turns"][0]["question"]) for g in GOLDEN[1:]) < min(
        order.index(g["turns"][1]["question"]) for g in GOLDEN[1:]
    )
    monkeypatch.setenv("CHATBOT_BROKEN", "1")
    r = cli("run", cwd=root)
    assert r.code == 1, r.out + r.err
    lines = worse(r.out)
    assert lines and all("turn 2" in ln for ln in lines), r.out
    assert any("export-chat turn 2" in ln and "within an hour" in ln for ln in lines), r.out
    assert any("sso-chat turn 2" in ln and "IT admin" in ln for ln in lines), r.out


def test_async_target_takes_history_by_keyword_and_one_without_it_is_called_as_before(
    cli, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("CHATBOT_BROKEN", raising=False)
    root = project(tmp_path, '[system]\nkind = "python"\ntarget = "chatbot_h:answer_async"\n')
    out = tmp_path / "a.json"
    assert cli("run", "--json", str(out), cwd=root).code == 0
    assert cases_of(out)["export-chat turn 2"]["answer_pass"] is True
    # without a history parameter the follow-ups lose their topic: asked, not crashed
    cfg = root / "ragrail.toml"
    cfg.write_text(cfg.read_text().replace("answer_async", "no_history"))
    r = cli("run", "--json", str(out), cwd=root)
    assert r.code == 0, r.out + r.err  # no baseline: nothing to regress from
    got = cases_of(out)
    assert got["export-chat turn 2"]["trace"]["answer"] == "I don't know."
    assert got["export-chat turn 1"]["answer_pass"] is True


def test_each_repeat_follows_its_own_answers(tmp_path) -> None:
    import ragrail

    said: list[tuple[str, list[dict[str, str]]]] = []
    count = iter(range(100))

    def bot(question: str, history: list[dict[str, str]]) -> dict[str, Any]:
        said.append((question, history))
        return {"answer": f"answer {next(count)}", "contexts": []}

    golden = [{"id": "c", "turns": [{"question": "First?"}, {"question": "Then?"}]}]
    result = ragrail.evaluate(golden, system=bot, repeats=3, config=project(tmp_path, ""))
    firsts = {h["answer"] for q, hist in said if q == "Then?" for h in hist}
    assert [q for q, _ in said].count("First?") == 3 and len(said) == 6
    # the three repeats of turn 2 were each asked with a different turn-1 answer
    assert firsts == {"answer 0", "answer 1", "answer 2"}
    second = result.case("c turn 2")
    assert second.answer_runs == 3


# ---------------------------------------------------------------- HTTP


class _ChatService:
    """A chat service on 127.0.0.1: the bot above, reading the history from the body."""

    def __init__(self, field: str = "history") -> None:
        self.bodies: list[dict[str, Any]] = []
        self.field = field
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                service.bodies.append(body)
                history = body.get(service.field) or []
                if history and "role" in history[0]:  # chat messages: user then assistant
                    history = [
                        {"question": u["content"], "answer": a["content"]}
                        for u, a in zip(history[::2], history[1::2], strict=True)
                    ]
                import chatbot_h  # type: ignore[import-not-found]

                data = json.dumps(chatbot_h.reply(body["question"], history)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chat"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service(tmp_path, monkeypatch) -> Iterator[_ChatService]:
    monkeypatch.delenv("CHATBOT_BROKEN", raising=False)
    project(tmp_path)  # writes chatbot_h.py
    monkeypatch.syspath_prepend(str(tmp_path / "chat"))
    s = _ChatService()
    yield s
    s.close()


def _body(service: _ChatService, question: str) -> dict[str, Any]:
    return next(b for b in service.bodies if b["question"] == question)


def test_http_sends_the_history_and_a_turn_2_regression_exits_1(
    cli, tmp_path, service, monkeypatch
) -> None:
    root = tmp_path / "chat"
    cfg = root / "ragrail.toml"
    cfg.write_text(cfg.read_text() + f'[system]\nkind = "http"\nurl = "{service.url}"\n')
    r = cli("run", "--save-baseline", cwd=root)
    assert r.code == 0, r.out + r.err
    # a single question is sent as before; a first turn with an empty history
    assert "history" not in _body(service, GOLDEN[0]["question"])
    assert _body(service, "How do I export all my pages?")["history"] == []
    assert _body(service, "And how long does it take?")["history"] == [
        {"question": "How do I export all my pages?", "answer": service_text("export-data")}
    ]
    monkeypatch.setenv("CHATBOT_BROKEN", "1")
    r = cli("run", cwd=root)
    assert r.code == 1
    assert any("export-chat turn 2" in ln for ln in worse(r.out)), r.out
    assert not any("turn 1" in ln for ln in worse(r.out)), r.out


def service_text(source: str) -> str:
    import chatbot_h  # type: ignore[import-not-found]

    return str(chatbot_h.TEXT[source])


def test_http_messages_as_chat_messages_in_a_field_of_its_own_or_none(
    cli, tmp_path, service
) -> None:
    root = tmp_path / "chat"
    cfg = root / "ragrail.toml"
    base = cfg.read_text()
    service.field = "conversation.messages"
    cfg.write_text(
        base + f'[system]\nkind = "http"\nurl = "{service.url}"\n'
        'messages_field = "conversation.messages"\nmessages_format = "chat"\n'
    )
    assert cli("run", cwd=root).code == 0
    assert _body(service, "And how long does it take?")["conversation"]["messages"] == [
        {"role": "user", "content": "How do I export all my pages?"},
        {"role": "assistant", "content": service_text("export-data")},
    ]
    service.bodies.clear()
    cfg.write_text(base + f'[system]\nkind = "http"\nurl = "{service.url}"\nmessages_field = ""\n')
    cli("run", cwd=root)
    assert service.bodies and all(set(b) == {"question"} for b in service.bodies)


# ---------------------------------------------------------------- a model answerer


def _chat_model(broken: bool) -> Any:
    def script(req: Received) -> Reply:
        reply = paste_top_chunk(req)
        if broken and req.history and "within an hour" in reply.text:
            reply.text = reply.text.replace("usually within an hour", "later")
        return reply

    return script


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_answerer_sends_earlier_turns_as_chat_messages_and_turn_2_regresses(
    cli, tmp_path, monkeypatch, provider
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    root = project(tmp_path)
    flags = ["--answerer", provider, "--model", "chat-model", "--no-cache"]
    with FakeLLM(_chat_model(False)) as fake:
        url = fake.openai_url if provider == "openai" else fake.anthropic_url
        r = cli("run", *flags, "--base-url", url, "--save-baseline", cwd=root)
        assert r.code == 0, r.out + r.err
        turn2 = next(
            c for c in fake.received if question_of(c.prompt) == "And how long does it take?"
        )
        first = next(
            c for c in fake.received if question_of(c.prompt) == "How do I export all my pages?"
        )
        roles = [m["role"] for m in turn2.body["messages"]]
        assert roles == ["user", "assistant", "user"]
        assert turn2.history == [("How do I export all my pages?", paste_top_chunk(first).text)]
        assert first.history == [] and len(first.body["messages"]) == 1
    with FakeLLM(_chat_model(True)) as fake:
        url = fake.openai_url if provider == "openai" else fake.anthropic_url
        r = cli("run", *flags, "--base-url", url, cwd=root)
    assert r.code == 1, r.out + r.err
    lines = worse(r.out)
    assert len(lines) == 1 and "export-chat turn 2" in lines[0] and "within an hour" in lines[0]


def test_the_cache_key_holds_the_history_and_an_empty_one_changes_nothing() -> None:
    from ragrail.calls.cache import cache_key

    args = ("openai", None, "m", "prompt", {}, 0)
    assert cache_key(*args, history=()) == cache_key(*args)
    assert cache_key(*args, history=[("q", "a")]) != cache_key(*args)
    assert cache_key(*args, history=[("q", "a")]) != cache_key(*args, history=[("q", "b")])


# ---------------------------------------------------------------- the judge


def test_the_judge_reads_a_turn_with_the_turns_before_it(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    root = project(tmp_path)
    with FakeLLM(lambda req: Reply(text='{"claims": []}')) as fake:
        r = cli("run", "--judge", "claude", "--judge-base-url", fake.url, cwd=root)
        assert r.code == 0, r.out + r.err
        asked = {between(c.prompt, "question"): c.prompt for c in fake.received}
    single = GOLDEN[0]["question"]
    assert single in asked  # a single question reads exactly as before
    turn2 = next(q for q in asked if q.endswith("And how long does it take?"))
    # the stand-in's answer to turn 1: the top chunk, cited
    assert turn2.startswith(
        "Earlier in this conversation:\nCustomer: How do I export all my pages?\n"
        "Assistant: Export your data"
    )
    assert turn2.endswith(
        "[export-data#1]\n\nThe customer now asks (judge the answer to this):\n"
        "And how long does it take?"
    )
    assert "How do I export all my pages?" in asked  # turn 1 has no history to show


# ---------------------------------------------------------------- Ray slices


def test_ray_slices_never_cut_a_conversation() -> None:
    from types import SimpleNamespace

    from ragrail.backends.ray import case_slices

    convs = [None, "a", "a", "a", None, "b", "b", None, None, "c", "c"]
    cases = [SimpleNamespace(conversation=c) for c in convs]
    got = case_slices(cases, 1)  # 11 cases, 4 slices per CPU: 3 each before the fix-up
    assert [i for r in got for i in r] == list(range(11))
    for r in got:
        if r.start > 0 and convs[r.start] is not None:
            assert convs[r.start - 1] != convs[r.start]


# ---------------------------------------------------------------- the kitebase-chat example

# A user's own chat bot over the example's articles: it searches the conversation as the
# built-in pipeline does and pastes the top passage, so it scores as the stand-in; with
# KBCHAT_BROKEN set it no longer answers a second turn.
KB_BOT = """
import os
from pathlib import Path

from ragrail.system.pipeline import Pipeline, PipelineSettings
from ragrail.system.query import search_query

PIPE = Pipeline(PipelineSettings(docs=Path(__file__).parent / "docs", product="Kitebase"))


def answer(question, history):
    query = search_query(question, [t["question"] for t in history])
    hits = PIPE.retrieve([query])[0]
    if not hits:
        return {"answer": "I don't know: please contact support.", "contexts": []}
    text = f"{hits[0].text} [{hits[0].id}]"
    if os.environ.get("KBCHAT_BROKEN") and len(history) == 1:
        text = "Sorry, I can't help with that."
    return {
        "answer": text,
        "contexts": [{"id": h.id, "source": h.source, "text": h.text} for h in hits],
    }
"""


@pytest.fixture
def chat_example(cli, tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("KBCHAT_BROKEN", raising=False)
    root = tmp_path / "kbc"
    assert cli("example", "kitebase-chat", str(root)).code == 0
    (root / "kbchat_bot.py").write_text(KB_BOT, encoding="utf-8")
    return root


def _turn_2_regressions(out: str) -> list[str]:
    lines = worse(out)
    assert lines, out
    assert all(" turn 2" in ln for ln in lines), out
    return lines


def test_kitebase_chat_standin_matches_its_baseline_and_needs_the_rewrite(
    cli, chat_example, monkeypatch
) -> None:
    r = cli("run", cwd=chat_example)
    assert r.code == 0 and "No regressions." in r.out, r.out + r.err
    # searched without the earlier questions, follow-ups lose their article
    monkeypatch.setattr("ragrail.system.query.search_query", lambda q, earlier: q)
    r = cli("run", cwd=chat_example)
    assert r.code == 1
    assert worse(r.out) and not any(" turn 1:" in ln for ln in worse(r.out)), r.out


@pytest.mark.parametrize("kind", ["python", "http"])
def test_kitebase_chat_own_bot_scores_as_the_standin_and_a_turn_2_regression_exits_1(
    cli, chat_example, monkeypatch, kind
) -> None:
    cfg = chat_example / "ragrail.toml"
    standin = chat_example / "standin.json"
    assert cli("run", "--json", str(standin), cwd=chat_example).code == 0
    server = None
    if kind == "python":
        system = '[system]\nkind = "python"\ntarget = "kbchat_bot:answer"\n'
    else:
        monkeypatch.syspath_prepend(str(chat_example))
        server = _BotService()
        system = f'[system]\nkind = "http"\nurl = "{server.url}"\n'
    cfg.write_text(cfg.read_text().split("[pipeline]")[0] + system)
    (chat_example / "baseline.json").unlink()
    try:
        own = chat_example / "own.json"
        r = cli("run", "--save-baseline", "--json", str(own), cwd=chat_example)
        assert r.code == 0, r.out + r.err
        mine, theirs = cases_of(own), cases_of(standin)
        assert list(mine) == list(theirs)
        for case_id, case in mine.items():
            assert case["answer_pass"] == theirs[case_id]["answer_pass"], case_id
            assert case["retrieval_hit"] == theirs[case_id]["retrieval_hit"], case_id
        monkeypatch.setenv("KBCHAT_BROKEN", "1")
        r = cli("run", cwd=chat_example)
    finally:
        if server is not None:
            server.close()
    assert r.code == 1, r.out + r.err
    lines = _turn_2_regressions(r.out)
    assert any("invite-expiry turn 2" in ln and "7 days" in ln for ln in lines), r.out


class _BotService:
    """kbchat_bot.answer behind HTTP on 127.0.0.1, the history read from the body."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                import kbchat_bot  # type: ignore[import-not-found]

                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                reply = kbchat_bot.answer(body["question"], body.get("history") or [])
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chat"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_kitebase_chat_on_the_fake_model_server_a_turn_2_regression_exits_1(
    cli, chat_example, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    flags = ["--answerer", "openai", "--model", "chat-model", "--no-cache"]

    def broken(req: Received) -> Reply:
        if len(req.history) == 1:
            return Reply(text="Sorry, I can't help with that.")
        return paste_top_chunk(req)

    (chat_example / "baseline.json").unlink()
    with FakeLLM(paste_top_chunk) as fake:
        r = cli("run", *flags, "--base-url", fake.openai_url, "--save-baseline", cwd=chat_example)
        assert r.code == 0, r.out + r.err
        # every turn after the first came with the turns before it, as chat messages
        later = [c for c in fake.received if c.history]
        assert later and all(len(c.body["messages"]) == 2 * len(c.history) + 1 for c in later)
        # third turns carry two; the one fourth turn finds no passage and never calls
        assert max(len(c.history) for c in fake.received) == 2
    with FakeLLM(broken) as fake:
        r = cli("run", *flags, "--base-url", fake.openai_url, cwd=chat_example)
    assert r.code == 1, r.out + r.err
    lines = _turn_2_regressions(r.out)
    assert any("invite-expiry turn 2" in ln for ln in lines), r.out
