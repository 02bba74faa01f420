"""Command-line options of `judge read`, `judge score` and `judge rubric`:
judge        read: prompt-missing, prompt-empty, prompt-not-utf8, message-file-missing,
             prefill-without-messages, bad-dtype, endpoint-option-on-local-judge,
             timeout-zero, floor-above-one; score: unknown-pattern; rubric: not-json,
             not-a-list, no-reply, no-entry
"""

from __future__ import annotations

import pytest

from diarylab.testing.bad_inputs import (
    C,
    calibrate,
    conversation_file,
    extract,
    judge_read,
    plain_file,
    prompt_file,
    refused_option,
)

CLI_CASES = [
    # judge read / score / rubric
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, None))),
        ["prompt.txt", "prompt file not found"],
        id="judge-read-prompt-missing",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"  \n"))),
        ["prompt.txt", "empty"],
        id="judge-read-prompt-empty",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"\xff\xfe"))),
        ["prompt.txt", "not UTF-8"],
        id="judge-read-prompt-not-utf8",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"x")), "--prefill", "A"),
        ["--prefill"],
        id="judge-read-prefill-without-messages",
    ),
    C(
        lambda lab: judge_read(
            lab, "--prompt-file", str(prompt_file(lab, b"x")), "--dtype", "fp64"
        ),
        ["--dtype", "fp64"],
        id="judge-read-bad-dtype",
    ),
    C(
        lambda lab: judge_read(
            lab, "--prompt-file", str(prompt_file(lab, b"x")), "--concurrency", "0"
        ),
        ["--concurrency"],
        id="judge-read-endpoint-option-on-local-judge",
    ),
    C(
        lambda lab: [
            "judge",
            "read",
            "--judge",
            "litellm:openai/x",
            "--base-url",
            "http://x/v1",
            "--prompt-file",
            str(prompt_file(lab, b"x")),
            "--timeout-s",
            "0",
        ],
        ["--timeout-s", "more than 0"],
        id="judge-read-timeout-zero",
    ),
    C(
        lambda lab: [
            "judge",
            "score",
            "--judge",
            str(lab.model),
            "--entry-file",
            str(prompt_file(lab, b"an entry")),
            "--pattern",
            "gloom",
        ],
        ["--pattern", "unknown pattern 'gloom'"],
        id="judge-score-unknown-pattern",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, "{not json")),
        ],
        ["conversation.json", "not valid JSON"],
        id="judge-rubric-not-json",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '{"role": "user"}')),
        ],
        ["conversation.json", "list of"],
        id="judge-rubric-not-a-list",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '[{"role": "user", "content": "today"}]')),
        ],  # fmt: skip
        ["conversation.json", "no assistant message"],
        id="judge-rubric-no-reply",
    ),
    C(
        lambda lab: [
            "judge",
            "rubric",
            "--judge",
            str(lab.model),
            "--conversation-file",
            str(conversation_file(lab, '[{"role": "assistant", "content": "hello"}]')),
        ],  # fmt: skip
        ["conversation.json", "no user message"],
        id="judge-rubric-no-entry",
    ),
    C(
        lambda lab: judge_read(lab, "--message-file", str(lab.tmp / "absent.txt")),
        ["absent.txt", "message file not found"],
        id="judge-read-message-file-missing",
    ),
    C(
        lambda lab: judge_read(lab, "--prompt-file", str(prompt_file(lab, b"x")), "--floor", "5"),
        ["--floor"],
        id="judge-read-floor-above-one",
    ),
    C(
        lambda lab: calibrate(lab)[:-2] + ["--out", str(plain_file(lab))],
        ["notes.txt", "--out"],
        id="steer-calibrate-out-is-a-file",
    ),
    C(
        lambda lab: extract(lab)[:-2] + ["--out", str(plain_file(lab) / "vector")],
        ["notes.txt", "--out"],
        id="steer-extract-out-under-a-file",
    ),
]


@pytest.mark.parametrize(("argv", "names"), CLI_CASES)
def test_a_bad_option_is_one_clear_error(lab, capsys, argv, names):
    refused_option(lab, capsys, argv, names)
