"""A self-contained HTML report: one file, no CDN, no network, opens from file://.

Every piece of document or model text is escaped on the server side with
``html.escape`` (after control characters and bidi overrides are made visible);
the page's small script only shows and hides elements, so nothing from a
document or an answer is ever parsed as HTML, run, or shown reordered.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragrail.diff import Diff, first_error, flips_text, pct, run_summary
from ragrail.records.results import CaseResult, RunResult, Stat
from ragrail.reports.conversations import cases_html
from ragrail.reports.html_style import CSS as CSS
from ragrail.reports.terminal.scorecard import retrieval_label
from ragrail.run import chunks_text
from ragrail.scoring.answers import citation_key, citations
from ragrail.scoring.citing import citations_note
from ragrail.store.history import RunRow
from ragrail.text.guard import escape
from ragrail.text.matching import contains

SCRIPT = """
(function () {
  var cases = Array.prototype.slice.call(document.querySelectorAll('details.case'));
  var failing = document.getElementById('f-failing'), worse = document.getElementById('f-worse');
  var cause = document.getElementById('f-cause'), tag = document.getElementById('f-tag');
  var count = document.getElementById('shown-count');
  function apply() {
    var shown = 0;
    cases.forEach(function (el) {
      var ok = (!failing.checked || el.dataset.status !== 'pass')
        && (!worse.checked || el.dataset.worse === '1')
        && (!cause.value || el.dataset.cause === cause.value)
        && (!tag.value || (' ' + el.dataset.tags + ' ').indexOf(' ' + tag.value + ' ') >= 0);
      el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + ' of ' + cases.length + ' questions';
  }
  [failing, worse, cause, tag].forEach(function (el) { el.addEventListener('change', apply); });
  apply();
})();
"""


def _num(value: float | None, as_pct: bool) -> str:
    if value is None:
        return "-"
    return f"{round(value * 100)}%" if as_pct else f"{value:.2f}"


def highlight(text: str, facts: Sequence[str]) -> str:
    """Escaped text with every occurrence of a labelled fact wrapped in <mark class="fact">,
    found by the scoring matcher and marked in the text as written."""
    from ragrail.text.matching import original_spans

    out, pos = [], 0
    for start, end in original_spans(facts, text):
        out.append(escape(text[pos:start]))
        out.append(f'<mark class="fact">{escape(text[start:end])}</mark>')
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


def _stat_row(label: str, stat: Stat | None, as_pct: bool, key: str) -> str:
    if stat is None:
        return ""
    interval = (
        f"{_num(stat.low, as_pct)} to {_num(stat.high, as_pct)}" if stat.low is not None else "-"
    )
    return (
        f'<tr data-metric="{key}"><td>{escape(label)}</td><td class="num value">{_num(stat.value, as_pct)}</td>'
        f'<td class="num">{interval}</td><td class="num">{stat.n}</td></tr>'
    )


def _scorecard(run: RunResult) -> str:
    st, k = run.totals.stats, run.config.top_k
    rows = [
        _stat_row(f"hit rate@{k}", st.get("hit_rate"), True, "hit_rate"),
        _stat_row(f"recall@{k}", st.get("recall"), True, "recall"),
        _stat_row("answers pass", st.get("answer_pass_rate"), True, "answer_pass_rate"),
        _stat_row("context precision", st.get("context_precision"), False, "context_precision"),
        _stat_row("MRR", st.get("mrr"), False, "mrr"),
        _stat_row("faithfulness", st.get("faithfulness"), False, "faithfulness"),
        _stat_row("correctness", st.get("correctness"), False, "correctness"),
    ]
    extra = []
    t = run.totals
    note = citations_note(run.config)
    if note is not None:
        extra.append(f"<p id='citations'>{escape(note[0].upper() + note[1:])}.</p>")
    if t.expected:
        from ragrail.scoring.behaviour import describe_counts

        counts = escape(describe_counts(t.expected))
        extra.append(f"<p id='expected'>Expected behaviour: {counts}.</p>")
    if t.n_errors:
        extra.append(
            f"<p class='error'>{t.n_errors} question(s) failed to run: never counted as passes.</p>"
        )
    if t.prompt_tokens_mean is not None:
        extra.append(
            f"<p class='muted'>~{round(t.prompt_tokens_mean)} prompt tokens per question.</p>"
        )
    if run.usage is not None:
        u = run.usage
        cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        extra.append(
            f"<p class='muted'>{u.calls} model calls made, {u.cached} cached, {u.errors} failed; "
            + (
                "tokens unknown (the server did not report usage)"
                if u.input_tokens is None or u.output_tokens is None
                else f"{u.input_tokens:,} tokens in, {u.output_tokens:,} out"
            )
            + f"; cost {escape(cost)}.</p>"
        )
    return (
        '<table id="totals"><thead><tr><th>total</th><th>value</th><th>95% interval</th>'
        "<th>questions</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + "".join(extra)
    )


def _diff(diff: Diff | None) -> str:
    if diff is None:
        return "<p class='muted'>No baseline to compare with.</p>"
    b, r = diff.baseline.totals, diff.run.totals
    out = [f"<p class='muted'>vs baseline ({escape(diff.baseline.config.describe())})</p><ul>"]
    out += [f"<li>changed: {escape(c)}</li>" for c in diff.config_changes]
    out.append(
        f"<li>hit rate {pct(b.hit_rate)} &rarr; {pct(r.hit_rate)}; recall {pct(b.recall)} &rarr; {pct(r.recall)}"
        + (
            f"; answers pass {pct(b.answer_pass_rate)} &rarr; {pct(r.answer_pass_rate)}"
            if diff.answers_compared
            else ""
        )
        + "</li>"
    )
    if diff.answers_note:
        out.append(f"<li>{escape(diff.answers_note)}</li>")
    if diff.answer_flips is not None and (diff.answer_flips.worse or diff.answer_flips.better):
        f = diff.answer_flips
        out.append(f"<li>{escape(flips_text(f))}</li>")
    if diff.set_test is not None:
        from ragrail.diff.noise import family_text

        out.append(f"<li>{escape(diff.set_test.text())}</li>")
        out.append(f"<li>{escape(family_text(diff.family, diff.n_tests, diff.floor))}</li>")
    out.append("</ul><ul id='changes'>")
    for change in diff.changes:
        cls = {
            "WORSE": "worse",
            "ERROR": "error",
            "fixed": "fixed",
            "lower": "lower",
            "noise": "lower",
            "stage": "lower",
        }[change.kind]
        out.append(f"<li class='{cls}'>{escape(change.line())}</li>")
    out.append("</ul>")
    summary = diff.summary()
    verdict = (
        f"<p class='worse'>{escape(summary[0].upper() + summary[1:])}.</p>"
        if diff.regressed or diff.has_errors
        else "<p class='pass'>No regressions.</p>"
    )
    return "".join(out) + verdict


def _verdict(run: RunResult, diff: Diff | None) -> str:
    """The page's first line: errors and regressions, or nothing to report."""
    summary = diff.summary() if diff is not None else run_summary(run)
    if not summary:
        return ""
    failed = diff is None or diff.regressed or diff.has_errors
    cls = "worse" if failed else "pass"
    return f"<p id='verdict' class='{cls}'>{escape(summary[0].upper() + summary[1:])}.</p>"


def _causes(run: RunResult) -> str:
    if not run.totals.causes:
        return "<p class='pass'>No failing questions.</p>"
    items = "".join(
        f"<li>{n} &times; {escape(cause)}</li>" for cause, n in run.totals.causes.items()
    )
    return f"<ul id='causes'>{items}</ul>"


# Above this many questions a passing question's drill-down leaves out what its reader
# rarely needs (chunk texts, prompt, claims): 20,000 questions in full made 63 MB.
FULL_DETAIL_UP_TO = 2_000
BRIEF_NOTE = (
    f"<p class='muted'>A passing question's chunk texts, prompt and claims are left out above "
    f"{FULL_DETAIL_UP_TO:,} questions; <code>ragrail report --full</code> keeps them.</p>"
)


def _case(case: CaseResult, worse_ids: set[str], fixed_ids: set[str], brief: bool = False) -> str:
    status = "error" if case.errored else ("pass" if case.answer_pass is not False else "fail")
    retrieval = retrieval_label(case)  # ERROR, not MISS, for a call that failed first
    answer = (
        {"pass": "pass", "fail": "FAIL", "error": "ERROR"}[status]
        if case.answer_runs or case.errored
        else "-"
    )
    if case.answer_runs > 1:
        answer = f"{case.answer_passes}/{case.answer_runs}"
    reason = first_error(case) if case.errored else "; ".join(case.problems)
    flags = (
        " <span class='worse'>WORSE</span>"
        if case.id in worse_ids
        else (" <span class='fixed'>fixed</span>" if case.id in fixed_ids else "")
    )
    brief = brief and status == "pass" and case.id not in worse_ids and case.id not in fixed_ids
    chunks = []
    for c in case.trace.retrieved:
        relevant = c.source in case.sources and any(contains(f, c.text) for f in case.facts)
        text = "" if brief else f"<div class='text'>{highlight(c.text, case.facts)}</div>"
        chunks.append(
            f"<div class='chunk{' relevant' if relevant else ''}' data-rank='{c.rank}' data-chunk='{escape(c.id)}'>"
            f"<div class='meta'>#{c.rank} <b>{escape(c.id)}</b> score {c.score:.3f}"
            f"{' (source article)' if c.source in case.sources else ''}</div>{text}</div>"
        )
    claims = "".join(
        f"<li class='{'supported' if cl.supported else 'unsupported'}'>{'&#10003;' if cl.supported else '&#10007;'} "
        f"{escape(cl.text)}{' <span class=muted>(' + escape(cl.reason) + ')</span>' if cl.reason else ''}</li>"
        for cl in case.claims
    )
    missed = "".join(
        f"<li>{escape(str(m.fact))}: {escape(m.where)} {escape(', '.join(m.chunks))}"
        f"{f' rank {m.rank}' if m.rank else ''}</li>"
        for m in case.missed_facts
    )
    facts = (
        ", ".join(f"<code>{escape(str(f))}</code>" for f in case.facts)
        or "<span class='muted'>none (should say it doesn't know)</span>"
    )
    detail = [
        f"<p><b>Question:</b> {escape(case.question)}</p>",
        f"<p><b>Facts:</b> {facts} &nbsp; <b>Sources:</b> {escape(', '.join(case.sources) or '-')}</p>",
        f"<p><b>Cause:</b> {escape(case.cause)}{': ' + escape(case.cause_detail) if case.cause_detail else ''}</p>"
        if case.cause
        else "",
        f"<h4>Retrieved chunks ({len(case.trace.retrieved)})</h4>"
        + ("".join(chunks) or "<p class='muted'>nothing retrieved</p>"),
        f"<h4>Where the missed facts are</h4><ul>{missed}</ul>" if missed else "",
        f"<h4>Prompt</h4><pre class='prompt'>{escape(case.trace.prompt)}</pre>"
        if case.trace.prompt and not brief
        else "",
        f"<h4>Answer</h4><pre class='answer'>{highlight(case.trace.answer or '', case.facts)}</pre>",
        _citations_html(case),
        f"<h4>Claims</h4><ul class='claims'>{claims}</ul>" if claims and not brief else "",
        _judge_html(case),
        f"<h4>Checks</h4><ul>{''.join(f'<li class=fail>{escape(p)}</li>' for p in case.problems) or '<li class=pass>all passed</li>'}</ul>",
    ]
    return (
        f"<details class='case' id='case-{escape(case.id)}' data-id='{escape(case.id)}' data-status='{status}' "
        f"data-worse='{1 if case.id in worse_ids else 0}' data-cause='{escape(case.cause or '')}' "
        f"data-tags='{escape(' '.join(case.tags))}'>"
        f"<summary><span class='id'>{escape(case.id)}{flags}</span><span>{retrieval}</span>"
        f"<span class='{status}'>{answer}</span><span class='reason'>{escape(reason or '')}</span></summary>"
        f"<div class='detail'>{''.join(detail)}</div></details>"
    )


def _citations_html(case: CaseResult) -> str:
    """The citations read in the answer, then those the system said it used (``cited``),
    each with the chunk it resolved to, so a citation the model wrote loosely
    (``[sso #1]``, ``【sso#1】``) can be checked."""
    if case.trace.answer is None or not case.sources:
        return ""
    given = {citation_key(c.id): c for c in case.trace.retrieved}
    items = []
    used = map(citation_key, case.trace.cited or ())
    ids = [c.id for c in case.trace.retrieved]  # [2] cites the second context
    for cid in dict.fromkeys([*citations(case.trace.answer, None, ids), *used]):
        chunk = given.get(cid)
        if chunk is None:
            items.append(f"<li class='fail'>{escape(cid)}: never given to the model</li>")
        else:
            article = "source article" if chunk.source in case.sources else "other article"
            items.append(
                f"<li>{escape(cid)}: {escape(chunk.id)}, rank {chunk.rank} ({article})</li>"
            )
    body = "".join(items) or "<li class='muted'>none read</li>"
    return f"<h4>Citations read</h4><ul class='citations'>{body}</ul>"


def _judge_html(case: CaseResult) -> str:
    j = case.judge
    if j is None:
        return ""
    parts = ["<h4>Judge</h4><ul class='judge'>"]
    parts += [f"<li class='fail'>judge error: {escape(e)}</li>" for e in j.errors]
    if j.faithfulness is not None:
        parts.append(
            f"<li>faithfulness {j.faithfulness:.2f}"
            f"{'' if j.faithfulness_stable else ' (unstable across repeats)'}</li>"
        )
    parts += [
        f"<li class='{'supported' if c.supported else 'unsupported fail'}'>"
        f"{'&#10003;' if c.supported else '&#10007;'} {escape(c.text)}"
        f"{' <span class=muted>(' + escape(c.chunk) + ')</span>' if c.chunk else ''}</li>"
        for c in j.claims
    ]
    parts += [
        f"<li>{escape(cr.name)}: {'pass' if cr.passed else 'fail'}"
        f"{'' if cr.score is None else f' ({cr.score:g}/5)'}{'' if cr.stable else ', unstable'}"
        f" <span class='muted'>{escape(cr.reason)}</span></li>"
        for cr in j.criteria
    ]
    parts.append("</ul>")
    return "".join(parts)


def html_report(
    run: RunResult,
    diff: Diff | None = None,
    history: Sequence[RunRow] = (),
    full: bool = False,
) -> str:
    """The report page. ``full``: every question's drill-down whole, however many."""
    from ragrail.reports.judged import judge_html

    brief = not full and len(run.cases) > FULL_DETAIL_UP_TO
    c = run.config
    worse_ids = {ch.case_id for ch in diff.worse} if diff else set()
    fixed_ids = {ch.case_id for ch in diff.fixed} if diff else set()
    causes = sorted({case.cause for case in run.cases if case.cause})
    tags = sorted({t for case in run.cases for t in case.tags})
    from ragrail.reports.trends import trend_charts

    charts = trend_charts(history)
    model = f" ({c.model})" if c.model else ""
    import base64
    import hashlib

    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        # no network: the page may not load anything, run only its own inline script
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{script_hash}'; img-src data:\">",
        f"<title>ragrail report: {escape(c.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(c.name)}</h1>",
        _verdict(run, diff),
        f"<p class='muted'>{escape(c.chunking)}, top_k={c.top_k}, retriever {escape(c.retriever)}, "
        f"{escape(chunks_text(c))}, {c.n_cases} questions. Answers from {escape(c.answerer_label)}{escape(model)}. "
        f"Run at {escape(run.created_at)}.</p>",
        "<h2>Scorecard</h2>",
        _scorecard(run),
        judge_html(run, diff),
        "<h2>Against the baseline</h2>",
        _diff(diff),
        "<h2>Why questions failed</h2>",
        _causes(run),
        "<h2>Over time</h2>",
        f"<div class='charts' id='trend'>{charts}</div>",
        "<h2>Questions</h2>",
        "<div class='filters'>"
        "<label><input type='checkbox' id='f-failing'> failing only</label>"
        "<label><input type='checkbox' id='f-worse'> regressions only</label>"
        "<label>cause <select id='f-cause'><option value=''>any</option>"
        + "".join(f"<option>{escape(x)}</option>" for x in causes)
        + "</select></label>"
        "<label>tag <select id='f-tag'><option value=''>any</option>"
        + "".join(f"<option>{escape(x)}</option>" for x in tags)
        + "</select></label>"
        "<span id='shown-count' class='muted'></span></div>",
        BRIEF_NOTE if brief else "",
        "<div id='cases'>"
        + cases_html(run.cases, lambda case: _case(case, worse_ids, fixed_ids, brief))
        + "</div>",
        f"<script>{SCRIPT}</script></body></html>",
    ]
    return "".join(parts) + "\n"
