"""Headless Chromium for the report tests and benchmark: Debian's chromium and chromedriver,
started with no background network traffic (this machine has no network to give it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest


def chrome(user_data_dir: Path) -> Any | None:
    """A Selenium Chrome driver, or None when chromium, chromedriver or selenium is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    if not (chromium and driver_path):
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--window-size=1200,1600",
        f"--user-data-dir={user_data_dir}",
    ):
        options.add_argument(arg)
    # An explicit driver path: Selenium Manager never tries to download one.
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A Chromium driver for a test module: skipped where none is installed, a failure
    where RAGRAIL_REQUIRE_BROWSER=1 (CI)."""
    driver = chrome(tmp_path_factory.mktemp("chrome"))
    if driver is None:
        if os.environ.get("RAGRAIL_REQUIRE_BROWSER") == "1":
            pytest.fail(
                "chromium, chromedriver and selenium are required here "
                "(apt-get install chromium chromium-driver)"
            )
        pytest.skip("chromium/chromedriver/selenium not installed")
    yield driver
    driver.quit()
