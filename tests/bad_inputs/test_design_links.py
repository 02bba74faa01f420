"""Bad designs (each refused alike by `design check`, `design expand --json` and `run --out`):
hypotheses  hypothesis-unknown-profile, -unknown-baseline-chatbot, -unknown-judge,
          -leaves-out-a-judge (every judge of the design must be named),
          -entry-beyond-the-design, -without-judges, -unknown-direction
inline profiles  inline-strength-1e30, inline-strength-nan, inline-steer-and-calibration,
          inline-calibration-unknown-judge (profiles[0].calibration.judge),
          inline-calibration-floor-150, inline-extraction-pairs-zero, inline-unknown-pattern,
          inline-profile-not-cast,
          profile-path-missing, profile-neither-file-nor-rule
the file  empty-file, not-utf8, key-written-twice, unterminated-string, design-missing,
          design-is-a-folder; positive control: a UTF-8 byte-order mark is accepted (exit 0)
"""

from __future__ import annotations

import pytest

from diarylab.experiments.cli import main
from diarylab.testing.bad_inputs import (
    D,
    hypothesis,
    inline,
    one_clear_error,
    refused_by_check_expand_and_run,
    sub,
)

DESIGN_CASES = [
    # --- hypotheses naming what the design lacks
    D(
        lambda lab: (
            lab.text(profile=False)
            + hypothesis('{ kind = "first_entry_pattern", profile = "ghost" }')
        ),
        "hypothesis H1.contrast.profile",
        "unknown profile 'ghost'",
        id="hypothesis-unknown-profile",
    ),
    D(
        lambda lab: (
            lab.text()
            + hypothesis('{ kind = "drift", chatbot = "tiny-chat", baseline = "nobody" }')
        ),
        "hypothesis H1.contrast.baseline",
        "unknown chatbot 'nobody'",
        id="hypothesis-unknown-baseline-chatbot",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "coherence" }', judges='["oracle"]'),
        "hypothesis H1.judges",
        "unknown judge 'oracle'",
        id="hypothesis-unknown-judge",
    ),
    D(
        lambda lab: (
            lab.text(
                judges=f"""
[[judges]]
id = "tiny-judge"
kind = "local"
model = "{lab.model}"

[[judges]]
id = "second-judge"
kind = "local"
model = "{lab.model}"
"""
            )
            + hypothesis('{ kind = "coherence" }')
        ),
        "hypothesis H1.judges",
        "leaves out judge(s) second-judge",
        id="hypothesis-leaves-out-a-judge",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "drift", chatbot = "tiny-chat", entry = 9 }'),
        "hypothesis H1.contrast.entry",
        "entry 9 is past the design's last entry",
        id="hypothesis-entry-beyond-the-design",
    ),
    D(
        lambda lab: lab.text() + hypothesis('{ kind = "coherence" }', judges="[]"),
        "hypotheses[0].judges",
        "no judges",
        id="hypothesis-without-judges",
    ),
    D(
        lambda lab: (
            lab.text()
            + hypothesis('{ kind = "coherence" }').replace(
                'direction = "greater"', 'direction = "up"'
            )
        ),
        "hypotheses[0].direction",
        "'greater'",
        id="hypothesis-unknown-direction",
    ),
    # --- inline profile rules
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = 1e30 }"),
        "profiles[0].steer.strength",
        "at most 100",
        id="inline-strength-1e30",
    ),
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = nan }"),
        "profiles[0].steer.strength",
        "",
        id="inline-strength-nan",
    ),
    D(
        lambda lab: inline(
            lab,
            "steer = { layers = [1], strength = 0.5 }\n"
            'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5] }',
        ),
        "profiles[0]",
        "needs exactly one of steer and calibration",
        id="inline-steer-and-calibration",
    ),
    D(
        lambda lab: inline(
            lab, 'calibration = { judge = "oracle", layers = [1], strengths = [0.5] }'
        ),
        "profiles[0].calibration.judge",
        "calibrates with unknown judge 'oracle'",
        id="inline-calibration-unknown-judge",
    ),
    D(
        lambda lab: inline(
            lab,
            'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5], floor = 150 }',
        ),
        "profiles[0].calibration.floor",
        "at most 100",
        id="inline-calibration-floor-150",
    ),
    D(
        lambda lab: sub(
            inline(lab, "steer = { layers = [1], strength = 0.5 }"), "pairs = 2", "pairs = 0"
        ),
        "profiles[0].extraction.pairs",
        "at least 1",
        id="inline-extraction-pairs-zero",
    ),
    D(
        lambda lab: sub(
            inline(lab, "steer = { layers = [1], strength = 0.5 }"),
            'pattern = "social_isolation"\nextraction',
            'pattern = "gloom"\nextraction',
        ),
        "profiles[0]",
        "unknown pattern 'gloom'",
        id="inline-unknown-pattern",
    ),
    D(
        lambda lab: inline(lab, "steer = { layers = [1], strength = 0.5 }", listed=False),
        "cast.profiles",
        "inline profile(s) lonely are not in cast.profiles",
        id="inline-profile-not-cast",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "nowhere/lonely.toml"]',
        ),
        "cast.profiles",
        "profile file 'nowhere/lonely.toml' not found",
        id="profile-path-missing",
    ),
    D(
        lambda lab: sub(
            lab.text(profile=False),
            'profiles = ["unsteered"]',
            'profiles = ["unsteered", "lonely"]',
        ),
        None,
        "'lonely' is neither unsteered",
        id="profile-neither-file-nor-rule",
    ),
    # --- the file itself
    D(lambda lab: b"", None, "missing table [design]", id="empty-file"),
    D(
        lambda lab: lab.text().encode("utf-8").replace(b"tiny-test", b"tiny-\xff\xfetest"),
        None,
        "not UTF-8",
        id="not-utf8",
    ),
    D(
        lambda lab: sub(lab.text(), "seed = 7", "seed = 7\nseed = 8"),
        None,
        "is given twice",
        id="key-written-twice",
    ),
    D(
        lambda lab: lab.text().replace('"', "'", 1).replace('"', "", 1),
        None,
        "not valid TOML",
        id="unterminated-string",
    ),
]


@pytest.mark.parametrize(("build", "field", "says"), DESIGN_CASES)
def test_a_bad_design_is_one_clear_error_for_check_expand_and_run(lab, capsys, build, field, says):
    refused_by_check_expand_and_run(lab, capsys, build, field, says)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(lambda lab: lab.tmp / "absent.toml", "file not found", id="design-missing"),
        pytest.param(lambda lab: lab.tmp, "is a folder", id="design-is-a-folder"),
    ],
)
def test_a_design_that_is_not_a_file_is_one_clear_error(lab, capsys, make, says):
    path = make(lab)
    out = lab.tmp / "out"
    for argv in (
        ["design", "check", str(path)],
        ["design", "expand", str(path)],
        ["run", str(path), "--out", str(out), "--no-progress"],
    ):
        one_clear_error(argv, capsys, [str(path), says], [lab.tmp])
        assert not out.exists()


def test_a_byte_order_mark_is_accepted(lab, capsys):
    """Positive control: the harness's checks pass only on refusals, not on every input."""
    path = lab.design(b"\xef\xbb\xbf" + lab.text().encode("utf-8"))
    assert main(["design", "check", str(path)]) == 0, capsys.readouterr().err
    assert main(["design", "expand", str(path)]) == 0, capsys.readouterr().err
