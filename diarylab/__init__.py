"""diarylab: a lab for simulated diarists — steered open models write diaries, chatbots answer,
judges score.

Everything the lab holds imports from here: `diarylab.foundation`, `diarylab.model_access`,
`diarylab.steering`, `diarylab.diarists`, `diarylab.chatbots`, `diarylab.rubric`,
`diarylab.experiments`. In the repository those are the top-level folders of the same names
(this package links them; the wheel carries them inside it), so installing the lab puts one
name, `diarylab`, into an environment, and a project's own `experiments/` or `steering/` folder
never shadows it."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "open_run"]


def open_run(folder: object) -> object:
    """A run folder's results as typed pandas frames: `.readings()`, `.texts()`, `.answers()`,
    `.projection()`, `.calls()` (diarylab.experiments.run_frames; docs/results-columns.md lists
    every column). Imported here on first use, so `import diarylab` stays light."""
    from diarylab.experiments.run_frames import open_run as opened

    return opened(folder)  # type: ignore[arg-type]
