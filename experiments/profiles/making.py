"""Making a design's inline profiles.

A design names its profiles as "unsteered", a profile file, or the id of an inline [[profiles]]
rule (a pattern plus a fixed steer setting or a calibration rule). Files are loaded and checked
in experiments/profiles/refs.py; inline rules are made here, once per run folder — the vector
extracted on the diarist model, then calibrated with one of the design's judges (or steered at
the fixed setting) — and kept in the run folder as a vector and a profile file, whose choice the
manifest records. Every model call made on the way (contrast pairs, calibration samples, judge
readings) goes through the cached-call door of the profile maker's own store,
profiles/store.sqlite in the run folder, so a run killed while making a profile resumes with the
calls it made; it is a store of its own so the experiment's store holds only the experiment's
rows. The `diarylab steer` commands use the same extraction, calibration and scoring functions
(experiments/profiles/vectors.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from diarylab.diarists.patterns import Pattern, load_pattern
from diarylab.diarists.profiles import Profile, load_profile, write_profile
from diarylab.experiments.engine.contract import Design
from diarylab.experiments.engine.design import ProfileRule
from diarylab.experiments.engine.store import Store
from diarylab.experiments.profiles.vectors import (
    calibrate_pattern,
    chosen_setting,
    extract_pattern,
    judge_scorer,
    study_rule,
)
from diarylab.foundation.datafiles import file_sha256
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.rubric.judging.judge_base import Judge
from diarylab.steering.calibrate import write_outputs
from diarylab.steering.vectors import PatternVector, vector_paths

PROFILE_STORE = "store.sqlite"  # under the run folder's profiles/


class InlineProfiles:
    """Makes a design's inline profiles inside a run folder, once: a finished profile file is
    loaded as it is, so a resumed run steers with exactly what the first run chose; an
    unfinished one is made again from the calls its store kept."""

    def __init__(
        self,
        design: Design,
        folder: Path,
        model: LocalModel | None,
        judge_for: Callable[[str], Judge],
        *,
        progress: bool = True,
    ) -> None:
        self.design = design
        self.folder = folder / "profiles"
        self._model = model
        self.judge_for = judge_for
        self.progress = progress

    @property
    def model(self) -> LocalModel:
        """The diarist model an inline rule is made on (only a writing kind has rules)."""
        if self._model is None:
            raise LabError("an inline profile needs the diarist model", where="[[profiles]]")
        return self._model

    def __call__(self, rule: ProfileRule) -> Profile:
        profile_file = self.folder / f"{rule.id}.toml"
        if profile_file.is_file():
            return load_profile(profile_file)
        self.folder.mkdir(parents=True, exist_ok=True)
        store = Store(self.folder / PROFILE_STORE)
        try:
            return self._make(rule, profile_file, store)
        finally:
            store.close()

    def _make(self, rule: ProfileRule, profile_file: Path, store: Store) -> Profile:
        pattern = load_pattern(rule.pattern)
        vector_file = self.folder / f"{rule.id}.safetensors"
        vector = self._vector(rule, pattern, vector_file, store)
        record: dict[str, str | int | float | bool] = {
            "made_by": "diarylab run (inline profile rule)",
            "rule": json.dumps(rule.model_dump(mode="json"), sort_keys=True),
            "model": self.design.spec.writer.model,
            "pattern_sha256": pattern.sha256,
            "seed": self.design.seed,
        }
        if rule.calibration is not None:
            c = study_rule(rule.calibration, self.design.spec.writer.generation)
            judge_for, judge_id = self.judge_for, c.judge
            scorer = judge_scorer(
                store,
                judge_id,
                lambda: judge_for(judge_id),  # built only when a reading is not stored
                pattern,
                floor=self.design.coverage_floor,
                progress=self.progress,
            )
            out = self.folder / f"{rule.id}.calibration"
            print(f"calibrating profile {rule.id} ...", flush=True)
            result = calibrate_pattern(
                self.model,
                vector,
                pattern,
                c,
                scorer,
                seed=self.design.seed,
                store=store,
                progress=self.progress,
            )
            write_outputs(result, out, title=f"{pattern.name} on {record['model']} ({c.judge})")
            steer = chosen_setting(result, c, out)
            assert result.chosen is not None
            record.update(
                sample_generation=json.dumps(c.generation.key(), sort_keys=True),
                judge=c.judge,
                floor=float(c.floor),
                pattern_mean=round(result.chosen.pattern_mean, 2),
                coherence_mean=round(result.chosen.coherence_mean, 2),
            )
        else:
            assert rule.steer is not None
            steer = rule.steer
            record["chosen_by"] = "fixed setting in the design (not calibrated)"
        write_profile(
            profile_file,
            profile_id=rule.id,
            pattern=pattern.id,
            vector=vector_paths(vector_file)[0],
            vector_sha256=file_sha256(vector_paths(vector_file)[0]),
            steer=steer,
            calibration=record,
        )
        return load_profile(profile_file)

    def _vector(
        self, rule: ProfileRule, pattern: Pattern, path: Path, store: Store
    ) -> PatternVector:
        tensors, meta = vector_paths(path)
        if tensors.is_file() and meta.is_file():
            return PatternVector.load(path)
        print(f"extracting a {pattern.id} vector for profile {rule.id} ...", flush=True)
        result = extract_pattern(
            self.model,
            pattern,
            rule.extraction,
            seed=self.design.seed,
            store=store,
            progress=self.progress,
        )
        result.vector.save(path)  # tensors then sidecar, each written whole
        return result.vector
