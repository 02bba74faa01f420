"""The lab's small-sample statistics measured in one run (seeded), at n = 8 clusters unless told:

1. coverage of each interval method on normal, t3 and skewed data, and Hall's interval beside
   the t interval on skewed data (with how often the skew flag fires);
2. the MDE of each rule for one judge and for the verdict as run (two judges agreeing, their
   correlation 0.5 and 0.9), and the simulated power of the verdict at each;
3. the family-wise error of each rule as run (six true nulls, two judges);
4. shares near 1 (mean ± t against Wilson at the cluster-effective n) and correlations near 1
   (cut t against Fisher's z).

Run: .venv/bin/python bench/small_samples.py [--datasets 600] [--n 8]"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import cluster_bootstrap, mean_of, pearson_of
from diarylab.experiments.analysis.bounded import correlation_interval, share_interval
from diarylab.experiments.analysis.rules import mde_sd
from diarylab.experiments.analysis.skew import hall_interval, skew_check
from diarylab.experiments.analysis.verdict_simulation import family_error, verdict_power
from diarylab.experiments.analysis.verdicts import minimum_detectable_effect, sign_flip_bounds


def draw(kind: str, rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, float]:
    """Data of a kind and its true mean."""
    if kind == "normal":
        return rng.normal(size=shape), 0.0
    if kind == "t3":
        return rng.standard_t(3, size=shape), 0.0
    if kind == "chi2_4":
        return rng.chisquare(4, size=shape), 4.0
    return rng.lognormal(size=shape), float(np.exp(0.5))


def coverage(kind: str, n: int, datasets: int, seed: int) -> dict[str, float]:
    data, truth = draw(kind, np.random.default_rng(seed), (datasets, n))
    low, high = sign_flip_bounds(data - truth)
    found = {"sign-flip": float(np.mean((low <= 0) & (high >= 0)))}
    upper_miss = 0
    for method in ("t", "bca", "percentile"):
        hits = 0
        for i, row in enumerate(data):
            table = pd.DataFrame({"c": np.arange(n), "v": row})
            iv = cluster_bootstrap(
                table, mean_of("v"), cluster="c", method=method, resamples=1000, seed=i
            )
            hits += iv.low <= truth <= iv.high
            upper_miss += method == "t" and truth > iv.high
        found[method] = hits / datasets
    found["t upper miss"] = upper_miss / datasets
    bounds = np.array([hall_interval(row) for row in data])
    found["Hall"] = float(np.mean((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])))
    found["flagged"] = float(np.mean([skew_check(row).flagged for row in data]))
    return found


def shares(n: int, datasets: int) -> None:
    print(f"\nShares over {n} diarists × 8 replies, per-diarist rates ~ Beta around p")
    rng = np.random.default_rng(31)
    cluster = np.repeat(np.arange(n), 8)
    for p in (0.5, 0.9, 0.97):
        t_hit = t_out = w_hit = w_out = 0
        for _ in range(datasets):
            rates = rng.beta(p * 10, (1 - p) * 10, size=n)
            yes = (rng.uniform(size=(n, 8)) < rates[:, None]).ravel() * 1.0
            table = pd.DataFrame({"c": cluster, "v": yes})
            t = cluster_bootstrap(table, mean_of("v"), cluster="c")
            w = share_interval(table, mean_of("v"), cluster="c", rows=len(table))
            t_hit += t.low <= p <= t.high
            t_out += t.low < 0 or t.high > 1
            w_hit += w.low <= p <= w.high
            w_out += w.low < 0 or w.high > 1
        print(
            f"  p = {p:.2f}: mean ± t covers {t_hit / datasets:.3f} (outside [0, 1] "
            f"{t_out / datasets:.3f}); Wilson covers {w_hit / datasets:.3f} (outside "
            f"{w_out / datasets:.3f})"
        )


def correlations(n: int, datasets: int) -> None:
    print(f"\nPearson correlation over {n} diarists × 4 entries")
    rng = np.random.default_rng(32)
    cluster = np.repeat(np.arange(n), 4)
    for rho in (0.5, 0.9, 0.97):
        t_hit = t_cut = z_hit = 0
        for _ in range(datasets):
            x = rng.normal(size=cluster.size)
            y = rho * x + np.sqrt(1 - rho**2) * rng.normal(size=cluster.size)
            table = pd.DataFrame({"c": cluster, "x": x, "y": y})
            t = cluster_bootstrap(table, pearson_of("x", "y"), cluster="c")
            z = correlation_interval(table, pearson_of("x", "y"), cluster="c")
            t_hit += t.low <= rho <= t.high
            t_cut += t.high > 1 or t.low < -1
            z_hit += z.low <= rho <= z.high
        print(
            f"  ρ = {rho:.2f}: jackknife t covers {t_hit / datasets:.3f} (past ±1 "
            f"{t_cut / datasets:.3f}); Fisher z covers {z_hit / datasets:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=600)
    parser.add_argument("--n", type=int, default=8)
    args = parser.parse_args()
    n, start = args.n, time.perf_counter()
    print(f"Coverage of nominal 95% intervals at n = {n} ({args.datasets} datasets each)")
    for i, kind in enumerate(("normal", "t3", "chi2_4", "lognormal")):
        found = coverage(kind, n, args.datasets, seed=100 + i)
        print(f"  {kind:9s} " + "  ".join(f"{k} {v:.3f}" for k, v in found.items()))
    print(f"\nMDE (SD units, 80% power) at n = {n}: one judge, then the verdict as run (two")
    print("judges agreeing, correlation ρ), and the simulated power of the verdict at each")
    for rule, m in (("intervals", 6), ("holm", 1), ("holm", 2), ("holm", 6), ("holm", 7)):
        one = mde_sd(rule, n, m)
        t_formula = minimum_detectable_effect(
            1.0, n, alpha=0.05 if rule == "intervals" else 0.05 / m
        )
        parts = [f"  {rule:9s} m={m}: one judge {one:.3f} (t formula {t_formula:.3f})"]
        for rho in (0.5, 0.9):
            both = mde_sd(rule, n, m, judges=2, correlation=rho)
            if not np.isfinite(both):
                parts.append(f"ρ {rho}: never supports")
                continue
            at_one = verdict_power(rule, n, m, one, correlation=rho, draws=4000, seed=7)
            at_both = verdict_power(rule, n, m, both, correlation=rho, draws=4000, seed=8)
            parts.append(
                f"ρ {rho}: verdict MDE {both:.3f}, power {at_both:.3f} (at one judge's: "
                f"{at_one:.3f})"
            )
        print("; ".join(parts))
    print("\nFamily-wise error as run: six true nulls, two judges, P(any supported)")
    for rho in (0.5, 0.9):
        found = {
            r: family_error(r, n, 6, correlation=rho, draws=8000, seed=9)
            for r in ("intervals", "holm")
        }
        print(f"  ρ {rho}: intervals {found['intervals']:.3f}, holm {found['holm']:.3f}")
    shares(n, args.datasets)
    correlations(n, args.datasets)
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
