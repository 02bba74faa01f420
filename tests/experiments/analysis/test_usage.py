"""Calls and tokens per model from the store's call records: made by the latest run or by
earlier ones (by the resume record's time), tokens as the records state them."""

from __future__ import annotations

import json
import time

from diarylab.experiments.analysis.usage import section, usage_table
from diarylab.experiments.engine.store import Store


def _calls(store: Store, kind: str, model: str, results: list[dict]) -> None:
    store.cached_calls(
        kind,
        model,
        {"m": model},
        [{"i": i} for i in range(len(results))],
        lambda b: [results[i] for i in b],
    )


def test_usage_counts_calls_per_model_split_by_run_with_the_recorded_tokens(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    _calls(store, "chatbot", "api", [{"usage": {"prompt_tokens": 10, "completion_tokens": 3}}] * 2)
    _calls(store, "diarist", "smollm2", [{"new_tokens": 7}, {"new_tokens": 5}])
    store.update("calls", {"created": time.time() - 3600})
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    (tmp_path / "resumes.jsonl").write_text(json.dumps({"resumed": stamp}) + "\n{torn")
    store.cached_calls("judge", "j", {"m": "j"}, [{"i": 0}], lambda b: [{"prompt_tokens": 40}])
    _calls(store, "chatbot", "api", [{"usage": {"prompt_tokens": 10, "completion_tokens": 3}}] * 3)
    frame = usage_table(store, tmp_path).set_index(["role", "model"])
    store.close()
    api = frame.loc[("chatbot", "api")]
    # Requests 0 and 1 were stored an hour ago (read back now), 2 made by the latest run.
    assert (api.calls, api.made_last_run, api.made_earlier) == (3, 1, 2)
    assert (api.prompt_tokens, api.completion_tokens) == (30, 9)
    writer = frame.loc[("diarist", "smollm2")]
    assert (writer.made_earlier, writer.completion_tokens, writer.prompt_recorded) == (2, 12, 0)
    judge = frame.loc[("judge", "j")]
    assert (judge.made_last_run, judge.prompt_tokens, judge.completion_recorded) == (1, 40, 0)
    text = "".join(section(frame.reset_index()))
    assert "| diarist | smollm2 | 2 | 0 | 2 | not recorded | 12 |" in text
    assert "| chatbot | api | 3 | 1 | 2 | 30 | 9 |" in text


def test_a_folder_never_resumed_counts_every_call_as_the_latest_runs(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    _calls(store, "diarist", "/somewhere/else/model-folder", [{"new_tokens": 1}])
    frame = usage_table(store, tmp_path)
    store.close()
    assert frame[["calls", "made_last_run", "made_earlier"]].values.tolist() == [[1, 1, 0]]
    assert "model-folder (outside the run folder)" in "".join(section(frame, tmp_path))
