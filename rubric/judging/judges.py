"""A design's [[judges]] tables as typed specs, each answering for itself what the engine, the
plan and the checks ask of a judge (rubric/judging/building.py builds the judge from its spec).

A local judge ("smollm2", a hub id, a folder) is read through the local runtime (exactly at
max_error = 0, within a certified bound otherwise); a served
judge is reached through the served door with the spec's own EndpointSettings (base URL, key
variable, timeout, retries, concurrency — never part of the judge's identity or its cache keys)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeVar

from pydantic import Field, model_validator

from diarylab.foundation.datafiles import FIX_MARK, At, DataModel, NonEmpty, Slug
from diarylab.model_access.settings import EndpointSettings, LocalSettings
from diarylab.rubric.judging.expected import DEFAULT_MAX_ERROR

# The specs are schema alone: a design is read and checked without torch or the readers (the
# command line starts fast); build_judge imports what it builds.
if TYPE_CHECKING:
    from diarylab.rubric.judging.served_chat import ChatSettings
    from diarylab.rubric.judging.served_exact import ExactSettings

Counted = TypeVar("Counted", covariant=True)


class ReadingCounter(Protocol[Counted]):
    """What counts a judge's reading cost (experiments/planning/costs.py): the spec says which
    of its ways of reading applies."""

    def local(self, spec: LocalJudgeSpec) -> Counted: ...

    def top_k(self, spec: ServedJudgeSpec) -> Counted: ...

    def exact(self, spec: ServedJudgeSpec) -> Counted: ...


__all__ = [
    "JudgeSpec",
    "LocalJudgeSpec",
    "ReadingCounter",
    "ServedJudgeSpec",
]


MAX_ERROR_FIELD = Field(
    DEFAULT_MAX_ERROR,
    ge=0,
    le=100,
    description="points: a 0–100 reading stops reading nodes once what is left could move E[n] "
    "by less (a certified bound is stored with it); 0 = read every node (exact)",
)


class LocalJudgeSpec(DataModel):
    id: Slug = Field(description="names the judge in scores, hypotheses and calibration rules")
    kind: Literal["local"] = Field(
        description='"local": an open model read here by the lab\'s own runtime from its full '
        "next-token distributions: exactly at max_error = 0, within a certified bound of "
        "max_error points otherwise (the default)"
    )
    model: NonEmpty = Field(description='hub id, folder, or "smollm2" (the embedded default)')
    max_error: float = MAX_ERROR_FIELD
    local: LocalSettings = Field(
        LocalSettings(),
        description="how the model is loaded and batched (device, dtype, revision, batch size)",
    )

    # What the engine, the plan and the checks ask of a judge, answered by the spec itself
    # (tests/test_layers.py fails on a check of a judge spec's kind anywhere else).
    def served(self) -> None:
        """The judge as a served one (its server, key and probe): a local judge has none."""
        return None

    def local_weights(self) -> tuple[str, LocalSettings]:
        """The model this machine loads for the judge, and how."""
        return self.model, self.local

    def lane(self, identity: Callable[[], Mapping[str, Any]]) -> tuple[bool, Mapping[str, Any]]:
        """Where its calls go (experiments/engine/lanes.py lane_key): every in-process model
        in one lane, whatever its identity."""
        return True, {}

    def counted_by(self, counter: ReadingCounter[Counted]) -> Counted:
        return counter.local(self)

    @property
    def concurrency(self) -> int:
        """How many of its readings run at once: one batch at a time on this machine."""
        return 1

    @property
    def prefills(self) -> bool:
        """Whether its writing continues an assistant prefill: a local judge is read through
        its chat template's own."""
        return True

    @property
    def top_k_unsaid(self) -> bool:
        """A served judge without a tokenizer or a mode; never a local one."""
        return False

    def hub_tokenizer(self) -> str | None:
        """A tokenizer a served judge names by hub id, to download beside the weights."""
        return None

    def writer_table(self) -> dict[str, Any]:
        """The judge's own model as a [[chatbots]] table, for text it writes itself (the
        benchmark's grader answers): the same model, loaded the same way."""
        return {"id": self.id, "kind": "local", "model": self.model, "local": self.local}


class ServedJudgeSpec(DataModel):
    """kind "openai-compatible": a server of your own (vLLM), so endpoint.base_url is required;
    kind "litellm": any provider litellm knows."""

    id: Slug = Field(description="names the judge in scores, hypotheses and calibration rules")
    kind: Literal["litellm", "openai-compatible"] = Field(
        description='"openai-compatible" (your own server, e.g. vLLM; needs endpoint.base_url) or '
        '"litellm" (any provider)'
    )
    model: NonEmpty = Field(description='litellm model string, e.g. "hosted_vllm/NAME"')
    tokenizer: str | None = Field(
        None,
        description="the judge's tokenizer (hub id, folder with tokenizer files, or smollm2; no "
        "weights needed): with it every reading is by prompt token ids, exact at max_error = "
        "0 and within a certified bound otherwise",
    )
    mode: Literal["exact", "top-k"] | None = Field(
        None,
        description='"exact" (needs tokenizer) or "top-k" (chat top log-probabilities); '
        "default: exact when the tokenizer is named",
    )
    reasoning_effort: Literal["low", "medium", "high"] = Field(
        "low", description="harmony judges (gpt-oss): the reasoning effort rendered in the prompt"
    )
    top_logprobs: int | None = Field(
        None,
        ge=0,
        description="top log-probabilities asked per position: default 20 for top-k, 0 for "
        "exact; a llama.cpp server reads exactly only with the whole vocabulary here",
    )
    ids_per_request: int = Field(
        128, ge=1, description="explicit token ids per request (vLLM: 128)"
    )
    node_cutoff: float = Field(
        0.0, ge=0, lt=1, description="exact mode: trie nodes below this probability are not read"
    )
    max_error: float = MAX_ERROR_FIELD
    scout_logprobs: int = Field(
        20,
        ge=0,
        le=1_000_000,
        description="exact mode, max_error > 0: a node needing more ids than one request holds is "
        "first read by its top-k of this many (vLLM's --max-logprobs caps it; 0 = never)",
    )
    prefill: bool = Field(True, description="top-k mode: the server continues an assistant prefill")
    expand_floor: float = Field(
        1e-4, ge=0, lt=1, description="top-k mode: trie nodes below this probability are not read"
    )
    probe_floor: float = Field(
        0.9,
        ge=0,
        le=1,
        description="`run` refuses the judge when P(it starts a number) on the probe prompt is "
        "lower",
    )
    endpoint: EndpointSettings = Field(
        EndpointSettings(),
        description="how it is reached: base URL, key variable, timeout, retries, concurrency",
    )

    def served(self) -> ServedJudgeSpec:
        return self

    def local_weights(self) -> None:
        """A served judge's weights are its server's."""
        return None

    def lane(self, identity: Callable[[], Mapping[str, Any]]) -> tuple[bool, Mapping[str, Any]]:
        """A lane of its identity's own: two served judges of one identity make the same
        calls, so they share one (`identity` builds the judge: cheap, no weights)."""
        return False, identity()

    def counted_by(self, counter: ReadingCounter[Counted]) -> Counted:
        return counter.exact(self) if self.reading_mode == "exact" else counter.top_k(self)

    @property
    def concurrency(self) -> int:
        return self.endpoint.concurrency

    @property
    def prefills(self) -> bool:
        return self.prefill

    @property
    def top_k_unsaid(self) -> bool:
        return not self.tokenizer and not self.mode

    def hub_tokenizer(self) -> str | None:
        return self.tokenizer if self.tokenizer and "/" in self.tokenizer else None

    def writer_table(self) -> dict[str, Any]:
        return {"id": self.id, "kind": "litellm", "model": self.model, "endpoint": self.endpoint}

    @property
    def reading_mode(self) -> Literal["exact", "top-k"]:
        return self.mode or ("exact" if self.tokenizer else "top-k")

    def probe_verdict(self, mode: str, coverage: float) -> str:
        """What `run` says of the probe's figures (experiments/running/preflight.py)."""
        if mode != self.reading_mode:
            return f"refused: read {mode}, the judge asks for {self.reading_mode}"
        if coverage < self.probe_floor:
            return f"refused: root coverage {coverage:.3f} is under probe_floor {self.probe_floor}"
        return "ok"

    def logprobs_asked(self) -> int:
        """The most top log-probabilities one request of this judge asks for: a server
        started with a lower `--max-logprobs` refuses it (a top-k reading asks its
        top_logprobs; an exact one its top_logprobs, and a bounded one its scout's)."""
        exact, chat = reading_settings(self)
        if self.reading_mode != "exact":
            return chat.top_logprobs
        scout = exact.scout_logprobs if exact.max_error > 0 else 0
        return max(exact.top_logprobs, scout, 1)

    @model_validator(mode="after")
    def _a_tokenizer_folder_that_exists(self) -> ServedJudgeSpec:
        """A tokenizer written as a path (./, ../, /, ~) must be there: checked offline, before a
        run would fail on it."""
        from pathlib import Path

        name = self.tokenizer
        if (
            name
            and name.startswith(("./", "../", "/", "~"))
            and not Path(name).expanduser().exists()
        ):
            raise At(
                ("tokenizer",),
                f"no tokenizer files at {name!r} (paths are read from the folder you run in)"
                f"{FIX_MARK}put the judge's tokenizer files (tokenizer.json, "
                "tokenizer_config.json) in that folder, or name its hub id, e.g. "
                'tokenizer = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"',
            )
        return self

    @model_validator(mode="after")
    def _exact_needs_a_tokenizer(self) -> ServedJudgeSpec:
        if self.mode == "exact" and not self.tokenizer:
            raise ValueError(
                'mode "exact" reads by prompt token ids, so it needs the judge\'s tokenizer'
                f'{FIX_MARK}add tokenizer = "HUB_ID_OR_FOLDER", or set mode = "top-k"'
            )
        return self

    @model_validator(mode="after")
    def _server_has_an_address(self) -> ServedJudgeSpec:
        if self.kind == "openai-compatible" and not self.endpoint.base_url:
            raise ValueError(
                "an openai-compatible judge needs endpoint.base_url"
                f'{FIX_MARK}add endpoint = {{ base_url = "http://HOST:PORT/v1" }}'
            )
        return self


JudgeSpec = Annotated[LocalJudgeSpec | ServedJudgeSpec, Field(discriminator="kind")]


def reading_settings(spec: ServedJudgeSpec) -> tuple[ExactSettings, ChatSettings]:
    from diarylab.rubric.judging.served_chat import ChatSettings
    from diarylab.rubric.judging.served_exact import ExactSettings

    """The reader settings a served judge's spec gives (the run's and the plan's alike)."""
    default_top = 0 if spec.reading_mode == "exact" else 20
    top = spec.top_logprobs if spec.top_logprobs is not None else default_top
    exact = ExactSettings(
        ids_per_request=spec.ids_per_request,
        top_logprobs=top,
        node_cutoff=spec.node_cutoff,
        reasoning_effort=spec.reasoning_effort,
        max_error=spec.max_error,
        scout_logprobs=spec.scout_logprobs,
    )
    return exact, ChatSettings(
        top_logprobs=top, prefill=spec.prefill, expand_floor=spec.expand_floor
    )
