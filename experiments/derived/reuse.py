"""Derived runs: a design whose [derived_from] names a finished run folder reuses that run's
texts (entries and replies, letters, benchmark replies) and makes only what it judges, scores or
analyses differently.

Before anything is claimed, experiments/derived/checks.py refuses, with one error naming the
field, a derived design that could not have written those texts (only the schema's
`judging_fields` may differ; transport settings never matter), and `Reuse.check_models` a loaded
diarist model or chatbot other than the run's. The run then copies the run's calls and text
rows into its own store (experiments/engine/reuse.py) and its inline profiles into its own
profiles/, records what it reused in the store and the manifest, and seals its writing and
chatbot calls: the folder is self-contained, a resume needs no source, and nothing is ever
written again."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarylab.chatbots.base import Chatbot
from diarylab.experiments.engine.contract import Design, ReuseSupport
from diarylab.experiments.engine.reuse import (
    Texts,
    copy_texts,
    first_difference,
    reused_record,
)
from diarylab.experiments.engine.runfolder import STORE_FILE
from diarylab.experiments.engine.store import Store
from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.model_access.local import LocalModel  # torch: only a run has one

PROFILES_DIR = "profiles"


@dataclass(frozen=True)
class Reuse:
    """The finished run a derived design reuses, checked: what its store copy must hash to."""

    source: Path
    design_sha256: str
    texts: Texts
    row_types: tuple[Any, ...]
    text_calls: tuple[str, ...]  # the kind's: the call kinds copied and then sealed
    inline: tuple[str, ...]  # inline profile ids whose files come from the run's folder
    # The run's manifest record of its diarist model and chatbots (None on a resume, which
    # checked them when the copy was made).
    models: Mapping[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """What the derived store and manifest say was reused."""
        return {
            "run": str(self.source),
            "design_sha256": self.design_sha256,
            "texts_sha256": self.texts.sha256,
            "calls": self.texts.calls,
            "rows": dict(self.texts.rows),
        }

    def line(self) -> str:
        rows = ", ".join(f"{n} {table}" for table, n in self.texts.rows.items())
        return (
            f"reused from {self.source} (design sha256 {self.design_sha256[:12]}…, texts sha256 "
            f"{self.texts.sha256[:12]}…): {rows}"
        )

    def check_models(self, writer: LocalModel | None, chatbots: Mapping[str, Chatbot]) -> None:
        """The loaded diarist model and chatbots are the ones that wrote the run's texts (the
        design names them alike, but a model folder or hub id may hold other weights now)."""
        if self.models is None:
            return
        name = self.source.name
        now = {
            "diarist_model": None if writer is None else asdict(writer.info()),
            "chatbots": {k: bot.identity() for k, bot in chatbots.items()},
        }
        for what, where in (("diarist_model", "[diarist_model]"), ("chatbots", "[[chatbots]]")):
            ours, theirs = _model_view(now[what]), _model_view(self.models.get(what))
            at = first_difference(theirs, ours)
            if at is not None:
                raise LabError(
                    f"a derived run reuses the texts of {name}, but the loaded {what} is not "
                    f"the one that wrote them (at {at or what})",
                    where=where,
                    fix=f"load the model {name} used (see its manifest.json), or make a new run",
                )

    def copy_profiles(self, folder: Path) -> None:
        """The run's inline profiles (file, vector, calibration record, the calls that made
        them) into `folder`, so the derived run steers with exactly what the run chose and
        makes none again. A file the folder already has is kept (a resume)."""
        from diarylab.steering.vectors import vector_paths

        for pid in self.inline:
            here, there = self.source / PROFILES_DIR, folder / PROFILES_DIR
            names = [f"{pid}.toml", *(p.name for p in vector_paths(here / pid))]
            for name in [*names, f"{pid}.calibration", "store.sqlite"]:
                src, dst = here / name, there / name
                if dst.exists() or not src.exists():
                    continue
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.is_dir():
                    shutil.copytree(src, dst)
                else:
                    shutil.copyfile(src, dst)

    def copy_into(self, store: Store) -> None:
        """Copy the texts in (once: a store that records them is only sealed) and seal."""
        if reused_record(store) is None:
            copy_texts(
                self.source / STORE_FILE, store, self.row_types, self.text_calls, self.record()
            )
        store.sealed = frozenset(self.text_calls)


def reuse_support(design: Design) -> ReuseSupport:
    kind = design.kind
    if not isinstance(kind, ReuseSupport):
        raise LabError(
            f"a {kind.name} design cannot reuse a run's texts",
            where=f"{design.path} derived_from",
            fix="remove [derived_from]",
        )
    return kind


def inline_ids(design: Design) -> tuple[str, ...]:
    refs = design.kind.profile_refs(design)
    return tuple(r for r in refs if design.spec.profile_rule(r) is not None)


def _model_view(identity: Any) -> Any:
    """A model identity as compared: without where its files sit, and without the precision it
    was loaded in, which follows the machine (a derived run writes nothing with it)."""
    if isinstance(identity, dict):
        return {k: _model_view(v) for k, v in identity.items() if k not in ("location", "dtype")}
    return json.loads(json.dumps(identity))
