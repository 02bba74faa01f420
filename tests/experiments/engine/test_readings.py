"""Judge readings per judge × profile, from a store filled through the engine's judging door by
judges whose records are known: the figures are computed by hand below."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pytest

from diarylab.experiments.analysis.readings import (
    READING_COLUMNS,
    reading_mode,
    section,
    stored_readings,
    summarize,
)
from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.experiments.kinds.diary.tables import judge_readings
from diarylab.rubric.judging.expected import NodeReading
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.yes_no import yes_no_reading
from diarylab.rubric.prompts import JudgePrompt, TemplateRef

FLOOR = 0.5
TEMPLATE = TemplateRef("t", 1, "0" * 64)
# (coverage, exact) of each reading, per profile; a served judge records mode "top-k".
SERVED = {
    ("entry", "unsteered"): [(0.9, True), (0.8, True), (0.7, False), (0.3, False)],
    ("entry", "lonely"): [(0.6, False), (0.4, False), (0.2, True)],
    ("reply", "unsteered"): [(0.95, True), (0.85, True)],
    ("reply", "lonely"): [(0.99, True), (0.45, False), (0.1, False)],
}
# A local judge's records carry no mode (written before judges recorded one): shown as local.
LOCAL = {("entry", "unsteered"): [(0.98, True)], ("entry", "lonely"): [(0.3, True)]}


class ScriptedJudge(Judge):
    """A judge whose every record is fixed by its prompt: "coverage exact" in the text. The
    records are built by rubric's own reading functions, as a real judge builds them."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.base = dict(record)

    def identity(self) -> dict[str, Any]:
        return {"scripted": self.base}

    @staticmethod
    def _script(prompt: JudgePrompt) -> tuple[float, bool]:
        coverage, exact = str(prompt.text).split()[:2]
        return float(coverage), exact == "True"

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        # All the judge's mass on "5" then end: coverage = P("5").
        coverage, exact = self._script(prompt)
        nodes = [
            NodeReading(prefix="", children={"5": math.log(coverage)}, end_logprob=None),
            NodeReading(prefix="5", children={}, end_logprob=0.0),
        ]
        return dict(number_reading(nodes, record={**self.base, "exact": exact}).record)

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        coverage, exact = self._script(prompt)
        yes, no = {"yes": math.log(0.6 * coverage)}, {"no": math.log(0.4 * coverage)}
        return dict(yes_no_reading(yes, no, record={**self.base, "exact": exact}).record)


def _fill(store: Store, judge_id: str, judge: Judge, script: dict) -> None:
    tasks, rows = [], []
    for (kind, profile), readings in script.items():
        for i, (coverage, exact) in enumerate(readings):
            eid = f"d{i}.{profile}.e1"
            rows.append(EntryRow(eid, f"d{i}", profile, None, None, 1, "text", 5, None, "k"))
            target = eid
            if kind == "reply":
                target = f"d{i}.{profile}.thanks.r1"
                cell = f"d{i}.{profile}.thanks"
                reply = (target, cell, f"d{i}", profile, None, "thanks", 1, eid, "ok", None, None)
                rows.append(ReplyRow(*reply))
            question = "number" if kind == "entry" else "yes_no"
            prompt = JudgePrompt.raw(f"{coverage} {exact} {target}")
            tasks.append(Task(kind, target, "item", question, prompt, TEMPLATE))
    store.put_rows(*rows)
    judge_tasks(store, judge_id, lambda: judge, tasks, FLOOR, lambda n: None)


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "store.sqlite", (EntryRow, ReplyRow))
    _fill(store, "judge-a", ScriptedJudge({"backend": "served", "mode": "top-k"}), SERVED)
    _fill(store, "judge-b", ScriptedJudge({"backend": "local"}), LOCAL)
    yield store
    store.close()


def test_each_judge_and_profile_shows_its_exact_share_coverage_and_unreadable(store):
    got = judge_readings(store).set_index(["judge", "group", "reading"])
    # Hand-computed: median of the coverages; 5th percentile by linear interpolation between
    # the sorted coverages at rank 0.05 × (n − 1); unreadable = coverage under 0.5.
    want = {
        ("judge-a", "unsteered", "entry score"): (4, 2 / 4, 0.75, 0.3 + 0.15 * 0.4, 1),
        ("judge-a", "lonely", "entry score"): (3, 1 / 3, 0.4, 0.2 + 0.10 * 0.2, 2),
        ("judge-a", "unsteered", "reply yes/no"): (2, 1.0, 0.9, 0.85 + 0.05 * 0.1, 0),
        ("judge-a", "lonely", "reply yes/no"): (3, 1 / 3, 0.45, 0.1 + 0.10 * 0.35, 2),
        ("judge-b", "unsteered", "entry score"): (1, 1.0, 0.98, 0.98, 0),
        ("judge-b", "lonely", "entry score"): (1, 1.0, 0.3, 0.3, 1),
    }
    assert sorted(got.index) == sorted(want)
    for key, (n, exact, median, p5, unreadable) in want.items():
        row = got.loc[key]
        assert (row["n"], row["unreadable"]) == (n, unreadable), key
        assert row["exact_share"] == pytest.approx(exact), key
        assert row["coverage_median"] == pytest.approx(median), key
        assert row["coverage_p5"] == pytest.approx(p5), key
    modes = got["mode"].groupby(level="judge").unique()
    assert list(modes["judge-a"]) == ["top-k"] and list(modes["judge-b"]) == ["local"]
    # Each judge's unsteered rows come first, so the profiles read side by side.
    order = judge_readings(store)[["judge", "group"]].drop_duplicates()
    assert order.values.tolist() == [
        ["judge-a", "unsteered"],
        ["judge-a", "lonely"],
        ["judge-b", "unsteered"],
        ["judge-b", "lonely"],
    ]


def test_every_stored_judgment_keeps_its_coverage_exactness_and_mode(store):
    readings = stored_readings(store, {})
    assert len(readings) == sum(map(len, [*SERVED.values(), *LOCAL.values()]))
    records = [
        (coverage, store.select("calls", ["result"], where={"key": key})[0][0])
        for coverage, key in store.select("judgments", ["coverage", "call_key"])
    ]
    assert len(records) == len(readings)
    for coverage, result in records:
        assert '"exact": ' in result and 0 < coverage <= 1
    assert set(readings["group"]) == {"(unknown)"}  # nothing mapped: shown, not dropped
    assert readings["exact"].isin([0.0, 1.0]).all()


def test_a_judgment_without_a_stored_call_is_counted_as_unrecorded(tmp_path):
    from diarylab.experiments.engine.store import JudgmentRow

    store = Store(tmp_path / "s.sqlite")
    store.put_rows(JudgmentRow("j:x:i", "entry", "x", "j", "i", None, 0.2, False, None, "gone"))
    [row] = summarize(stored_readings(store, {("entry", "x"): "p"})).itertuples()
    assert (row.reading, row.mode, row.n, row.unreadable) == ("entry no record", "no record", 1, 1)
    assert math.isnan(row.exact_share)
    store.close()


def test_mode_falls_back_to_local_only_for_a_local_backend():
    assert reading_mode("exact", "served") == "exact"
    assert reading_mode(None, "local") == "local"
    assert reading_mode(None, "served") == "served (mode not recorded)"


def test_the_section_says_why_and_shows_the_figures(store):
    text = "\n".join(section(judge_readings(store), "profile", FLOOR))
    assert text.startswith("## Judge readings")
    assert "missing readings are not random" in text and "floor (0.5)" in text
    # ... | read exactly | median bound width | coverage ...: these readings' bounds are closed.
    rows = (
        "| judge-a | lonely | entry score | top-k | 3 | 0.33 | 0.00 | 0.400 | 0.220 | 2 |",
        "| judge-b | unsteered | entry score | local | 1 | 1.00 | 0.00 | 0.980 | 0.980 | 0 |",
    )
    assert all(row in text for row in rows)
    assert (
        "_no data_"
        in section(summarize(pd.DataFrame(columns=list(READING_COLUMNS))), "profile", None)[2]
    )
