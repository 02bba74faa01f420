"""The coefficients the agreement is made of: Gwet's AC1 and Krippendorff's alpha from their
packages (irrCAC, krippendorff), and weighted statistics in the form the cluster bootstrap
takes (table, weights: resamples × rows) -> one value per resample."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

Statistic = Callable[[pd.DataFrame, np.ndarray], np.ndarray]


def gwet_ac1(wide: pd.DataFrame) -> float:
    """AC1 of a units × raters table of categories (irrCAC's Gwet, unweighted)."""
    import warnings

    from irrCAC.raw import CAC

    if pd.unique(wide.to_numpy().ravel()).size < 2:
        return float("nan")  # one category everywhere: irrCAC divides by zero
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = float(CAC(wide.astype(object)).gwet()["est"]["coefficient_value"])
    except (ZeroDivisionError, ValueError, KeyError):
        return float("nan")
    return value if np.isfinite(value) else float("nan")


def kripp_alpha(wide: pd.DataFrame, level: str) -> float:
    """Krippendorff's alpha of a units × raters table (the krippendorff package)."""
    import krippendorff

    data = wide.to_numpy(dtype=float).T
    if np.unique(data[np.isfinite(data)]).size < 2:
        return float("nan")  # one value everywhere: no variation to agree on
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))  # type: ignore[arg-type]
    except (ValueError, ZeroDivisionError):
        return float("nan")


def weighted(statistic: Statistic) -> Statistic:
    """A statistic with the sample's item weights multiplied into the resample's weights."""

    def with_weights(table: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
        return statistic(table, weights * table["weight"].to_numpy(float)[None, :])

    return with_weights


def mean_of(column: str) -> Statistic:
    def statistic(table: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
        x = table[column].to_numpy(float)
        keep = np.isfinite(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray((weights[:, keep] @ x[keep]) / weights[:, keep].sum(axis=1))

    return statistic


def auc_of(score: str, truth: str) -> Statistic:
    """Weighted AUC: P(score of a positive > score of a negative), ties counted half."""

    def statistic(table: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
        s, y = table[score].to_numpy(float), table[truth].to_numpy(float)
        pos, neg = y == 1.0, y == 0.0
        wins = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
        wp, wn = weights[:, pos], weights[:, neg]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(((wp @ wins) * wn).sum(axis=1) / (wp.sum(1) * wn.sum(1)))

    return statistic


def pearson_of(x_column: str, y_column: str) -> Statistic:
    def statistic(table: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
        x, y = table[x_column].to_numpy(float), table[y_column].to_numpy(float)
        keep = np.isfinite(x) & np.isfinite(y)
        x, y, w = x[keep], y[keep], weights[:, keep]
        with np.errstate(invalid="ignore", divide="ignore"):
            total = w.sum(axis=1, keepdims=True)
            dx = x[None, :] - (w @ x)[:, None] / total
            dy = y[None, :] - (w @ y)[:, None] / total
            cov = (w * dx * dy).sum(axis=1)
            return np.asarray(cov / np.sqrt((w * dx**2).sum(axis=1) * (w * dy**2).sum(axis=1)))

    return statistic
