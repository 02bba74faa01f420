"""`diarylab demo`: the README's main job. Makes the demo's steered profile if it is missing
(vector extraction on the embedded default), runs the demo design (resuming if it ran before)
and writes its report."""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_DESIGN = Path(__file__).parent.parent / "designs" / "demo.toml"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the demo diary experiment on the embedded default model")
    p.add_argument("--design", type=Path, default=DEMO_DESIGN)
    p.add_argument("--out", type=Path, help="run folder (default: results/<name>-<hash>)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(handler=run)


def ensure_profile(design_path: Path, raw: dict) -> None:
    from diarists.patterns import load_pattern
    from diarists.profiles import write_profile
    from experiments.commands.steer import extract_pattern
    from foundation.datafiles import field, table
    from model_access.local import LocalModel

    where = f"{design_path} [demo]"
    demo = table(raw, "demo", str(design_path))
    # The profile is rewritten every time (cheap, same bytes for the same vector and setting);
    # the vector is extracted only when missing.
    profile = design_path.parent / field(demo, "profile", str, where)
    vector = design_path.parent / field(demo, "vector", str, where)
    pattern = load_pattern(field(demo, "pattern", str, where))
    model_spec = raw["diarist_model"]["model"]
    if not _current(vector, pattern.sha256):
        print(f"extracting a {pattern.id} vector on {model_spec} (once) ...", flush=True)
        model = LocalModel.load(model_spec)
        result = extract_pattern(
            model,
            pattern,
            max_new_tokens=field(demo, "max_new_tokens", int, where),
            temperature=0.8,
            seed=int(raw["design"]["seed"]),
            pairs=field(demo, "pairs", int, where),
        )
        result.vector.save(vector)
    sha = _saved_sha(vector)
    write_profile(
        profile,
        profile_id=profile.stem,
        pattern=pattern.id,
        vector=vector,
        vector_sha256=sha,
        layers=tuple(field(demo, "layers", list, where)),
        strength=field(demo, "strength", float, where),
        scale=field(demo, "scale", str, where),
        positions=field(demo, "positions", str, where),
        calibration={"made_by": "diarylab demo (fixed setting, not calibrated)"},
    )


def _current(vector: Path, pattern_sha256: str) -> bool:
    """A vector exists and was made from the pattern file as it is now."""
    import json

    from steering.vectors import vector_paths

    tensors, meta = vector_paths(vector)
    if not (tensors.is_file() and meta.is_file()):
        return False
    return bool(json.loads(meta.read_text()).get("pattern_sha256") == pattern_sha256)


def _saved_sha(vector: Path) -> str:
    from foundation.datafiles import file_sha256
    from steering.vectors import vector_paths

    return file_sha256(vector_paths(vector)[0])


def run(args: argparse.Namespace) -> int:
    from experiments.commands.report import make_report
    from experiments.design import load_design
    from foundation.datafiles import load_toml

    ensure_profile(args.design, load_toml(args.design))
    from experiments.runner import run_design

    design = load_design(args.design)
    summary = run_design(design, args.out, progress=not args.no_progress)
    print(f"run folder: {summary.folder}")
    print(
        f"cells {summary.cells} · entries {summary.entries} · replies {summary.replies} · "
        f"judgments {summary.judgments} · model calls made {summary.calls_made}, "
        f"read from the store {summary.calls_cached}"
    )
    report = make_report(summary.folder)
    print(f"\nreport: {report}")
    print(
        "The embedded default is a 135M-parameter model and a useless judge: these numbers "
        "show the pipeline working, not findings."
    )
    return 0
