"""Building small, complete designs on the tiny random model for experiment tests."""

from __future__ import annotations

from pathlib import Path

from diarylab.diarists.profiles import write_profile
from diarylab.model_access.local import LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.steering.settings import SteerSettings
from diarylab.steering.vectors import random_vector


def make_profile(
    folder: Path, model_folder: Path, *, pattern: str = "social_isolation", spec: str | None = None
) -> Path:
    """A steered profile for the model in `model_folder` (random direction, strength 0.8)."""
    model = LocalModel.load(str(model_folder), LocalSettings(device="cpu"))
    info = model.info()
    if spec is not None:  # pretend the vector was made on another model
        from dataclasses import replace

        info = replace(info, spec=spec)
    vector = random_vector(info, seed=3, pattern_id=pattern)
    sha = vector.save(folder / "vectors" / f"tiny-{pattern}")
    return write_profile(
        folder / "profiles" / f"tiny-{pattern}.toml",
        profile_id=f"tiny-{pattern}",
        pattern=pattern,
        vector=folder / "vectors" / f"tiny-{pattern}",
        vector_sha256=sha,
        steer=SteerSettings(layers=[1], strength=0.8),
    )


# Only the fixed-reply baseline: a run whose chatbot turns call no model.
FIXED_ONLY = """
[[chatbots]]
id = "thanks"
kind = "fixed"
"""


def served_judge(tokenizer: object, url: str, *, max_error: float = 0.0) -> str:
    """One served judge read by prompt tokens through `tokenizer`, against the judge stand-in at
    `url` (testing/fake_judge_server.py): no retries, eight prompts a request."""
    return f"""
[[judges]]
id = "served"
kind = "openai-compatible"
model = "hosted_vllm/fake-judge"
tokenizer = "{tokenizer}"
max_error = {max_error}
probe_floor = 0.0
endpoint = {{ base_url = "{url}", max_retries = 0, timeout_s = 30, prompts_per_request = 8 }}
"""


def design_text(
    model_folder: Path,
    profile: Path | None,
    *,
    entries: int = 3,
    chatbots: str | None = None,
    judges: str | None = None,
    diarists: str = '["amara", "tomasz"]',
    extra: str = "",
) -> str:
    profiles = '["unsteered"' + (f', "{profile}"' if profile else "") + "]"
    chatbots = (
        chatbots
        if chatbots is not None
        else f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "tiny-chat"
kind = "local"
model = "{model_folder}"
generation = {{ max_new_tokens = 6, temperature = 0.7 }}
"""
    )
    judges = (
        judges
        if judges is not None
        else f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{model_folder}"
"""
    )
    return f"""
[design]
name = "tiny-test"
kind = "diary"
seed = 7
entries = {entries}
coverage_floor = 0.0

[diarist_model]
model = "{model_folder}"
generation = {{ max_new_tokens = 8, temperature = 0.9 }}
local = {{ batch_size = 3 }}

[cast]
diarists = {diarists}
profiles = {profiles}
{chatbots}
{judges}
[scores]
entry = ["pattern", "coherence", "realism"]
patterns = ["social_isolation"]

[analysis]
resamples = 200
baseline_chatbot = "thanks"
no_verdicts = "a test's small run: it checks the pipeline, not a study"
{extra}
"""


def small_run_text(model_folder: Path, profile: Path | None) -> str:
    """The smallest whole run: one diarist, one entry, the fixed-reply baseline, the tiny local
    judge reading coherence only (a finished run folder for the run-folder and bad-input tests)."""
    return design_text(
        model_folder, profile, entries=1, diarists='["amara"]', chatbots=FIXED_ONLY
    ).replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
