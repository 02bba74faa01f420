from __future__ import annotations

import json

import pytest

from experiments.cells import expand
from experiments.cli import main
from experiments.design import load_design
from experiments.profiles import check_profiles
from tests.lab_fixtures import design_text, make_profile

HYPOTHESIS = """
[[hypotheses]]
id = "H1"
says = "steering works"
contrast = "CONTRAST"
direction = "greater"
judges = ["tiny-judge"]
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory, tiny_model_folder):
    folder = tmp_path_factory.mktemp("lab")
    profile = make_profile(folder, tiny_model_folder)
    return folder, profile


def write(tmp_path, text, name="design.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def check(path, capsys):
    before = sorted(p.name for p in path.parent.iterdir())
    code = main(["design", "check", str(path)])
    err = capsys.readouterr().err
    assert sorted(p.name for p in path.parent.iterdir()) == before, "check wrote something"
    return code, err


def test_valid_design_checks_and_expands(tmp_path, lab, tiny_model_folder, capsys):
    _, profile = lab
    path = write(tmp_path, design_text(tiny_model_folder, profile))
    assert main(["design", "check", str(path)]) == 0
    assert main(["design", "expand", str(path), "--json"]) == 0
    cells = [json.loads(line) for line in capsys.readouterr().out.splitlines()[1:]]
    assert len(cells) == 2 * 2 * 2
    assert {c["id"] for c in cells} >= {
        "amara.unsteered.thanks",
        "tomasz.tiny-social_isolation.tiny-chat",
    }


def test_cell_ids_are_stable(tmp_path, lab, tiny_model_folder):
    _, profile = lab
    path = write(tmp_path, design_text(tiny_model_folder, profile))
    design = load_design(path)
    first = [c.id for c in expand(design, check_profiles(design))]
    second = [c.id for c in expand(load_design(path), check_profiles(load_design(path)))]
    assert first == second


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("seed = 7\n", ""), "missing field 'seed'"),
        (lambda t: t.replace('"amara"', '"nobody"'), "unknown diarist 'nobody'"),
        (
            lambda t: t.replace('profiles = ["unsteered"', 'profiles = ["unsteered", "grumpy"'),
            "unknown profile 'grumpy'",
        ),
        (lambda t: t.replace("entries = 3", "entries = 0"), "entries must be a positive integer"),
        (lambda t: t.replace("entries = 3", 'entries = "four"'), "field 'entries' must be int"),
        (lambda t: t.replace('kind = "fixed"', 'kind = "psychic"'), "unknown chatbot kind"),
        (
            lambda t: t.replace("max_new_tokens = 6", 'max_new_tokens = "six"'),
            "field 'max_new_tokens' must be int",
        ),
        (
            lambda t: t.replace('kind = "fixed"', 'kind = "fixed"\ncolour = "blue"'),
            "unknown field(s) colour",
        ),
        (lambda t: t.replace("[design]", "[design\n"), "not valid TOML"),
        (
            lambda t: t + HYPOTHESIS.replace("CONTRAST", "vibes(steered) - vibes(unsteered)"),
            "contrast",
        ),
        (
            lambda t: (
                t
                + HYPOTHESIS.replace("tiny-judge", "ghost-judge").replace(
                    "CONTRAST", "first_entry_pattern(steered) - first_entry_pattern(unsteered)"
                )
            ),
            "unknown judge 'ghost-judge'",
        ),
        (
            lambda t: t.replace('baseline_chatbot = "thanks"', 'baseline_chatbot = "nope"'),
            "baseline chatbot 'nope'",
        ),
    ],
)
def test_malformed_design_is_one_clear_error(
    tmp_path, lab, tiny_model_folder, capsys, change, message
):
    _, profile = lab
    path = write(tmp_path, change(design_text(tiny_model_folder, profile)))
    code, err = check(path, capsys)
    assert code == 2
    assert message in err
    assert str(path) in err or "profile" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_vector_for_another_model_is_refused(tmp_path, tiny_model_folder, capsys):
    profile = make_profile(tmp_path, tiny_model_folder, spec="some-org/other-model")
    path = write(tmp_path, design_text(tiny_model_folder, profile))
    code, err = check(path, capsys)
    assert code == 2 and "vector made on 'some-org/other-model'" in err


def test_layer_out_of_range_is_refused(tmp_path, lab, tiny_model_folder, capsys):
    _, profile = lab
    bad = tmp_path / "bad.toml"
    bad.write_text(
        profile.read_text()
        .replace("layers = [1]", "layers = [7]")
        .replace('vector = "', f'vector = "{profile.parent}/')
    )
    path = write(tmp_path, design_text(tiny_model_folder, bad))
    code, err = check(path, capsys)
    assert code == 2 and "layer" in err


def test_shipped_designs_load():
    from pathlib import Path

    root = Path(__file__).parent.parent / "experiments" / "designs"
    full = load_design(root / "diary-full.toml")
    assert len(full.diarists) == 8 and full.entries == 4 and len(full.judges) == 2
    assert {c.kind for c in full.chatbots} == {"fixed", "litellm"}
    demo = load_design(root / "demo.toml")
    assert demo.diarist_model.model == "smollm2"
