"""The two-steered-friends experiment as a kind of the engine: balanced pairs of role cards
exchanging letters (each writer steered or not), every letter scored for every pattern,
coherence and the identity check, and the friends report."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from diarylab.diarists.cards import load_cards
from diarylab.diarists.letters import load_fixed_letter, load_letter_template
from diarylab.experiments.engine.contract import Design, RunContext, TaskJudging
from diarylab.experiments.engine.design import UNSTEERED
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.tasks import ContrastSample, Task, TextNoise
from diarylab.experiments.engine.workload import Texts, Workload, profile_work
from diarylab.experiments.kinds.friends.pairs import Pair, expand
from diarylab.experiments.kinds.friends.prompt_sizes import letter_prompt
from diarylab.experiments.kinds.friends.rows import LetterRow
from diarylab.experiments.kinds.friends.schema import FriendsDesignFile
from diarylab.experiments.kinds.friends.tasks import (
    letter_tasks,
    model_letters,
    planned_per_judge,
    planned_readings,
    planned_together,
    sample_prompts,
)

if TYPE_CHECKING:
    from diarylab.experiments.kinds.friends.letters import LetterWriter


def friends_spec(design: Design) -> FriendsDesignFile:
    return cast(FriendsDesignFile, design.spec)


class FriendsKind(TaskJudging):
    name = "friends"
    schema = FriendsDesignFile
    row_types = (LetterRow,)

    def profile_refs(self, design: Design) -> list[str]:
        spec = friends_spec(design)
        unsteered = [UNSTEERED] if "two_unsteered" in spec.conditions.controls else []
        return [*unsteered, *spec.conditions.steered]

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[Pair]:
        return expand(friends_spec(design), [p for p in profile_ids if p != UNSTEERED])

    def describe(self, design: Design, cells: Sequence[Pair]) -> str:
        spec = friends_spec(design)
        controls = spec.conditions.controls
        steered = [c for c in cells if c.condition not in controls]
        conditions = len({c.condition for c in steered})
        return (
            f"{len(spec.pairs.card_ids)} role cards, {conditions} steered conditions = "
            f"{len(steered)} pairs + {len(cells) - len(steered)} control pairs "
            f"({', '.join(controls) or 'none'}), {spec.design.entries} letters per writer, "
            f"{len(spec.judges)} judge(s), {len(spec.hypotheses)} hypotheses"
        )

    def planned_units(self, design: Design, cells: Sequence[Pair]) -> int:
        return self.workload(design, cells).units(len(design.spec.judges))

    def workload(self, design: Design, cells: Sequence[Any]) -> Workload:
        spec = friends_spec(design)
        written = model_letters(cells)
        most = spec.writer.generation.max_new_tokens
        profiles, profile_readings = profile_work(spec)
        mean, longest = letter_prompt(spec)
        return Workload(
            texts=(
                *profiles,
                Texts(
                    "writing",
                    "letters",
                    written,
                    most,
                    prompt_tokens=mean,
                    longest_prompt=longest,
                ),
                Texts(
                    "writing",
                    "fixed letters",
                    sum(2 * c.letters for c in cells) - written,
                    None,
                    model=False,
                ),
            ),
            readings=planned_readings(spec.scores, cells),
            together=planned_together(spec.scores, cells),
            progress_readings=planned_per_judge(spec.scores, cells),
            judged_tokens=most,
            profile_readings=profile_readings,
            samples=sample_prompts(spec.scores),
            sample_with=lambda text: sample_prompts(spec.scores, text),
            text_tables=("letters",),
        )

    def _writer(self, run: RunContext) -> LetterWriter:
        # imported where a run needs them: checking and planning a design must not load torch
        from diarylab.experiments.engine.writes import Writer

        spec = friends_spec(run.design)
        return Writer(
            run.writer(),
            spec.writer.generation,
            spec.writer.local,
            load_letter_template(),
            {c.id: c for c in load_cards(spec.pairs.card_ids)},
            run.profiles,
        )

    def converse(self, run: RunContext) -> None:
        from diarylab.experiments.kinds.friends.letters import run_letters

        writer, fixed_letter = self._writer(run), load_fixed_letter()
        run_letters(run.store, writer, fixed_letter, run.cells, run.design.seed, run.tick)

    def judge_tasks(self, run: RunContext) -> Iterator[Task]:
        spec = friends_spec(run.design)
        cards = {c.id: c for c in load_cards(spec.pairs.card_ids)}
        return letter_tasks(run.store, spec.scores, run.cells, cards)

    # ------------------------------------------------------------ derived runs (ReuseSupport)
    text_rows = (LetterRow,)
    text_calls = ("diarist",)

    def text_ids(self, design: Design, cells: Sequence[Any]) -> dict[str, set[str]]:
        return {LetterRow.TABLE: {p.letter_id(seat, k) for p in cells for seat, k in p.order()}}

    def text_inputs(self, design: Design) -> list[Path]:
        from diarylab.diarists.cards import cards_dir
        from diarylab.diarists.letters import FIXED_LETTER_FILE, LETTER_FILE

        cards = friends_spec(design).pairs.card_ids
        return [LETTER_FILE, FIXED_LETTER_FILE, *(cards_dir() / f"{c}.toml" for c in cards)]

    def input_files(self, design: Design) -> list[Path]:
        from diarylab.diarists.cards import cards_dir
        from diarylab.diarists.letters import FIXED_LETTER_FILE, LETTER_FILE
        from diarylab.diarists.patterns import PATTERNS_DIR
        from diarylab.experiments.kinds.friends.tasks import IDENTITY_TEMPLATE
        from diarylab.rubric.prompts import TEMPLATES_DIR as JUDGE_TEMPLATES

        spec = friends_spec(design)
        patterns = {*spec.scores.pattern_ids, *(p.pattern for p in spec.profiles)}
        return [
            LETTER_FILE,
            FIXED_LETTER_FILE,
            *(cards_dir() / f"{c}.toml" for c in spec.pairs.card_ids),
            *(PATTERNS_DIR / f"{p}.toml" for p in sorted(patterns)),
            *(JUDGE_TEMPLATES / f"{t}.toml" for t in ("pattern", "coherence", IDENTITY_TEMPLATE)),
        ]

    def manifest(self, run: RunContext) -> dict[str, Any]:
        writer = self._writer(run)
        return {
            "data_files": {
                "letter_template": writer.template.sha256,
                "fixed_letter": load_fixed_letter().sha256,
                **{f"card:{c.id}": c.sha256 for c in writer.cards.values()},
            },
        }

    # ------------------------------------------------------------------ pilot (PilotSupport)
    cluster_word = "role card"
    text_word = "letter"

    def pilot_design(self, design: Design, clusters: int) -> dict[str, Any]:
        from diarylab.experiments.kinds.friends.pilot import pilot_design

        return pilot_design(design, clusters)

    def clusters(self, design: Design) -> int:
        return len(friends_spec(design).pairs.card_ids)

    def resample(
        self, run: RunContext, judge_for: Callable[[str], Any], repeats: int, store: Store
    ) -> list[TextNoise]:
        from diarylab.experiments.kinds.friends.pilot import resample

        return resample(run, self._writer(run), judge_for, repeats, store)

    def contrast_samples(self, store: Store, design: Design) -> list[ContrastSample]:
        from diarylab.experiments.kinds.friends.pilot import contrast_samples

        return contrast_samples(store, design)

    def verdicts(self, store: Store, design: Design, resamples: int) -> Any:
        from diarylab.experiments.kinds.friends.outcomes import letter_table, writer_outcomes
        from diarylab.experiments.kinds.friends.report import friends_settings, hypothesis_table

        spec = friends_spec(design)
        outcomes = writer_outcomes(letter_table(store), spec.outcome.letters)
        return hypothesis_table(outcomes, spec, friends_settings(spec, design, resamples))

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        from diarylab.experiments.engine.runfolder import read_manifest
        from diarylab.experiments.kinds.friends.report import write_friends_report

        return write_friends_report(
            folder, store, design, manifest=read_manifest(folder), resamples=resamples
        )
