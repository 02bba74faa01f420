"""The lab's small-sample statistics measured in one run (seeded): coverage of each interval
method at 8 clusters on normal, t3 and skewed (centred exponential) data; the MDE of each rule
beside the t formula's, and the simulated power at it; how often each rule supports a true
effect of 1.15 SD across the friends design's six hypotheses per judge, two judges.

Run: .venv/bin/python bench/small_samples.py [--datasets 600] [--n 8]"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from experiments.analysis.bootstrap import cluster_bootstrap, mean_of
from experiments.analysis.rules import mde_sd, supports
from experiments.analysis.verdicts import minimum_detectable_effect, sign_flip_bounds


def draw(kind: str, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=shape)
    if kind == "t3":
        return rng.standard_t(3, size=shape)
    return rng.exponential(size=shape) - 1.0  # skewed, mean 0


def coverage(kind: str, n: int, datasets: int, seed: int) -> dict[str, float]:
    data = draw(kind, np.random.default_rng(seed), (datasets, n))
    low, high = sign_flip_bounds(data)
    found = {"sign-flip": float(np.mean((low <= 0) & (high >= 0)))}
    for method in ("t", "bca", "percentile"):
        hits = 0
        for i, row in enumerate(data):
            table = pd.DataFrame({"c": np.arange(n), "v": row})
            iv = cluster_bootstrap(
                table, mean_of("v"), cluster="c", method=method, resamples=1000, seed=i
            )
            hits += iv.low <= 0 <= iv.high
        found[method] = hits / datasets
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=600)
    parser.add_argument("--n", type=int, default=8)
    args = parser.parse_args()
    n, start = args.n, time.perf_counter()
    print(f"Coverage of nominal 95% intervals at n = {n} ({args.datasets} datasets each)")
    for i, kind in enumerate(("normal", "t3", "skewed")):
        found = coverage(kind, n, args.datasets, seed=100 + i)
        print(f"  {kind:7s} " + "  ".join(f"{k} {v:.3f}" for k, v in found.items()))
    print(f"\nMDE (SD units, 80% power) at n = {n}, and simulated power at it (20,000 draws)")
    rng = np.random.default_rng(7)
    for rule, m in (("intervals", 6), ("holm", 1), ("holm", 2), ("holm", 6), ("holm", 7)):
        effect = mde_sd(rule, n, m)
        t_formula = minimum_detectable_effect(
            1.0, n, alpha=0.05 if rule == "intervals" else 0.05 / m
        )
        power = (
            float(np.mean(supports(rule, effect + rng.normal(size=(20_000, n)), m)))
            if np.isfinite(effect)
            else 0.0
        )
        print(f"  {rule:9s} m={m}: {effect:.3f} (t formula {t_formula:.3f}), power {power:.3f}")
    print("\nShare of true 1.15 SD effects supported by both judges (6 hypotheses per judge;")
    print("the judges' per-card values correlated 0.8)")
    draws = 20_000
    shared = rng.normal(size=(draws, n))
    judges = [1.15 + 0.8 * shared + 0.6 * rng.normal(size=(draws, n)) for _ in range(2)]
    for rule in ("intervals", "holm"):
        both = np.logical_and(*(supports(rule, x, 6) for x in judges))
        print(f"  {rule:9s}: {both.mean():.3f}")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
