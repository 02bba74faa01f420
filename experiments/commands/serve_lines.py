"""`diarylab serve-lines DESIGN [--gpu KIND]`: the `vllm serve` and `hf download` lines a
design needs (experiments/planning/serve_lines.py)."""

from __future__ import annotations

import argparse

from diarylab.experiments.commands._options import add_gpu_option
from diarylab.experiments.designs.opening import load_design


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve-lines",
        help="print the vllm serve and hf download lines a design's models need",
    )
    p.add_argument("file", help="the design TOML")
    add_gpu_option(p, "the tensor-parallel sizes")
    p.set_defaults(handler=run_serve_lines)


def run_serve_lines(args: argparse.Namespace) -> int:
    from diarylab.experiments.planning.plan import plan_design
    from diarylab.experiments.planning.render_gpu import gpu_plan
    from diarylab.experiments.planning.serve_lines import serve_lines

    design = load_design(args.file)
    print("\n".join(serve_lines(design, gpu_plan(plan_design(design), args.gpu))))
    return 0
