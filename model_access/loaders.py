"""The type of what loads a local model, the one the chatbots, the judges and the runner take;
schema alone, so a design is checked without torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings, VllmSettings


# How a caller has a local model loaded: LocalModel.load itself, or the run's shared models
# (experiments/running/runner.py ModelCache), one copy per model and settings. The one type
# the chatbots, the judges and the runner take.
LoadLocal = Callable[[str, "LocalSettings"], "LocalModel"]
# A loaded model with a vLLM engine attached (model_access/vllm_twin.py): the runner hands the
# same one to the diarist and to a chatbot of the same model and settings (one worker).
LoadOnVllm = Callable[[str, "LocalSettings", "VllmSettings", str], "LocalModel"]
