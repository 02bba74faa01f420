"""The benchmark report's names for tags and strata, and raw answers shown as literal text."""

from __future__ import annotations

from diarylab.experiments.kinds.benchmark.report_answers import literal, stratum_label, tag_label


def test_healthbench_tags_and_themes_read_as_their_names():
    assert tag_label("theme:emergency_referrals") == "theme: emergency referrals"
    assert tag_label("axis:context_awareness") == "axis: context awareness"
    assert stratum_label("emergency_referrals", "healthbench") == "theme: emergency referrals"
    assert stratum_label("high_acuity", "mentalhealthbench") == "acuity: high acuity"


def test_a_raw_answer_cannot_close_its_block_or_become_markdown():
    text = 'oops ``` | not a table\n## not a heading {"criteria_met": maybe}'
    block = literal(text)
    fence = block.split("text\n")[0]
    assert len(fence) == 4 and block.endswith(f"\n{fence}\n")
    assert text in block
