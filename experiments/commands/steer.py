"""`diarylab steer ...`: extract a pattern vector, calibrate it into a profile, inspect it, and
try it on one prompt. Wires pattern files and judges into steering/, which knows neither."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from diarylab.diarists.patterns import available_patterns, load_pattern
from diarylab.experiments.commands import _steer_options as so
from diarylab.experiments.commands._options import (
    add_judge_args,
    pattern_option,
    validated,
)
from diarylab.foundation.errors import LabError

DEFAULT_SEED = 20261130


def register(sub: argparse._SubParsersAction) -> None:
    steer = sub.add_parser("steer", help="pattern vectors: extract, calibrate, show, try")
    steps = steer.add_subparsers(dest="steer_command", required=True, metavar="STEP")

    p = steps.add_parser("extract", help="extract a pattern vector from the pattern's contrast set")
    so.model_args(p)
    p.add_argument("--pattern", required=True, help=f"one of {', '.join(available_patterns())}")
    p.add_argument("--out", required=True, type=Path, help="vector file (NAME.safetensors)")
    p.add_argument("--pairs", type=int, default=20, help="contrast pairs (default 20)")
    so.sampling_args(p)
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="the sampling seed (every row derives its own from it)",
    )
    p.add_argument("--batch-size", type=int, default=8, help="texts generated in one batch")
    add_judge_args(p, prefix="judge-", required=False)
    p.add_argument(
        "--layers", type=so.int_list, nargs="+", help="layers to report (all are extracted)"
    )
    p.set_defaults(handler=run_extract)

    p = steps.add_parser("calibrate", help="sweep layers × strengths, write table, plot, profile")
    so.model_args(p)
    p.add_argument("--vector", required=True, type=Path, help="the vector file to calibrate")
    p.add_argument("--pattern", required=True, help="the pattern the judge scores samples for")
    add_judge_args(p, prefix="judge-")
    p.add_argument("--floor", type=float, default=60.0, help="minimum mean coherence (0-100)")
    p.add_argument(
        "--layers", type=so.int_list, nargs="+", required=True, help="layers to sweep (20, 16-22)"
    )
    p.add_argument(
        "--strengths", type=so.float_list, nargs="+", required=True, help="strengths to sweep"
    )
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--prompts", type=int, help="held-out prompts to use (default: all)")
    so.sampling_args(p)
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="the sampling seed (every row derives its own from it)",
    )
    p.add_argument("--batch-size", type=int, default=8, help="texts generated in one batch")
    so.steer_args(p)
    p.add_argument("--profile-id", help="id of the written profile (default: the pattern id)")
    p.set_defaults(handler=run_calibrate)

    p = steps.add_parser("show", help="print a vector's metadata and per-layer norms")
    p.add_argument("vector", type=Path, help="a vector file (NAME.safetensors)")
    p.set_defaults(handler=run_show)

    p = steps.add_parser("try", help="write one entry unsteered and steered, side by side")
    p.add_argument("vector", type=Path, help="a vector file (NAME.safetensors)")
    so.model_args(p)
    p.add_argument("--layer", type=int, required=True, help="the layer to steer at")
    p.add_argument("--strength", type=float, required=True, help="the steering strength")
    so.steer_args(p)
    p.add_argument(
        "--prompt",
        default="Write about how today felt, from morning to night.",
        help="the user prompt both entries answer",
    )
    p.add_argument("--system", help="system prompt (default: the pattern's plain diarist)")
    so.sampling_args(p, max_new_tokens=120)
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="the sampling seed (every row derives its own from it)",
    )
    p.set_defaults(handler=run_try)


def run_extract(args: argparse.Namespace) -> int:
    from diarylab.steering.vectors import vector_paths

    pattern = pattern_option(args.pattern)
    so.writable(args.out, folder=False)
    from diarylab.experiments.profiles.vectors import extract_pattern
    from diarylab.steering.settings import ExtractionSettings

    settings = validated(
        ExtractionSettings,
        {"pairs": args.pairs, "generation": so.generation(args), "batch_size": args.batch_size},
    )
    judge = so.judge_of(args) if args.judge else None
    model = so.load_model(args)
    for layer in so.flat(args.layers):
        if not 0 <= layer < model.num_layers:
            raise LabError(
                f"layer {layer} does not exist (model has 0..{model.num_layers - 1})",
                where="--layers",
            )
    tensors, meta = vector_paths(args.out)
    stem = tensors.name.removesuffix(".safetensors")
    # NAME.store.sqlite beside the vector: every pair written and every reading, kept.
    store = so.store_for(tensors.with_name(stem + ".store.sqlite"))
    try:
        scorer = so.scorer(judge, pattern, store) if judge else None
        result = extract_pattern(
            model, pattern, settings, seed=args.seed, store=store, scorer=scorer
        )
    finally:
        store.close()
    sha = result.vector.save(args.out)
    pairs_file = tensors.with_name(stem + ".pairs.jsonl")
    with pairs_file.open("w", encoding="utf-8") as f:
        for pair in result.pairs:
            f.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")
    v = result.vector
    print(f"kept {v.pairs} of {len(result.pairs)} pairs")
    for layer in so.flat(args.layers):
        print(
            f"layer {layer}: residual norm {float(v.residual_norms[layer]):.1f}, "
            f"raw difference {float(v.diff_norms[layer]):.1f}"
        )
    print(f"wrote {tensors} (sha256 {sha}), {meta.name}, {pairs_file.name}")
    return 0


# ------------------------------------------------------------------------- calibrate
def run_calibrate(args: argparse.Namespace) -> int:
    from diarylab.diarists.profiles import write_profile
    from diarylab.experiments.profiles.vectors import calibrate_pattern, chosen_setting
    from diarylab.foundation.datafiles import file_sha256
    from diarylab.steering.calibrate import write_outputs
    from diarylab.steering.settings import CalibrationRule
    from diarylab.steering.vectors import PatternVector, vector_paths

    pattern = pattern_option(args.pattern)
    so.writable(args.out, folder=True)
    vector = PatternVector.load(args.vector)
    if vector.pattern_id != pattern.id:
        raise LabError(
            f"vector is for pattern {vector.pattern_id!r}, not {pattern.id!r}",
            where=str(args.vector),
            fix=f"pass --pattern {vector.pattern_id} or another vector",
        )
    rule = validated(
        CalibrationRule,
        {
            "judge": "cli",
            "layers": so.flat(args.layers),
            "strengths": so.flat(args.strengths),
            "floor": args.floor,
            "scale": args.scale,
            "positions": args.positions,
            "generation": so.generation(args),
            "batch_size": args.batch_size,
            **({"prompts": args.prompts} if args.prompts is not None else {}),
        },
    )
    for layer in rule.layers:
        vector.check_layer(layer, where="--layers")
    judge = so.judge_of(args)
    model = so.load_model(args)
    store = so.store_for(args.out / "store.sqlite")  # every sample and reading, kept
    try:
        scorer = so.scorer(judge, pattern, store)
        result = calibrate_pattern(
            model, vector, pattern, rule, scorer, seed=args.seed, store=store
        )
    finally:
        store.close()
    paths = write_outputs(result, args.out, title=f"{pattern.name} on {args.model} ({args.judge})")
    print(f"\n{'layer':>5} {'strength':>8} {'pattern':>8} {'coherence':>9}")
    for row in result.rows:
        mark = (
            " ← chosen" if row == result.chosen else ("" if row.passes_floor else " (below floor)")
        )
        print(
            f"{row.layer:5d} {row.strength:8.3g} {row.pattern_mean:8.1f} "
            f"{row.coherence_mean:9.1f}{mark}"
        )
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    steer = chosen_setting(result, rule, args.out)
    chosen = result.chosen
    assert chosen is not None
    tensors, _ = vector_paths(args.vector)
    profile = write_profile(
        args.out / "profile.toml",
        profile_id=args.profile_id or pattern.id,
        pattern=pattern.id,
        vector=tensors,
        vector_sha256=file_sha256(tensors),
        steer=steer,
        calibration={
            "model": args.model,
            "judge": args.judge,
            "floor": float(args.floor),
            "pattern_mean": round(chosen.pattern_mean, 2),
            "coherence_mean": round(chosen.coherence_mean, 2),
            "prompts": rule.prompts or len(pattern.heldout_prompts),
            "seed": args.seed,
            "pattern_sha256": pattern.sha256,
        },
    )
    print(f"chose layer {chosen.layer}, strength {chosen.strength:g}; wrote {profile}")
    return 0


# ------------------------------------------------------------------------- show, try
def run_show(args: argparse.Namespace) -> int:
    from diarylab.steering.vectors import PatternVector

    vector = PatternVector.load(args.vector)
    print(vector.describe())
    if vector.notes:
        print(f"\nnotes: {vector.notes}")
    return 0


def run_try(args: argparse.Namespace) -> int:
    from diarylab.model_access.settings import GenerationSettings
    from diarylab.steering.apply import Steer, generate_steered
    from diarylab.steering.settings import SteerSettings
    from diarylab.steering.vectors import PatternVector

    vector = PatternVector.load(args.vector)
    # every option is checked before the model loads
    setting = validated(
        SteerSettings,
        {
            "layers": [args.layer],
            "strength": args.strength,
            "scale": args.scale,
            "positions": args.positions,
        },
        flags={"layers": "--layer"},
    )
    vector.check_layer(args.layer, where="--layer")
    settings = validated(GenerationSettings, so.generation(args))
    system = args.system
    if system is None:
        system = (
            load_pattern(vector.pattern_id).eval_system
            if vector.pattern_id in available_patterns()
            else "You keep a private diary. Write in the first person about your own day."
        )
    model = so.load_model(args)
    steer = Steer.of(vector, setting)
    prompt = model.chat_ids(
        [{"role": "system", "content": system}, {"role": "user", "content": args.prompt}]
    )
    plain, steered = generate_steered(
        model, [prompt, prompt], settings, seeds=[args.seed] * 2, steers=[None, steer]
    )
    print(
        so.side_by_side(
            "unsteered",
            plain.text,
            f"steered: layer {args.layer}, {args.strength:g} × "
            f"{'residual norm' if args.scale == 'relative' else 'raw difference'}",
            steered.text,
        )
    )
    return 0
