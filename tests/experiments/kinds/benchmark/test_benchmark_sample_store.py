"""The sampled conversations kept in the store read back as loaded, and a resume's data file
is checked against the one the run sampled."""

from __future__ import annotations

from pathlib import Path

import pytest

from diarylab.experiments.engine.store import Store
from diarylab.experiments.kinds.benchmark.data import load_benchmark
from diarylab.experiments.kinds.benchmark.rows import BenchConversationRow
from diarylab.experiments.kinds.benchmark.sample import draw, sampled
from diarylab.experiments.kinds.benchmark.sample_store import (
    check_same_data,
    keep_sample,
    stored_sample,
)
from diarylab.foundation.errors import LabError

DATA = Path(__file__).resolve().parents[3] / "data"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("mentalhealthbench_synthetic.jsonl", "mentalhealthbench"),
     ("healthbench_synthetic.jsonl", "healthbench")],
)  # fmt: skip
def test_stored_conversations_read_back_equal_to_the_files(tmp_path, name, fmt):
    bench = load_benchmark(DATA / name, fmt)
    sample = draw(bench, 4, seed=3)
    store = Store(tmp_path / "store.sqlite", (BenchConversationRow,))
    assert stored_sample(store, sample.ids) is None  # nothing stored yet: read the file
    keep_sample(store, sampled(bench, sample))
    keep_sample(store, sampled(bench, sample))  # a resume stores nothing twice
    assert store.count("bench_conversations") == 4
    assert stored_sample(store, sample.ids) == list(sampled(bench, sample))
    assert stored_sample(store, [*sample.ids, "not-sampled"]) is None
    store.close()


def test_a_resume_with_another_file_is_refused_naming_the_recorded_hash(tmp_path):
    bench = load_benchmark(DATA / "mentalhealthbench_synthetic.jsonl", "mentalhealthbench")
    sample = draw(bench, 4, seed=3)
    recorded = {"file": "mhb.jsonl", "sample": sample.manifest("f" * 64, 3)}
    with pytest.raises(LabError, match="not the one the run sampled") as refused:
        check_same_data(tmp_path, recorded, bench, sample)
    assert "mhb.jsonl" in refused.value.fix and "f" * 64 in refused.value.fix
    same = {"file": "mhb.jsonl", "sample": sample.manifest(bench.sha256, 3)}
    check_same_data(tmp_path, same, bench, sample)  # the run's own file: no error
    other = draw(bench, 5, seed=3)
    with pytest.raises(LabError, match="another sample"):
        check_same_data(tmp_path, same, bench, other)
