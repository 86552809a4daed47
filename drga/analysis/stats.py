"""The few statistics the analyses need, in numpy and the standard library (Kendall's τ from scipy).

- :func:`js_divergence` (natural log, so 0 ≤ JS ≤ ln 2) for the explainability test;
- :func:`kendall_tau` (τ-b, ties handled; ``scipy.stats.kendalltau``) for attention vs saliency and faithfulness;
- :func:`paired_t_test` (two-sided, Student's t via the regularised incomplete beta) and
  :func:`bootstrap_ci` (percentile) for ``drga compare``;
- :func:`paired_comparison`, what the study tables report per cell: the differences, whether they
  have a spread to test, and the t-test's p where they do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon divergence over the last axis, in nats: JS = ½KL(p‖m) + ½KL(q‖m), m = (p+q)/2.

    0 for identical distributions, ln 2 for disjoint ones; 0·log 0 counts as 0.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)

    def kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * (np.log(a) - np.log(np.where(m > 0, m, 1.0))), 0.0)
        return terms.sum(axis=-1)

    return np.maximum(0.5 * kl(p) + 0.5 * kl(q), 0.0)


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """TVD = ½ Σ |p − q| over the last axis (Jain & Wallace's leave-one-out importance)."""
    return 0.5 * np.abs(np.asarray(p, dtype=np.float64) - np.asarray(q, dtype=np.float64)).sum(axis=-1)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau``): (concordant − discordant) / √(pairs untied in x · pairs untied in y).

    NaN when fewer than two values or when either sequence is constant.
    """
    from scipy.stats import kendalltau  # imported when first used: scipy is slow to import

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"kendall_tau needs two 1-d sequences of one length, got {x.shape} and {y.shape}")
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(kendalltau(x, y).statistic)


def _betacf(a: float, b: float, x: float) -> float:
    # Continued fraction of the incomplete beta function (Numerical Recipes, §6.4, modified Lentz).
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` degrees of freedom: I_{df/(df+t²)}(df/2, ½)."""
    if not math.isfinite(t):
        return 0.0 if math.isinf(t) else float("nan")
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(t, two-sided p) of the paired differences b − a; NaN with fewer than two pairs.

    Identical non-zero differences have no spread: t is ±inf and p is 0.
    """
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if len(d) < 2:
        return float("nan"), float("nan")
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0.0:
        return (float("nan"), float("nan")) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(len(d)))
    return t, t_two_sided_p(t, len(d) - 1)


@dataclass(frozen=True)
class PairedComparison:
    """Paired differences b − a over seeds and the two-sided p of the paired t-test on them."""

    differences: tuple[float, ...]
    #: False when every difference is the same (up to float rounding): nothing for a t-test to judge by
    spread: bool
    #: NaN where there is no test (fewer than two pairs, or no spread): such a cell stays out of Holm's family
    p: float

    @property
    def n(self) -> int:
        return len(self.differences)


def paired_comparison(a: Sequence[float], b: Sequence[float], decimals: int = 9) -> PairedComparison:
    """The differences b − a, their spread and the paired t-test's p, with no test where there is no spread.

    Accuracies are k/n, so two seeds that each lose exactly 0.2 points differ by 1e-14 after the
    subtraction; compared at ``decimals`` they are identical, and :func:`paired_t_test` would turn
    that rounding into t ≈ 1e13 and p ≈ 0 (or, exactly equal, into t = ±inf and p = 0).
    """
    if len(a) != len(b):
        raise ValueError(f"paired_comparison needs as many a as b values, got {len(a)} and {len(b)}")
    differences = tuple(float(y) - float(x) for x, y in zip(a, b))
    spread = len({round(d, decimals) for d in differences}) > 1
    p = paired_t_test(a, b)[1] if len(differences) > 1 and spread else float("nan")
    return PairedComparison(differences, spread, p)


def bootstrap_ci(values: Sequence[float], resamples: int = 10000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error over the tests); NaN stays NaN.

    Sorted ascending, the i-th smallest of m gets max over j ≤ i of min(1, (m − j + 1)·p_(j)).
    """
    indexed = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    m = len(indexed)
    adjusted = [float("nan")] * len(pvalues)
    running = 0.0
    for rank, (p, index) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile (> 0.5) of Student's t with ``df`` degrees of freedom, by bisection."""
    if not 0.5 < probability < 1.0:
        raise ValueError(f"probability must be in (0.5, 1), got {probability}")
    low, high = 0.0, 1e3
    for _ in range(200):
        middle = (low + high) / 2
        if 1.0 - t_two_sided_p(middle, df) / 2.0 < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The t confidence interval of the mean of ``values`` (NaN with fewer than two)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return float("nan"), float("nan")
    half = t_quantile(0.5 + level / 2.0, len(values) - 1) * float(values.std(ddof=1)) / math.sqrt(len(values))
    return float(values.mean()) - half, float(values.mean()) + half


def mean_std_text(values: Sequence[float], digits: int = 2) -> str:
    """``mean ± std`` (sample std) for a results table; the value alone for one, ``-`` for none."""
    if len(values) == 0:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{float(np.mean(values)):.{digits}f} ± {float(np.std(values, ddof=1)):.{digits}f}"


def paired_effect_size(differences: Sequence[float]) -> float:
    """Cohen's d_z of paired differences: their mean over their sample std (NaN with fewer than two or no spread)."""
    d = np.asarray(differences, dtype=np.float64)
    if len(d) < 2 or float(d.std(ddof=1)) == 0.0:
        return float("nan")
    return float(d.mean() / d.std(ddof=1))
