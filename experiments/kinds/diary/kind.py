"""The diary experiment as a kind of the engine: diarist × profile × chatbot cells, the
four-entry loop, entry scores and the behavior rubric, and the diary report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from diarylab.chatbots.specs import ChatbotSpec
from diarylab.diarists.cards import load_cards
from diarylab.diarists.templates import load_entry_template
from diarylab.experiments.engine.contract import Design, RunContext, TaskJudging
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import ContrastSample, Task, TextNoise
from diarylab.experiments.engine.workload import Texts, Workload, profile_work, reply_texts
from diarylab.experiments.kinds.diary.cells import Cell, expand
from diarylab.experiments.kinds.diary.prompt_sizes import (
    after_text,
    chatbot_prompt,
    entry_prompt,
    judged_longest,
    judged_mean,
)
from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.experiments.kinds.diary.tasks import (
    diary_tasks,
    planned_per_judge,
    planned_readings,
    planned_together,
    sample_prompts,
)

if TYPE_CHECKING:
    from diarylab.experiments.kinds.diary.conversations import DiaryWriter


def _spec(design: Design) -> DiaryDesignFile:
    return cast(DiaryDesignFile, design.spec)


class DiaryKind(TaskJudging):
    name = "diary"
    schema = DiaryDesignFile
    row_types = (EntryRow, ReplyRow)

    def profile_refs(self, design: Design) -> list[str]:
        return list(_spec(design).cast.profiles)

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[Cell]:
        return expand(_spec(design), profile_ids)

    def describe(self, design: Design, cells: Sequence[Cell]) -> str:
        spec = _spec(design)
        return (
            f"{len(spec.cast.diarist_ids)} diarists × {len(spec.cast.profiles)} profiles × "
            f"{len(spec.chatbots)} chatbots = {len(cells)} cells, {spec.design.entries} entries "
            f"each, {len(spec.judges)} judge(s), {len(spec.hypotheses)} hypotheses"
        )

    def planned_units(self, design: Design, cells: Sequence[Cell]) -> int:
        return self.workload(design, cells).units(len(design.spec.judges))

    def workload(self, design: Design, cells: Sequence[Any]) -> Workload:
        spec = _spec(design)
        entries = design.entries
        firsts = {c.entry_id(1) for c in cells}  # entry 1 is shared by every chatbot
        written = len(firsts) + len(cells) * (entries - 1)
        per_bot = Counter(c.chatbot for c in cells)
        most = spec.writer.generation.max_new_tokens
        profiles, profile_readings = profile_work(spec)

        def prompt(bot: ChatbotSpec) -> tuple[float, float, float]:
            size = chatbot_prompt(spec, bot)
            return size.prompt, size.cached, size.longest

        entry = entry_prompt(spec, cells)

        return Workload(
            texts=(
                *profiles,
                Texts(
                    "writing",
                    "entries",
                    written,
                    most,
                    prompt_tokens=entry.prompt,
                    longest_prompt=entry.longest,
                ),
                *reply_texts(spec.chatbots, {b: n * entries for b, n in per_bot.items()}, prompt),
            ),
            judged_mean=judged_mean(spec, cells),
            after_text=after_text(spec, cells),
            judged_longest=judged_longest(spec),
            readings=planned_readings(spec, cells),
            progress_readings=planned_per_judge(spec, cells),
            judged_tokens=max([most, *(t.max_tokens or 0 for t in reply_texts(spec.chatbots, {}))]),
            profile_readings=profile_readings,
            samples=sample_prompts(spec),
            sample_with=lambda text: sample_prompts(spec, text),
            text_tables=("entries",),
            together=planned_together(spec, cells),
        )

    def _writer(self, run: RunContext) -> DiaryWriter:
        # imported where a run needs them: checking and planning a design must not load torch
        from diarylab.experiments.engine.writes import Writer

        spec = _spec(run.design)
        return Writer(
            run.writer(),
            spec.writer.generation,
            spec.writer.local,
            load_entry_template(),
            {c.id: c for c in load_cards(spec.cast.diarist_ids)},
            run.profiles,
        )

    def converse(self, run: RunContext) -> None:
        from diarylab.experiments.kinds.diary.conversations import run_conversations
        from diarylab.experiments.kinds.diary.projection_scores import project_entries

        run_conversations(
            run.store,
            self._writer(run),
            run.chatbots,
            run.cells,
            run.design.entries,
            run.design.seed,
            run.tick,
        )
        # The judge-free pattern measure, stored beside the judges' scores (not in the
        # progress total: how many patterns have a direction is known only once profiles load).
        project_entries(
            run.store, self._writer(run), _spec(run.design).scores.pattern_ids, lambda n: None
        )

    def judge_tasks(self, run: RunContext) -> Iterator[Task]:
        return diary_tasks(run.store, _spec(run.design), run.cells)

    # ------------------------------------------------------------ derived runs (ReuseSupport)
    text_rows = (EntryRow, ReplyRow)
    text_calls = ("diarist", "chatbot")

    def text_ids(self, design: Design, cells: Sequence[Any]) -> dict[str, set[str]]:
        steps = range(1, design.entries + 1)
        return {
            EntryRow.TABLE: {c.entry_id(k) for c in cells for k in steps},
            ReplyRow.TABLE: {c.reply_id(k) for c in cells for k in steps},
        }

    def text_inputs(self, design: Design) -> list[Path]:
        from diarylab.chatbots.refusals import REFUSALS_FILE
        from diarylab.diarists.cards import cards_dir
        from diarylab.diarists.templates import TEMPLATES_DIR

        cards = _spec(design).cast.diarist_ids
        return [
            TEMPLATES_DIR / "entry.toml",
            *(cards_dir() / f"{c}.toml" for c in cards),
            REFUSALS_FILE,
        ]

    def input_files(self, design: Design) -> list[Path]:
        from diarylab.chatbots.refusals import REFUSALS_FILE
        from diarylab.diarists.cards import cards_dir
        from diarylab.diarists.patterns import PATTERNS_DIR
        from diarylab.diarists.templates import TEMPLATES_DIR
        from diarylab.rubric.behavior_rubric import RUBRIC_FILE
        from diarylab.rubric.prompts import TEMPLATES_DIR as JUDGE_TEMPLATES

        spec = _spec(design)
        patterns = {*spec.scores.pattern_ids, *(p.pattern for p in spec.profiles)}
        return [
            TEMPLATES_DIR / "entry.toml",
            *(cards_dir() / f"{c}.toml" for c in spec.cast.diarist_ids),
            *(PATTERNS_DIR / f"{p}.toml" for p in sorted(patterns)),
            RUBRIC_FILE,
            *sorted(JUDGE_TEMPLATES.glob("*.toml")),
            REFUSALS_FILE,
        ]

    def manifest(self, run: RunContext) -> dict[str, Any]:
        writer = self._writer(run)
        return {
            "data_files": {
                "entry_template": writer.template.sha256,
                **{f"card:{c.id}": c.sha256 for c in writer.cards.values()},
            },
        }

    # ------------------------------------------------------------------ pilot (PilotSupport)
    cluster_word = "diarist"
    text_word = "entry"

    def pilot_design(self, design: Design, clusters: int) -> dict[str, Any]:
        from diarylab.experiments.kinds.diary.pilot import pilot_design

        return pilot_design(design, clusters)

    def clusters(self, design: Design) -> int:
        return len(_spec(design).cast.diarist_ids)

    def resample(
        self, run: RunContext, judge_for: Callable[[str], Any], repeats: int, store: Store
    ) -> list[TextNoise]:
        from diarylab.experiments.kinds.diary.pilot import resample

        return resample(run, self._writer(run), judge_for, repeats, store)

    def contrast_samples(self, store: Store, design: Design) -> list[ContrastSample]:
        from diarylab.experiments.kinds.diary.pilot import contrast_samples

        return contrast_samples(store, design)

    def verdicts(self, store: Store, design: Design, resamples: int) -> Any:
        from diarylab.experiments.analysis.bootstrap import BootstrapSettings
        from diarylab.experiments.kinds.diary.hypotheses import hypothesis_table
        from diarylab.experiments.kinds.diary.tables import load_tables

        spec = _spec(design)
        a = spec.analysis
        settings = BootstrapSettings(
            a.cluster_column, resamples=resamples, seed=design.seed, method=a.interval
        )
        return hypothesis_table(
            load_tables(store, spec), design.raw, settings, a.min_diarists, a.decision_rule
        )

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        from diarylab.experiments.analysis.html_page import judgment_bounds
        from diarylab.experiments.analysis.usage import plan_section, usage_table
        from diarylab.experiments.engine.runfolder import read_manifest
        from diarylab.experiments.kinds.diary.report import write_report
        from diarylab.experiments.kinds.diary.tables import judge_readings, load_tables
        from diarylab.experiments.rating.report_lines import rating_text

        spec = _spec(design)
        rating = rating_text(folder, store, design)
        return write_report(
            folder,
            load_tables(store, spec),
            design=design.raw,
            design_sha256=design.sha256,
            manifest=read_manifest(folder),
            resamples=resamples,
            seed=design.seed,
            baseline_chatbot=spec.analysis.baseline_chatbot,
            cluster=spec.analysis.cluster_column,
            min_diarists=spec.analysis.min_diarists,
            judge_readings=judge_readings(store),
            bounds=judgment_bounds(store),
            coverage_floor=design.coverage_floor,
            decision_rule=spec.analysis.decision_rule,
            interval=spec.analysis.interval,
            usage=usage_table(store, folder),
            plan_lines=plan_section(store, folder),
            rating_lines=rating.section,
            judge_boxes=rating.box,
        )
