"""Running a design into a run folder: lock the design, load what it names, write the manifest,
then the conversation phase and the judging phase. Re-running the same design resumes: every
call already in the store is read back instead of made."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chatbots.base import Chatbot
from chatbots.fixed import FixedReply
from chatbots.local import LocalChatbot
from chatbots.served import ServedChatbot
from diarists.cards import load_cards
from diarists.templates import load_entry_template
from experiments.cells import Cell, expand
from experiments.conversations import Writer, run_conversations
from experiments.design import ChatbotSpec, Design
from experiments.judging import JudgeSet, judge_all, planned_judgments
from experiments.profiles import resolve_profiles
from experiments.progress import Progress
from experiments.runfolder import default_folder, lock_design, write_manifest
from experiments.store import Store
from model_access.local import GenerationSettings, LocalModel
from model_access.served import Endpoint, ServedClient


@dataclass(frozen=True)
class RunSummary:
    folder: Path
    cells: int
    entries: int
    replies: int
    judgments: int
    calls_made: int
    calls_cached: int


class ModelCache:
    """One loaded copy per local model spec: the diarist model doubles as chatbot or judge."""

    def __init__(self, dtype: str | None = None) -> None:
        self.dtype = dtype
        self._models: dict[str, LocalModel] = {}

    def get(self, spec: str) -> LocalModel:
        if spec not in self._models:
            self._models[spec] = LocalModel.load(spec, dtype=self.dtype)
        return self._models[spec]

    def drop(self, spec: str) -> None:
        self._models.pop(spec, None)


def build_chatbot(spec: ChatbotSpec, models: ModelCache) -> Chatbot:
    if spec.kind == "fixed":
        return FixedReply(spec.id, spec.text or "Thank you for sharing.")
    assert spec.model is not None
    if spec.kind == "local":
        settings = GenerationSettings(spec.max_new_tokens, spec.temperature, spec.top_p)
        return LocalChatbot(spec.id, models.get(spec.model), settings, system=spec.system)
    endpoint = Endpoint(
        model=spec.model,
        api_base=spec.base_url,
        api_key_env=spec.api_key_env,
        timeout_s=spec.timeout_s,
        max_retries=spec.max_retries,
        concurrency=spec.concurrency,
    )
    return ServedChatbot(
        spec.id,
        ServedClient(endpoint),
        max_tokens=spec.max_new_tokens,
        temperature=spec.temperature,
        top_p=None if spec.top_p == 1.0 else spec.top_p,
        system=spec.system,
    )


def run_design(design: Design, out: Path | None = None, *, progress: bool = True) -> RunSummary:
    folder = Path(out) if out else default_folder(design)
    models = ModelCache(design.diarist_model.dtype)
    # Everything that can be wrong with the inputs is checked before the folder is claimed.
    model = models.get(design.diarist_model.model)
    profiles = resolve_profiles(design, model)
    cells = expand(design, list(profiles))
    lock_design(design, folder)
    store = Store(folder / "store.sqlite")
    try:
        settings = GenerationSettings(
            design.diarist_model.max_new_tokens,
            design.diarist_model.temperature,
            design.diarist_model.top_p,
        )
        writer = Writer(
            model,
            settings,
            load_entry_template(),
            {c.id: c for c in load_cards(list(design.diarists))},
            profiles,
        )
        chatbots = {spec.id: build_chatbot(spec, models) for spec in design.chatbots}
        judges = JudgeSet(design, models)
        write_manifest(folder, design, _manifest_extra(writer, chatbots, profiles))
        total = _planned_units(design, cells) + planned_judgments(design, cells, profiles)
        with Progress(total, store, enabled=progress) as bar:
            run_conversations(store, writer, chatbots, cells, design.entries, design.seed, bar.tick)
            judge_all(store, judges, design, cells, profiles, bar.tick)
        return RunSummary(
            folder,
            len(cells),
            store.count("entries"),
            store.count("replies"),
            store.count("judgments"),
            store.made,
            store.cached,
        )
    finally:
        store.close()


def _planned_units(design: Design, cells: list[Cell]) -> int:
    firsts = {c.entry_id(1) for c in cells}
    return len(firsts) + len(cells) * (design.entries - 1) + len(cells) * design.entries


def _manifest_extra(
    writer: Writer, chatbots: dict[str, Chatbot], profiles: dict[str, Any]
) -> dict[str, Any]:
    return {
        "diarist_model": writer.identity(),
        "chatbots": {k: v.identity() for k, v in chatbots.items()},
        "profiles": {k: (p.steer.spec() if p.steer else None) for k, p in profiles.items()},
        "data_files": {
            "entry_template": writer.template.sha256,
            **{f"card:{c.id}": c.sha256 for c in writer.cards.values()},
        },
        "settings": asdict(writer.settings),
    }
