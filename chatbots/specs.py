"""A design's [[chatbots]] tables as typed specs, and the one function that builds a chatbot from
its spec. The spec holds the runtime's own settings objects (generation, local, endpoint), which
reach the chatbot unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from chatbots.base import Chatbot
from chatbots.fixed import DEFAULT_TEXT, FixedReply
from chatbots.local import LocalChatbot
from chatbots.served import ServedChatbot
from foundation.datafiles import DataModel, NonEmpty, Slug
from model_access.local import LocalModel
from model_access.served import ServedClient
from model_access.settings import EndpointSettings, GenerationSettings, LocalSettings

CHATBOT_GENERATION = GenerationSettings(max_new_tokens=300, temperature=0.7)


class FixedChatbotSpec(DataModel):
    """The content-free baseline: the same reply to everything; calls no model."""

    id: Slug
    kind: Literal["fixed"]
    text: NonEmpty = DEFAULT_TEXT


class LocalChatbotSpec(DataModel):
    """An open model run by the lab's local runtime, unsteered."""

    id: Slug
    kind: Literal["local"]
    model: NonEmpty = Field(description='hub id, folder, or "smollm2" (the embedded default)')
    system: str | None = Field(None, description="a system message; none unless given")
    generation: GenerationSettings = CHATBOT_GENERATION
    local: LocalSettings = LocalSettings()


class ServedChatbotSpec(DataModel):
    """An API model or an OpenAI-compatible server (vLLM), reached through litellm."""

    id: Slug
    kind: Literal["litellm"]
    model: NonEmpty = Field(description='litellm model string, e.g. "openai/gpt-4o"')
    system: str | None = Field(None, description="a system message; none unless given")
    generation: GenerationSettings = CHATBOT_GENERATION
    endpoint: EndpointSettings = EndpointSettings()


ChatbotSpec = Annotated[
    FixedChatbotSpec | LocalChatbotSpec | ServedChatbotSpec, Field(discriminator="kind")
]
LoadLocal = Callable[[str, LocalSettings], LocalModel]


def build_chatbot(spec: ChatbotSpec, load_local: LoadLocal) -> Chatbot:
    if isinstance(spec, FixedChatbotSpec):
        return FixedReply(spec.id, spec.text)
    if isinstance(spec, LocalChatbotSpec):
        model = load_local(spec.model, spec.local)
        return LocalChatbot(spec.id, model, spec.generation, spec.local, system=spec.system)
    client = ServedClient(spec.model, spec.endpoint)
    return ServedChatbot(spec.id, client, spec.generation, system=spec.system)
