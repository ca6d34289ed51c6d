"""``ragrail label`` without a browser: agreement between people (hand-computed), the
labels file and golden set writers, the server's refusals, and the CLI's."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ragrail.errors import InputError
from ragrail.judge.validate import load_labels
from ragrail.label.agreement import agreement, kappa_of, lines, weighted_kappa
from ragrail.label.storage import GoldenFile, LabelsFile
from tests.fake_llm import FakeLLM
from tests.label.common import KEY, RUBRIC, judged_run, scripted_judge

SCORES = [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.fixture(autouse=True)
def env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


# ---------------------------------------------------------------- agreement between people


def test_weighted_kappa_by_hand():
    # (1,1), (5,5), (1,5): rows 2/3 at 1, 1/3 at 5; columns 1/3 at 1, 2/3 at 5.
    # observed weighted disagreement: w(1,5) = 1, one pair of 3 -> 1/3;
    # expected: 1 * (2/3 * 2/3) + 1 * (1/3 * 1/3) = 5/9; kappa_w = 1 - (1/3)/(5/9) = 0.4
    assert weighted_kappa([(1, 1), (5, 5), (1, 5)], SCORES) == pytest.approx(0.4)
    # with only the extreme scores the weights are 0/1: Cohen's kappa, (2/3 - 4/9)/(5/9)
    assert kappa_of([(1.0, 1.0), (0.0, 0.0), (1.0, 0.0)], "pass_fail") == pytest.approx(0.4)
    # (1,2), (3,3): observed w(1,2)/2 = 1/32; expected (1/16 + 4/16 + 1/16)/4 = 3/32 -> 2/3
    assert weighted_kappa([(1, 2), (3, 3)], SCORES) == pytest.approx(2 / 3)
    # both people gave one score throughout: chance disagreement is 0, kappa undefined
    assert weighted_kappa([(4, 4), (4, 4)], SCORES) is None
    assert weighted_kappa([], SCORES) is None


def test_people_agreement_beside_the_judge_and_the_disagreements():
    ana = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0, "e": 1.0}
    bo = {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0, "x": 1.0}  # "e" and "x" not shared
    judge = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0, "e": 1.0}
    found = agreement("polite", "pass_fail", ("ana", "bo"), ana, bo, judge)
    assert found.n == 4 and found.agreement == pytest.approx(0.75)
    # people: p_o = 3/4; ana passes 2/4, bo 1/4: p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2 -> 0.5
    assert found.kappa == pytest.approx(0.5)
    assert found.kappa_ci is not None and found.kappa_ci[0] <= 0.5 <= found.kappa_ci[1]
    # judge vs ana on a-d: p_o = 3/4, p_e = 3/4 * 1/2 + 1/4 * 1/2 = 1/2 -> 0.5
    # judge vs bo: p_o = 2/4, p_e = 3/4 * 1/4 + 1/4 * 3/4 = 3/8 -> (1/2 - 3/8)/(5/8) = 0.2
    assert found.judge_kappa == pytest.approx((0.5, 0.2))
    assert found.disagreements == [("b", 1.0, 0.0, 1.0)]
    shown = lines(found)
    assert "Cohen's kappa 0.50" in shown[1] and "judge vs bo 0.20" in shown[1]
    assert shown[-1] == "    b: ana pass, bo fail, judge pass"


# ---------------------------------------------------------------- the files


def test_labels_file_resumes_keeps_other_columns_and_refuses_another_persons(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('case_id,criterion,verdict,notes\nc1,polite,pass,"rude, then sorry"\n')
    labels = LabelsFile.open(path, "ana")
    assert labels.done() == {("c1", "polite"): "pass"}
    labels.set("c2", "polite", "fail")
    labels.set("c1", "polite", "fail")
    assert path.read_text() == (
        "case_id,criterion,verdict,notes,labeller\n"
        'c1,polite,fail,"rude, then sorry",ana\n'
        "c2,polite,fail,,ana\n"
    )
    assert [(lb.case_id, lb.human) for lb in load_labels(path)] == [("c1", 0.0), ("c2", 0.0)]
    labels.set("c2", "polite", None)
    assert [lb.case_id for lb in load_labels(path)] == ["c1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv"]  # no temp file left
    with pytest.raises(InputError, match="these are 'ana''s labels"):
        LabelsFile.open(path, "bo")
    # a broken file is refused as judge validate refuses it, before anything is added
    path.write_text("case_id,criterion,verdict\nc1,polite,maybe\n")
    with pytest.raises(InputError, match="verdict 'maybe'"):
        LabelsFile.open(path, "ana")


def test_labels_file_jsonl(tmp_path):
    path = tmp_path / "labels.jsonl"
    labels = LabelsFile.open(path, "ana")
    assert labels.done() == {}
    labels.set("c1", "helpful", "4")
    assert json.loads(path.read_text()) == {
        "case_id": "c1", "criterion": "helpful", "verdict": "4", "labeller": "ana",
    }  # fmt: skip
    assert load_labels(path)[0].human == 4.0


def test_golden_undo_only_while_nobody_changed_the_file(tmp_path):
    from ragrail.golden import Case

    path = tmp_path / "golden.json"
    path.write_text('[\n  {"id": "a", "question": "A?", "sources": [], "facts": []}\n]\n')
    before = path.read_text()
    gold = GoldenFile(path)
    gold.add(Case.model_validate({"id": "b", "question": "B?", "sources": []}))
    assert [c.id for c in gold.load().cases] == ["a", "b"]
    assert gold.undo() == "b" and path.read_text() == before and gold.undo() is None
    gold.add(Case.model_validate({"id": "b", "question": "B?", "sources": []}))
    path.write_text(path.read_text().replace('"A?"', '"A again?"'))
    with pytest.raises(InputError, match="changed since 'b' was added"):
        gold.undo()


# ---------------------------------------------------------------- the server


def late_refund(cli, tmp_path: Path) -> Path:
    dest = tmp_path / "lr"
    assert cli("example", "late-refund", str(dest)).code == 0
    (dest / "ragrail.toml").write_text((dest / "ragrail.toml").read_text() + RUBRIC)
    return dest


def call(url: str, path: str, body=None, headers=None, token: str | None = None):
    base = url.split("/?")[0]
    sent = {"Content-Type": "application/json", **(headers or {})}
    if token:
        sent["X-Ragrail-Token"] = token
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read()), r.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def test_the_server_refuses_without_the_token_and_finishes_with_two_labellers(
    cli, tmp_path, monkeypatch
):
    from ragrail.app.label import start_validation
    from ragrail.flags import Overrides

    dest = late_refund(cli, tmp_path)
    monkeypatch.chdir(dest)
    run = tmp_path / "run.json"
    judged_run(run)
    bo = tmp_path / "labels-bo.csv"
    # bo labelled 0-5 (fails 0, 2, 3); ana below fails 0, 2, 5
    bo.write_text(
        "case_id,criterion,verdict,labeller\n"
        + "".join(f"case-0{i},polite,{'fail' if i in (0, 2, 3) else 'pass'},bo\n" for i in range(6))
    )
    with FakeLLM(scripted_judge) as fake:
        over = Overrides(judge="claude", judge_base_url=fake.url)
        session = start_validation(
            tmp_path / "labels.csv", "ana", str(run), overrides=over, compare=[bo]
        )
        token = session.server.token
        result: list = []
        thread = threading.Thread(target=lambda: result.append(session.serve()), daemon=True)
        thread.start()
        assert call(session.url, "/api/state")[0] == 403
        assert call(session.url, "/api/state", token="x" * len(token))[0] == 403
        assert (
            call(session.url, "/api/state", headers={"Host": "evil.example:80"}, token=token)[0]
            == 403
        )
        code, state, headers = call(session.url, "/api/state", token=token)
        assert code == 200 and len(state["items"]) == 10
        assert "judge" not in state["items"][0]  # not sent before the person answers
        assert headers["X-Content-Type-Options"] == "nosniff"
        # a form post (no JSON type) is refused even with the token
        assert (
            call(session.url, "/api/act", {"op": "label"}, {"Content-Type": "text/plain"}, token)[0]
            == 415
        )
        assert (
            call(session.url, "/api/act", {"op": "label", "index": 0, "verdict": "3"}, token=token)[
                0
            ]
            == 400
        )
        assert (
            call(
                session.url,
                "/api/act",
                {"op": "label", "index": 99, "verdict": "pass"},
                token=token,
            )[0]
            == 400
        )
        for i in range(6):
            verdict = "fail" if i in (0, 2, 5) else "pass"
            code, shown, _ = call(session.url, "/api/act", {"op": "label", "index": i, "verdict": verdict}, token=token)  # fmt: skip
            assert code == 200 and shown["item"]["judge"] == ("fail" if i in (2, 5) else "pass")
        code, done, _ = call(session.url, "/api/finish", {}, token=token)
        thread.join(10)
    assert code == 200 and result == [done] and not thread.is_alive()
    text = "\n".join(done["lines"])
    # ana vs bo over 6: agree on 0, 1, 2, 4 -> 4/6; ana passes 3/6, bo 3/6: p_e = 1/2,
    # kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert "People on 'polite': ana vs bo over 6 shared answers" in text
    assert "agreement 67%; Cohen's kappa 0.33" in text
    assert "case-03: ana pass, bo fail, judge pass" in text
    assert "case-05: ana fail, bo pass, judge fail" in text
    [crit] = done["criteria"]
    # ana vs the judge: agree on 1-5 (5/6); ana passes 3/6, the judge 4/6: p_e = 1/2 -> 2/3
    assert crit["n"] == 6 and crit["kappa"] == pytest.approx(2 / 3, abs=1e-4)
    assert "judge vs ana 0.67, judge vs bo 0.00" in text  # bo: p_o 1/2, p_e 1/2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--labeller", "ana"], "give --run and --labels"),
        (["--labeller", "ana", "--run", "r.json"], "needs both --run and --labels"),
        (["--labeller", "ana", "--sample", "s.csv", "--run", "r.json"], "give --run and --labels"),
        (["--labeller", " ", "--sample", "s.csv"], "--labeller: a name"),
        (["--labeller", "ana", "--sample", "s.csv", "--host", "0.0.0.0"], "--allow-remote"),
    ],
)
def test_cli_refusals_are_one_line_exit_2(cli, tmp_path, args, message):
    dest = late_refund(cli, tmp_path)
    (dest / "s.csv").write_text("id,question,answer,contexts\nc1,Q?,A,[]\n")
    r = cli("label", *args, cwd=dest)
    assert r.code == 2 and message in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_a_run_without_judged_answers_or_someone_elses_labels_is_exit_2(cli, tmp_path):
    dest = late_refund(cli, tmp_path)
    assert cli("run", "--json", "plain.json", "--no-history", cwd=dest).code == 0
    r = cli("label", "--labeller", "ana", "--run", "plain.json", "--labels", "l.csv", "--judge", "claude", cwd=dest)  # fmt: skip
    assert r.code == 2 and "no judged answers" in r.err, r.err
    judged_run(dest / "run.json")
    (dest / "l.csv").write_text("case_id,criterion,verdict,labeller\ncase-00,polite,pass,bo\n")
    r = cli("label", "--labeller", "ana", "--run", "run.json", "--labels", "l.csv", "--judge", "claude", cwd=dest)  # fmt: skip
    assert r.code == 2 and "'bo''s labels" in r.err, r.err
    (dest / "l.csv").write_text("case_id,criterion,verdict\nother,polite,pass\n")
    r = cli("label", "--labeller", "ana", "--run", "run.json", "--labels", "l.csv", "--judge", "claude", cwd=dest)  # fmt: skip
    assert r.code == 2 and "no judged answer for" in r.err, r.err


def test_golden_cases_from_the_log_database_record_where_they_came_from(cli, tmp_path):
    from ragrail.app.label import start_golden
    from ragrail.online.record import Context, Conversation
    from ragrail.online.store import LogStore

    dest = tmp_path / "kb"
    assert cli("example", "kitebase", str(dest)).code == 0
    text = (dest / "docs" / "invite-teammates.md").read_text()
    logged = Conversation(
        id="conv-7", at=1_714_550_400.0, version="v2", question="Do invites expire?",
        answer="No idea.", contexts=(Context("invite-teammates#1", "invite-teammates", text),),
        thumbs=-1,
    )  # fmt: skip
    db = dest / ".ragrail" / "logs.sqlite"
    with LogStore(db) as store:
        store.add([logged])
    session = start_golden(None, "ana", from_logs=5, config=dest / "ragrail.toml")
    assert (session.total, session.done_before) == (1, 0)
    token = session.server.token
    thread = threading.Thread(target=session.serve, daemon=True)
    thread.start()
    # a fact not in the chosen source: lint's problem comes back, nothing is written
    save = {"op": "save", "index": 0, "facts": ["never said"], "sources": ["invite-teammates"]}
    code, shown, _ = call(session.url, "/api/act", save, token=token)
    assert code == 200 and shown["problems"] == ['fact "never said" not found in invite-teammates']
    fact = text.split(".")[0].split()[-2]
    save["facts"] = [fact]
    code, shown, _ = call(session.url, "/api/act", save, token=token)
    assert code == 200 and shown["case"] == "log-conv-7", shown
    assert call(session.url, "/api/finish", {}, token=token)[0] == 200
    thread.join(10)
    with LogStore(db, create=False) as store:
        [(case_id, conversation_id, _, _)] = store.golden_from_log()
    assert (case_id, conversation_id) == ("log-conv-7", "conv-7")
    assert cli("lint", cwd=dest).code == 0
    # started again, the conversation is already a case: nothing left to label
    again = start_golden(None, "ana", from_logs=5, config=dest / "ragrail.toml")
    assert (again.total, again.done_before) == (1, 1)
    again.server.httpd.server_close()
