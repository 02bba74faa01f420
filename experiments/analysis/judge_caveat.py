"""The box at the top of a report whose judges cannot show anything: a judge (or grader) that is
the lab's embedded 135M default reads only to show the pipeline working. The terminal said so
after `diarylab demo`; the report a reader opens later says it first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from diarylab.model_access.embedded import EMBEDDED_NAMES


def weak_judges(design: Mapping[str, Any]) -> list[str]:
    """The ids of the design's judges that are the embedded default model."""
    judges: Iterable[Mapping[str, Any]] = design.get("judges", [])
    return [str(j.get("id")) for j in judges if str(j.get("model", "")).lower() in EMBEDDED_NAMES]


def caveat_box(design: Mapping[str, Any]) -> list[str]:
    """Markdown for the top of findings.md (and index.html): empty unless a judge is weak."""
    weak = weak_judges(design)
    if not weak:
        return []
    names = ", ".join(f"`{j}`" for j in weak)
    return [
        f"> **These judges cannot show anything.** {names} "
        f"{'is' if len(weak) == 1 else 'are'} the lab's embedded 135M-parameter default "
        "model: its scores and answers show the pipeline working, not findings. Verdicts, "
        "intervals and shares below are computed as for any judge and mean nothing about the "
        "diarists. Judge with served open models (docs/gpu-study.md) for results.\n"
    ]
