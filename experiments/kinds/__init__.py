"""Experiment kinds: plug-ins of the engine. Each kind is a subpackage here exposing `KIND`, an
ExperimentKind (experiments/engine/contract.py) that supplies its design schema, cells,
conversation phase, judging phase and report; the store, run folder, lock, resume and the shared
judging loop are the engine's. A new kind is a new subpackage here, or a module anywhere that a
package names under the "diarylab.kinds" entry points (or `register_kind` names): nothing else
changes (testing/toy_kind.py is such a kind, run by tests/experiments/kinds/test_kind_contract.py).
A kind imports the engine and the shared analysis (experiments/analysis/), never another kind."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING, Any

from diarylab.foundation.errors import LabError

if TYPE_CHECKING:
    from diarylab.experiments.engine.contract import ExperimentKind

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["get_kind", "kind_names", "register_kind"]

ENTRY_POINTS = "diarylab.kinds"  # a package's entry point: NAME = "module" exposing KIND
_REGISTERED: dict[str, str] = {}  # register_kind: name -> module


def register_kind(name: str, module: str) -> None:
    """A kind that lives outside this folder (a module exposing KIND): from then on designs may
    name it. Installed packages do the same through the "diarylab.kinds" entry-point group."""
    _REGISTERED[name] = module
    _plugged.cache_clear()


def forget_kind(name: str) -> None:
    """Undo register_kind (a test's toy kind)."""
    _REGISTERED.pop(name, None)
    _plugged.cache_clear()


@cache
def _plugged() -> dict[str, str]:
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINTS)}
    return {**found, **_REGISTERED}


def kind_names() -> tuple[str, ...]:
    own = {m.name for m in pkgutil.iter_modules(__path__) if m.ispkg}
    return tuple(sorted(own | set(_plugged())))


def get_kind(name: Any, *, where: str) -> ExperimentKind[Any]:
    if not isinstance(name, str) or name not in kind_names():
        raise LabError(
            f"unknown experiment kind {name!r}",
            where=where,
            fix=f"set kind to one of {', '.join(kind_names())}",
        )
    module = _plugged().get(name, f"{__name__}.{name}")
    kind: ExperimentKind[Any] = importlib.import_module(module).KIND
    return kind
