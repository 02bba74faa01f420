"""The benchmark experiment as a kind of the engine: chatbots answer a fixed sample of a
published benchmark's conversations (MentalHealthBench or HealthBench, the user's own copy),
each judge grades every stored reply against the conversation's own criteria, read by
probability, and the report scores, calibrates and compares the chatbots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from diarylab.chatbots.refusals import REFUSALS_FILE
from diarylab.experiments.engine.contract import Design, RunContext
from diarylab.experiments.engine.judging import judge_tasks
from diarylab.experiments.engine.lanes import judge_lane, lanes_of, run_lanes
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.workload import Texts, Workload, reply_texts
from diarylab.experiments.kinds.benchmark.data import Benchmark, Conversation
from diarylab.experiments.kinds.benchmark.grader import Grader, load_grader
from diarylab.experiments.kinds.benchmark.grading import (
    criterion_items,
    grader_writer,
    reading_tasks,
    write_answers,
)
from diarylab.experiments.kinds.benchmark.inputs import (
    benchmark_of,
    benchmark_spec,
    data_path,
    grader_of,
)
from diarylab.experiments.kinds.benchmark.replies import Cell, expand, write_replies
from diarylab.experiments.kinds.benchmark.rows import (
    BenchConversationRow,
    BenchReplyRow,
    GraderAnswerRow,
)
from diarylab.experiments.kinds.benchmark.sample import sampled
from diarylab.experiments.kinds.benchmark.sample_store import check_same_data, keep_sample
from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile
from diarylab.experiments.kinds.benchmark.validation_tasks import (
    borrowed_items,
    plain_counts,
    plain_tasks,
    validation_files,
)
from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import GenerationSettings


class BenchmarkKind:
    name = "benchmark"
    schema = BenchmarkDesignFile
    row_types = (BenchReplyRow, GraderAnswerRow, BenchConversationRow)

    def profile_refs(self, design: Design) -> list[str]:
        return []

    def cells(self, design: Design, profile_ids: Sequence[str]) -> list[Cell]:
        bench, sample = benchmark_of(design)
        grader_of(design)  # a bad template is found by `design check`, not mid-run
        return expand(sampled(bench, sample), [c.id for c in design.spec.chatbots])

    def describe(self, design: Design, cells: Sequence[Cell]) -> str:
        bench, sample = benchmark_of(design)
        spread = ", ".join(f"{k} {n}" for k, n in sample.allocation.items())
        criteria = sum(len(c.criteria) for c in sampled(bench, sample))
        table = benchmark_spec(design).benchmark
        anchors = table.calibration.anchors if table.calibration else []
        stand_ins = [a.chatbot for a in anchors if a.placeholder]
        return (
            f"{len(sample.ids)} of {len(bench.conversations)} conversations ({spread}) × "
            f"{len(design.spec.chatbots)} chatbots = {len(cells)} replies; {criteria} criteria "
            f"per chatbot and judge, scored by the {table.scoring} convention"
            + (
                f"; anchors {', '.join(stand_ins)} have PLACEHOLDER published scores (the "
                "report flags every published-scale number)"
                if stand_ins
                else ""
            )
        )

    def planned_units(self, design: Design, cells: Sequence[Cell]) -> int:
        return self.workload(design, cells).units(len(design.spec.judges))

    def workload(self, design: Design, cells: Sequence[Any]) -> Workload:
        """Per judge: one written answer and one yes/no reading per criterion of every reply,
        and grader validation's plain yes/no questions; the borrowed criteria a judge chooses
        (and answers re-asked after a malformed one) are known only as the run goes."""
        spec = benchmark_spec(design)
        bench, sample = benchmark_of(design)
        conversations = sampled(bench, sample)
        per_reply = {c.id: len(c.criteria) for c in conversations}
        criteria = sum(per_reply[c.conversation] for c in cells)
        plain = plain_counts(spec, len(conversations), len(cells))
        grader = spec.benchmark.grader
        answer_tokens = grader.generation_for(grader_of(design).template.max_tokens).max_new_tokens
        bots = reply_texts(spec.chatbots, Counter(c.chatbot for c in cells))
        uncounted = []
        if grader.retries:
            uncounted.append(f"answers re-asked after a malformed one (up to {grader.retries})")
        if "borrowed_criteria" in spec.benchmark.validation:
            uncounted.append("the borrowed criteria each judge chooses, answered and read")
        return Workload(
            texts=(
                *bots,
                Texts(
                    "grading",
                    "grader answers",
                    criteria,
                    answer_tokens,
                    per_judge=True,
                    writer="judge",
                ),
            ),
            readings={"yes_no": criteria + plain},
            progress_readings=criteria,
            judged_tokens=max([answer_tokens, *(t.max_tokens or 0 for t in bots)]),
            uncounted=tuple(uncounted),
        )

    def converse(self, run: RunContext) -> None:
        bench = _checked_benchmark(run)
        write_replies(
            run.store,
            run.chatbots,
            run.cells,
            bench.by_id(),
            run.design.seed,
            bench.canaries,
            run.tick,
        )

    def replies(
        self, design: Design, store: Store, cells: Sequence[Cell]
    ) -> list[tuple[str, Conversation, str]]:
        """(reply id, conversation, stored reply text) for every cell."""
        conversations = benchmark_of(design)[0].by_id()
        out = []
        for cell in cells:
            row = store.get(BenchReplyRow, cell.id)
            assert row is not None, f"reply {cell.id} missing"
            out.append((cell.id, conversations[cell.conversation], row.text))
        return out

    def judge_phase(self, run: RunContext) -> None:
        """Per judge: the plain yes/no questions of grader validation (if asked), then every
        criterion (and each borrowed criterion the judge chose) written, then read."""
        assert run.judge is not None and run.models is not None
        spec = benchmark_spec(run.design)
        bench, sample = benchmark_of(run.design)
        grader = grader_of(run.design)
        _same_template(run.folder, grader)
        replies = self.replies(run.design, run.store, run.cells)
        own = criterion_items(grader, replies)
        floor = run.design.coverage_floor
        load, get = run.models, run.judge

        def one_judge(judge_spec: Any) -> None:
            judge_id = judge_spec.id

            def make_writer(generation: GenerationSettings) -> Any:
                return grader_writer(judge_spec, load, generation)

            def judge() -> Any:
                return get(judge_id)

            plain = plain_tasks(spec, sampled(bench, sample), replies)
            judge_tasks(run.store, judge_id, judge, plain, floor, lambda n: None)
            items = own + borrowed_items(run.store, judge_id, spec, grader, replies)
            answers = write_answers(
                run.store,
                judge_id,
                make_writer,
                items,
                spec.benchmark.grader,
                run.design.seed,
                bench.canaries,
                grader.template.answer_key,
                run.tick,
                grader.template.max_tokens,
            )
            run.tick(len(own) - sum(1 for i in answers if i < len(own)))  # ungraded: no reading
            tasks = reading_tasks(items, answers, bench.canaries)
            judge_tasks(run.store, judge_id, judge, tasks, floor, run.tick)

        # Every judge at once: a served one in its identity's lane, local ones in one lane.
        jobs = [
            (
                judge_lane(j, get),
                lambda j=j: one_judge(j),
            )
            for j in spec.judges
        ]
        run_lanes(run.store, lanes_of(jobs))

    # ------------------------------------------------------------ derived runs (ReuseSupport)
    text_rows = (BenchReplyRow,)
    text_calls = ("chatbot",)

    def text_ids(self, design: Design, cells: Sequence[Any]) -> dict[str, set[str]]:
        return {BenchReplyRow.TABLE: {c.id for c in cells}}

    def text_inputs(self, design: Design) -> list[Path]:
        return [data_path(design), REFUSALS_FILE]

    def input_files(self, design: Design) -> list[Path]:
        return [
            # Not the benchmark file: it may not be redistributable. The manifest names it by
            # name, sha256 and the sample's ids; the store keeps the sampled conversations.
            grader_of(design).path,
            REFUSALS_FILE,
            *validation_files(benchmark_spec(design)),
        ]

    def manifest(self, run: RunContext) -> dict[str, Any]:
        bench, sample = benchmark_of(run.design)
        grader = grader_of(run.design)
        table = benchmark_spec(run.design).benchmark
        return {
            "benchmark": {
                "file": bench.path.name,
                "format": table.format,
                "convention": table.scoring,
                "sample": sample.manifest(bench.sha256, run.design.seed),
            },
            "grader_template": {
                "path": str(grader.path.resolve()),
                "id": grader.template.id,
                "version": grader.template.version,
                "sha256": grader.sha256,
                "user_supplied": grader.path != Path(__file__).parent / "grader.toml",
                "exact_text": grader.exact_text,
                "system_message": bool(grader.template.system.strip() or grader.default_system),
                "defaults": table.grader.defaults,
                "generation": table.grader.generation_for(grader.template.max_tokens).key(),
            },
        }

    def with_grader_template(self, design: Design, path: Path) -> Design:
        return _with_grader_template(design, path)

    def report(self, folder: Path, store: Store, design: Design, resamples: int) -> Path:
        from diarylab.experiments.kinds.benchmark.report import write_report

        return write_report(folder, store, design, resamples)


def _with_grader_template(design: Design, path: Path) -> Design:
    """The design with `--grader-template FILE` in place of benchmark.grader.template."""
    spec = benchmark_spec(design)
    grader = spec.benchmark.grader.model_copy(update={"template": str(Path(path).resolve())})
    table = spec.benchmark.model_copy(update={"grader": grader})
    load_grader(Path(path))  # refuse a bad file before anything runs
    return replace(design, spec=spec.model_copy(update={"benchmark": table}))


def _checked_benchmark(run: RunContext) -> Benchmark:
    """The design's benchmark file, refused when a resumed run's file is not the one the run
    sampled; its sampled conversations stored for the folder's report."""
    from diarylab.experiments.engine.runfolder import read_manifest

    bench, sample = benchmark_of(run.design)
    check_same_data(run.folder, read_manifest(run.folder).get("benchmark", {}), bench, sample)
    keep_sample(run.store, sampled(bench, sample))
    return bench


def _same_template(folder: Path, grader: Grader) -> None:
    """A run is graded with one template: resuming with another would mix two in one store."""
    from diarylab.experiments.engine.runfolder import read_manifest

    first = read_manifest(folder).get("grader_template", {}).get("sha256")
    if first and first != grader.sha256:
        raise LabError(
            f"this run was graded with another template (sha256 {first[:12]}…, now "
            f"{grader.sha256[:12]}…)",
            where=f"{folder} grader template",
            fix="resume with the same --grader-template (or design field), or use a new --out",
        )
