from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.profiles.refs import profile_ids
from diarylab.testing.lab_fixtures import design_text, make_profile

HYPOTHESIS = """
[[hypotheses]]
id = "H1"
says = "steering works"
contrast = CONTRAST
direction = "greater"
judges = ["tiny-judge"]
"""
ROOT = Path(__file__).resolve().parents[3]
SHIPPED = [
    ROOT / "experiments" / "designs" / "demo.toml",
    ROOT / "experiments" / "designs" / "diary-full.toml",
    ROOT / "results" / "example" / "design.toml",
]


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
    lines = capsys.readouterr().out.splitlines()
    cells = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(cells) == 2 * 2 * 2
    assert {c["id"] for c in cells} >= {
        "amara.unsteered.thanks",
        "tomasz.tiny-social_isolation.tiny-chat",
    }


def test_cell_ids_are_stable(tmp_path, lab, tiny_model_folder):
    _, profile = lab
    path = write(tmp_path, design_text(tiny_model_folder, profile))
    design = load_design(path)
    first = [c.id for c in design.kind.cells(design, profile_ids(design))]
    again = load_design(path)
    assert first == [c.id for c in again.kind.cells(again, profile_ids(again))]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("seed = 7\n", ""), "design.seed: missing"),
        (lambda t: t.replace('"amara"', '"nobody"'), "unknown diarist 'nobody'"),
        (
            lambda t: t.replace('profiles = ["unsteered"', 'profiles = ["unsteered", "grumpy"'),
            "'grumpy' is neither unsteered, an inline profile nor a profile file",
        ),
        (lambda t: t.replace("entries = 3", "entries = 0"), "design.entries: must be at least 1"),
        (lambda t: t.replace("entries = 3", 'entries = "four"'), "design.entries"),
        (lambda t: t.replace('kind = "fixed"', 'kind = "psychic"'), "unknown kind 'psychic'"),
        (
            lambda t: t.replace("max_new_tokens = 6", 'max_new_tokens = "six"'),
            "chatbots[1].generation.max_new_tokens",
        ),
        (
            lambda t: t.replace('kind = "fixed"', 'kind = "fixed"\ncolour = "blue"'),
            "chatbots[0].colour: unknown field",
        ),
        (lambda t: t.replace("temperature = 0.9", "temperature = -1"), "temperature"),
        (lambda t: t.replace("batch_size = 3", "batch_size = 0"), "local.batch_size"),
        (lambda t: t.replace("[design]", "[design\n"), "not valid TOML"),
        (lambda t: t.replace('kind = "diary"', 'kind = "poetry"'), "unknown experiment kind"),
        (lambda t: t + "\n[scorse]\nentry = []\n", "scorse: unknown field"),
        (
            lambda t: t + HYPOTHESIS.replace("CONTRAST", '{ kind = "vibes" }'),
            "contrast",
        ),
        (
            lambda t: (
                t
                + HYPOTHESIS.replace("tiny-judge", "ghost-judge").replace(
                    "CONTRAST", '{ kind = "first_entry_pattern", profile = "steered" }'
                )
            ),
            "unknown judge 'ghost-judge'",
        ),
        (
            lambda t: (
                t
                + HYPOTHESIS.replace(
                    "CONTRAST", '{ kind = "drift", chatbot = "nobody", entry = 2 }'
                )
            ),
            "unknown chatbot 'nobody'",
        ),
        (
            lambda t: t.replace('baseline_chatbot = "thanks"', 'baseline_chatbot = "nope"'),
            "baseline chatbot 'nope'",
        ),
        (
            lambda t: t.replace(
                'id = "tiny-judge"\nkind = "local"', 'id = "tiny-judge"\nkind = "openai-compatible"'
            ),
            "needs endpoint.base_url",
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


def test_shipped_designs_load_and_check(capsys):
    full = load_design(SHIPPED[1])
    spec = full.spec
    assert len(spec.cast.diarist_ids) == 8 and full.entries == 4 and len(spec.judges) == 2
    assert {c.kind for c in spec.chatbots} == {"fixed", "litellm"}
    assert spec.diarist_model.local.batch_size == 32
    assert load_design(SHIPPED[0]).spec.diarist_model.model == "smollm2"
    # diary-full names key variables and vLLM servers this machine lacks: offline checks the
    # files alone; the demo passes the complete check.
    for path in SHIPPED:
        offline = ["--offline"] if path.name == "diary-full.toml" else []
        assert main(["design", "check", str(path), *offline]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "will be made by `run`" in out and "calibrate layers [10, 13, 16, 19]" in out


def test_the_full_design_names_both_judges_tokenizers_and_checks_without_them(monkeypatch, capsys):
    """Both served judges are read exactly, so both name a tokenizer; the harmony judge fixes its
    reasoning effort. Checking the files alone never loads a tokenizer (no hub here)."""
    import diarylab.rubric.judging.building as judge_building

    judges = {j.id: j for j in load_design(SHIPPED[1]).spec.judges}
    assert {i: (j.tokenizer, j.reasoning_effort) for i, j in judges.items()} == {
        "mistral-small-3.1": ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "low"),
        "gpt-oss-120b": ("openai/gpt-oss-120b", "low"),
    }

    def no_tokenizer(spec: str) -> None:
        raise AssertionError(f"design check loaded the tokenizer {spec}")

    monkeypatch.setattr(judge_building, "load_tokenizer", no_tokenizer)
    assert main(["design", "check", str(SHIPPED[1]), "--offline"]) == 0, capsys.readouterr().err


def test_schema_is_printed_and_shipped_designs_validate_against_it(capsys):
    import tomllib

    assert main(["design", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    for path in SHIPPED:
        jsonschema.validate(tomllib.loads(path.read_text()), schema)
    broken = tomllib.loads(SHIPPED[0].read_text())
    broken["chatbots"][0]["colour"] = "blue"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


INLINE = """
[[profiles]]
id = "lonely"
pattern = "social_isolation"
extraction = { pairs = 2 }
RULE
"""


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("", "needs exactly one of steer and calibration"),
        (
            "steer = { layers = [1], strength = 0.5 }\n"
            'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5] }',
            "needs exactly one of steer and calibration",
        ),
        (
            'calibration = { judge = "ghost", layers = [1], strengths = [0.5] }',
            "calibrates with unknown judge 'ghost'",
        ),
        ("steer = { layers = [1, 1], strength = 0.5 }", "layers repeat"),
    ],
)
def test_inline_profile_rules_are_checked(tmp_path, tiny_model_folder, capsys, rule, message):
    text = design_text(tiny_model_folder, None).replace(
        'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]'
    )
    path = write(tmp_path, text + INLINE.replace("RULE", rule))
    code, err = check(path, capsys)
    assert code == 2 and message in err, err


def test_inline_profile_is_described_by_check(tmp_path, tiny_model_folder, capsys):
    text = design_text(tiny_model_folder, None).replace(
        'profiles = ["unsteered"]', 'profiles = ["unsteered", "lonely"]'
    )
    rule = 'calibration = { judge = "tiny-judge", layers = [1], strengths = [0.5, 1.0] }'
    path = write(tmp_path, text + INLINE.replace("RULE", rule))
    assert main(["design", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 profiles" in out and "profile lonely: will be made by `run`" in out
    assert "strengths [0.5, 1.0] with judge 'tiny-judge'" in out


FRIENDS = ROOT / "experiments" / "designs" / "friends.toml"


def test_shipped_friends_design_checks_offline_and_validates_against_its_schema(capsys):
    import tomllib

    # Its judges are vLLM servers and its profiles calibration rules: offline checks the files.
    assert main(["design", "check", str(FRIENDS), "--offline"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "9 steered conditions = 288 pairs + 64 control pairs" in out
    assert main(["design", "schema", "--kind", "friends"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    data = tomllib.loads(FRIENDS.read_text())
    jsonschema.validate(data, schema)
    data["pairs"]["a_frist"] = [1]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


BENCHMARK_DESIGNS = [
    ROOT / "experiments" / "designs" / "benchmark-mentalhealthbench.toml",
    ROOT / "experiments" / "designs" / "benchmark-demo.toml",
]


def test_shipped_benchmark_designs_load_check_and_fit_their_schema(tmp_path, capsys):
    import tomllib

    full, demo = (load_design(p) for p in BENCHMARK_DESIGNS)
    assert full.spec.benchmark.sample == 300 and len(full.spec.judges) == 2
    assert full.spec.benchmark.calibration is not None
    # The published file is the user's own: until it is there, check says so and where.
    assert main(["design", "check", "--offline", str(BENCHMARK_DESIGNS[0])]) == 2
    assert "benchmark.data: benchmark file not found" in capsys.readouterr().err
    synthetic = ROOT / "tests" / "data" / "mentalhealthbench_synthetic.jsonl"
    mine = tmp_path / "mine.toml"
    mine.write_text(
        BENCHMARK_DESIGNS[0]
        .read_text()
        .replace("../../data/mentalhealthbench.jsonl", str(synthetic))
        .replace("sample = 300", "sample = 27")
    )
    assert main(["design", "check", "--offline", str(mine)]) == 0
    assert "27 of 27 conversations" in capsys.readouterr().out
    assert demo.spec.chatbots[1].model == "smollm2"
    assert main(["design", "check", str(BENCHMARK_DESIGNS[1])]) == 0
    assert "3 of 27 conversations" in capsys.readouterr().out
    assert main(["design", "schema", "--kind", "benchmark"]) == 0
    schema = json.loads(capsys.readouterr().out)
    for path in BENCHMARK_DESIGNS:
        jsonschema.validate(tomllib.loads(path.read_text()), schema)


def test_one_schema_without_a_kind_dispatches_on_the_design_kind(capsys):
    """`design schema` alone prints one schema for every design file: each shipped design of
    each kind fits it, and a design fits only under its own kind."""
    import tomllib

    assert main(["design", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    shipped = sorted((ROOT / "experiments" / "designs").glob("*.toml"))
    kinds = set()
    for path in shipped:
        data = tomllib.loads(path.read_text())
        jsonschema.validate(data, schema)
        kinds.add(data["design"]["kind"])
        for other in {"diary", "friends", "benchmark"} - {data["design"]["kind"]}:
            moved = {**data, "design": {**data["design"], "kind": other}}
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(moved, schema)
    assert kinds == {"diary", "friends", "benchmark"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"design": {"name": "x", "kind": "calibration", "seed": 1}}, schema)
    # With --kind, that kind's own schema.
    assert main(["design", "schema", "--kind", "friends"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "diarylab design (friends)"
