"""Command-line options naming run folders and designs (`report`, `export`, `run`, `design`):
runs         report-resamples-zero, export-to-an-existing-file, run-out-is-a-file;
             export-to-under-a-file and run-out-under-a-file (refused up front),
             report-resamples-not-a-number and design-schema-unknown-kind (argparse's own
             refusals, as one line)
"""

from __future__ import annotations

import pytest

from diarylab.testing.bad_inputs import (
    C,
    plain_file,
    refused_option,
)

CLI_CASES = [
    # run folders and designs by option
    C(
        lambda lab: ["report", str(lab.own_run()), "--resamples", "0"],
        ["--resamples", "too few"],
        id="report-resamples-zero",
    ),
    C(
        lambda lab: ["export", str(lab.own_run()), "--to", str(plain_file(lab))],
        ["notes.txt", "--to is a file"],
        id="export-to-an-existing-file",
    ),
    C(
        lambda lab: [
            "run",
            str(lab.design(lab.text())),
            "--out",
            str(plain_file(lab)),
            "--no-progress",
        ],
        ["notes.txt", "is a file, not a folder"],
        id="run-out-is-a-file",
    ),
    C(
        lambda lab: ["export", str(lab.own_run()), "--to", str(plain_file(lab) / "exported")],
        ["notes.txt", "--to"],
        id="export-to-under-a-file",
    ),
    C(
        lambda lab: [
            "run",
            str(lab.design(lab.text())),
            "--out",
            str(plain_file(lab) / "run"),
            "--no-progress",
        ],  # fmt: skip
        ["notes.txt", "--out"],
        id="run-out-under-a-file",
    ),
    C(
        lambda lab: ["report", str(lab.own_run()), "--resamples", "many"],
        ["--resamples", "many"],
        id="report-resamples-not-a-number",
    ),
    C(
        lambda lab: ["design", "schema", "--kind", "poetry"],
        ["--kind", "poetry"],
        id="design-schema-unknown-kind",
    ),
]


@pytest.mark.parametrize(("argv", "names"), CLI_CASES)
def test_a_bad_option_is_one_clear_error(lab, capsys, argv, names):
    refused_option(lab, capsys, argv, names)
