"""Bad designs (each refused alike by `design check`, `design expand --json` and `run --out`):
shape     table-is-a-number (design = 5), chatbots-is-a-number, diarist-model-is-a-string,
          cast-is-a-list, no-chatbots
unknown   unknown-table-scorse ("did you mean 'scores'?"), unknown-key-in-design (entires →
          entries), -in-generation (temprature), -in-analysis (resample), -in-local (dtyp),
          -in-endpoint (concurency), unknown-array-of-tables, misspelt-required-key-in-judge
          (modle: "judges[0].model: missing")
types     seed-is-a-string, entries-is-a-float, coverage-floor-is-a-string,
          diarists-is-a-bare-string, trust-remote-code-is-a-string, dtype-unknown (fp64),
          temperature-is-a-boolean, unknown-entry-score, unknown-cluster
"""

from __future__ import annotations

import pytest

from diarylab.testing.bad_inputs import (
    D,
    refused_by_check_expand_and_run,
    served,
    sub,
    without_table,
)

DESIGN_CASES = [
    # --- shape: a table that is not a table, tables and keys nobody knows
    D(
        lambda lab: "design = 5\n" + without_table(lab.text(), "design"),
        "design",
        "[design]",
        id="table-is-a-number",
    ),
    D(
        lambda lab: "chatbots = 3\n" + lab.text(chatbots=""),
        "chatbots",
        "must be a list",
        id="chatbots-is-a-number",
    ),
    D(
        lambda lab: 'diarist_model = "smollm2"\n' + without_table(lab.text(), "diarist_model"),
        "diarist_model",
        "must be a table",
        id="diarist-model-is-a-string",
    ),
    D(
        lambda lab: without_table(lab.text(), "diarist_model"),
        "diarist_model",
        "add [diarist_model]",
        id="diary-design-without-a-diarist-model",
    ),
    D(
        lambda lab: "cast = [1, 2]\n" + without_table(lab.text(), "cast"),
        "cast",
        "must be a table",
        id="cast-is-a-list",
    ),
    D(
        lambda lab: sub(lab.text(), "[scores]", "[scorse]"),
        "scorse",
        "did you mean 'scores'?",
        id="unknown-table-scorse",
    ),
    D(
        lambda lab: sub(lab.text(), "entries = 3", "entires = 3"),
        "design.entires",
        "did you mean 'entries'?",
        id="unknown-key-in-design",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.9", "temprature = 0.9"),
        "diarist_model.generation.temprature",
        "did you mean 'temperature'?",
        id="unknown-key-in-generation",
    ),
    D(
        lambda lab: sub(lab.text(), "resamples = 200", "resample = 300"),
        "analysis.resample",
        "did you mean 'resamples'?",
        id="unknown-key-in-analysis",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, dtyp = 'fp32'"),
        "diarist_model.local.dtyp",
        "did you mean 'dtype'?",
        id="unknown-key-in-local",
    ),
    D(
        lambda lab: sub(
            lab.text(),
            'id = "tiny-judge"\nkind = "local"\nmodel',
            'id = "tiny-judge"\nkind = "local"\nmodle',
        ),
        "judges[0].model",
        "missing",
        id="misspelt-required-key-in-judge",
    ),
    D(
        lambda lab: lab.text(chatbots=served("concurency = 2")),
        "chatbots[1].endpoint.concurency",
        "did you mean 'concurrency'?",
        id="unknown-key-in-endpoint",
    ),
    D(
        lambda lab: "\n[[kasts]]\nx = 1\n" + lab.text(),
        "kasts",
        "unknown field",
        id="unknown-array-of-tables",
    ),
    # --- wrong types
    D(
        lambda lab: sub(lab.text(), "seed = 7", 'seed = "7"'),
        "design.seed",
        "whole number",
        id="seed-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), "entries = 3", "entries = 3.0"),
        "design.entries",
        "whole number",
        id="entries-is-a-float",
    ),
    D(
        lambda lab: sub(lab.text(), "coverage_floor = 0.0", 'coverage_floor = "low"'),
        "design.coverage_floor",
        "number",
        id="coverage-floor-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), 'diarists = ["amara", "tomasz"]', 'diarists = "amara"'),
        "cast.diarists",
        "",
        id="diarists-is-a-bare-string",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, trust_remote_code = 'yes'"),
        "diarist_model.local.trust_remote_code",
        "true or false",
        id="trust-remote-code-is-a-string",
    ),
    D(
        lambda lab: sub(lab.text(), "batch_size = 3", "batch_size = 3, dtype = 'fp64'"),
        "diarist_model.local.dtype",
        "'fp32'",
        id="dtype-unknown",
    ),
    D(
        lambda lab: sub(lab.text(), "temperature = 0.7", "temperature = true"),
        "chatbots[1].generation.temperature",
        "number",
        id="temperature-is-a-boolean",
    ),
]


@pytest.mark.parametrize(("build", "field", "says"), DESIGN_CASES)
def test_a_bad_design_is_one_clear_error_for_check_expand_and_run(lab, capsys, build, field, says):
    refused_by_check_expand_and_run(lab, capsys, build, field, says)
