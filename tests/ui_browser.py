"""Headless Chromium from the system's packages, driven by Playwright, for the inspector's tests.

Playwright's own browser download cannot be fetched everywhere, so the browser is Debian's
``chromium`` package (``apt-get install -y chromium``; ``.ci/run`` installs it).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

MISSING = (
    "the inspector's tests drive a real Chromium, and none is installed: run `sudo apt-get install -y chromium`"
    " (Debian/Ubuntu; .ci/run does it), or put a `chromium` executable on PATH"
)


def chromium_path() -> str:
    """The system Chromium, or a failure that says how to install it (never a skip)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(MISSING, pytrace=False)
    return path


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium for the block."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
