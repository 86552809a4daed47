"""The statistics only the study tables report (experiments/*_tables.py), on top of drga.analysis.stats:

- :func:`paired_comparison`, what a table reports per cell: the differences, whether they have a
  spread to test, and the paired t-test's p where they do;
- :func:`holm_adjust` (``statsmodels``' Holm, the ``analysis`` extra) across a table's cells;
- :func:`t_interval` (``scipy.stats.t``'s quantile), a cell's 95% interval;
- :func:`detectable_effect` (``statsmodels``' ``TTestPower``), the smallest standardised effect a paired t-test over
  so many seeds detects with the given power (experiments/answers.py: what each design could have detected).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import checkout  # noqa: F401  (first: this checkout's drga)
import numpy as np

from drga.analysis.stats import Values, paired_t_test, t_quantile


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


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (``statsmodels``' ``multipletests``, method "holm"); NaN stays NaN.

    Sorted ascending, the i-th smallest of m gets max over j ≤ i of min(1, (m − j + 1)·p_(j)); the NaNs
    (cells with no test) are not in the family of m.
    """
    try:
        from statsmodels.stats.multitest import multipletests
    except ModuleNotFoundError as missing:
        raise SystemExit("the study tables need statsmodels (Holm's correction): pip install -e '.[analysis]'") from missing

    adjusted = [float("nan")] * len(pvalues)
    tested = [index for index, p in enumerate(pvalues) if not math.isnan(p)]
    if tested:
        corrected = multipletests([pvalues[index] for index in tested], method="holm")[1]
        for index, p in zip(tested, corrected):
            adjusted[index] = float(p)
    return adjusted


def t_interval(values: Values, level: float = 0.95) -> tuple[float, float]:
    """The t confidence interval of the mean of ``values`` (NaN with fewer than two; the mean itself when all are equal).

    mean ± t-quantile · standard error, not ``scipy.stats.t.interval``, which says NaN for a zero standard error.
    """
    sample = np.asarray(values, dtype=np.float64)
    if len(sample) < 2:
        return float("nan"), float("nan")
    half = t_quantile(0.5 + level / 2.0, len(sample) - 1) * float(sample.std(ddof=1)) / math.sqrt(len(sample))
    return float(sample.mean()) - half, float(sample.mean()) + half


def detectable_effect(n: int, alpha: float, power: float = 0.8) -> float:
    """The smallest d_z (mean paired difference over the differences' standard deviation) that the two-sided paired
    t-test over ``n`` pairs at level ``alpha`` detects with probability ``power`` (NaN with fewer than two pairs).

    The power is ``statsmodels``' ``TTestPower`` (the noncentral t): the upper tail at alpha/2 plus the lower one.
    Its own ``solve_power`` and its two-sided ``power`` are not used: for 3-5 pairs at a Holm-sized alpha the
    noncentral t's lower tail comes back NaN at some effects and the solver stops at a wrong root (5 pairs,
    alpha 0.05/38: 3.35, where the power at 3.35 is about 0.5). The lower tail is below 1e-6 wherever it is NaN,
    so it counts as 0 there, and the root is bracketed by doubling and found by ``scipy.optimize.brentq``.
    """
    if n < 2:
        return float("nan")
    try:
        from statsmodels.stats.power import TTestPower
    except ModuleNotFoundError as missing:
        raise SystemExit("the study tables need statsmodels (power): pip install -e '.[analysis]'") from missing
    from scipy.optimize import brentq

    test = TTestPower()

    def power_at(d: float) -> float:
        upper = float(test.power(d, n, alpha / 2.0, alternative="larger"))
        lower = float(test.power(d, n, alpha / 2.0, alternative="smaller"))
        return upper + (0.0 if math.isnan(lower) else lower)

    high = 1.0
    while power_at(high) < power:
        high *= 2.0
    return float(brentq(lambda d: power_at(d) - power, high / 2.0 if high > 1.0 else 1e-9, high, xtol=1e-12))
