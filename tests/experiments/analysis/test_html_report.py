"""The browsable report (DIR/report/index.html): escaping, the embedded data, row links, and the
diary page itself in a real headless Chromium (marker `browser`). The friends and benchmark
viewers: tests/experiments/kinds/benchmark/test_html_viewers.py; a large run's page:
tests/experiments/analysis/test_html_paper_size.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from diarylab.experiments.analysis.html_markdown import inline, to_html
from diarylab.experiments.analysis.html_page import flags_by_target, json_block
from diarylab.experiments.kinds.diary.frames import AnalysisTables
from diarylab.testing.html_pages import diary_page, is_real_screenshot, open_page, page_data
from diarylab.testing.synthetic_diary import Plant, make_tables

EVIL = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def test_text_is_escaped_and_only_safe_links_are_made():
    assert inline("<b>x</b> & `<i>`") == "&lt;b&gt;x&lt;/b&gt; &amp; <code>&lt;i&gt;</code>"
    assert "<a" not in inline("[click](javascript:alert(1))")
    assert "<a" not in inline("[click](data:text/html,hi)")
    assert inline("[page](diarists/d1.md)") == '<a href="diarists/d1.md">page</a>'
    assert inline("snake_case_name and _emphasis_") == "snake_case_name and <em>emphasis</em>"
    assert to_html("> a <script>\n> b") == "<blockquote>a &lt;script&gt;\nb</blockquote>"


def test_tables_link_exactly_the_row_ids_they_are_given():
    md = "| row | n |\n|---|---|\n| R1 | 3 |\n| R2 | a \\| b |\n"
    out = to_html(md, {"R1"})
    assert '<a class="row-link" href="#row-R1" data-row="R1">R1</a>' in out
    assert "<td>R2</td>" in out and "<td>a | b</td>" in out


def test_the_json_block_cannot_end_its_script_and_reads_back_unchanged():
    data = {"text": EVIL + " & \u2028", "n": [1, 2.5, None]}
    block = json_block(data)
    assert "<" not in block and ">" not in block and "&" not in block
    assert json.loads(block) == data


def test_a_judgment_flag_lands_on_the_text_it_judged():
    flags = pd.DataFrame(
        {
            "kind": ["truncated", "unreadable", "refusal"],
            "where": ["a.e1", "judge-a:a.e1:pattern:isolation", "other.r1"],
            "detail": ["", "", ""],
        }
    )
    got = flags_by_target(flags, ["a.e1"])
    assert got == {"a.e1": ["truncated", "unreadable: judge-a pattern:isolation"]}


@pytest.fixture(scope="module")
def tables() -> AnalysisTables:
    run = make_tables(
        Plant(diarists=3, patterns=("isolation",), chatbots=("thanks", "warm"), unreadable=0.05),
        seed=3,
    )
    entries = run.entries.copy()
    target = entries["entry_id"].iloc[-1]  # a later entry: shown in one conversation only
    entries.loc[entries["entry_id"] == target, "text"] = EVIL
    flags = pd.DataFrame({"kind": ["truncated"], "where": [target], "detail": ["cut"]})
    return AnalysisTables(entries, run.replies, pd.concat([run.flags, flags], ignore_index=True))


@pytest.fixture(scope="module")
def report(tables, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html")
    bounds = {
        (str(r.judge), str(r.entry_id), str(r.score)): (r.mean - 0.5, r.mean + 0.5)
        for r in tables.entries.head(3).itertuples()
    }
    return diary_page(out, tables, bounds)


def test_the_page_holds_the_findings_and_every_row_id_links_to_its_texts(report):
    html = report.read_text(encoding="utf-8")
    data = page_data(html)
    sources = pd.read_csv(report.parent / "sources.csv")
    assert len(sources) > 20
    for row_id, ids in zip(sources["row_id"], sources["ids"], strict=True):
        assert data["rows"][row_id]["ids"] == ids.split()
        assert all(i in data["texts"] for i in ids.split()), row_id
    findings = (report.parent / "findings.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"^\| ([A-Z]+\d+) \|", findings, re.M))
    assert len(shown) > 20 and shown <= set(sources["row_id"])
    linked = set(re.findall(r'<a class="row-link" href="#row-([A-Z]+\d+)"', html))
    assert linked == shown
    assert '<img src="plots/pattern_by_entry.png"' in html
    assert findings.count("\n| ") - findings.count("\n| row |") <= html.count("<tr>")


def test_every_conversation_has_its_twin_and_baseline_beside_it(report, tables):
    data = page_data(report.read_text(encoding="utf-8"))
    cells = tables.entries[["diarist", "profile", "chatbot"]].drop_duplicates()
    assert len(data["groups"]) == len(cells)
    for g in data["groups"]:
        labels = [c["label"] for c in g["columns"]]
        f = g["facets"]
        steered, baseline = f["profile"] != "unsteered", f["chatbot"] != "thanks"
        assert len(labels) == 1 + steered + baseline, labels
        assert sorted(g["columns"][0]["steps"]) == ["1", "2", "3", "4"]
        for c in g["columns"]:
            for ids in c["steps"].values():
                assert all(i in data["texts"] for i in ids)
    entry = next(g for g in data["groups"] if g["facets"]["profile"] != "unsteered")
    twin = entry["columns"][1]["steps"]["2"][0]
    profile = tables.entries.set_index("entry_id")["profile"]
    assert profile[twin].iloc[0] == "unsteered" and data["texts"][twin]["kind"] == "entry"


def test_every_reading_is_shown_with_its_coverage_bound_and_flags(report, tables):
    data = page_data(report.read_text(encoding="utf-8"))
    e = tables.entries
    row = e.iloc[0]
    shown = data["texts"][row["entry_id"]]["scores"]
    [score] = [s for s in shown if s["judge"] == row["judge"] and s["item"] == row["score"]]
    assert score["coverage"] == pytest.approx(row["coverage"])
    assert score["bound"] == pytest.approx([row["mean"] - 0.5, row["mean"] + 0.5])
    bad = e[~e["readable"].astype(bool)].iloc[0]
    [unread] = [
        s
        for s in data["texts"][bad["entry_id"]]["scores"]
        if s["judge"] == bad["judge"] and s["item"] == bad["score"]
    ]
    assert unread["value"] is None and unread["readable"] is False
    evil_id = e.loc[e["text"] == EVIL, "entry_id"].iloc[0]
    assert data["texts"][evil_id]["text"] == EVIL
    assert "truncated" in data["texts"][evil_id]["flags"]
    replies = data["texts"][tables.replies["reply_id"].iloc[0]]["scores"]
    assert {s["scale"] for s in replies} == {"probability"}
    n_questions = tables.replies.drop_duplicates(["reply_id", "judge", "question"])
    assert sum(len(data["texts"][r]["scores"]) for r in set(tables.replies["reply_id"])) == len(
        n_questions
    )


@pytest.mark.browser
def test_the_page_loads_filters_and_row_links_show_their_texts(browser, report, tmp_path):
    page, problems = open_page(browser, report)
    total = page.locator("article.group").count()
    assert total == len(page_data(report.read_text(encoding="utf-8"))["groups"])
    assert page.inner_text("#count") == f"{total} of {total} shown"

    page.select_option("#filter-diarist", index=1)
    one_diarist = page.locator("article.group").count()
    assert 0 < one_diarist < total
    page.select_option("#filter-chatbot", "warm")
    narrowed = page.locator("article.group").count()
    assert 0 < narrowed < one_diarist
    page.select_option("#filter-entry", "3")
    assert page.locator("article.group .step-label").all_inner_texts() == ["entry 3"] * (
        page.locator("article.group .step").count()
    )

    # Model text that tries to run is shown as text, and runs nothing.
    page.select_option("#filter-diarist", index=0)
    page.select_option("#filter-chatbot", index=0)
    page.select_option("#filter-entry", index=0)
    assert page.get_by_text("window.__pwned = 1", exact=False).count() >= 1
    assert page.evaluate("window.__pwned") is None

    sources = pd.read_csv(report.parent / "sources.csv").set_index("row_id")
    row = "R4" if "R4" in sources.index else sources.index[0]
    page.click(f'#findings a[href="#row-{row}"]')
    panel = page.locator("#row-panel")
    assert panel.is_visible()
    shown = panel.locator(".text").evaluate_all("els => els.map(e => e.dataset.text)")
    assert shown == sources.loc[row, "ids"].split()
    assert panel.locator(".text .body").first.inner_text().strip() != ""
    # From a row's text to the conversation it sits in, the filters set to that conversation.
    first = shown[0]
    panel.locator(".text a.open").first.click()
    assert not panel.is_visible()
    assert page.locator("article.group").count() == 1
    group = page.locator("article.group")
    assert group.locator(f'.text[data-text="{first}"]').count() >= 1
    assert page.evaluate("location.hash") == "#group-" + group.get_attribute("id")[6:]
    assert problems == []

    # The conversation viewer, as the README's screenshot shows it.
    page.select_option("#filter-diarist", index=1)
    page.select_option("#filter-profile", index=1)
    page.select_option("#filter-chatbot", "warm")
    page.evaluate("location.hash = '#viewer'")
    png = tmp_path / "viewer.png"
    page.screenshot(path=str(png))
    is_real_screenshot(png, 1400, 1000)
    page.close()


@pytest.mark.browser
def test_the_page_opens_on_its_verdicts_and_a_filtered_link_reopens_filtered(browser, report):
    page, problems = open_page(browser, report)
    verdicts = page.locator("#findings h2", has_text="Hypotheses").first
    assert verdicts.count() == 1
    table = verdicts.locator("xpath=following::table[1]")
    assert table.bounding_box()["y"] < 1000  # in the first screen, before any conversation
    assert (
        page.locator("#findings").bounding_box()["y"] < page.locator("#viewer").bounding_box()["y"]
    )
    # filters live in the address: choosing them writes it, opening it restores them
    total = page.locator("article.group").count()
    page.select_option("#filter-chatbot", "warm")
    page.select_option("#filter-diarist", index=1)
    narrowed = page.locator("article.group").count()
    assert 0 < narrowed < total
    link = page.evaluate("location.href")
    assert "#filters?" in link and "chatbot=warm" in link
    page.close()
    again = browser.new_page(viewport={"width": 1400, "height": 1000})
    again.goto(link)
    assert again.locator("article.group").count() == narrowed
    assert again.eval_on_selector("#filter-chatbot", "s => s.value") == "warm"
    assert problems == []
    again.close()
