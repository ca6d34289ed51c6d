"""``ragrail label`` in a real headless Chromium, driven by the keyboard as a person would:
a validation queue killed half-way and finished after a restart, golden cases made by
selecting text, and hostile text that is shown, never run."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ragrail.judge.validate import load_labels
from ragrail.online.record import Context, Conversation
from ragrail.online.store import LogStore
from tests.fake_llm import FakeLLM
from tests.label.common import HOSTILE, KEY, RUBRIC, Labeller, judged_run, scripted_judge


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def wait(browser, condition, timeout: float = 15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(lambda d: condition(d))


def open_page(browser, url: str) -> None:
    browser.get(url)
    wait(browser, lambda d: d.find_element("tag name", "body").get_attribute("data-ready"))


def press(browser, key: str) -> None:
    browser.find_element("tag name", "body").send_keys(key)


def progress(browser) -> str:
    return browser.find_element("id", "progress").text


def late_refund(cli, tmp_path: Path, extra: str = RUBRIC) -> Path:
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    cfg = dest / "ragrail.toml"
    cfg.write_text(cfg.read_text() + "\n" + extra)
    return dest


# the person's verdicts: they fail 0, 2, 5 and 9 (the judge fails 2, 5 and 8)
HUMAN = {i: i not in (0, 2, 5, 9) for i in range(10)}


def test_ten_answers_by_keyboard_killed_half_way_then_finished(cli, tmp_path, browser):
    dest = late_refund(cli, tmp_path)
    run, labels = tmp_path / "run.json", tmp_path / "labels.csv"
    judged_run(run)
    with FakeLLM(scripted_judge) as fake:
        args = [
            "--run", str(run), "--labels", str(labels), "--labeller", "ana",
            "--judge", "claude", "--judge-base-url", fake.url,
        ]  # fmt: skip
        first = Labeller(args, dest)
        try:
            open_page(browser, first.url)
            assert progress(browser) == "0 / 10 done"
            for i in range(5):
                item = browser.find_element("id", "item")
                assert item.get_attribute("data-index") == str(i)
                # the judge's verdict stays hidden until the person has answered
                assert browser.find_element("id", "judge").text == "judge: hidden until you answer"
                press(browser, "p" if HUMAN[i] else "f")
                wait(browser, lambda d, n=i + 1: progress(d) == f"{n} / 10 done")
            # the banner shows the last answer's judge verdict beside the person's
            assert (
                "case-04 · polite: you pass, judge pass" in browser.find_element("id", "last").text
            )
        finally:
            first.kill()  # a crash: no chance to flush anything
        assert {(lb.case_id, lb.human) for lb in load_labels(labels)} == {
            (f"case-{i:02d}", float(HUMAN[i])) for i in range(5)
        }

        second = Labeller(args, dest)
        assert "Labelling 5 of 10 answers (5 done before)" in "".join(second.head)
        open_page(browser, second.url)
        assert progress(browser) == "5 / 10 done"
        assert browser.find_element("id", "item").get_attribute("data-index") == "5"
        # a wrong key, undone: the file never keeps it
        press(browser, "p")
        wait(browser, lambda d: progress(d) == "6 / 10 done")
        press(browser, "u")
        wait(browser, lambda d: progress(d) == "5 / 10 done")
        assert browser.find_element("id", "item").get_attribute("data-index") == "5"
        for i in range(5, 10):
            press(browser, "p" if HUMAN[i] else "f")
            wait(browser, lambda d, n=i + 1: progress(d) == f"{n} / 10 done")
        # going back shows a labelled answer with the judge's verdict (8: people pass it)
        press(browser, "k")
        assert browser.find_element("id", "item").get_attribute("data-index") == "8"
        assert "judge: fail (DISAGREES)" in browser.find_element("id", "judge").text
        assert browser.find_element("id", "alldone").is_displayed()
        press(browser, "q")
        wait(
            browser, lambda d: d.find_element("tag name", "body").get_attribute("data-finished"), 60
        )
        shown = browser.find_element("css selector", "#summary .criterion[data-criterion='polite']")
        page = {k: shown.get_attribute(f"data-{k}") for k in ("n", "agreement", "kappa")}
        halve = shown.get_attribute("data-labels_to_halve")
        summary = browser.find_element("css selector", "#summary pre").text
        code, out, err = second.wait()
        assert code == 0, out + err

        # the labels file holds exactly what was entered, one row per answer, by ana
        rows = load_labels(labels)
        assert {(lb.case_id, lb.criterion, lb.human) for lb in rows} == {
            (f"case-{i:02d}", "polite", float(HUMAN[i])) for i in range(10)
        }
        assert len(rows) == 10
        assert all(line.endswith(",ana") for line in labels.read_text().splitlines()[1:])

        # judge validate on the file reports what the page reported
        out_json = tmp_path / "v.json"
        r = cli(
            "judge", "validate", "--labels", str(labels), "--run", str(run),
            "--judge", "claude", "--judge-base-url", fake.url, "--json", str(out_json),
            cwd=dest,
        )  # fmt: skip
        assert r.code == 0, r.out + r.err
    [crit] = json.loads(out_json.read_text())["criteria"]
    assert int(page["n"]) == crit["n"] == 10
    # by hand: agree on 1, 3, 4, 6, 7 and on 2, 5 (both fail): 7 of 10
    assert float(page["agreement"]) == pytest.approx(crit["agreement"]) == pytest.approx(0.7)
    assert float(page["kappa"]) == pytest.approx(crit["kappa"], abs=1e-4)
    # p_o = 0.7; people pass 6/10, judge 7/10: p_e = 0.6*0.7 + 0.4*0.3 = 0.54
    assert crit["kappa"] == pytest.approx((0.7 - 0.54) / (1 - 0.54))
    assert f"Cohen's kappa {crit['kappa']:.2f}" in summary
    assert "more labels would halve it" in summary and halve is not None
    assert "corrected polite pass rate" in summary and "corrected total" in out


def test_hostile_text_in_answers_and_passages_runs_no_script(cli, tmp_path, browser):
    dest = late_refund(cli, tmp_path)
    run, labels = tmp_path / "run.json", tmp_path / "labels.jsonl"
    judged_run(run, hostile=True)
    args = ["--run", str(run), "--labels", str(labels), "--labeller", "<b>ana</b>"]
    proc = Labeller([*args, "--judge", "claude", "--judge-base-url", "http://127.0.0.1:9"], dest)
    try:
        # without the token: refused, whatever the path
        base = proc.url.split("/?")[0]
        for path in ("/", "/api/state", "/?token=wrong"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path, timeout=10)
            assert refused.value.code == 403
        with urllib.request.urlopen(proc.url, timeout=10) as page:
            policy = page.headers["Content-Security-Policy"]
            html = page.read().decode()
        assert "script-src 'nonce-" in policy and "unsafe-inline" not in policy
        assert "default-src 'none'" in policy and "<b>ana</b>" not in html

        open_page(browser, proc.url)
        item = browser.find_element("id", "item")
        assert HOSTILE in item.text  # shown as text, question, answer and passage alike
        assert item.text.count("<script>window.__xss = 1</script>") == 3
        press(browser, "p")
        wait(browser, lambda d: progress(d) == "1 / 10 done")
        press(browser, "k")
        assert browser.execute_script("return window.__xss === undefined")
        assert browser.find_elements("css selector", "#item img, #item script") == []
        assert "<b>ana</b>" in browser.title
    finally:
        proc.kill()
    assert load_labels(labels)[0].case_id == "case-00"
    # only the labels file was written beside the run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.jsonl", "lr", "run.json"]


def kitebase_logs(cli, tmp_path: Path) -> Path:
    """The Kitebase example with three logged conversations, each quoting one document."""
    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    docs = {
        name: (dest / "docs" / f"{name}.md").read_text()
        for name in ("invite-teammates", "export-data", "sso")
    }
    questions = {
        "invite-teammates": "Do invitations to my team ever expire?",
        "export-data": "Which format does the data export come in?",
        "sso": "Which identity providers does single sign-on work with?",
    }
    conversations = [
        Conversation(
            id=f"conv-{k}",
            at=1_714_550_400.0 + k,
            version="v2",
            question=questions[name],
            answer="I am not sure. " + HOSTILE,
            contexts=(Context(f"{name}#1", name, docs[name] + " " + HOSTILE),),
            thumbs=-1,
        )
        for k, name in enumerate(docs)
    ]
    with LogStore(dest / ".ragrail" / "logs.sqlite") as store:
        store.add(conversations)
    return dest


def select(browser, element, text: str) -> None:
    """Select ``text`` inside ``element`` as a mouse drag would."""
    browser.execute_script(
        """
        const [box, wanted] = arguments;
        const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const at = n.textContent.indexOf(wanted);
          if (at >= 0) {
            const r = document.createRange(); r.setStart(n, at); r.setEnd(n, at + wanted.length);
            const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); return;
          }
        }
        throw new Error("not found: " + wanted);
        """,
        element,
        text,
    )


def test_three_golden_cases_made_by_selecting_text_pass_lint_and_are_scored(cli, tmp_path, browser):
    dest = kitebase_logs(cli, tmp_path)
    assert cli("sample", "-n", "3", "-o", "label.csv", cwd=dest).code == 0
    before = (dest / "golden.json").read_text()
    proc = Labeller(["--sample", "label.csv", "--labeller", "ana"], dest)
    try:
        open_page(browser, proc.url)
        assert browser.execute_script("return window.__xss === undefined")
        made = []
        for n in range(3):
            item = browser.find_element("id", "item")
            passage = item.find_element("css selector", ".passage[data-n='1'] .text")
            words = passage.text.split(".")[0].split()  # the document's first sentence
            fact = " ".join(words[-3:]) if len(words) >= 3 else words[-1]
            select(browser, passage, fact)
            press(browser, "f")
            wait(browser, lambda d, f=fact: f in d.find_element("id", "facts").text)
            source = browser.find_element("css selector", ".passage[data-n='1']").get_attribute(
                "data-source"
            )
            assert source in browser.find_element("id", "sources").text
            if n == 0:
                press(browser, "a")  # expect: answer, said out loud
            press(browser, "\ue007")  # Enter: the case is appended
            wait(browser, lambda d, k=n + 1: progress(d) == f"{k} / 3 done")
            made.append((fact, source))
        press(browser, "q")
        wait(browser, lambda d: d.find_element("tag name", "body").get_attribute("data-finished"))
        code, out, err = proc.wait()
        assert code == 0, out + err
    finally:
        if proc.proc.poll() is None:
            proc.kill()
    assert browser.execute_script("return window.__xss === undefined")
    golden = json.loads((dest / "golden.json").read_text())
    assert (dest / "golden.json").read_text().startswith(before.rstrip()[:-1].rstrip())
    new = golden[-3:]
    assert [c["provenance"]["conversation"] for c in new] == ["conv-0", "conv-1", "conv-2"]
    assert {(c["facts"][0], c["sources"][0]) for c in new} == set(made)
    assert new[0]["expect"] == "answer" and all(c["provenance"]["labeller"] == "ana" for c in new)
    r = cli("lint", cwd=dest)
    assert r.code == 0, r.out + r.err
    r = cli("run", "--json", "results.json", cwd=dest)
    assert r.code in (0, 1), r.out + r.err
    results = {c["id"]: c for c in json.loads((dest / "results.json").read_text())["cases"]}
    for c in new:
        scored = results[c["id"]]
        assert scored["answer_pass"] is not None and scored["retrieval_hit"] is not None
