"""Pages in a real headless Chromium: the DOM after its scripts ran, and a screenshot.

One copy of the flags and the two runs, for every test of a self-contained page (the
grade report, the board). The browser is found by :func:`tests.peers.chromium`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["CHROMIUM_FLAGS", "dump_dom", "screenshot"]

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def dump_dom(browser: str, page: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    """The DOM of ``page`` once loaded (stdout), the browser's log on stderr."""
    return subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def screenshot(
    browser: str, page: Path, profile: Path, shot: Path, size: str = "1100,1800"
) -> subprocess.CompletedProcess[str]:
    """A PNG of ``page`` at ``size`` (width,height) written to ``shot``."""
    return subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={shot}",
            f"--window-size={size}",
            "--hide-scrollbars",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
