"""A bounded reading is never called exact: the CLI help, the judge schema's descriptions and the
report's judge-readings rows say what happened (issue 32, item 5)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.readings import _bounded, section, summarize
from diarylab.experiments.cli import build_parser
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec

UNQUALIFIED = re.compile(r"read exactly|readings are exact|is exact\b|reads exactly", re.I)


def _help(*argv: str) -> str:
    parser = build_parser()
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        node = action.choices[argv[0]]
    for name in argv[1:]:
        sub = next(a for a in node._actions if hasattr(a, "choices") and a.choices)
        node = sub.choices[name]
    return node.format_help()


def test_the_cli_help_calls_the_default_reading_bounded_not_exact():
    text = " ".join(_help("judge", "read").split())
    assert "a bounded reading, its certified bound stored" in text
    assert "0 = read every node: exact" in text
    assert not UNQUALIFIED.search(text), UNQUALIFIED.search(text)


def test_the_judge_schema_says_exact_only_at_max_error_zero():
    local = LocalJudgeSpec.model_fields["kind"].description
    served = ServedJudgeSpec.model_fields["tokenizer"].description
    for text in (local, served):
        assert "certified bound" in text and "max_error = 0" in text
        assert not UNQUALIFIED.search(text)


def test_a_bounded_reading_is_labelled_bounded_with_its_width_in_the_report():
    assert _bounded("exact", 0, 0.05) == "exact, bounded"
    assert _bounded("local", 0, 0.05) == "local, bounded"
    assert _bounded("local", 1, 0.05) == "local"  # stopped nowhere short: exact
    assert _bounded("top-k", 0, None) == "top-k"  # not exact for another reason
    readings = pd.DataFrame(
        [
            ("j", "unsteered", "entry score", "local, bounded", 0.0, 0.9, True, None, None, w, 0.0)
            for w in (0.02, 0.04, 0.06)
        ]
        + [("j", "unsteered", "entry score", "local", 1.0, 0.9, True, None, None, 0.0, 0.0)],
        columns=[
            "judge", "group", "reading", "mode", "exact", "coverage", "readable",
            "fingerprint", "dtype", "bound_width", "coverage_gap",
        ],
    )  # fmt: skip
    summary = summarize(readings)
    bounded = summary[summary["mode"] == "local, bounded"].iloc[0]
    assert bounded["exact_share"] == 0.0
    assert np.isclose(bounded["bound_width_row_median"], 0.04)
    text = "\n".join(section(summary, "profile", 0.5))
    row = next(ln for ln in text.splitlines() if "| local, bounded |" in ln)
    assert "| 0.00 | 0.04 |" in row  # read exactly 0.00, then the bound's median width
    assert "`, bounded`: the reading stopped early" in text
