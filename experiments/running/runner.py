"""Running a design into a run folder, for every experiment kind: load and check what the design
names, claim the folder (lock the design), make its inline profiles, write the manifest, then
the kind's conversation phase and the judging phase (judges and a turn's chatbots at once:
experiments/engine/lanes.py). Re-running the same design resumes: every call already in the
store is read back instead of made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from diarylab.chatbots.specs import build_chatbot
from diarylab.diarists.profiles import Profile
from diarylab.experiments.derived.checks import reuse_for_run
from diarylab.experiments.engine.contract import Design, PlanSupport, RunContext
from diarylab.experiments.engine.executor import ExecutorSettings, JudgeRef
from diarylab.experiments.engine.executor_choice import open_executor
from diarylab.experiments.engine.manifest import local_placements, manifest_of, served_judges
from diarylab.experiments.engine.progress import Progress
from diarylab.experiments.engine.runfolder import (
    STORE_FILE,
    add_inputs,
    check_claimable,
    claim,
    default_folder,
    write_manifest,
)
from diarylab.experiments.engine.runlock import run_lock
from diarylab.experiments.engine.store import Store
from diarylab.experiments.planning.held_plan import save_plan
from diarylab.experiments.profiles.making import InlineProfiles
from diarylab.experiments.profiles.refs import profiles_manifest, resolve_profiles
from diarylab.experiments.running.preflight import preflight
from diarylab.model_access.local import LocalModel
from diarylab.model_access.shared_models import LocalModels
from diarylab.rubric.judging.building import build_judge
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.served_judge import ProbeResult
from diarylab.steering.vectors import vector_paths


@dataclass(frozen=True)
class RunSummary:
    folder: Path
    cells: int
    rows: dict[str, int]
    calls_made: int
    calls_cached: int
    resent: int = 0  # batches sent again after their actor died (the Ray executor)

    def line(self) -> str:
        tables = " · ".join(f"{name} {n}" for name, n in self.rows.items())
        resent = f" · batches resent after an actor died {self.resent}" if self.resent else ""
        return (
            f"cells {self.cells} · {tables} · model calls made {self.calls_made}, "
            f"read from the store {self.calls_cached}{resent}"
        )


class JudgeSet:
    """The design's judges, built on first use; local ones share the run's loaded models."""

    def __init__(self, design: Design, models: LocalModels) -> None:
        self.design = design
        self.models = models
        self._built: dict[str, Judge] = {}
        self._refs: dict[int, JudgeRef] = {}

    def get(self, judge_id: str) -> Judge:
        if judge_id not in self._built:
            spec = self.design.spec.judge(judge_id)
            judge = build_judge(spec, self.models.get)
            if (served := spec.served()) is not None:
                # a served judge an actor builds from its spec (a local one is its model's)
                self._refs[id(judge)] = JudgeRef(served.model_dump_json())
            self._built[judge_id] = judge
        return self._built[judge_id]

    def refs(self) -> dict[int, JudgeRef]:
        return dict(self._refs)


def run_design(
    design: Design,
    out: Path | None = None,
    *,
    progress: bool = True,
    after: Callable[[RunContext, JudgeSet], None] | None = None,
    executor: ExecutorSettings | None = None,
) -> RunSummary:
    """`after` runs once the run is complete, with its models loaded and store open (a pilot's
    extra samples). `executor` says where local model calls run (a run option, not the
    design's: the store is the same either way)."""
    executor = executor or ExecutorSettings()
    folder = Path(out) if out else default_folder(design)
    kind = design.kind
    spec = design.spec
    # Everything that can be wrong with the inputs is checked before the folder is claimed.
    probes: dict[str, ProbeResult] = {}
    preflight(design, probes=probes)
    check_claimable(design, folder)
    reuse = reuse_for_run(design, folder)  # a derived design: the run it reuses, checked
    models = LocalModels()
    judges = JudgeSet(design, models)
    refs = kind.profile_refs(design)
    # A kind that writes nothing (benchmark) has no diarist model and never loads one.
    writer_model = None
    if spec.writes and spec.writer.engine == "vllm":
        w = spec.writer
        writer_model = models.on_vllm(w.model, w.local, w.vllm, "[diarist_model].engine")
    elif spec.writes:
        writer_model = models.get(spec.writer.model, spec.writer.local)
    chatbots = {c.id: build_chatbot(c, models) for c in spec.chatbots}
    files = resolve_profiles(design, [r for r in refs if spec.profile_rule(r) is None])
    _check_profiles(files.values(), writer_model)
    if reuse is not None:
        reuse.check_models(writer_model, chatbots)  # the models that wrote the reused texts
    with run_lock(folder):
        first = claim(design, folder, [*kind.input_files(design), *_profile_files(files)])
        if first:
            save_plan(design, folder)
        if reuse is not None:
            reuse.copy_profiles(folder)  # its inline profiles are the run's, never made again
        inline = InlineProfiles(design, folder, writer_model, judges.get, progress=progress)
        profiles = resolve_profiles(design, refs, make_inline=inline)
        made = {p.id: p for p in profiles.values() if p.id not in files and p.steered}
        add_inputs(folder, _profile_files(made))
        _check_profiles(profiles.values(), writer_model)
        cells = kind.cells(design, list(profiles))
        store = Store(folder / STORE_FILE, kind.row_types)
        try:
            if reuse is not None:
                reuse.copy_into(store)  # the run's texts, then no writing or chatbot call
            store.executor = open_executor(executor, lambda: {**models.refs(), **judges.refs()})
            run = RunContext(design, folder, store, writer_model, profiles, chatbots, cells)
            run.judge, run.models = judges.get, models
            extra = {**kind.manifest(run), "served_judges": served_judges(probes)}
            if reuse is not None:
                extra["derived_from"] = reuse.record()
            manifest = manifest_of(design, _manifest(run, extra))
            write_manifest(folder, manifest, first=first)
            phases = _phases(kind, design, cells)
            with Progress(phases, store, enabled=progress, folder=folder) as bar:
                run.tick = bar.tick
                bar.phase(phases[0][0])
                kind.converse(run)
                bar.phase(phases[-1][0])
                kind.judge_phase(run)
            if after is not None:
                after(run, judges)
            rows = {t.TABLE: store.count(t.TABLE) for t in kind.row_types}
            rows["judgments"] = store.count("judgments")
            resent = int(getattr(store.executor, "resent", 0))
            return RunSummary(
                folder, len(cells), rows, store.made, store.cached + store.kept, resent
            )
        finally:
            store.executor.close()  # the actors go (and a cluster this run started)
            store.close()
            models.close()  # workers start only on a first generate, inside this try


def _phases(kind: Any, design: Design, cells: Sequence[Any]) -> list[tuple[str, int]]:
    """The run's phases and their planned steps: writing (the texts the conversation phase
    makes) and judging (every reading, and a judge's own texts); one phase for a kind that does
    not count its work."""
    total = kind.planned_units(design, cells)
    if not isinstance(kind, PlanSupport):
        return [("working", total)]
    workload = kind.workload(design, cells)
    writing = sum(t.count for t in workload.texts if not t.per_judge and t.phase != "profiles")
    return [("writing", writing), ("judging", total - writing)]


def _profile_files(profiles: Mapping[str, Profile]) -> list[Path]:
    out: list[Path] = []
    for p in profiles.values():
        if p.path is not None and p.vector_path is not None:
            out += [p.path, *vector_paths(p.vector_path)]
    return out


def _check_profiles(profiles: Iterable[Profile], writer_model: LocalModel | None) -> None:
    if writer_model is not None:  # a kind without a writer has no profiles to check
        for profile in profiles:
            profile.check_model(writer_model.info())


def _manifest(run: RunContext, extra: dict[str, Any]) -> dict[str, Any]:
    spec = run.design.spec
    writer: dict[str, Any] = {}
    if run.writer_model is not None and spec.writing_model is not None:
        info = asdict(run.writer_model.info())
        info.pop("location", None)
        writer = {
            "diarist_model": info,
            "diarist_settings": spec.writing_model.model_dump(mode="json"),
        }
    return {
        "kind": run.design.kind.name,
        **writer,
        "chatbots": {k: v.identity() for k, v in run.chatbots.items()},
        "judges": {j.id: j.model_dump(mode="json", exclude={"endpoint"}) for j in spec.judges},
        "profiles": profiles_manifest(run.profiles, run.folder),
        "placements": local_placements(run.writer_model, run.chatbots),
        **extra,
    }
