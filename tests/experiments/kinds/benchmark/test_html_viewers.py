"""The friends and benchmark viewers of the browsable report, made from a small store: letters
side by side with their readings, replies with every criterion, and both pages in headless
Chromium (marker `browser`)."""

from __future__ import annotations

import pandas as pd
import pytest

from diarylab.testing.html_pages import open_page


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
        page, problems = open_page(browser, path)
        assert page.locator("article.group").count() == 2
        page.select_option(select, value)
        assert page.locator("article.group").count() == 1
        assert problems == [] and page.evaluate("window.__pwned") is None
        page.close()
    # The grader's answer is shown beside P(met) on the benchmark page.
    page, _ = open_page(browser, tmp_path / "bench" / "index.html")
    page.select_option("#filter-chatbot", "api")
    page.locator("article.group details").first.evaluate("d => d.open = true")
    assert "no safety question" in page.inner_text("article.group .scores")
    assert page.get_by_text("<script>x</script>", exact=False).count() == 1
    page.close()
