"""Experiment kinds: plug-ins of the engine. Each kind is a subpackage here exposing `KIND`, an
ExperimentKind (experiments/engine/contract.py) that supplies its design schema, cells,
conversation phase, judging phase and report; the store, run folder, lock, resume and the shared
judging loop are the engine's. A new kind is a new subpackage: nothing else changes. A kind
imports the engine and the shared analysis (experiments/analysis/), never another kind."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING, Any

from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import ExperimentKind


@cache
def kind_names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg))


def get_kind(name: Any, *, where: str) -> ExperimentKind:
    if not isinstance(name, str) or name not in kind_names():
        raise LabError(
            f"unknown experiment kind {name!r}",
            where=where,
            fix=f"set kind to one of {', '.join(kind_names())}",
        )
    kind: ExperimentKind = importlib.import_module(f"{__name__}.{name}").KIND
    return kind
