"""The served-judge probe's fixed prompt, read from rubric/probes/number_probe.toml."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from diarylab.foundation.datafiles import DataModel, NonEmpty, load_data
from diarylab.rubric.prompts import JudgePrompt

PROBE_FILE = Path(__file__).parent / "probes" / "number_probe.toml"


class _Probe(DataModel):
    version: int
    system: NonEmpty
    user: NonEmpty
    prefill: NonEmpty


class _ProbeFile(DataModel):
    probe: _Probe


@cache
def number_probe() -> JudgePrompt:
    data, _ = load_data(PROBE_FILE, _ProbeFile)
    p = data.probe
    return JudgePrompt.chat(
        [{"role": "system", "content": p.system}, {"role": "user", "content": p.user}],
        prefill=p.prefill,
    )
