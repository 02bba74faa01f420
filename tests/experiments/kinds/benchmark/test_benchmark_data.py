"""Benchmark files: both published schemas load into the lab's records; a malformed row is one
error naming the file, the line and the field; the canary string is gone from every text; the
sample is proportional to acuity (largest remainder), seeded and stable."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from diarylab.experiments.kinds.benchmark.data import ACUITIES, load_benchmark
from diarylab.experiments.kinds.benchmark.sample import draw, largest_remainder
from diarylab.foundation.errors import LabError

DATA = Path(__file__).resolve().parents[3] / "data"
MHB = DATA / "mentalhealthbench_synthetic.jsonl"
HB = DATA / "healthbench_synthetic.jsonl"


def test_mentalhealthbench_rows_load_with_system_messages_axes_and_negative_points():
    bench = load_benchmark(MHB, "mentalhealthbench")
    assert len(bench.conversations) == 27 and len(bench.sha256) == 64
    assert {c.stratum for c in bench.conversations} == set(ACUITIES)
    assert len({c.language for c in bench.conversations}) >= 5
    assert any(r == "system" for c in bench.conversations for r, _ in c.messages)
    assert all(c.messages[-1][0] == "user" for c in bench.conversations)
    negative = [cr for c in bench.conversations for cr in c.criteria if cr.points < 0]
    assert negative and all(cr.axis for cr in negative)
    only_negative = [c for c in bench.conversations if c.positive_points == 0]
    assert [c.id for c in only_negative] == ["syn-neg"]


def test_healthbench_rows_load_with_axes_from_tags():
    bench = load_benchmark(HB, "healthbench")
    first = bench.conversations[0]
    assert first.id == "hb-000" and first.stratum == "communication"
    assert {cr.axis for cr in first.criteria} <= {"completeness", "accuracy"}


def test_the_canary_is_removed_from_every_text():
    bench = load_benchmark(MHB, "mentalhealthbench")
    [canary] = bench.canaries
    assert canary in MHB.read_text()
    texts = [t for c in bench.conversations for _, t in c.messages]
    texts += [cr.text for c in bench.conversations for cr in c.criteria]
    assert not any(canary in t for t in texts)
    assert not any(t != t.strip() for t in texts if t)  # no blank tail where it stood


def _write(tmp_path, rows, name="bench.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def _rows():
    return [json.loads(line) for line in MHB.read_text().splitlines()]


@pytest.mark.parametrize(
    ("change", "line", "field", "says"),
    [
        (lambda r: r.pop("acuity"), 3, "acuity", "missing"),
        (lambda r: r.update(acuity="mild"), 3, "acuity", "mild"),
        (lambda r: r["rubric_items"][1].update(points="5"), 3, "rubric_items[1].points", ""),
        (lambda r: r["rubric_items"][0].pop("criterion_text"), 3, "criterion_text", "missing"),
        (
            lambda r: r["conversation"]["messages"].append({"role": "assistant", "content": "x"}),
            3,
            "conversation.messages",
            "ends with the user's turn",
        ),
        (lambda r: r["conversation"]["messages"][0].update(role="robot"), 3, "role", ""),
    ],
)
def test_a_malformed_row_is_one_error_naming_line_and_field(tmp_path, change, line, field, says):
    rows = _rows()
    change(rows[2])
    path = _write(tmp_path, rows)
    with pytest.raises(LabError) as caught:
        load_benchmark(path, "mentalhealthbench")
    message = str(caught.value)
    assert f"{path} line {line}" in message and field in message and says in message


def test_bad_json_an_empty_file_and_a_missing_file_are_clear(tmp_path):
    path = _write(tmp_path, [json.dumps(_rows()[0]), "{not json"])
    with pytest.raises(LabError, match="line 2: not valid JSON"):
        load_benchmark(path, "mentalhealthbench")
    with pytest.raises(LabError, match="holds no rows"):
        load_benchmark(_write(tmp_path, [""], "empty.jsonl"), "mentalhealthbench")
    with pytest.raises(LabError, match="not shipped"):
        load_benchmark(tmp_path / "absent.jsonl", "mentalhealthbench")
    with pytest.raises(LabError, match="appears twice"):
        load_benchmark(_write(tmp_path, [_rows()[0], _rows()[0]], "dup.jsonl"), "mentalhealthbench")


def test_largest_remainder_by_hand():
    # 10 seats over 6/3/1: quotas 6, 3, 1 exactly.
    assert largest_remainder({"a": 6, "b": 3, "c": 1}, 10 // 1) == {"a": 6, "b": 3, "c": 1}
    # 7 seats over 12/9/6 (27): quotas 3.11, 2.33, 1.56 -> floors 3, 2, 1; one seat left, to c.
    assert largest_remainder({"non": 12, "high": 9, "emer": 6}, 7) == {
        "non": 3,
        "high": 2,
        "emer": 2,
    }
    # The benchmark's 1,215 at 300: the seats add up exactly.
    seats = largest_remainder({"non_acute": 800, "high_acuity": 300, "emergent": 115}, 300)
    assert sum(seats.values()) == 300 and seats == {
        "non_acute": 198,
        "high_acuity": 74,
        "emergent": 28,
    }
    assert largest_remainder({"a": 2, "b": 1}, 50) == {"a": 2, "b": 1}


def test_the_sample_is_proportional_seeded_and_stable(tmp_path):
    bench = load_benchmark(MHB, "mentalhealthbench")
    sample = draw(bench, 12, seed=7)
    counts = Counter(c.stratum for c in bench.conversations if c.id in sample.ids)
    assert dict(counts) == sample.allocation == {"non_acute": 5, "high_acuity": 4, "emergent": 3}
    # Same file, same seed: same ids, whatever order the rows are in.
    rows = MHB.read_text().splitlines()
    random.Random(3).shuffle(rows)
    shuffled = load_benchmark(_write(tmp_path, rows), "mentalhealthbench")
    assert set(draw(shuffled, 12, seed=7).ids) == set(sample.ids)
    assert draw(bench, 12, seed=7) == sample
    assert set(draw(bench, 12, seed=8).ids) != set(sample.ids)
    manifest = sample.manifest(bench.sha256, 7)
    assert manifest["ids"] == list(sample.ids) and manifest["data_sha256"] == bench.sha256
