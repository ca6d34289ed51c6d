"""The charts in a real headless Chromium: the report's trends and the online page's
signals and A/B bars are drawn (one point per run / week), read with scripts off, turn
light on a dark page, and hostile text in their labels runs nothing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ragrail.online.store import LogStore
from ragrail.store.history import RunRow
from tests.online.synth import Truth, synth

EVIL = '<img src=x onerror="window.__xss = 1"><script>window.__xss = 2</script>'




@pytest.fixture
def scheme(browser):
    """Set the page's prefers-color-scheme (and scripts on/off); reset afterwards."""

    def set_to(dark: bool = False, scripts: bool = True) -> None:
        value = "dark" if dark else "light"
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": value}]},
        )
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not scripts})

    yield set_to
    set_to()


def drawn_points(driver, chart: str, series: str | None = None) -> list:
    where = f" g.series[data-name='{series}']" if series is not None else ""
    found = driver.find_elements("css selector", f"[data-series='{chart}']{where} .point")
    for el in found:  # drawn on the page, not merely in the document
        assert el.size["width"] > 0 and el.size["height"] > 0
    return found


def rgb(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text[text.index("(") + 1 : text.index(")")].split(",")[:3])


def test_report_trends_a_point_per_run_changes_marked_readable_without_script(
    cli, tmp_path, browser, scheme
):
    for args in (("demo", "--top-k", "1"), ("demo", "--chunk-words", "50"), ("demo",)):
        assert cli(*args, cwd=tmp_path).code in (0, 1)
    out = tmp_path / "report.html"
    assert cli("report", "--example", "kitebase", "-o", str(out), cwd=tmp_path).code == 0

    scheme(scripts=False)  # the charts are read with no script at all
    browser.get(out.as_uri())
    assert browser.find_element("id", "shown-count").text == ""  # the page's script did not run
    for key in ("hit_rate", "recall", "answer_pass_rate"):
        assert len(drawn_points(browser, key)) == 3, key
    first = drawn_points(browser, "hit_rate")[0]
    assert first.get_attribute("data-x") == "#1"
    assert "run 1 (" in first.find_element("css selector", "title").get_attribute("textContent")
    chart = browser.find_element("css selector", "[data-series='hit_rate']")
    # each run's settings differ from the one before it: top_k 1 -> 3 and chunking back
    assert len(chart.find_elements("css selector", "g.change")) == 2
    notes = [li.text for li in chart.find_elements("css selector", ".chart-notes li")]
    assert len(notes) == 2 and "top_k 1 -> 3" in notes[0]
    assert chart.find_elements("css selector", ".band")  # the intervals, shaded
    light = rgb(browser.execute_script(
        "return getComputedStyle(document.querySelector('#trend svg.plot')).color"))  # fmt: skip

    scheme(dark=True)
    browser.get(out.as_uri())
    dark = rgb(browser.execute_script(
        "return getComputedStyle(document.querySelector('#trend svg.plot')).color"))  # fmt: skip
    background = rgb(
        browser.execute_script("return getComputedStyle(document.body).backgroundColor")
    )
    assert sum(light) < 200 and sum(dark) > 600 and sum(background) < 100  # light on dark
    assert len(drawn_points(browser, "hit_rate")) == 3


def test_hostile_settings_in_the_trend_labels_run_nothing(tmp_path, browser):
    from ragrail.reports.html import html_report
    from tests.factories import run_result

    run = run_result([])
    config = {"chunking": "c", "top_k": 3, "retriever": "r", "answerer": "a", "model": "m"}
    stats = {"hit_rate": {"value": 0.5, "low": 0.3, "high": 0.7, "n": 10}}
    history = [
        RunRow(1, "2026-12-01", "n", None, False, config, {"stats": stats}, None),
        RunRow(2, EVIL, EVIL, None, False, {**config, "model": EVIL}, {"stats": stats}, None),
    ]
    out = tmp_path / "report.html"
    out.write_text(html_report(run, None, history), encoding="utf-8")
    browser.get(out.as_uri())
    assert len(drawn_points(browser, "hit_rate")) == 2
    note = browser.find_element("css selector", "[data-series='hit_rate'] .chart-notes li").text
    assert note == f"\u0394 #2: model m -> {EVIL}"  # shown as text
    assert browser.execute_script("return window.__xss === undefined")
    assert browser.find_elements("css selector", "#trend img, #trend script") == []


def test_online_page_signals_a_point_per_week_ab_bars_and_hostile_versions(cli, tmp_path, browser):
    log = synth({"v1": (600, Truth()), EVIL: (600, Truth(escalation=0.3))}, seed=7)
    log[0] = replace(log[0], flags=("unfaithful",), question=EVIL)
    db = tmp_path / "logs.sqlite"
    with LogStore(db) as store:
        store.add(log)
    page, data = tmp_path / "online.html", tmp_path / "online.json"
    r = cli("online", "--db", str(db), "--compare", "v1", EVIL, "--json", str(data),
            "--html", str(page))  # fmt: skip
    assert r.code == 0, r.err
    periods = json.loads(data.read_text())["periods"]
    browser.get(page.as_uri())

    for signal in ("escalation", "thumbs_down", "latency_p95"):
        for version in ("v1", EVIL):
            weeks = [
                p["period"]
                for p in periods
                if p["version"] == version and p["signals"][signal]["value"] is not None
            ]
            assert len(weeks) >= 4
            chart = browser.find_element("css selector", f"[data-series='{signal}']")
            series = [
                g
                for g in chart.find_elements("css selector", "g.series")
                if g.get_attribute("data-name") == version
            ]
            assert len(series) == 1, (signal, version)
            drawn = series[0].find_elements("css selector", ".point")
            assert [p.get_attribute("data-x") for p in drawn] == weeks
    legend = browser.find_element("css selector", "[data-series='escalation'] .legend").text
    assert EVIL in legend  # the version's name, as text

    ab = browser.find_element("id", "ab-charts")
    rows = json.loads(data.read_text())["compare"]["rows"]
    bars = ab.find_elements("css selector", "rect.bar")
    assert len(bars) == 2 * len(rows) and all(b.size["width"] >= 1 for b in bars)
    assert [b.get_attribute("data-arm") for b in bars[:2]] == ["A v1", f"B {EVIL}"]
    assert browser.execute_script("return window.__xss === undefined")
    assert browser.execute_script("return document.images.length") == 0
    assert browser.execute_script("return document.scripts.length") == 0
