"""The shipped example's report at the width of a laptop page (1,352 px) in headless Chromium:
the verdict table fits (its verdicts first, the test's figures in a table of their own), the
page does not scroll sideways, and the box saying its judges cannot show anything is shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

EXAMPLE = Path(__file__).resolve().parent.parent / "results" / "example"
WIDTH = 1352


def test_the_verdict_table_fits_a_1352_px_page(browser, tmp_path):
    copy = tmp_path / "example"
    shutil.copytree(EXAMPLE / "report", copy / "report")
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto((copy / "report" / "index.html").as_uri())
    measured = page.evaluate(
        """() => {
        const heading = [...document.querySelectorAll('h2')]
            .find(h => h.textContent.startsWith('Hypotheses (preregistered)'));
        let node = heading.nextElementSibling;
        while (node && node.tagName !== 'TABLE' && !node.querySelector('table')) {
            node = node.nextElementSibling;
        }
        const table = node.tagName === 'TABLE' ? node : node.querySelector('table');
        const box = table.getBoundingClientRect();
        const headers = [...table.querySelectorAll('th')].map(th => th.textContent.trim());
        const quote = document.querySelector('h1 + blockquote');
        return {right: box.right, page: document.documentElement.clientWidth,
                scroll: document.documentElement.scrollWidth, headers,
                box: quote ? quote.textContent : ''};
    }"""
    )
    assert measured["right"] <= measured["page"], measured
    assert measured["scroll"] <= WIDTH, measured
    assert measured["headers"][2] == "overall", measured  # the verdict first
    assert "These judges cannot show anything." in measured["box"]
    page.close()
