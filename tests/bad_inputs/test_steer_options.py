"""Command-line options of `steer try`, `steer show`, `steer calibrate` and `steer extract`:
steer try    vector-missing, layer-out-of-range, temperature-negative, top-p-zero,
             max-new-tokens-zero, strength-nan, model-missing, bad-dtype, bad-scale (every
             option checked before the model loads); steer show vector-missing
steer calibrate  strengths-nan, floor-150, layer-out-of-range, pattern-mismatch, prompts-zero,
             batch-size-zero, judge-names-no-model, bad-judge-dtype (also with --judge fake),
             bad-positions, out-is-a-file (all refused before the sweep)
steer extract  pairs-zero, unknown-pattern, out-under-a-file; pattern files by path:
             pattern-file-unknown-key, -id-not-its-name, -version-a-string, -too-few-prompts
"""

from __future__ import annotations

import pytest

from diarylab.testing.bad_inputs import (
    C,
    calibrate,
    extract,
    pattern_copy,
    refused_option,
    try_,
)

CLI_CASES = [
    # steer try / show
    C(
        lambda lab: try_(lab, vector=str(lab.tmp / "nothing")),
        ["nothing.safetensors", "missing"],
        id="steer-try-vector-missing",
    ),
    C(
        lambda lab: ["steer", "show", str(lab.tmp / "nothing")],
        ["nothing.safetensors", "missing"],
        id="steer-show-vector-missing",
    ),
    C(
        lambda lab: try_(lab, "--layer", "5"),
        ["--layer", "layer 5 does not exist"],
        id="steer-try-layer-out-of-range",
    ),
    C(
        lambda lab: try_(lab, "--temperature", "-1"),
        ["--temperature", "must be at least 0"],
        id="steer-try-temperature-negative",
    ),
    C(
        lambda lab: try_(lab, "--top-p", "0"),
        ["--top-p", "more than 0"],
        id="steer-try-top-p-zero",
    ),
    C(
        lambda lab: try_(lab, "--max-new-tokens", "0"),
        ["--max-new-tokens"],
        id="steer-try-max-new-tokens-zero",
    ),
    C(
        lambda lab: try_(lab, "--strength", "nan"),
        ["--strength", "finite number"],
        id="steer-try-strength-nan",
    ),
    C(
        lambda lab: try_(lab, "--model", str(lab.tmp / "no-model")),
        ["--model", "no-model"],
        id="steer-try-model-missing",
    ),
    C(lambda lab: try_(lab, "--dtype", "fp64"), ["--dtype", "fp64"], id="steer-try-bad-dtype"),
    C(
        lambda lab: try_(lab, "--scale", "log"),
        ["--scale", "'relative' or 'raw'"],
        id="steer-try-bad-scale",
    ),
    # steer calibrate
    C(
        lambda lab: calibrate(lab, "--strengths", "nan"),
        ["--strengths", "finite"],
        id="steer-calibrate-strengths-nan",
    ),
    C(
        lambda lab: calibrate(lab, "--floor", "150"),
        ["--floor", "at most 100"],
        id="steer-calibrate-floor-150",
    ),
    C(
        lambda lab: calibrate(lab, "--layers", "7"),
        ["--layers", "layer 7 does not exist"],
        id="steer-calibrate-layer-out-of-range",
    ),
    C(
        lambda lab: calibrate(lab, "--pattern", "entitlement"),
        ["tiny-social_isolation", "vector is for pattern 'social_isolation'"],
        id="steer-calibrate-pattern-mismatch",
    ),
    C(
        lambda lab: calibrate(lab, "--prompts", "0"),
        ["--prompts", "at least 1"],
        id="steer-calibrate-prompts-zero",
    ),
    C(
        lambda lab: calibrate(lab, "--batch-size", "0"),
        ["--batch-size"],
        id="steer-calibrate-batch-size-zero",
    ),
    C(
        lambda lab: calibrate(lab, "--judge", "litellm:"),
        ["--judge", "names no model"],
        id="steer-calibrate-judge-names-no-model",
    ),
    C(
        lambda lab: calibrate(lab, "--judge-dtype", "fp64"),
        ["--judge-dtype", "fp64"],
        id="steer-calibrate-bad-judge-dtype",
    ),
    C(
        lambda lab: calibrate(lab, "--positions", "everywhere"),
        ["--positions", "'prompt', 'response' or 'both'"],
        id="steer-calibrate-bad-positions",
    ),
    # steer extract, and pattern files given by path
    C(
        lambda lab: extract(lab, "--pairs", "0"),
        ["--pairs", "at least 1"],
        id="steer-extract-pairs-zero",
    ),
    C(
        lambda lab: extract(lab, "--pattern", "gloom"),
        ["--pattern", "unknown pattern 'gloom'"],
        id="steer-extract-unknown-pattern",
    ),
    C(
        lambda lab: extract(
            lab, pattern=str(pattern_copy(lab, "[heuristic]", "[heuristic]\nweight = 2"))
        ),
        ["social_isolation.toml", "heuristic.weight", "unknown field"],
        id="pattern-file-unknown-key",
    ),
    C(
        lambda lab: extract(lab, pattern=str(pattern_copy(lab, name="lonely.toml"))),
        ["lonely.toml", "pattern.id", "differs from the file name"],
        id="pattern-file-id-not-its-name",
    ),
    C(
        lambda lab: extract(lab, pattern=str(pattern_copy(lab, "version = 2", 'version = "2"'))),
        ["social_isolation.toml", "pattern.version", "whole number"],
        id="pattern-file-version-a-string",
    ),
    C(
        lambda lab: extract(
            lab, pattern=str(pattern_copy(lab, "extraction = [", 'extraction = ["one"]\nx = ['))
        ),
        ["social_isolation.toml", "prompts.extraction", "at least 20"],
        id="pattern-file-too-few-prompts",
    ),
]


@pytest.mark.parametrize(("argv", "names"), CLI_CASES)
def test_a_bad_option_is_one_clear_error(lab, capsys, argv, names):
    refused_option(lab, capsys, argv, names)
