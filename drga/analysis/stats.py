"""The statistics the analyses and the study tables need: numpy for the divergences and the table
text, scipy.stats for the tests (imported when first used: it is slow to import).

- :func:`js_divergence` (natural log, so 0 ≤ JS ≤ ln 2) for the explainability test;
- :func:`kendall_tau` (τ-b, ties handled; ``scipy.stats.kendalltau``) for attention vs saliency and faithfulness;
- :func:`paired_t_test` (``scipy.stats.ttest_rel``, two-sided) and :func:`bootstrap_ci`
  (``scipy.stats.bootstrap``, percentile) for ``drga compare``;
- :func:`t_quantile`, :func:`equal_weight_interval` and :func:`mean_std_text` for the study tables, whose
  other statistics (the paired comparison per cell, Holm's correction, the t interval) are theirs:
  experiments/study_stats.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from drga.analysis.extra import needs_extra

#: A 1-d sample: a sequence of floats or a numpy array of them.
Values = Sequence[float] | np.ndarray


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


def kendall_tau(x: Values, y: Values) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau``): (concordant − discordant) / √(pairs untied in x · pairs untied in y).

    NaN when fewer than two values or when either sequence is constant.
    """
    kendalltau = needs_extra("scipy.stats", "Kendall's τ").kendalltau

    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"kendall_tau needs two 1-d sequences of one length, got {xs.shape} and {ys.shape}")
    if len(xs) < 2 or np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return float("nan")
    return float(kendalltau(xs, ys, variant="b").statistic)


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` degrees of freedom."""
    student_t = needs_extra("scipy.stats", "a t-test").t
    return float(2.0 * student_t.sf(abs(t), df))


def paired_t_test(a: Values, b: Values) -> tuple[float, float]:
    """(t, two-sided p) of the paired differences b − a (``scipy.stats.ttest_rel``); NaN with fewer than two pairs.

    Identical non-zero differences have no spread: t is ±inf and p is 0, as scipy says, without its precision-loss warning.
    """
    ttest_rel = needs_extra("scipy.stats", "a paired t-test").ttest_rel

    before = np.asarray(a, dtype=np.float64)
    after = np.asarray(b, dtype=np.float64)
    d = after - before
    if len(d) < 2:
        return float("nan"), float("nan")
    if float(d.std(ddof=1)) == 0.0:
        mean = float(d.mean())
        return (float("nan"), float("nan")) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    result = ttest_rel(after, before)
    return float(result.statistic), float(result.pvalue)


def bootstrap_ci(values: Values, resamples: int = 10000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values`` (``scipy.stats.bootstrap``).

    The resamples come from ``numpy.random.default_rng(seed)`` in one batch, so a seed gives the
    interval the study tables were written with. NaN with fewer than two values: nothing to resample.
    """
    bootstrap = needs_extra("scipy.stats", "a bootstrap interval").bootstrap

    sample = np.asarray(values, dtype=np.float64)
    if len(sample) < 2:
        return float("nan"), float("nan")
    result = bootstrap(
        (sample,), np.mean, n_resamples=resamples, confidence_level=level, method="percentile", rng=np.random.default_rng(seed)
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    student_t = needs_extra("scipy.stats", "a t interval").t
    return float(student_t.ppf(probability, df))


@dataclass(frozen=True)
class PooledInterval:
    """The mean over groups of each group's mean, and its t interval."""

    mean: float
    low: float
    high: float
    #: Welch–Satterthwaite degrees of freedom of the interval
    df: float


def equal_weight_interval(groups: Sequence[Sequence[float]], level: float = 0.95) -> PooledInterval:
    """The mean of the group means (every group weighted equally, whatever its size) and its t interval.

    For paired differences per cell over seeds, it bounds the average effect over the cells without
    pooling seeds of different cells into one sample. With the group means m_c, variances s_c², sizes
    n_c, C groups and v_c = s_c²/n_c:

        mean = Σ m_c / C,  SE² = Σ v_c / C²,  df = (Σ v_c)² / Σ (v_c² / (n_c − 1))   (Welch–Satterthwaite)

    and the interval is mean ± t_{(1+level)/2, df} · SE; one group gives its own t interval (``t_interval``,
    experiments/study_stats.py). Every group needs two values or more; all groups without spread give the
    mean itself as both ends.
    """
    arrays = [np.asarray(group, dtype=np.float64) for group in groups]
    if not arrays or any(len(a) < 2 for a in arrays):
        raise ValueError("equal_weight_interval needs at least one group, each of two values or more")
    mean = float(np.mean([a.mean() for a in arrays]))
    variances = [float(a.var(ddof=1)) / len(a) for a in arrays]
    total = sum(variances)
    if total == 0.0:
        return PooledInterval(mean, mean, mean, float("nan"))
    df = total**2 / sum(v**2 / (len(a) - 1) for v, a in zip(variances, arrays))
    half = t_quantile(0.5 + level / 2.0, df) * math.sqrt(total) / len(arrays)
    return PooledInterval(mean, mean - half, mean + half, df)


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
