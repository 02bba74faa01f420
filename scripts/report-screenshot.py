"""Remakes docs/report-viewer.png, the report's conversation viewer the README and the docs'
front page show, from the shipped example's report (results/example/report/index.html): headless
Chromium (Debian's `chromium`, or DIARYLAB_CHROMIUM), 1,400 × 1,100 pixels, the viewer filtered
to one conversation — the steered diarist with the model chatbot beside its unsteered twin and
the fixed reply.

Run after remaking the example: .venv/bin/python scripts/report-screenshot.py"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "results" / "example" / "report" / "index.html"
SHOT = ROOT / "docs" / "report-viewer.png"
FILTERS = {"diarist": "amara", "profile": "social_isolation", "chatbot": "smollm2-chat"}


def main() -> None:
    chromium = os.environ.get("DIARYLAB_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        raise SystemExit("no Chromium: install Debian's chromium or set DIARYLAB_CHROMIUM")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(PAGE.as_uri() + "#viewer")
        for name, value in FILTERS.items():
            page.select_option(f"#filter-{name}", value)
        page.locator("#viewer").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOT))
        browser.close()
    print(f"wrote {SHOT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
