"""The one function that builds a judge from its spec (the experiment engine and every CLI
command build judges here): a local judge through the caller's loader (a run's shared models),
a served one through the served door with the spec's own endpoint and reading settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diarylab.model_access.loaders import LoadLocal
from diarylab.model_access.settings import LocalSettings
from diarylab.rubric.judging.judges import LocalJudgeSpec, ServedJudgeSpec, reading_settings

if TYPE_CHECKING:
    from diarylab.model_access.local import LocalModel
    from diarylab.rubric.judging.judge_base import Judge

__all__ = ["build_judge", "default_load_local", "load_tokenizer"]


def load_tokenizer(spec: str) -> Any:
    """The door a served judge's tokenizer is loaded through (model_access.loading's), looked
    up when a judge is built, so the heavy import waits until then."""
    from diarylab.model_access.loading import load_tokenizer as load

    return load(spec)


def default_load_local(spec: str, settings: LocalSettings) -> LocalModel:
    from diarylab.model_access.local import LocalModel

    return LocalModel.load(spec, settings)


def build_judge(spec: LocalJudgeSpec | ServedJudgeSpec, load_local: LoadLocal) -> Judge:
    if isinstance(spec, LocalJudgeSpec):
        from diarylab.rubric.judging.local_judge import LocalJudge

        return LocalJudge(load_local(spec.model, spec.local), max_error=spec.max_error)
    from diarylab.model_access.served import ServedClient
    from diarylab.rubric.judging.served_judge import ServedJudge

    exact, chat = reading_settings(spec)
    return ServedJudge(
        ServedClient(spec.model, spec.endpoint),
        tokenizer=load_tokenizer(spec.tokenizer) if spec.tokenizer else None,
        mode=spec.reading_mode,
        exact=exact,
        chat=chat,
    )
