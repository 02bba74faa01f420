from __future__ import annotations

import pandas as pd
import pytest

from diarylab.diarists.profiles import load_profile
from diarylab.experiments.cli import main
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.writes import StoreWrites
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings
from diarylab.steering.calibrate import (
    Sample,
    choose,
    heuristic_scorer,
    summarise,
    sweep,
    write_outputs,
)
from diarylab.steering.vectors import random_vector


def samples_for(table: dict[tuple[int | None, float], tuple[float, float]]) -> list[Sample]:
    out = []
    for (layer, strength), (pattern, coherence) in table.items():
        for i, wobble in enumerate((-1.0, 1.0)):
            out.append(Sample(layer, strength, i, i, "text", pattern + wobble, coherence + wobble))
    return out


def test_choose_most_pattern_above_the_floor():
    samples = samples_for(
        {
            (None, 0.0): (10, 90),
            (10, 1.0): (40, 80),
            (10, 2.0): (70, 65),
            (10, 3.0): (90, 20),  # most pattern, but incoherent
            (20, 1.0): (70, 75),  # ties layer 10 @ 2.0 on pattern, gentler wins? same strength…
            (20, 2.0): (60, 61),
        }
    )
    rows = summarise(samples, [10, 20], floor=60)
    assert [(r.layer, r.strength) for r in rows][:2] == [(10, 0.0), (10, 1.0)]
    baseline = [r for r in rows if r.strength == 0]
    assert len(baseline) == 2 and all(r.pattern_mean == 10 and r.n == 2 for r in baseline)
    chosen = choose(rows)
    assert (chosen.layer, chosen.strength) == (20, 1.0)  # tie on pattern → gentler strength
    assert not [r for r in rows if (r.layer, r.strength) == (10, 3.0)][0].passes_floor
    assert choose(summarise(samples, [10, 20], floor=95)) is None


def test_heuristic_scorer_is_a_simple_word_count():
    score = heuristic_scorer(["alone", "no one"])
    lonely, plain, loop, short = score(
        [
            "I was alone again tonight and no one called me at all, so I sat alone.",
            "We had dinner with friends and laughed about the long walk home.",
            "the the the the the the the the the the the the the the",
            "hi",
        ]
    )
    assert lonely.pattern > 50 > plain.pattern == 0
    assert loop.coherence < 20 < plain.coherence
    assert short == short.__class__(0.0, 0.0)


def test_sweep_writes_table_samples_and_plot(tmp_path, tiny_model):
    vector = random_vector(tiny_model.info(), seed=9)
    prompts = [[{"role": "user", "content": t}] for t in ("Hi", "Write.")]
    store = Store(tmp_path / "store.sqlite")
    scored: list[int] = []
    heuristic = heuristic_scorer(["the"])

    def scorer(texts):
        scored.append(len(texts))
        return heuristic(texts)

    result = sweep(
        tiny_model,
        vector,
        prompts,
        layers=[0, 1],
        strengths=[0.5, 1.0],
        scorer=scorer,
        writes=StoreWrites(store, tiny_model, batch_size=4),
        settings=GenerationSettings(max_new_tokens=6, temperature=1.0),
        seed=3,
        floor=0.0,
    )
    assert len(result.samples) == 2 * (1 + 4)  # baseline once + 2 layers × 2 strengths
    assert scored == [10]  # every sample to the scorer in one batch
    assert store.count("calls") == 10  # every sample written through the store
    assert len(result.rows) == 2 * 3 and result.chosen is not None
    paths = write_outputs(result, tmp_path / "cal", title="test")
    table = pd.read_parquet(paths["table_parquet"])
    assert list(table.columns)[:4] == ["layer", "strength", "n", "pattern_mean"]
    assert table["chosen"].sum() == 1
    assert pd.read_csv(paths["table_csv"]).shape == table.shape
    samples = pd.read_parquet(paths["samples_parquet"])
    assert samples["layer"].isna().sum() == 2  # the shared baseline
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_extract_show_calibrate_try(tmp_path, tiny_model_folder, capsys):
    vector = tmp_path / "si"
    model = ["--model", str(tiny_model_folder), "--device", "cpu"]
    assert (
        main(
            [
                "steer",
                "extract",
                *model,
                "--pattern",
                "social_isolation",
                "--out",
                str(vector),
                "--pairs",
                "2",
                "--max-new-tokens",
                "6",
                "--layers",
                "0-1",
            ]
        )
        == 0
    )
    assert (tmp_path / "si.safetensors").is_file() and (tmp_path / "si.pairs.jsonl").is_file()
    assert (tmp_path / "si.store.sqlite").is_file()  # the pairs it wrote, kept for a rerun
    assert main(["steer", "show", str(vector)]) == 0
    assert "2 layers × 64" in capsys.readouterr().out
    out = tmp_path / "cal"
    code = main(
        [
            "steer",
            "calibrate",
            *model,
            "--vector",
            str(vector),
            "--pattern",
            "social_isolation",
            "--judge",
            "fake",
            "--floor",
            "0",
            "--layers",
            "0,1",
            "--strengths",
            "0.5",
            "1",
            "--prompts",
            "2",
            "--max-new-tokens",
            "6",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    names = (
        "sweep.csv",
        "sweep.parquet",
        "samples.csv",
        "sweep.png",
        "profile.toml",
        "store.sqlite",
    )
    for name in names:
        assert (out / name).is_file(), name
    profile = load_profile(out / "profile.toml")
    assert profile.pattern == "social_isolation" and profile.steer is not None
    assert profile.steer.layers[0] in (0, 1)
    assert "NOT a judge" in capsys.readouterr().out
    assert (
        main(
            [
                "steer",
                "try",
                str(vector),
                *model,
                "--layer",
                "1",
                "--strength",
                "2",
                "--max-new-tokens",
                "5",
            ]
        )
        == 0
    )
    assert "unsteered" in capsys.readouterr().out


def test_cli_user_mistakes_exit_2(tmp_path, tiny_model, capsys):
    vector = random_vector(tiny_model.info(), pattern_id="entitlement")
    vector.save(tmp_path / "v")
    base = [
        "steer",
        "calibrate",
        "--vector",
        str(tmp_path / "v"),
        "--judge",
        "fake",
        "--layers",
        "0",
        "--strengths",
        "1",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main([*base, "--pattern", "social_isolation"]) == 2
    assert "vector is for pattern 'entitlement'" in capsys.readouterr().err
    assert (
        main(
            [
                *base[:-6],
                "--layers",
                "9",
                "--strengths",
                "1",
                "--out",
                "o",
                "--pattern",
                "entitlement",
            ]
        )
        == 2
    )
    assert "layer 9 does not exist" in capsys.readouterr().err
    assert main(["steer", "show", str(tmp_path / "missing")]) == 2
    assert (
        main(
            [
                "steer",
                "calibrate",
                "--vector",
                str(tmp_path / "v"),
                "--judge",
                "nope-judge",
                "--pattern",
                "entitlement",
                "--layers",
                "0",
                "--strengths",
                "1",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )


def test_floor_out_of_range(tiny_model, tmp_path):
    with pytest.raises(LabError, match="outside 0..100"):
        sweep(
            tiny_model,
            random_vector(tiny_model.info()),
            [[{"role": "user", "content": "Hi"}]],
            layers=[0],
            strengths=[1.0],
            scorer=heuristic_scorer(["x"]),
            writes=StoreWrites(Store(tmp_path / "s.sqlite"), tiny_model, batch_size=1),
            settings=GenerationSettings(max_new_tokens=2),
            seed=0,
            floor=120,
        )
