"""diarylab: a lab for simulated diarists — steered open models write diaries, chatbots answer,
judges score.

What a notebook or a script needs is here (docs/api.md lists each, from these docstrings):
`open_run` and the `RunResults` it gives, `load_design`, `Steer` and `LabError`. Everything
else is the lab's own and may move: `diarylab.foundation`, `diarylab.model_access`,
`diarylab.steering`, `diarylab.diarists`, `diarylab.chatbots`, `diarylab.rubric`,
`diarylab.experiments` (and `diarylab.testing`, the tests' and benches' stand-ins). In the
repository those are the top-level folders of the same names (this package links them; the wheel
carries them inside it), so installing the lab puts one name, `diarylab`, into an environment,
and a project's own `experiments/` or `steering/` folder never shadows it. The names are
imported on first use, so `import diarylab` stays light."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from diarylab.experiments.designs.opening import load_design
    from diarylab.experiments.frames.reader import RunResults
    from diarylab.foundation.errors import LabError
    from diarylab.steering.apply import Steer

__version__ = "0.1.0"

__all__ = ["LabError", "RunResults", "Steer", "__version__", "load_design", "open_run"]

_FROM = {
    "LabError": "diarylab.foundation.errors",
    "RunResults": "diarylab.experiments.frames.reader",
    "Steer": "diarylab.steering.apply",
    "load_design": "diarylab.experiments.designs.opening",
}


def open_run(folder: str | Path) -> RunResults:
    """A run folder's results as typed pandas frames: `.readings()`, `.texts()`, `.answers()`,
    `.projection()`, `.calls()`, `.ratings()` and `.verdicts()` (docs/results-columns.md lists
    every column). Use it in a `with` block, or call `.close()`, to release the store."""
    from diarylab.experiments.frames.reader import open_run as opened

    return opened(folder)


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(_FROM[name]), name)
    raise AttributeError(f"module 'diarylab' has no attribute {name!r}")
