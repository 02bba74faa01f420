"""`diarylab steer ...`: extract a pattern vector, calibrate it into a profile, inspect it, and
try it on one prompt. Wires pattern files and judges into steering/, which knows neither."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diarists.patterns import available_patterns, load_pattern
from experiments.steer_scoring import add_judge_args, judge_options_of, make_scorer, side_by_side
from foundation.errors import LabError

if TYPE_CHECKING:
    from diarists.patterns import Pattern
    from steering.extract import Extraction, Scorer

DEFAULT_SEED = 20261130


def register(sub: argparse._SubParsersAction) -> None:
    steer = sub.add_parser("steer", help="pattern vectors: extract, calibrate, show, try")
    steps = steer.add_subparsers(dest="steer_command", required=True, metavar="STEP")

    p = steps.add_parser("extract", help="extract a pattern vector from the pattern's contrast set")
    _model_args(p)
    p.add_argument("--pattern", required=True, help=f"one of {', '.join(available_patterns())}")
    p.add_argument("--out", required=True, type=Path, help="vector file (NAME.safetensors)")
    p.add_argument("--pairs", type=int, default=20, help="contrast pairs (default 20)")
    p.add_argument("--max-new-tokens", type=int, default=80)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--judge", help="filter pairs with this judge (or 'fake'); default: no filter")
    add_judge_args(p)
    p.add_argument(
        "--layers", type=_int_list, nargs="+", help="layers to report (all are extracted)"
    )
    p.set_defaults(handler=run_extract)

    p = steps.add_parser("calibrate", help="sweep layers × strengths, write table, plot, profile")
    _model_args(p)
    p.add_argument("--vector", required=True, type=Path)
    p.add_argument("--pattern", required=True)
    p.add_argument(
        "--judge",
        required=True,
        help="judge spec (a local model, or litellm:MODEL), or 'fake': a word-counting "
        "heuristic that is NOT a judge (demos only)",
    )
    add_judge_args(p)
    p.add_argument("--floor", type=float, default=60.0, help="minimum mean coherence (0-100)")
    p.add_argument("--layers", type=_int_list, nargs="+", required=True)
    p.add_argument("--strengths", type=_float_list, nargs="+", required=True)
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--prompts", type=int, help="held-out prompts to use (default: all)")
    p.add_argument("--max-new-tokens", type=int, default=80)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--scale", choices=["relative", "raw"], default="relative")
    p.add_argument("--positions", choices=["prompt", "response", "both"], default="response")
    p.add_argument("--profile-id", help="id of the written profile (default: the pattern id)")
    p.set_defaults(handler=run_calibrate)

    p = steps.add_parser("show", help="print a vector's metadata and per-layer norms")
    p.add_argument("vector", type=Path)
    p.set_defaults(handler=run_show)

    p = steps.add_parser("try", help="write one entry unsteered and steered, side by side")
    p.add_argument("vector", type=Path)
    _model_args(p)
    p.add_argument("--layer", type=int, required=True)
    p.add_argument("--strength", type=float, required=True)
    p.add_argument("--scale", choices=["relative", "raw"], default="relative")
    p.add_argument("--positions", choices=["prompt", "response", "both"], default="response")
    p.add_argument("--prompt", default="Write about how today felt, from morning to night.")
    p.add_argument("--system", help="system prompt (default: the pattern's plain diarist)")
    p.add_argument("--max-new-tokens", type=int, default=120)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.set_defaults(handler=run_try)


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="smollm2", help="hub id, folder, or smollm2 (default)")
    p.add_argument("--device", help="cpu, cuda, mps (default: best available)")
    p.add_argument("--dtype", help="float32, bfloat16, float16 (default: per device)")


def _int_list(text: str) -> list[int]:
    """'20', '18,20,22' or '16-22'."""
    out: list[int] = []
    try:
        for part in filter(None, text.split(",")):
            lo, sep, hi = part.partition("-")
            out += list(range(int(lo), int(hi) + 1)) if sep else [int(part)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a layer list like 20 or 16-22") from exc
    return out


def _float_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number list like 0.5,1") from exc


def _flat(groups: Sequence[Sequence[float]] | None) -> list:
    return [x for g in groups or [] for x in g]


def _load_model(args: argparse.Namespace):  # -> LocalModel, imported late: torch is slow
    from model_access.local import LocalModel

    print(f"loading {args.model} ...", flush=True)
    return LocalModel.load(args.model, device=args.device, dtype=args.dtype)


# ------------------------------------------------------------------------- extract
def extract_pattern(
    model: Any,
    pattern: Pattern,
    *,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    pairs: int,
    batch_size: int = 8,
    scorer: Scorer | None = None,
) -> Extraction:
    """A pattern's vector on a model, from the pattern file's contrast set (shared by
    `steer extract` and `diarylab demo`)."""
    from model_access.local import GenerationSettings
    from steering.extract import extract_vector

    return extract_vector(
        model,
        pattern_id=pattern.id,
        pattern_sha256=pattern.sha256,
        positive_system=pattern.positive_system,
        negative_system=pattern.negative_system,
        prompts=pattern.extraction_prompts,
        settings=GenerationSettings(max_new_tokens, temperature, 0.95),
        seed=seed,
        pairs=pairs,
        batch_size=batch_size,
        scorer=scorer,
    )


def run_extract(args: argparse.Namespace) -> int:
    from steering.vectors import vector_paths

    pattern = load_pattern(args.pattern)
    if args.out.is_dir():
        raise LabError("--out is a folder", where=str(args.out), fix="give a file name")
    scorer = make_scorer(args.judge, pattern, **judge_options_of(args)) if args.judge else None
    model = _load_model(args)
    for layer in _flat(args.layers):
        if not 0 <= layer < model.num_layers:
            raise LabError(
                f"layer {layer} does not exist (model has 0..{model.num_layers - 1})",
                where="--layers",
            )
    result = extract_pattern(
        model,
        pattern,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        seed=args.seed,
        pairs=args.pairs,
        batch_size=args.batch_size,
        scorer=scorer,
    )
    sha = result.vector.save(args.out)
    tensors, meta = vector_paths(args.out)
    pairs_file = tensors.with_name(tensors.name.removesuffix(".safetensors") + ".pairs.jsonl")
    with pairs_file.open("w", encoding="utf-8") as f:
        for pair in result.pairs:
            f.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")
    v = result.vector
    print(f"kept {v.pairs} of {len(result.pairs)} pairs")
    for layer in _flat(args.layers):
        print(
            f"layer {layer}: residual norm {float(v.residual_norms[layer]):.1f}, "
            f"raw difference {float(v.diff_norms[layer]):.1f}"
        )
    print(f"wrote {tensors} (sha256 {sha}), {meta.name}, {pairs_file.name}")
    return 0


# ------------------------------------------------------------------------- calibrate
def run_calibrate(args: argparse.Namespace) -> int:
    from diarists.profiles import write_profile
    from model_access.local import GenerationSettings
    from steering.calibrate import sweep, write_outputs
    from steering.vectors import PatternVector, vector_paths

    pattern = load_pattern(args.pattern)
    vector = PatternVector.load(args.vector)
    if vector.pattern_id != pattern.id:
        raise LabError(
            f"vector is for pattern {vector.pattern_id!r}, not {pattern.id!r}",
            where=str(args.vector),
            fix=f"pass --pattern {vector.pattern_id} or another vector",
        )
    layers, strengths = _flat(args.layers), _flat(args.strengths)
    for layer in layers:
        vector.check_layer(layer, where="--layers")
    count = len(pattern.heldout_prompts) if args.prompts is None else args.prompts
    if not 1 <= count <= len(pattern.heldout_prompts):
        raise LabError(
            f"--prompts {count}: the pattern has {len(pattern.heldout_prompts)} held-out prompts",
            where="--prompts",
        )
    scorer = make_scorer(args.judge, pattern, **judge_options_of(args))
    model = _load_model(args)
    prompts = [
        model.chat_ids(
            [{"role": "system", "content": pattern.eval_system}, {"role": "user", "content": p}]
        )
        for p in pattern.heldout_prompts[:count]
    ]
    settings = GenerationSettings(
        max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=0.95
    )
    result = sweep(
        model,
        vector,
        prompts,
        layers=layers,
        strengths=strengths,
        scorer=scorer,
        settings=settings,
        seed=args.seed,
        floor=args.floor,
        scale=args.scale,
        positions=args.positions,
        batch_size=args.batch_size,
    )
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
    chosen = result.chosen
    if chosen is None:
        raise LabError(
            f"no steered setting kept mean coherence ≥ {args.floor} (table and plot are in "
            f"{args.out})",
            where="calibration",
            fix="try smaller --strengths, other --layers, or a lower --floor",
        )
    tensors, _ = vector_paths(args.vector)
    profile = write_profile(
        args.out / "profile.toml",
        profile_id=args.profile_id or pattern.id,
        pattern=pattern.id,
        vector=tensors,
        vector_sha256=vector_sha(tensors),
        layers=(chosen.layer,),
        strength=chosen.strength,
        scale=args.scale,
        positions=args.positions,
        calibration={
            "model": args.model,
            "judge": args.judge,
            "floor": float(args.floor),
            "pattern_mean": round(chosen.pattern_mean, 2),
            "coherence_mean": round(chosen.coherence_mean, 2),
            "prompts": count,
            "seed": args.seed,
            "pattern_sha256": pattern.sha256,
        },
    )
    print(f"chose layer {chosen.layer}, strength {chosen.strength:g}; wrote {profile}")
    return 0


def vector_sha(tensors: Path) -> str:
    from foundation.datafiles import file_sha256

    return file_sha256(tensors)


# ------------------------------------------------------------------------- show, try
def run_show(args: argparse.Namespace) -> int:
    from steering.vectors import PatternVector

    vector = PatternVector.load(args.vector)
    print(vector.describe())
    if vector.notes:
        print(f"\nnotes: {vector.notes}")
    return 0


def run_try(args: argparse.Namespace) -> int:
    from model_access.local import GenerationSettings
    from steering.apply import Steer, generate_steered
    from steering.vectors import PatternVector

    vector = PatternVector.load(args.vector)
    vector.check_layer(args.layer, where="--layer")
    system = args.system
    if system is None:
        system = (
            load_pattern(vector.pattern_id).eval_system
            if vector.pattern_id in available_patterns()
            else "You keep a private diary. Write in the first person about your own day."
        )
    model = _load_model(args)
    steer = Steer(vector, (args.layer,), args.strength, args.scale, args.positions)
    prompt = model.chat_ids(
        [{"role": "system", "content": system}, {"role": "user", "content": args.prompt}]
    )
    settings = GenerationSettings(
        max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=0.95
    )
    plain, steered = generate_steered(
        model, [prompt, prompt], settings, seeds=[args.seed] * 2, steers=[None, steer]
    )
    print(
        side_by_side(
            "unsteered",
            plain.text,
            f"steered: layer {args.layer}, {args.strength:g} × "
            f"{'residual norm' if args.scale == 'relative' else 'raw difference'}",
            steered.text,
        )
    )
    return 0
