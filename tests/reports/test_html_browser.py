"""The HTML report in a real headless Chromium (Debian's chromium + chromedriver)."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "ci-artifacts"




def visible_cases(driver) -> list[str]:
    return [
        el.get_attribute("data-id")
        for el in driver.find_elements("css selector", "details.case")
        if el.is_displayed()
    ]


def test_report_scorecard_filter_drilldown_and_trend(cli, tmp_path, browser):
    for args in (("demo", "--top-k", "1"), ("demo", "--chunk-words", "50"), ("demo",)):
        assert cli(*args, cwd=tmp_path).code in (0, 1)
    out = tmp_path / "report.html"
    assert cli("report", "--example", "kitebase", "-o", str(out), cwd=tmp_path).code == 0
    browser.get(out.as_uri())

    value = {
        row.get_attribute("data-metric"): row.find_element("css selector", ".value").text
        for row in browser.find_elements("css selector", "#totals tr[data-metric]")
    }
    assert (
        value["hit_rate"] == "91%"
        and value["recall"] == "86%"
        and value["answer_pass_rate"] == "67%"
    )
    assert len(visible_cases(browser)) == 12

    browser.find_element("id", "f-failing").click()
    assert sorted(visible_cases(browser)) == sorted(
        ["lost-phone", "change-sign-in-email", "secure-account", "paraphrase"]
    )
    assert browser.find_element("id", "shown-count").text == "4 of 12 questions"

    case = browser.find_element("id", "case-lost-phone")
    case.find_element("css selector", "summary").click()
    assert case.get_attribute("open") is not None
    chunk = case.find_element("css selector", ".chunk[data-rank='2']")
    assert chunk.get_attribute("data-chunk") == "two-factor#2"
    marks = [m.text for m in chunk.find_elements("css selector", "mark.fact")]
    # the heading "Backup codes" and the body's "backup codes" are both the labelled fact
    assert [m.lower() for m in marks] == ["backup codes", "backup codes"]
    assert chunk.find_element("css selector", "mark.fact").is_displayed()

    # the trend charts have one point per recorded run
    series = browser.find_element("css selector", "[data-series='answer_pass_rate']")
    assert len(series.find_elements("css selector", "circle")) == 3

    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-lost-phone.png"))
    assert (ARTIFACTS / "report-lost-phone.png").stat().st_size > 10_000


def test_document_and_model_text_is_shown_never_run(cli, tmp_path, browser):
    dest = tmp_path / "kb"
    cli("example", "kitebase", str(dest))
    evil = dest / "docs" / "two-factor.md"
    evil.write_text(
        evil.read_text().replace(
            "Each one works once.",
            'Each one works once. <script>window.__xss = 1</script> <img src=x onerror="window.__xss = 2">',
        )
    )
    assert cli("run", "--no-history", "--json", str(tmp_path / "r.json"), cwd=dest).code in (0, 1)
    out = tmp_path / "report.html"
    assert (
        cli("report", "--from-json", str(tmp_path / "r.json"), "-o", str(out), cwd=dest).code == 0
    )
    html = out.read_text()
    assert (
        "<script>window.__xss" not in html
        and "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html
    )
    browser.get(out.as_uri())
    case = browser.find_element("id", "case-lost-phone")
    case.find_element("css selector", "summary").click()
    text = case.find_element("css selector", ".chunk[data-rank='2'] .text").text
    assert "<script>window.__xss = 1</script>" in text and "onerror" in text
    assert browser.execute_script("return window.__xss === undefined")
    assert browser.find_elements("css selector", "#cases img") == []
