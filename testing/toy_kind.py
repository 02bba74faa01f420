"""A toy experiment kind that lives outside the lab (tests/experiments/kinds/test_kind_contract.py
registers it): each cell is one fixed note from the design's [toy] table, stored without any model;
every judge reads each note's coherence on 0–100; the report lists the readings per note. It uses
the kind contract (experiments/engine/contract.py) and the engine's public parts only: a new kind
needs no line changed outside its own folder."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

from pydantic import Field

from diarylab.experiments.engine.contract import Design, ExperimentKind, RunContext, TaskJudging
from diarylab.experiments.engine.design import DesignFile
from diarylab.experiments.engine.store import JudgmentRow, Store
from diarylab.experiments.engine.tasks import Task
from diarylab.experiments.engine.workload import PLACEHOLDER, Texts, Workload
from diarylab.foundation.datafiles import DataModel, NonEmpty
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts


@dataclass(frozen=True)
class NoteRow:
    TABLE: ClassVar[str] = "toy_notes"
    note_id: str
    text: str


class Notes(DataModel):
    notes: list[NonEmpty] = Field(min_length=1, description="the notes, one cell each")


class ToyDesignFile(DesignFile):
    writes: ClassVar[bool] = False  # no diarist model: the notes are given
    toy: Notes = Field(description="[toy]: what the toy kind judges")


def _spec(design: Design) -> ToyDesignFile:
    return cast(ToyDesignFile, design.spec)


def _prompt(text: str) -> tuple[Any, Any]:
    templates = EntryTemplates.load()
    return entry_prompts(text, [], templates)["coherence"], templates.coherence.ref


class ToyKind(TaskJudging):
    name = "toy"
    schema = ToyDesignFile
    row_types = (NoteRow,)

    def profile_refs(self, design: Design) -> list[str]:
        return []

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[str]:
        return [f"note{i}" for i in range(len(_spec(design).toy.notes))]

    def describe(self, design: Design, cells: Sequence[str]) -> str:
        return f"{len(cells)} notes, {len(design.spec.judges)} judge(s)"

    def workload(self, design: Design, cells: Sequence[Any]) -> Workload:
        prompt, _ = _prompt(PLACEHOLDER)
        return Workload(
            texts=(Texts("writing", "notes", len(cells), None, model=False),),
            readings={"number": len(cells)},
            progress_readings=len(cells),
            judged_tokens=max(len(n.split()) * 2 for n in _spec(design).toy.notes),
            samples={"number": prompt},
            sample_with=lambda text: {"number": _prompt(text)[0]},
            text_tables=(NoteRow.TABLE,),
        )

    def planned_units(self, design: Design, cells: Sequence[str]) -> int:
        return self.workload(design, cells).units(len(design.spec.judges))

    def converse(self, run: RunContext) -> None:
        notes = _spec(run.design).toy.notes
        for cell, text in zip(run.cells, notes, strict=True):
            if not run.store.has(NoteRow, cell):
                run.store.put_rows(NoteRow(cell, text))
            run.tick(1)

    def judge_tasks(self, run: RunContext) -> Iterator[Task]:
        for cell in run.cells:
            note = run.store.get(NoteRow, cell)
            prompt, ref = _prompt(note.text)
            yield Task("note", cell, "coherence", "number", prompt, ref)

    def input_files(self, design: Design) -> list[Path]:
        return []

    def manifest(self, run: RunContext) -> dict[str, Any]:
        return {"notes": len(run.cells)}

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        lines = ["# Toy findings\n", "| note | judge | coherence |", "|---|---|---|"]
        for judge, target, value in store.select(
            JudgmentRow.TABLE, ("judge", "target_id", "value"), order_by=("target_id", "judge")
        ):
            shown = "unreadable" if value is None else f"{value:.1f}"
            lines.append(f"| {target} | {judge} | {shown} |")
        out = folder / "report"
        out.mkdir(parents=True, exist_ok=True)
        (out / "findings.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return out / "findings.md"


KIND: ExperimentKind[str] = ToyKind()
