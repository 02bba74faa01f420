"""A reduced friends design on the tiny random model, for the friends kind's tests."""

from __future__ import annotations

from pathlib import Path

from diarylab.testing.lab_fixtures import make_profile

HYPOTHESES = """
[[hypotheses]]
id = "H1"
says = "a lonely friend makes a writer lonelier than answering the fixed letter"
direction = "greater"
judges = ["tiny-judge"]
[hypotheses.contrast]
kind = "outcome"
score = "social_isolation"
of = { writer = "steered", friend = "tiny-social_isolation" }
against = { writer = "steered", friend = "fixed" }

[[hypotheses]]
id = "H2"
says = "a lonely writer answering the fixed letter stays lonelier than two unsteered friends"
direction = "greater"
judges = ["tiny-judge"]
[hypotheses.contrast]
kind = "outcome"
score = "social_isolation"
of = { writer = "tiny-social_isolation", friend = "fixed" }
against = { writer = "unsteered", friend = "unsteered" }
"""
# H1 alone: for designs without the two_unsteered control.
FIRST_HYPOTHESIS = "[[hypotheses]]" + HYPOTHESES.split("[[hypotheses]]")[1]


def friends_design(
    folder: Path,
    model_folder: Path,
    *,
    patterns: tuple[str, ...] = ("social_isolation",),
    controls: str = '["two_unsteered", "fixed_friend"]',
    entries: int = 3,
    outcome: str = "[2, 3]",
    scores: str = 'letter = ["pattern"]\npatterns = ["social_isolation"]',
    hypotheses: str = HYPOTHESES,
) -> Path:
    """Two role cards in both seats and orders (4 pairs per condition), steered profiles from
    profile files with random vectors on the tiny model, one local judge. Small on purpose: the
    tiny model's number readings take seconds each on a busy machine."""
    profiles = [make_profile(folder, model_folder, pattern=p) for p in patterns]
    steered = ", ".join(f'"{p}"' for p in profiles)
    text = f"""
[design]
name = "tiny-friends"
kind = "friends"
seed = 11
entries = {entries}
coverage_floor = 0.0

[diarist_model]
model = "{model_folder}"
generation = {{ max_new_tokens = 6, temperature = 0.9 }}
local = {{ batch_size = 4 }}

[pairs]
cards = ["amara", "tomasz"]
a_first = [1]
b_first = [1]

[conditions]
steered = [{steered}]
controls = {controls}

[outcome]
letters = {outcome}

[scores]
{scores}

[[judges]]
id = "tiny-judge"
kind = "local"
model = "{model_folder}"
max_error = 0  # every letter read exactly (the report's Judge readings say so)

[analysis]
resamples = 200
cluster = "role_card"
decision_rule = "intervals"  # the shipped design's (its method page's) rule
interval = "bca"
no_verdicts = "a test's small run: it checks the pipeline, not a study"
{hypotheses}
"""
    path = folder / "friends.toml"
    path.write_text(text)
    return path
