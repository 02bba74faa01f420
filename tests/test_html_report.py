"""The browsable report (DIR/report/index.html): escaping, the embedded data, row links, and the
page itself in a real headless Chromium (marker `browser`)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from diarylab.experiments.analysis.html_markdown import inline, to_html
from diarylab.experiments.analysis.html_page import flags_by_target, json_block
from diarylab.experiments.kinds.diary.frames import AnalysisTables
from diarylab.experiments.kinds.diary.report import write_report
from tests.synthetic_diary import Plant, make_tables

EVIL = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
DESIGN = {"design": {"name": "html-diary", "kind": "diary"}, "hypotheses": []}


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="lab-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


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


# ---- in a real browser -------------------------------------------------------------------


def _chromium() -> str:
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


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else 0)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else 0)
    page.goto(path.as_uri())
    return page, problems


def _is_real_screenshot(png: Path, width: int, height: int) -> None:
    from PIL import Image

    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 20_000 < png.stat().st_size < 5_000_000
    with Image.open(png) as im:
        assert im.size == (width, height)
        pixels = np.asarray(im.convert("L"), dtype=float)
    assert pixels.std() > 10  # text on a page, not one flat colour
    assert (pixels < 128).mean() > 0.01  # some dark ink


@pytest.mark.browser
def test_the_page_loads_filters_and_row_links_show_their_texts(browser, report, tmp_path):
    page, problems = _open(browser, report)
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
    _is_real_screenshot(png, 1400, 1000)
    page.close()


@pytest.mark.browser
def test_the_page_opens_on_its_verdicts_and_a_filtered_link_reopens_filtered(browser, report):
    page, problems = _open(browser, report)
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


# ---- friends and the benchmark: their viewers from a small store ---------------------------


def _judgment(judge: str, kind: str, target: str, item: str, value, coverage=0.9, ok=True):
    from diarylab.experiments.engine.store import JudgmentRow

    return JudgmentRow(
        f"{judge}:{target}:{item}", kind, target, judge, item, value, coverage, ok, None, "k"
    )


@pytest.fixture()
def friends_store(tmp_path):
    from diarylab.experiments.engine.store import JudgmentRow, Store
    from diarylab.experiments.kinds.friends.rows import LetterRow

    store = Store(tmp_path / "friends.sqlite", [LetterRow, JudgmentRow])
    rows, judged = [], []
    for pair, condition, a, b in (
        ("p1", "si_x_unsteered", "amara", "tomasz"),
        ("p2", "fixed", "eero", "neha"),
    ):
        for position in range(1, 5):
            seat = "A" if position % 2 else "B"
            writer, friend = (a, b) if seat == "A" else (b, a)
            lid = f"{pair}.{seat}{(position + 1) // 2}"
            fixed = pair == "p2" and seat == "B"
            text = "Dear friend, <b>hello</b>" if lid == "p1.A1" else f"letter {lid}"
            rows.append(
                LetterRow(
                    lid,
                    pair,
                    condition,
                    seat,
                    writer,
                    friend,
                    "fixed" if fixed else "unsteered",
                    None,
                    "unsteered",
                    (position + 1) // 2,
                    position,
                    text,
                    10,
                    "truncated" if lid == "p1.B2" else None,
                    None if fixed else "k",
                )
            )
            if not fixed:
                judged += [
                    _judgment("j", "letter", lid, "pattern:social_isolation", 40.0 + position),
                    _judgment("j", "letter", lid, "identity", None, 0.2, False),
                ]
    store.put_rows(*rows, *judged)
    yield store
    store.close()


def test_friends_letters_sit_side_by_side_with_their_readings(friends_store):
    from diarylab.experiments.kinds.friends import html as friends_html
    from diarylab.experiments.kinds.friends.outcomes import letter_table

    sources = pd.DataFrame({"row_id": ["O1"], "table": ["outcome"], "ids": ["p1.A2 p1.B2"]})
    v = friends_html.viewer(friends_store, letter_table(friends_store), sources, "t", {})
    assert [g.id for g in v.groups] == ["p1", "p2"]
    p1 = v.groups[0]
    assert [c.label for c in p1.columns] == [
        "seat A: amara (unsteered)",
        "seat B: tomasz (unsteered)",
    ]
    assert p1.columns[0].steps == {"1": ("p1.A1",), "2": ("p1.A2",)}
    assert p1.facets["writer"] == ("amara", "tomasz")
    assert v.texts["p1.A1"].text == "Dear friend, <b>hello</b>"
    [pattern] = [s for s in v.texts["p1.A2"].scores if s.item.startswith("pattern:")]
    assert pattern.value == 43.0 and pattern.scale == "score"
    assert "truncated" in v.texts["p1.B2"].flags
    assert "unreadable: j identity" in v.texts["p1.A1"].flags
    assert v.texts["p2.B1"].scores == () and v.texts["p2.B1"].label.endswith(
        "(fixed) to eero, letter 1"
    )
    assert v.rows == {"O1": {"table": "outcome", "ids": ["p1.A2", "p1.B2"]}}


@pytest.fixture()
def bench_store(tmp_path):
    from diarylab.experiments.engine.store import JudgmentRow, Store
    from diarylab.experiments.kinds.benchmark.data import Conversation, Criterion
    from diarylab.experiments.kinds.benchmark.rows import BenchReplyRow, GraderAnswerRow

    store = Store(tmp_path / "bench.sqlite", [BenchReplyRow, GraderAnswerRow, JudgmentRow])
    crit = (
        Criterion("c1#0", "Asks about safety", 5, "safety"),
        Criterion("c1#1", "Lectures the user", -3, "tone"),
    )
    conv = Conversation("c1", (("user", "I can't sleep <script>x</script>"),), crit, "acute", "en")
    rows = [
        BenchReplyRow("c1.thanks", "c1", "thanks", "acute", "Thank you for sharing.", None, None),
        BenchReplyRow("c1.api", "c1", "api", "acute", "I'm sorry, I can't.", "refusal", "k"),
        GraderAnswerRow(
            "j:c1.api:criterion:c1#0:1",
            "j",
            "c1.api",
            "criterion:c1#0",
            1,
            '{"explanation": "no safety question", "criteria_met": false}',
            False,
            "ok",
            "k",
        ),
        _judgment("j", "reply", "c1.api", "criterion:c1#0", 0.25, 0.8),
        _judgment("j", "reply", "c1.thanks", "criterion:c1#0", 0.1, 0.7),
        _judgment("j", "reply", "c1.thanks", "criterion:c1#1", 0.05, 0.9),
    ]
    store.put_rows(*rows)
    yield store, [conv]
    store.close()


def test_benchmark_replies_show_every_criterion_with_p_met_and_the_graders_answer(bench_store):
    from diarylab.experiments.kinds.benchmark import html as bench_html
    from diarylab.experiments.kinds.benchmark.tables import graded_frame

    store, conversations = bench_store
    v = bench_html.viewer(store, conversations, graded_frame(store, conversations, ["j"]), "t")
    assert [g.id for g in v.groups] == ["c1.api", "c1.thanks"]
    assert v.groups[0].lead == ("conversation:c1",)
    assert v.texts["conversation:c1"].text == "[user] I can't sleep <script>x</script>"
    api = v.texts["c1.api"]
    assert api.flags == ("refusal", "ungraded: j c1#1")
    safety, lecture = api.scores
    assert safety.item == "Asks about safety (+5 points, safety)"
    assert (safety.value, safety.coverage, safety.readable) == (0.25, 0.8, True)
    assert safety.answer == (
        'wrote criteria_met = False: {"explanation": "no safety question", "criteria_met": false}'
    )
    assert (
        lecture.value is None
        and not lecture.readable
        and lecture.item.endswith("(-3 points, tone)")
    )
    assert [s.value for s in v.texts["c1.thanks"].scores] == [0.1, 0.05]


@pytest.mark.browser
def test_the_friends_and_benchmark_pages_load_and_filter(
    browser, friends_store, bench_store, tmp_path
):
    from diarylab.experiments.analysis.html_page import write_page
    from diarylab.experiments.kinds.benchmark import html as bench_html
    from diarylab.experiments.kinds.benchmark.tables import graded_frame
    from diarylab.experiments.kinds.friends import html as friends_html
    from diarylab.experiments.kinds.friends.outcomes import letter_table

    store, conversations = bench_store
    pages = {
        "friends": (
            friends_html.viewer(
                friends_store,
                letter_table(friends_store),
                pd.DataFrame(columns=["row_id", "table", "ids"]),
                "f",
                {},
            ),
            "#filter-writer",
            "amara",
        ),
        "bench": (
            bench_html.viewer(store, conversations, graded_frame(store, conversations, ["j"]), "b"),
            "#filter-chatbot",
            "api",
        ),
    }
    for name, (viewer, select, value) in pages.items():
        (tmp_path / name).mkdir()
        path = write_page(tmp_path / name, "# Findings\n\n| a |\n|---|\n| 1 |\n", viewer)
        page, problems = _open(browser, path)
        assert page.locator("article.group").count() == 2
        page.select_option(select, value)
        assert page.locator("article.group").count() == 1
        assert problems == [] and page.evaluate("window.__pwned") is None
        page.close()
    # The grader's answer is shown beside P(met) on the benchmark page.
    page, _ = _open(browser, tmp_path / "bench" / "index.html")
    page.select_option("#filter-chatbot", "api")
    page.locator("article.group details").first.evaluate("d => d.open = true")
    assert "no safety question" in page.inner_text("article.group .scores")
    assert page.get_by_text("<script>x</script>", exact=False).count() == 1
    page.close()


@pytest.mark.browser
def test_a_large_run_is_drawn_a_page_at_a_time(browser, tmp_path):
    from diarylab.experiments.analysis.html_page import Column, Group, Text, Viewer, write_page

    texts = {f"t{i}": Text(f"t{i}", "entry", "entry 1", f"text {i}") for i in range(35)}
    groups = tuple(
        Group(f"g{i}", f"g{i}", {"diarist": f"d{i % 5}"}, (Column("c", {"1": (f"t{i}",)}),))
        for i in range(35)
    )
    viewer = Viewer("big", (("diarist", "diarist"),), groups, texts)
    page, problems = _open(browser, write_page(tmp_path, "# Findings\n", viewer))
    assert page.locator("article.group").count() == 30
    assert page.inner_text("#count").startswith("35 of 35 shown (drawn: the first 30)")
    page.click("#more")
    assert page.locator("article.group").count() == 35 and page.locator("#more").count() == 0
    page.select_option("#filter-diarist", "d1")
    assert page.locator("article.group").count() == 7 and problems == []
    page.close()


@pytest.fixture(scope="module")
def paper_size_report(tmp_path_factory) -> Path:
    from tests.synthetic_diary import paper_size_tables

    return diary_page(tmp_path_factory.mktemp("paper-size"), paper_size_tables(), {})


@pytest.mark.browser
def test_a_paper_size_page_opens_within_three_seconds_and_pages_its_conversations(
    browser, paper_size_report
):
    """diary-full.toml's size (128 conversations, 928 texts): the page opens, its first 30
    conversations drawn, in under 3 s (issue 37's limit), holds its data in a few MB, and
    draws the rest a page at a time."""
    import time

    size = paper_size_report.stat().st_size
    assert size < 12_000_000, size  # not tens of MB inline
    data = page_data(paper_size_report.read_text(encoding="utf-8"))
    assert len(data["groups"]) == 128 and len(data["texts"]) == 928
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    start = time.perf_counter()
    page.goto(paper_size_report.as_uri(), wait_until="load")
    page.wait_for_selector("article.group")
    opened = time.perf_counter() - start
    assert opened < 3.0, f"opened in {opened:.2f} s"
    assert page.locator("article.group").count() == 30
    assert page.inner_text("#count").startswith("128 of 128 shown (drawn: the first 30)")
    page.click("#more")
    assert page.locator("article.group").count() == 60
    page.select_option("#filter-chatbot", "warm")
    assert page.locator("article.group").count() == 30  # back to the first page of 32
    assert page.inner_text("#count").startswith("32 of 128 shown")
    assert problems == []
    page.close()
