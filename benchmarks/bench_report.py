"""The HTML report at scale: 2,000 questions, its size, and how long headless Chromium
takes to open it (navigation start to the load event, the filters' script included).

    python benchmarks/bench_report.py [--questions 2000]

Needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)
and selenium for the timing; without them it reports the size only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_offline import build

from ragrail.reports.html import html_report
from ragrail.run import evaluate
from ragrail.system.answerers import StandinAnswerer
from ragrail.system.pipeline import Pipeline, PipelineSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        golden = build(folder, 20_000, args.questions)
        result = evaluate(
            "bench",
            golden,
            Pipeline(PipelineSettings(docs=folder, product="Bench")),
            StandinAnswerer(),
        )
        t0 = time.perf_counter()
        html = html_report(result)
        render_s = time.perf_counter() - t0
        out = folder / "report.html"
        out.write_text(html)
        size_mb = out.stat().st_size / 2**20
        print(f"questions        {args.questions:>8,}")
        print(f"render           {render_s:8.2f} s")
        print(f"size             {size_mb:8.2f} MB   (target < 10 MB)")
        load_s = browser_load_seconds(out, folder)
        if load_s is None:
            print("browser          skipped: chromium, chromedriver or selenium missing")
            sys.exit(0 if size_mb < 10 else 1)
        print(f"open in Chromium {load_s:8.2f} s    (target < 2 s; navigation start to load event)")
        sys.exit(0 if size_mb < 10 and load_s < 2 else 1)


def browser_load_seconds(page: Path, tmp: Path) -> float | None:
    from tests.browser import chrome

    driver = chrome(tmp / "ud")
    if driver is None:
        return None
    try:
        driver.get(page.as_uri())
        timing = driver.execute_script(
            "var t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime;"
        )
        shown = driver.find_element("id", "shown-count").text
        assert shown.endswith("questions"), shown  # the filter script ran
        return float(timing) / 1000
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
