"""A design's [[judges]] tables as typed specs, and the one function that builds a judge from its
spec (the experiment engine and every CLI command build judges here).

A local judge ("smollm2", a hub id, a folder) is read exactly through the local runtime; a served
judge is reached through the served door with the spec's own EndpointSettings (base URL, key
variable, timeout, retries, concurrency — never part of the judge's identity or its cache keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from foundation.datafiles import FIX_MARK, DataModel, NonEmpty, Slug
from foundation.errors import LabError
from model_access.local import LocalModel
from model_access.settings import EndpointSettings, LocalSettings
from rubric.judge_base import Judge
from rubric.local_judge import LocalJudge
from rubric.served_judge import ServedJudge

SERVED_PREFIX = "litellm:"
LoadLocal = Callable[[str, LocalSettings], LocalModel]

__all__ = [
    "Judge",
    "JudgeSpec",
    "LocalJudge",
    "LocalJudgeSpec",
    "ServedJudge",
    "ServedJudgeSpec",
    "build_judge",
    "judge_spec",
]


class LocalJudgeSpec(DataModel):
    id: Slug
    kind: Literal["local"]
    model: NonEmpty = Field(description='hub id, folder, or "smollm2" (the embedded default)')
    local: LocalSettings = LocalSettings()


class ServedJudgeSpec(DataModel):
    """kind "openai-compatible": a server of your own (vLLM), so endpoint.base_url is required;
    kind "litellm": any provider litellm knows."""

    id: Slug
    kind: Literal["litellm", "openai-compatible"]
    model: NonEmpty = Field(description='litellm model string, e.g. "hosted_vllm/NAME"')
    tokenizer: str | None = Field(
        None,
        description="the judge's tokenizer (hub id, folder or smollm2): with it a vLLM server is "
        "asked for explicit token ids and readings are exact",
    )
    reasoning_effort: Literal["low", "medium", "high"] | None = Field(
        None,
        description="gpt-oss (harmony) judges: the reasoning effort written into the prompt, "
        "fixed so that every reading is read under the same one",
    )
    prefill: bool = Field(True, description="the server continues an assistant prefill")
    expand_floor: float = Field(
        1e-4, ge=0, lt=1, description="trie nodes below this probability are not queried"
    )
    endpoint: EndpointSettings = EndpointSettings()

    @model_validator(mode="after")
    def _server_has_an_address(self) -> ServedJudgeSpec:
        if self.kind == "openai-compatible" and not self.endpoint.base_url:
            raise ValueError(
                "an openai-compatible judge needs endpoint.base_url"
                f'{FIX_MARK}add endpoint = {{ base_url = "http://HOST:PORT/v1" }}'
            )
        return self


JudgeSpec = Annotated[LocalJudgeSpec | ServedJudgeSpec, Field(discriminator="kind")]


def default_load_local(spec: str, settings: LocalSettings) -> LocalModel:
    return LocalModel.load(spec, settings)


def build_judge(spec: LocalJudgeSpec | ServedJudgeSpec, load_local: LoadLocal) -> Judge:
    if isinstance(spec, LocalJudgeSpec):
        return LocalJudge(load_local(spec.model, spec.local))
    from model_access.served import ServedClient

    return ServedJudge(
        ServedClient(spec.model, spec.endpoint),
        tokenizer=_load_tokenizer(spec.tokenizer) if spec.tokenizer else None,
        prefill=spec.prefill,
        expand_floor=spec.expand_floor,
    )


def judge_spec(
    name: str,
    *,
    endpoint: EndpointSettings | None = None,
    local: LocalSettings | None = None,
    tokenizer: str | None = None,
    prefill: bool = True,
) -> LocalJudgeSpec | ServedJudgeSpec:
    """The spec for a judge named on the command line: a local model, or litellm:MODEL."""
    if not name or not name.strip():
        raise LabError("empty judge name", where="--judge", fix="name a model or litellm:MODEL")
    if name.startswith(SERVED_PREFIX):
        model = name[len(SERVED_PREFIX) :].strip()
        if not model:
            raise LabError(
                f"{name!r} names no model",
                where="--judge",
                fix="write litellm:PROVIDER/MODEL, e.g. litellm:hosted_vllm/NAME",
            )
        return ServedJudgeSpec(
            id="judge",
            kind="litellm",
            model=model,
            tokenizer=tokenizer,
            prefill=prefill,
            endpoint=endpoint or EndpointSettings(),
        )
    if (endpoint and endpoint != EndpointSettings()) or tokenizer:
        raise LabError(
            "endpoint options and --tokenizer are for served judges",
            where="--judge",
            fix=f"write the judge as litellm:MODEL, or drop those options for {name!r}",
        )
    return LocalJudgeSpec(id="judge", kind="local", model=name, local=local or LocalSettings())


def _load_tokenizer(spec: str) -> Any:
    from transformers import AutoTokenizer

    from model_access.loading import resolve

    source = resolve(spec)
    kwargs = {"gguf_file": source.gguf_file} if source.gguf_file else {}
    try:
        return AutoTokenizer.from_pretrained(source.location, **kwargs)
    except OSError as exc:
        raise LabError(
            f"cannot load tokenizer {spec!r}: {exc}",
            where="judge tokenizer",
            fix="point at a folder with the judge's tokenizer, or download it first",
        ) from exc
