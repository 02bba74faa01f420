"""A run's results as typed pandas frames, for notebooks: `diarylab.open_run(path)`.

    import diarylab
    run = diarylab.open_run("results/demo")
    run.readings()      # one row per judge reading: who wrote what, the judge, value, bound
    run.texts()         # every text the run wrote or stored (entries, replies, letters, ...)
    run.answers()       # the yes/no readings (behavior rubric, grader questions)
    run.projection()    # the judge-free projection measure (its own scale), where a kind has it
    run.calls()         # every model call the store holds, with the tokens it states
    run.ratings()       # people's answers to the run's rating sample (`diarylab rate`)

Every frame has exactly the columns declared in experiments/frames/columns.py (FRAMES), in
that order and with those meanings; docs/results-columns.md is generated from the same
declarations (tests/experiments/frames/test_run_frames.py holds the file to them). The frames are
read through the store's own table reads (experiments/engine/store/): no SQL here. Rows are in key
order, so two copies of a run give equal frames."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd

from diarylab.experiments.designs.opening import open_run_folder
from diarylab.experiments.frames.columns import FRAMES
from diarylab.foundation.errors import LabError

COMPUTED = ("verdicts",)  # frames computed from the store on request, not exported
# Row fields that name the same thing in different kinds' tables.
_ALIASES = {"diarist": ("diarist", "writer"), "entry": ("entry_index", "letter_index")}


class RunResults:
    """An opened run folder's results. Frames are read when asked for; close() (or a with
    block) releases the store."""

    def __init__(self, folder: Path) -> None:
        self._run = open_run_folder(Path(folder))
        self.folder = self._run.folder
        self.design = self._run.design
        self._readings: pd.DataFrame | None = None

    def __enter__(self) -> RunResults:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store (a `with` block does it on leaving)."""
        self._run.store.close()

    @property
    def store(self) -> Any:
        """The run's store (experiments/engine/store/), for the lab's own readers."""
        return self._run.store

    def verdicts(self, resamples: int | None = None) -> pd.DataFrame:
        """The preregistered hypotheses' verdicts, one row per hypothesis × judge, computed as
        the report computes them (the design's rule, interval and seed; `resamples` defaults to
        the design's): the report's tables/hypotheses.csv without its row ids (`sources`: the
        texts each rests on). A kind with no hypotheses (the benchmark) has none to give."""
        from diarylab.experiments.engine.contract import VerdictSupport

        kind = self.design.kind
        if not isinstance(kind, VerdictSupport):
            raise LabError(
                f"a {kind.name} run states no preregistered verdicts",
                where=str(self.folder),
                fix="read its readings() and answers(), or its report",
            )
        frame = kind.verdicts(self.store, self.design, resamples or self.design.resamples)
        return frame.reset_index(drop=True)

    def export(self, folder: Path) -> list[Path]:
        """Every stored frame as FRAME.parquet in `folder`, written whole or not at all per
        file. The verdicts are computed, not stored (the report's tables/hypotheses.csv)."""
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name in FRAMES:
            if name in COMPUTED:
                continue
            path = folder / f"{name}.parquet"
            tmp = path.with_name(f".{path.name}.tmp")
            getattr(self, name)().to_parquet(tmp, index=False)
            tmp.replace(path)
            written.append(path)
        return written

    def texts(self) -> pd.DataFrame:
        """Every text the run wrote (entries, replies, letters, answers), one row each, with
        who wrote it and its flag (`truncated`, ...)."""
        store = self._run.store
        parts = []
        for table, row_type in sorted(store.row_types.items()):
            names = {f.name for f in fields(row_type)}
            if "text" not in names or table not in store.tables():
                continue
            frame = store.frame(table)
            key = fields(row_type)[0].name
            out = pd.DataFrame({"text_id": frame[key], "table": table})
            for column in ("diarist", "profile", "pattern", "chatbot", "entry"):
                source = next((a for a in _ALIASES.get(column, (column,)) if a in names), None)
                out[column] = frame[source] if source else None
            out["text"] = frame["text"]
            out["flag"] = frame["flag"] if "flag" in names else None
            parts.append(out)
        return _typed("texts", pd.concat(parts, ignore_index=True) if parts else None)

    def readings(self) -> pd.DataFrame:
        """Every judge reading of a text: a 0–100 score's expected value or a yes/no
        question's P(yes), with its coverage and whether it counts (the projection apart)."""
        frame = self._all_readings()
        return _typed("readings", frame[frame["judge"] != "projection"])

    def answers(self) -> pd.DataFrame:
        """The yes/no readings alone: the behavior rubric's P(yes) per reply and question."""
        frame = self._all_readings()
        return _typed("answers", frame[frame["question"] == "yes_no"])

    def projection(self) -> pd.DataFrame:
        """The judge-free measure: each entry's projection on its pattern's vector."""
        frame = self._all_readings()
        return _typed("projection", frame[frame["judge"] == "projection"])

    def calls(self) -> pd.DataFrame:
        """Every model call the store holds: its key, role, model, when, and its tokens."""
        calls = self._run.store.frame("calls")
        results = [json.loads(r) for r in calls["result"]]
        out = calls[["key", "kind", "model", "created"]].rename(columns={"kind": "role"})
        out["prompt_tokens"] = [_stated(r, "prompt_tokens", "prompt_tokens") for r in results]
        out["completion_tokens"] = [_stated(r, "completion_tokens", "new_tokens") for r in results]
        return _typed("calls", out)

    def ratings(self) -> pd.DataFrame:
        """People's answers to the run's locked rating sample (`diarylab rate`), with the
        rated text's writer and the sample's weights; empty where none are imported."""
        from diarylab.experiments.rating.lock import read_lock
        from diarylab.experiments.rating.stored import stored_ratings

        sample = read_lock(self.folder)
        if sample is None:
            return _typed("ratings", None)
        frame = stored_ratings(self._run.store, sample).drop(columns=["diarist", "weight"])
        items = pd.DataFrame([it.to_record() for it in sample.items])
        frame = frame.merge(
            items[["item_id", "diarist", "profile", "chatbot", "entry", "inclusion", "weight"]],
            on="item_id",
            how="left",
        )
        texts = self.texts()
        patterns = dict(zip(texts["profile"], texts["pattern"], strict=False))
        frame["pattern"] = frame["profile"].map(patterns)
        return _typed("ratings", frame.sort_values("rating_id"))

    def _all_readings(self) -> pd.DataFrame:
        """Every judgment with its call's fields: read once per opened run (readings, answers
        and projection are cuts of it), parsing only the judges' call records, not every
        writer's and chatbot's (at paper size, export parsed the whole calls table three
        times)."""
        if self._readings is None:
            self._readings = self._read_readings()
        return self._readings.copy()

    def _read_readings(self) -> pd.DataFrame:
        store = self._run.store
        judgments = store.frame("judgments")
        wanted = set(judgments["call_key"].dropna())
        records: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        kinds = {kind for key, kind in store.select("calls", ["key", "kind"]) if key in wanted}
        for kind in sorted(kinds):  # the judges' kinds only: a writer's records stay unread
            for key, request, result in store.select(
                "calls", ["key", "request", "result"], where={"kind": kind}
            ):
                if key in wanted:
                    records[key], requests[key] = json.loads(result), json.loads(request)
        out = judgments.copy()
        record = [records.get(k, {}) for k in out["call_key"]]
        out["question"] = [
            requests.get(k, {}).get("question", "number" if r.get("kind") == "number" else None)
            for k, r in zip(out["call_key"], record, strict=True)
        ]
        out["exact"] = [bool(r.get("exact", True)) for r in record]
        bounds = [(r.get("bound") or {}).get("mean") for r in record]
        out["bound_low"] = [b[0] if b else None for b in bounds]
        out["bound_high"] = [b[1] if b else None for b in bounds]
        out["max_error"] = [r.get("max_error") for r in record]
        out["prompts"] = [r.get("requests") for r in record]
        out["http_requests"] = [r.get("http_requests") for r in record]
        who = self.texts().set_index("text_id")
        for column in ("diarist", "profile", "pattern", "chatbot", "entry"):
            out[column] = out["target_id"].map(who[column]) if len(who) else None
        return out


def _stated(record: Mapping[str, Any], usage_name: str, own_name: str) -> Any:
    usage = record.get("usage") or {}
    value = usage.get(usage_name, record.get(own_name))
    return int(value) if isinstance(value, int | float) else None


def _typed(name: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """The frame with exactly its declared columns, in order, with their dtypes."""
    columns = FRAMES[name]
    if frame is None:
        frame = pd.DataFrame({c.name: [] for c in columns})
    out = pd.DataFrame({c.name: frame[c.name].to_numpy() for c in columns})
    for c in columns:
        if c.dtype == "Int64":
            out[c.name] = pd.array([None if pd.isna(v) else int(v) for v in out[c.name]], "Int64")
        elif c.dtype == "bool":
            out[c.name] = out[c.name].astype(bool)
        elif c.dtype == "float64":
            out[c.name] = pd.to_numeric(out[c.name], errors="coerce").astype("float64")
        else:
            out[c.name] = out[c.name].astype("object")
    return out.reset_index(drop=True)


def open_run(folder: str | Path) -> RunResults:
    """A run folder's results as typed frames (see the module docstring)."""
    return RunResults(Path(folder))
