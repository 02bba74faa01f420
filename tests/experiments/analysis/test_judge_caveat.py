"""A report judged by the embedded default model says first, in a box, that its judges cannot
show anything; a report judged by served open models has no such box."""

from __future__ import annotations

import tomllib
from pathlib import Path

from diarylab.experiments.analysis.judge_caveat import caveat_box, weak_judges

ROOT = Path(__file__).resolve().parents[3]


def _design(name: str) -> dict:
    return tomllib.loads((ROOT / "experiments" / "designs" / name).read_text(encoding="utf-8"))


def test_the_shipped_example_opens_on_the_box():
    findings = (ROOT / "results" / "example" / "report" / "findings.md").read_text("utf-8")
    title, rest = findings.split("\n", 1)
    assert title.startswith("# Findings")
    assert rest.lstrip().startswith("> **These judges cannot show anything.**")
    page = (ROOT / "results" / "example" / "report" / "index.html").read_text("utf-8")
    assert "These judges cannot show anything." in page


def test_only_the_embedded_judges_are_named():
    assert weak_judges(_design("demo.toml")) == ["smollm2-judge"]
    assert weak_judges(_design("diary-full.toml")) == []
    assert caveat_box(_design("diary-full.toml")) == []
    assert caveat_box(_design("friends.toml")) == []
