"""Headless Chromium (Debian's `chromium`) on the report page: its DOM after the scripts ran, and a
screenshot. What the report test looks at, and a picture to attach to a note."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-extensions",
    "--virtual-time-budget=5000",
]


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise FileNotFoundError("no chromium: ./brokerstream install puts Debian's chromium package in place")
    return found


def dom(page: Path, timeout: float = 90) -> str:
    done = subprocess.run(
        [browser(), *FLAGS, "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"chromium --dump-dom failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def capture(page: Path, png: Path, width: int = 1400, height: int = 2400, timeout: float = 90) -> Path:
    png.unlink(missing_ok=True)
    done = subprocess.run(
        [
            browser(),
            *FLAGS,
            f"--window-size={width},{height}",
            f"--screenshot={png.resolve()}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium --screenshot failed ({done.returncode}): {done.stderr[-2000:]}")
    return png
