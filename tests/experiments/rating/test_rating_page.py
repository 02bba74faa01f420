"""The rating page in a real browser (headless Chromium): opened from disk with no server and
no network, a rater answers every item, the answers survive closing and reopening the page,
the download is the file `diarylab rate import` accepts, and the page shows none of the
blinded fields."""

from __future__ import annotations

import json

import pytest

import diarylab
from diarylab.experiments.cli import main
from diarylab.testing.rating_fixtures import example_with_sample


def _answer_shown_item(page) -> None:
    for box in page.locator("#item .question").all():
        if box.locator("input[type=number]").count():
            box.locator("input[type=number]").fill("40")
            box.locator("input[type=number]").dispatch_event("change")
        else:
            box.locator("input[value=yes]").check()


@pytest.mark.browser
def test_a_rater_answers_reopens_downloads_and_the_file_imports(browser, tmp_path, capsys):
    folder = tmp_path / "run"
    sample = example_with_sample(folder, "--n", "6", "--raters", "2")
    sheet = folder / "rating" / "sheets" / "r1.html"
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else 0)
    page.goto(sheet.as_uri())
    assert page.inner_text("#progress") == "0 of 6 items answered"

    # a wrong number is refused on the page, not stored
    number = page.locator("#item input[type=number]")
    if number.count():
        number.first.fill("140")
        number.first.dispatch_event("change")
        assert "whole number from 0 to 100" in page.inner_text("#item")

    for _ in range(3):
        _answer_shown_item(page)
        page.click("#next")
    # close and reopen halfway: the answers are kept in the browser
    page.close()
    page = context.new_page()
    page.goto(sheet.as_uri())
    assert page.inner_text("#progress") == "3 of 6 items answered"
    page.click("#unanswered")
    assert page.inner_text("#position") == "item 4 of 6"
    for i in range(3):
        _answer_shown_item(page)
        if i < 2:
            page.click("#next")
    assert page.inner_text("#progress") == "6 of 6 items answered"

    with page.expect_download() as caught:
        page.click("#download")
    saved = tmp_path / caught.value.suggested_filename
    caught.value.save_as(saved)
    assert saved.name == f"ratings-r1-{sample.sha256[:8]}.json"
    assert "send this file" in page.inner_text("#status")
    assert problems == []

    record = json.loads(saved.read_text())
    assert record["sample_sha256"] == sample.sha256 and record["rater"] == "r1"
    assert main(["rate", "import", str(folder), str(saved)]) == 0
    per_item = sum(len(sample.questions_for(it.target_kind)) for it in sample.items)
    assert f"{per_item} answers stored now" in capsys.readouterr().out

    # what the rater saw: texts and questions, none of the blinded fields
    with diarylab.open_run(folder) as run:
        texts = run.texts()
        judges = set(run.readings()["judge"])
    shown = ""
    for _ in range(6):  # every item, from the last back to the first
        shown += page.inner_text("body")
        page.click("#prev")
    for text in texts["text"]:
        shown = shown.replace(text.strip(), "")
    blinded = set(texts["profile"]) | set(texts["diarist"]) | set(texts["chatbot"].dropna())
    blinded |= judges | {"unsteered", "steered", "social_isolation"} | set(texts["text_id"])
    assert not [word for word in blinded if word in shown]
    context.close()
