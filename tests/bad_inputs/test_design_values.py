"""Bad designs (each refused alike by `design check`, `design expand --json` and `run --out`):
ranges    temperature-negative, top-p-above-one, max-new-tokens-zero, chatbot-batch-size-zero,
          timeout-zero, max-retries-negative, concurrency-zero, entries-zero,
          entries-a-billion, coverage-floor-two, resamples-zero, min-diarists-one,
          seed-negative, version-zero, name-not-a-slug
kinds     judge-kind-unknown, chatbot-kind-is-a-judge-kind, experiment-kind-missing
names     duplicate-chatbot-id, duplicate-judge-id, duplicate-hypothesis-id (the entry's
          id named), duplicate-diarist, duplicate-profile, unknown-score-pattern (the list
          item named)
"""

from __future__ import annotations

import pytest

from diarylab.testing.bad_inputs import (
    D,
    hypothesis,
    refused_by_check_expand_and_run,
    served,
    sub,
)

DESIGN_CASES = [
    # --- out of range
    D(
        lambda lab: sub(lab.text(), "temperature = 0.7", "temperature = -1"),
        "chatbots[1].generation.temperature",
        "at least 0",
        id="temperature-negative",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.9", "temperature = 0.9, top_p = 1.5"),
        "diarist_model.generation.top_p",
        "at most 1",
        id="top-p-above-one",
    ),
    D(
        lambda lab: sub(lab.text(), "max_new_tokens = 8", "max_new_tokens = 0"),
        "diarist_model.generation.max_new_tokens",
        "at least 1",
        id="max-new-tokens-zero",
    ),
    D(
        lambda lab: sub(
            lab.text(), "temperature = 0.7 }", "temperature = 0.7 }\nlocal = { batch_size = 0 }"
        ),
        "chatbots[1].local.batch_size",
        "at least 1",
        id="chatbot-batch-size-zero",
    ),
    D(
        lambda lab: lab.text(chatbots=served("timeout_s = 0")),
        "chatbots[1].endpoint.timeout_s",
        "more than 0",
        id="timeout-zero",
    ),
    D(
        lambda lab: lab.text(chatbots=served("max_retries = -1")),
        "chatbots[1].endpoint.max_retries",
        "at least 0",
        id="max-retries-negative",
    ),
    D(
        lambda lab: lab.text(chatbots=served("concurrency = 0")),
        "chatbots[1].endpoint.concurrency",
        "at least 1",
        id="concurrency-zero",
    ),
    D(
        lambda lab: lab.text(entries=0),
        "design.entries",
        "at least 1",
        id="entries-zero",
    ),
    D(
        lambda lab: lab.text(entries=10**9),
        "design.entries",
        "at most 100",
        id="entries-a-billion",
    ),
    D(
        lambda lab: sub(lab.text(), "coverage_floor = 0.0", "coverage_floor = 2"),
        "design.coverage_floor",
        "at most 1",
        id="coverage-floor-two",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resamples = 0"),
        "analysis.resamples",
        "at least 100",
        id="resamples-zero",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resamples = 200\nmin_diarists = 1"),
        "analysis.min_diarists",
        "at least 2",
        id="min-diarists-one",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = -7"),
        "design.seed",
        "at least",
        id="seed-negative",
    ),
    D(
        lambda lab: sub(lab.text(), 'name = "tiny-test"', 'name = "my run!"'),
        "design.name",
        "pattern",
        id="name-not-a-slug",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = 7\nversion = 0"),
        "design.version",
        "at least 1",
        id="version-zero",
    ),
    D(
        lambda lab: sub(lab.text(), 'entry = ["pattern"', 'entry = ["vibes", "pattern"'),
        "scores.entry[0]",
        "'pattern', 'coherence' or 'realism'",
        id="unknown-entry-score",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", 'resamples = 200\ncluster = "pair"'),
        "analysis.cluster",
        "'diarist'",
        id="unknown-cluster",
    ),
    D(
        lambda lab: "chatbots = []\n" + lab.text(chatbots=""),
        "chatbots",
        "at least 1",
        id="no-chatbots",
    ),
    # --- kinds and names
    D(
        lambda lab: sub(
            lab.text(), 'id = "tiny-judge"\nkind = "local"', 'id = "tiny-judge"\nkind = "oracle"'
        ),
        "judges[0].kind",
        "unknown kind 'oracle'",
        id="judge-kind-unknown",
    ),
    D(
        lambda lab: sub(lab.text(), 'kind = "fixed"', 'kind = "openai-compatible"'),
        "chatbots[0].kind",
        "unknown kind 'openai-compatible'",
        id="chatbot-kind-is-a-judge-kind",
    ),
    D(
        lambda lab: sub(lab.text(), 'kind = "diary"\n', ""),
        "design.kind",
        "unknown experiment kind None",
        id="experiment-kind-missing",
    ),
    D(
        lambda lab: sub(lab.text(), 'id = "tiny-chat"', 'id = "thanks"'),
        "chatbots",
        "chatbot id 'thanks' is used twice",
        id="duplicate-chatbot-id",
    ),
    D(
        lambda lab: lab.text(
            judges=f"""
[[judges]]
id = "j"
kind = "local"
model = "{lab.model}"

[[judges]]
id = "j"
kind = "local"
model = "{lab.model}"
"""
        ),
        "judges",
        "judge id 'j' is used twice",
        id="duplicate-judge-id",
    ),
    D(
        lambda lab: (
            lab.text() + hypothesis('{ kind = "coherence" }') + hypothesis('{ kind = "realism" }')
        ),
        "hypotheses",
        "hypothesis id 'H1' is used twice",
        id="duplicate-hypothesis-id",
    ),
    D(
        lambda lab: sub(lab.text(), '["amara", "tomasz"]', '["amara", "amara"]'),
        "cast.diarists",
        "a diarist is listed twice",
        id="duplicate-diarist",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "unsteered"]',
        ),
        "cast.profiles",
        "a profile is listed twice",
        id="duplicate-profile",
    ),
    D(
        lambda lab: sub(lab.text(), 'patterns = ["social_isolation"]', 'patterns = ["gloom"]'),
        "scores.patterns",
        "unknown pattern 'gloom'",
        id="unknown-score-pattern",
    ),
]


@pytest.mark.parametrize(("build", "field", "says"), DESIGN_CASES)
def test_a_bad_design_is_one_clear_error_for_check_expand_and_run(lab, capsys, build, field, says):
    refused_by_check_expand_and_run(lab, capsys, build, field, says)
