"""Errors are in the verdict: no output says "no regressions" for a run with errors,
and headline rates count errors as not passing."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ragrail.diff import compare
from ragrail.records.results import JudgeResult
from ragrail.reports.html import html_report
from ragrail.reports.junit import junit_xml
from ragrail.reports.markdown import markdown_summary
from ragrail.reports.terminal import diff_text, scorecard, totals_lines
from tests.test_diff import case, errored, run


def broken_run():
    """a passed in the baseline and errors now; b is unchanged."""
    base = run([case("a", 1.0, True), case("b", 1.0, True)])
    new = run([errored("a", "HTTP 500"), case("b", 1.0, True)])
    return new, compare(new, base)


def judged_run():
    base = run([case("a", 1.0, True)])
    now = case("a", 1.0, True)
    now.judge = JudgeResult(errors=["faithfulness: unparseable reply"])
    new = run([now])
    return new, compare(new, base)


def test_terminal_diff_names_the_error_and_never_says_no_regressions():
    _, diff = broken_run()
    text = diff_text(diff)
    assert "  ERROR:  a: passed in the baseline, now errors: HTTP 500" in text.splitlines()
    assert "No regressions" not in text
    verdict = text.split("\n\n")[-1]
    assert verdict.startswith("1 question passed in the baseline and now errors: a run with")
    _, judged = judged_run()
    assert "No regressions" not in diff_text(judged)
    assert "The judge failed on 1 question" in diff_text(judged)


def test_markdown_title_says_a_baseline_passing_question_errored():
    new, diff = broken_run()
    text = markdown_summary(new, diff)
    assert text.splitlines()[0] == (
        "## ragrail: t: 1 question passed in the baseline and now errors"
    )
    assert "no regressions" not in text
    assert "| `a` | passed in the baseline, now errors: HTTP 500 |" in text
    assert text.index("### Errors") < text.index("### Totals")
    assert "2 questions; 1 of 2 answers pass (1 lost to errors); 1 question errored." in text
    judged, jdiff = judged_run()
    assert markdown_summary(judged, jdiff).startswith(
        "## ragrail: t: the judge failed on 1 question\n"
    )
    # without a baseline, the title still says the run had errors
    assert markdown_summary(new).startswith("## ragrail: t: 1 question failed to run\n")


def test_junit_lists_errors_and_judge_errors_as_error_elements():
    new, diff = broken_run()
    root = ET.fromstring(junit_xml(new, diff))
    assert root.get("errors") == "1" and root.get("failures") == "0"
    a = next(c for c in root.iter("testcase") if c.get("name") == "a")
    assert a.find("error").get("message") == "passed in the baseline, now errors: HTTP 500"
    judged, jdiff = judged_run()
    root = ET.fromstring(junit_xml(judged, jdiff))
    error = root.find("testsuite/testcase/error")
    assert root.get("errors") == "1" and error.get("type") == "judge-error"
    assert error.get("message") == "judge: faithfulness: unparseable reply"


def test_html_header_and_diff_say_errors_not_no_regressions():
    new, diff = broken_run()
    page = html_report(new, diff)
    assert "No regressions" not in page
    assert (
        "<p id='verdict' class='worse'>1 question passed in the baseline and now errors.</p>"
        in page
    )
    assert "<li class='error'>ERROR:  a: passed in the baseline, now errors: HTTP 500</li>" in page
    clean = run([case("a", 1.0, True)])
    assert "No regressions" in html_report(clean, compare(clean, clean))


def test_headline_rates_show_errors_apart():
    # the run: its one model call failed, a no-facts question passes without one
    new = run([errored("e"), case("n", None, True)])
    lines = totals_lines(new)
    answers = next(ln for ln in lines if ln.lstrip().startswith("answers pass"))
    assert answers.split()[2] == "50%" and answers.endswith("n=2  (1 of 2, 1 error)")
    hit = next(ln for ln in lines if ln.lstrip().startswith("hit rate"))
    assert hit.split()[2] == "0%" and hit.endswith("n=1  (1 error)")
    every_call_failed = run([errored("e")])
    answers = next(ln for ln in totals_lines(every_call_failed) if "answers pass" in ln)
    assert answers.split()[2] == "0%" and answers.endswith("(0 of 1, 1 error)")
    assert "100%" not in scorecard(every_call_failed)


def test_the_diff_shows_errors_beside_the_rates():
    _, diff = broken_run()
    text = diff_text(diff)
    assert "  answers pass   100% -> 50% (1 error)" in text
    assert "  hit rate       100% -> 50% (1 error)" in text
