"""A design's [[chatbots]] tables as typed specs, and the one function that builds a chatbot from
its spec. The spec holds the runtime's own settings objects (generation, local, endpoint), which
reach the chatbot unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from diarylab.chatbots.fixed import DEFAULT_TEXT
from diarylab.chatbots.thinking import Thinking
from diarylab.foundation.datafiles import DataModel, NonEmpty, Slug
from diarylab.model_access.settings import (
    EndpointSettings,
    GenerationSettings,
    LocalSettings,
    VllmSettings,
)

if TYPE_CHECKING:
    from diarylab.chatbots.base import Chatbot
    from diarylab.model_access.shared_models import LocalModels

CHATBOT_GENERATION = GenerationSettings(max_new_tokens=300, temperature=0.7)


class FixedChatbotSpec(DataModel):
    """The content-free baseline: the same reply to everything; calls no model."""

    id: Slug = Field(
        description="names the chatbot in cells, tables and hypotheses (letters, digits, - _ .)"
    )
    kind: Literal["fixed"] = Field(
        description='"fixed": the content-free baseline, which calls no model'
    )
    text: NonEmpty = Field(
        DEFAULT_TEXT,
        description='the one reply it gives to everything (default: "Thank you for sharing.")',
    )

    def ends_at_sentence(self) -> bool:
        return False  # its one reply is never cut


class LocalChatbotSpec(DataModel):
    """An open model run by the lab's local runtime, unsteered."""

    id: Slug = Field(
        description="names the chatbot in cells, tables and hypotheses (letters, digits, - _ .)"
    )
    kind: Literal["local"] = Field(
        description='"local": an open model run here by the lab\'s own runtime'
    )
    model: NonEmpty = Field(description='hub id, folder, or "smollm2" (the embedded default)')
    system: str | None = Field(None, description="a system message; none unless given")
    generation: GenerationSettings = Field(
        CHATBOT_GENERATION,
        description="how its replies are generated (default: 300 new tokens, temperature 0.7)",
    )
    local: LocalSettings = Field(
        LocalSettings(),
        description="how the model is loaded and batched (device, dtype, revision, batch size)",
    )
    engine: Literal["transformers", "vllm"] = Field(
        "transformers",
        description='what generates the replies: transformers here, or "vllm" (a worker in the '
        "vLLM venv of scripts/setup-vllm.sh, shared with a vLLM diarist of the same model)",
    )
    vllm: VllmSettings = Field(
        VllmSettings(), description='how the vLLM worker is sized when engine = "vllm"'
    )

    def ends_at_sentence(self) -> bool:
        return self.generation.end_at_sentence


class ServedChatbotSpec(DataModel):
    """An API model or an OpenAI-compatible server (vLLM), reached through litellm."""

    id: Slug = Field(
        description="names the chatbot in cells, tables and hypotheses (letters, digits, - _ .)"
    )
    kind: Literal["litellm"] = Field(
        description='"litellm": an API model or an OpenAI-compatible server, reached through '
        "litellm"
    )
    model: NonEmpty = Field(description='litellm model string, e.g. "openai/gpt-4o"')
    system: str | None = Field(None, description="a system message; none unless given")
    generation: GenerationSettings = Field(
        CHATBOT_GENERATION,
        description="how its replies are generated (default: 300 new tokens, temperature 0.7)",
    )
    endpoint: EndpointSettings = Field(
        EndpointSettings(),
        description="how it is reached: base URL, key variable, timeout, retries, concurrency",
    )
    probe: bool = Field(
        False,
        description="`design check` and `run` make one cheap call (a short reply) before "
        "anything runs, so that a wrong key, model name or address is found at once; off by "
        "default, since the call is billed (a hosted_vllm/ model, on the researcher's own "
        "server, is always probed: its call costs nothing)",
    )
    thinking: Thinking = Field(
        "none",
        description='what to do with a reasoning model\'s thinking: "none" (the model does not '
        'think; `design check` refuses one whose probe shows thinking), "off" (ask its chat '
        "template not to think: chat_template_kwargs enable_thinking = false, Qwen3's switch) "
        'or "apart" (let it think). In every case the diarist reads the answer alone, the '
        "thinking is stored beside it, and a reply cut inside its thinking is a failed reply "
        '(flag "thinking_cut")',
    )

    def ends_at_sentence(self) -> bool:
        return self.generation.end_at_sentence


ChatbotSpec = Annotated[
    FixedChatbotSpec | LocalChatbotSpec | ServedChatbotSpec, Field(discriminator="kind")
]


def build_chatbot(spec: ChatbotSpec, models: LocalModels) -> Chatbot:
    """The chatbot a spec describes; a local one's model loaded through the run's shared
    models (model_access/shared_models.py), with a vLLM engine attached there when it asks."""
    # The specs are schema alone (a design is checked without torch); what is built is
    # imported here.
    from diarylab.chatbots.fixed import FixedReply
    from diarylab.chatbots.local import LocalChatbot
    from diarylab.chatbots.served import ServedChatbot
    from diarylab.model_access.served import ServedClient

    if isinstance(spec, FixedChatbotSpec):
        return FixedReply(spec.id, spec.text)
    if isinstance(spec, LocalChatbotSpec):
        where = f"[[chatbots]] {spec.id}: engine"
        if spec.engine == "vllm":
            model = models.on_vllm(spec.model, spec.local, spec.vllm, where)
        else:
            model = models.get(spec.model, spec.local)
        return LocalChatbot(spec.id, model, spec.generation, spec.local, system=spec.system)
    client = ServedClient(spec.model, spec.endpoint)
    return ServedChatbot(
        spec.id, client, spec.generation, system=spec.system, thinking=spec.thinking
    )
