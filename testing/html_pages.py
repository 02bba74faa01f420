"""What the HTML report tests share: a diary report written from analysis tables, the data a
page embeds, and a page opened in headless Chromium (the `browser` fixture: tests/conftest.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from diarylab.experiments.kinds.diary.frames import AnalysisTables
from diarylab.experiments.kinds.diary.report import write_report

DESIGN = {"design": {"name": "html-diary", "kind": "diary"}, "hypotheses": []}


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="lab-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


def diary_page(out: Path, tables: AnalysisTables, bounds: dict) -> Path:
    """The diary report of `tables` written into `out`; its page."""
    write_report(
        out,
        tables,
        design=DESIGN,
        design_sha256="7" * 64,
        manifest={},
        resamples=100,
        seed=1,
        baseline_chatbot="thanks",
        min_diarists=2,
        bounds=bounds,
    )
    return out / "report" / "index.html"


def chromium_path() -> str:
    found = os.environ.get("DIARYLAB_CHROMIUM") or shutil.which("chromium")
    found = found or shutil.which("chromium-browser")
    if not found and os.environ.get("CI"):
        pytest.fail(
            "CI must run the browser tests: scripts/setup-browser.sh (make test) did not "
            "install chromium"
        )
    if not found:
        pytest.skip(
            "no Chromium here: scripts/setup-browser.sh (make test) installs Debian's `chromium` "
            "where apt and root are available (CI); elsewhere set DIARYLAB_CHROMIUM to a "
            "Chromium binary"
        )
    return found


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else 0)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else 0)
    page.goto(path.as_uri())
    return page, problems


def is_real_screenshot(png: Path, width: int, height: int) -> None:
    from PIL import Image

    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 20_000 < png.stat().st_size < 5_000_000
    with Image.open(png) as im:
        assert im.size == (width, height)
        pixels = np.asarray(im.convert("L"), dtype=float)
    assert pixels.std() > 10  # text on a page, not one flat colour
    assert (pixels < 128).mean() > 0.01  # some dark ink
