"""The type of what loads a local model, the one the chatbots, the judges and the runner take;
schema alone, so a design is checked without torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import LocalSettings


# How a caller has a local model loaded: LocalModel.load itself, or the run's shared models
# (model_access/shared_models.py LocalModels.get), one copy per model and settings. The one type
# the chatbots, the judges and the runner take.
LoadLocal = Callable[[str, "LocalSettings"], "LocalModel"]
