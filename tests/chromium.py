"""Headless Debian Chromium for the browser tests, driven by Playwright for Python.

Playwright never downloads a browser here: it launches the system's ``chromium`` (or
``$CHROMIUM``; ``make chromium`` installs it as root with apt). Where Chromium is
missing, the browser tests skip with one line, except under ``CI=true``, where they fail.
"""

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Every Playwright wait and action waits for its event at most this long: generous for a
# page that loads, runs a script or animates on two cores busy with other tests (axe once
# needed over 60 s there); a wait that sees its event goes on at once, so it costs nothing
TIMEOUT_MS = 180_000


def require(condition, why):
    """Skip the calling test (fail it under CI=true) unless `condition` holds.

    Call it from a fixture, not at import: the plain unit run imports the browser test
    modules too (and deselects their tests) before ``make browser`` installs Chromium.
    """
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (required under CI=true)", pytrace=False)
    pytest.skip(why)


def require_chromium():
    require(Path(CHROMIUM).exists(),
            f"Chromium not found at {CHROMIUM}: run `make chromium` as root to install it")


@contextmanager
def launch():
    """A fresh headless Chromium (Playwright gives it a new temporary profile), closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=ARGS, timeout=TIMEOUT_MS)
        try:
            yield browser
        finally:
            browser.close()
