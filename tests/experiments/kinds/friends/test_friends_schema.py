"""The friends design schema: every mistake is one line naming the file and the field, exit 2,
nothing written."""

from __future__ import annotations

import pytest

from diarylab.experiments.cli import main

BASE = """
[design]
name = "friends-check"
kind = "friends"
seed = 3
entries = 3

[diarist_model]
model = "MODEL"

[pairs]
cards = "all"
a_first = [1, 2]
b_first = [3, 4]

[conditions]
steered = ["lonely", "entitled"]
controls = ["two_unsteered", "fixed_friend"]

[outcome]
letters = [2, 3]

[[profiles]]
id = "lonely"
pattern = "social_isolation"
steer = { layers = [1], strength = 0.5 }

[[profiles]]
id = "entitled"
pattern = "entitlement"
steer = { layers = [1], strength = 0.5 }

[[judges]]
id = "tiny-judge"
kind = "local"
model = "MODEL"

[[hypotheses]]
id = "H1"
says = "a lonely friend spreads loneliness"
direction = "greater"
judges = ["tiny-judge"]

[hypotheses.contrast]
kind = "outcome"
score = "social_isolation"
of = { writer = "other", friend = "lonely" }
against = { writer = "other", friend = "fixed" }
"""


@pytest.fixture()
def write(tmp_path, tiny_model_folder):
    def _write(text: str):
        path = tmp_path / "friends.toml"
        path.write_text(text.replace("MODEL", str(tiny_model_folder)))
        return path

    return _write


def test_the_base_design_checks(write, capsys):
    assert main(["design", "check", str(write(BASE))]) == 0
    out = capsys.readouterr().out
    assert "8 role cards, 4 steered conditions = 128 pairs + 64 control pairs" in out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t + '\n[[chatbots]]\nid = "thanks"\nkind = "fixed"\n',
            "chatbots: a friends design has no chatbots",
        ),
        (lambda t: t.replace("b_first = [3, 4]", "b_first = [3]"), "pairs.b_first: 2 shift(s)"),
        (lambda t: t.replace("a_first = [1, 2]", "a_first = [1, 8]"), "pairs.a_first[1]: shift 8"),
        (lambda t: t.replace("a_first = [1, 2]", "a_first = [2, 2]"), "shift is listed twice"),
        (lambda t: t.replace('cards = "all"', 'cards = ["amara", "nobody"]'), "pairs.cards[1]"),
        (lambda t: t.replace('cards = "all"', 'cards = ["amara"]'), "one card cannot write"),
        (lambda t: t.replace("letters = [2, 3]", "letters = [2, 4]"), "outcome.letters[1]"),
        (
            lambda t: t.replace('steered = ["lonely", "entitled"]', 'steered = ["lonely", "x"]'),
            "conditions.steered[1]: 'x' is neither an inline profile",
        ),
        (
            lambda t: t.replace('steered = ["lonely", "entitled"]', 'steered = ["unsteered"]'),
            "conditions.steered[0]: 'unsteered' is not a steered profile",
        ),
        (lambda t: t.replace(', "fixed_friend"]', "]"), "has no fixed_friend control"),
        (
            lambda t: t.replace('controls = ["two_unsteered", "fixed_friend"]', 'controls = ["x"]'),
            "conditions.controls[0]",
        ),
        (lambda t: t.replace("a_first", "a_frist"), "pairs.a_frist: unknown field"),
        (
            lambda t: t.replace('judges = ["tiny-judge"]', 'judges = ["ghost"]'),
            "unknown judge 'ghost'",
        ),
        (
            lambda t: t.replace(
                'model = "MODEL"\n\n[[hypotheses]]',
                'model = "MODEL"\n\n[[judges]]\nid = "second"\nkind = "local"\n'
                'model = "MODEL"\n\n[[hypotheses]]',
            ),
            "leaves out judge(s) second",
        ),
        (
            lambda t: t.replace('score = "social_isolation"', 'score = "grumpiness"'),
            "unknown pattern 'grumpiness'",
        ),
        (
            lambda t: t.replace('friend = "lonely" }', 'friend = "fixed" }'),
            "of and against select the same writers",
        ),
        (
            lambda t: t.replace(
                'writer = "other", friend = "fixed"', 'writer = "unsteered", friend = "fixed"'
            ),
            "unsteered writers only write to unsteered friends",
        ),
        (lambda t: t.replace('friend = "lonely"', 'friend = "grumpy"'), "unknown friend 'grumpy'"),
        (lambda t: t.replace('kind = "outcome"', 'kind = "drift"'), "contrast.kind"),
        (
            lambda t: t + '\n[scores]\npatterns = ["grumpiness"]\n',
            "scores.patterns[0]: unknown pattern",
        ),
        (
            lambda t: t + '\n[scores]\npatterns = ["entitlement"]\n',
            "unknown pattern 'social_isolation'",  # the hypothesis scores an unscored pattern
        ),
        (
            lambda t: (
                t.replace('cluster = "role_card"', "") + '\n[analysis]\ncluster = "diarist"\n'
            ),
            "analysis.cluster",
        ),
    ],
)
def test_bad_friends_designs_are_one_clear_error(write, capsys, change, message):
    path = write(change(BASE))
    before = sorted(p.name for p in path.parent.iterdir())
    assert main(["design", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert str(path) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == before
