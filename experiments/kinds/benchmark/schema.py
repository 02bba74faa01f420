"""The benchmark design's own table, [benchmark]: which file, which schema, how many
conversations, the scoring convention, the grader (template, length, retries), the two anchor
models that place the lab's numbers on the published scale, and the grader validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from diarylab.chatbots.specs import ChatbotSpec, FixedChatbotSpec
from diarylab.experiments.engine.design import DesignFile
from diarylab.experiments.kinds.benchmark.data import Format
from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug
from diarylab.model_access.settings import GenerationSettings, used_whole

Convention = Literal["mentalhealthbench", "healthbench"]
Validator = Literal["borrowed_criteria", "behavior_rubric"]


# Words that give away a value nobody has looked up yet; such an anchor must say so.
_PLACEHOLDER_WORDS = ("placeholder", "todo", "tbd", "fill in", "fill-in", "xxx", "dummy")


class Anchor(DataModel):
    chatbot: Slug = Field(description="a chatbot of this design whose published score is known")
    published: float = Field(ge=-1, le=2, description="its published overall score (0–1 scale)")
    # No default: an se left out would silently be 0, and the mapped interval would then carry
    # none of the anchors' uncertainty (it covers 67–80% instead of 95% in simulation).
    se: float | None = Field(
        None, gt=0, le=1, description="the published score's standard error (required)"
    )
    source: NonEmpty | None = Field(
        None, description="where the score and its se are published: report, table or page"
    )
    placeholder: bool = Field(
        False,
        description="the values are stand-ins, not yet looked up: allowed only when marked, and "
        "the report then flags every number on the published scale",
    )

    @model_validator(mode="after")
    def _sourced(self) -> Anchor:
        if self.se is None:
            raise At(
                ("se",),
                f"anchor {self.chatbot!r} has no standard error{FIX_MARK}give se = the "
                "published standard error (a 95% interval's half-width / 1.96)",
            )
        if self.source is None:
            raise At(
                ("source",),
                f"anchor {self.chatbot!r} names no source{FIX_MARK}give source = the report "
                "and table the score and se come from",
            )
        if not self.placeholder and any(w in self.source.lower() for w in _PLACEHOLDER_WORDS):
            raise At(
                ("source",),
                f"anchor {self.chatbot!r}'s source reads as a placeholder ({self.source!r})"
                f"{FIX_MARK}cite the published score, or mark it with placeholder = true "
                "(the report then flags the published-scale numbers)",
            )
        return self


class Calibration(DataModel):
    anchors: list[Anchor] = Field(
        min_length=2,
        max_length=2,
        description="the two models with published scores that place the lab's numbers on the "
        "published scale (exactly 2)",
    )

    @model_validator(mode="after")
    def _distinct(self) -> Calibration:
        a, b = self.anchors
        if a.chatbot == b.chatbot:
            raise At(("anchors", 1, "chatbot"), f"both anchors are {a.chatbot!r}{FIX_MARK}name two")
        if a.published == b.published:
            raise At(
                ("anchors", 1, "published"),
                f"both anchors have published score {a.published}: no line through them"
                f"{FIX_MARK}choose anchors whose published scores differ",
            )
        return self


# HealthBench's reference grader (openai/simple-evals, healthbench_eval.py): a
# ChatCompletionSampler with system_message = "You are a helpful assistant."
# (OPENAI_SYSTEM_MESSAGE_API) and max_tokens 2048, at the sampler's default temperature 0.5
# (sampler/chat_completion_sampler.py). The lab's own grader settings are greedy with no system
# message; a design picks either with grader.defaults.
REFERENCE_SYSTEM = "You are a helpful assistant."
REFERENCE_TEMPERATURE = 0.5
GraderDefaults = Literal["reference", "lab"]


class GraderSettings(DataModel):
    template: NonEmpty | None = Field(
        None,
        description="a grader template file (relative to the design): .toml in the lab's schema "
        "(optional system message, max_tokens; exact = true for published text used verbatim), "
        "or .txt with <<conversation>> and <<rubric_item>> used exactly; default: the lab's own",
    )
    defaults: GraderDefaults = Field(
        "reference",
        description="what the grader call sends where the template and `generation` leave it "
        'open: "reference" (HealthBench\'s reference grader: the system message "You are a '
        'helpful assistant." when the template has none, temperature 0.5) or "lab" (the lab\'s '
        "own: no system message, temperature 0); both cap the answer at the template's "
        "max_tokens (2,048)",
    )
    generation: GenerationSettings | None = Field(
        None,
        description="the judge's written answer; default: the template's max_tokens (2,048 "
        "unless it says otherwise) at the defaults' temperature (0.5 reference, 0 lab) for the "
        "first attempt",
    )
    retries: int = Field(2, ge=0, le=10, description="new attempts after a malformed answer")
    retry_temperature: float = Field(
        0.7, ge=0, le=2, description="retries sample (a greedy judge would repeat itself)"
    )

    _whole = field_validator("generation")(used_whole)

    def generation_for(self, max_tokens: int) -> GenerationSettings:
        """The first attempt's settings: the design's, else the template's cap at the
        defaults' temperature."""
        temperature = REFERENCE_TEMPERATURE if self.defaults == "reference" else 0.0
        return self.generation or GenerationSettings(
            max_new_tokens=max_tokens, temperature=temperature
        )

    def system_message(self) -> str:
        """The system message sent when the template has none ("" sends none)."""
        return REFERENCE_SYSTEM if self.defaults == "reference" else ""


class BenchmarkTable(DataModel):
    data: NonEmpty = Field(description="your copy of the JSONL file (relative to the design)")
    format: Format = Field(description="the file's schema")
    sample: int = Field(300, ge=1, le=100_000, description="conversations drawn, by acuity")
    convention: Convention | None = Field(
        None,
        description="scoring: clip each conversation (mentalhealthbench) or the mean "
        "(healthbench); default: the format's own",
    )
    grader: GraderSettings = Field(
        GraderSettings(),
        description="how the judge grades each criterion (template, generation, retries)",
    )
    calibration: Calibration | None = Field(
        None,
        description="anchors that map the lab's scores onto the published scale; none: lab scale "
        "only",
    )
    validation: list[Validator] = Field(
        [], description="candidate graders compared with the conversations' own criteria"
    )

    @property
    def scoring(self) -> Convention:
        return self.convention or self.format

    def data_path(self, design_path: Path) -> Path:
        return _relative(self.data, design_path)

    def template_path(self, design_path: Path) -> Path | None:
        return _relative(self.grader.template, design_path) if self.grader.template else None


def _relative(value: str, design_path: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(design_path).parent / path


class BenchmarkDesignFile(DesignFile):
    judging_fields: ClassVar[tuple[str, ...]] = (
        *DesignFile.judging_fields,
        "benchmark.convention",
        "benchmark.grader",
        "benchmark.calibration",
        "benchmark.validation",
    )
    compared_apart: ClassVar[tuple[str, ...]] = ("benchmark.data",)

    chatbots: list[ChatbotSpec] = Field(min_length=1, description="the chatbots that answer")
    benchmark: BenchmarkTable = Field(
        description="[benchmark]: the data file, its format, the sample, the grader and the "
        "calibration"
    )

    @model_validator(mode="before")
    @classmethod
    def _no_hypotheses(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("hypotheses"):
            raise At(
                ("hypotheses",),
                "benchmark designs compare every pair of chatbots (Holm-corrected per judge); "
                f"they take no hypotheses{FIX_MARK}remove [[hypotheses]]",
            )
        return data

    @model_validator(mode="after")
    def _fits_the_benchmark(self) -> BenchmarkDesignFile:
        for i, bot in enumerate(self.chatbots):
            if not isinstance(bot, FixedChatbotSpec) and bot.system is not None:
                raise At(
                    ("chatbots", i, "system"),
                    "a benchmark conversation is sent verbatim, with no added system message"
                    f"{FIX_MARK}remove system (the conversations carry their own)",
                )
        for i, judge in enumerate(self.judges):
            if not judge.prefills:
                raise At(
                    ("judges", i, "prefill"),
                    "the grader reads P(criteria_met) after the judge's own written answer, "
                    f"which needs an assistant prefill{FIX_MARK}set prefill = true",
                )
        if "entries" in self.design.model_fields_set:
            raise At(
                ("design", "entries"),
                f"a benchmark reply answers one fixed conversation{FIX_MARK}remove entries",
            )
        cal = self.benchmark.calibration
        bots = {c.id for c in self.chatbots}
        for i, anchor in enumerate(cal.anchors if cal else []):
            if anchor.chatbot not in bots:
                raise At(
                    ("benchmark", "calibration", "anchors", i, "chatbot"),
                    f"anchor {anchor.chatbot!r} is not a chatbot of this design"
                    f"{FIX_MARK}add it to [[chatbots]] (anchors go through the same pipeline)",
                )
        return self
