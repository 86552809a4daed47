"""experiments/study_tables.py: grouping, means and the paired statistics on hand-made runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.scripts import load_script


@pytest.fixture(scope="module")
def study_tables():
    return load_script("experiments/study_tables.py")


@pytest.fixture(scope="module")
def study_stats():
    return load_script("experiments/study_stats.py")


def write_run(root: Path, net: str, dataset: str, seed: int, baseline: float, drga: float, wall: float) -> None:
    folder = root / f"{dataset}-{net}-seed{seed}"
    folder.mkdir(parents=True)
    results = {  # each row as a run writes it: its phase, epoch and checkpoint beside its scores
        "baseline (pretrain only)": {"phase": "pretrain", "epoch": 1, "checkpoint": "pretrain_best.pt",
                                     "test_net-only": {"accuracy": baseline - 0.01}},
        "baseline (equal budget)": {"phase": "baseline", "epoch": 1, "checkpoint": "baseline_best.pt",
                                    "test_net-only": {"accuracy": baseline}},
        "DRGA (co-trained)": {"phase": "cotrain", "epoch": 1, "checkpoint": "cotrain_best.pt", "test_net-only": {"accuracy": drga},
                              "test_with-agent": {"accuracy": drga}},
    }
    config = {"network": {"name": net}, "data": {"dataset": dataset}, "run": {"seed": seed}}
    history = [{"phase": "pretrain", "epoch": 1, "seconds": wall / 2}, {"phase": "cotrain", "epoch": 1, "seconds": wall / 2}]
    (folder / "results.json").write_text(json.dumps({"config": config, "results": results, "history": history}))


def test_table_means_and_paired_differences(tmp_path, study_tables):
    # Differences DRGA − baseline: +1, +2, +3 points → mean +2.00, sd 1, t = 2/(1/√3) = 3.464, df 2 → p = 0.074.
    for seed, (base, drga) in enumerate([(0.80, 0.81), (0.70, 0.72), (0.75, 0.78)]):
        write_run(tmp_path, "lstm-sa", "subj", seed, base, drga, wall=100 + 10 * seed)
    (tmp_path / "subj-lstm-sa-seed3").mkdir()  # unfinished: no results.json
    out = tmp_path / "table.md"
    assert study_tables.main([str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    assert "3 finished runs, 1 unfinished" in text
    row = next(line for line in text.splitlines() if line.startswith("| lstm-sa | subj |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "3"
    assert cells[4] == "75.00 ± 5.00"  # equal-budget baseline: 80, 70, 75
    assert cells[6] == "77.00 ± 4.58"  # DRGA with-agent: 81, 72, 78
    assert cells[8].startswith("+2.00 (p = 0.074;")
    assert cells[9] == "110"  # mean of the runs' summed epoch seconds: 100, 110, 120
    assert "tie (p ≥ 0.05): 1 cells (lstm-sa/subj)" in text


def test_identical_differences_are_no_spread_not_a_significant_result(tmp_path, study_tables):
    # DRGA 0.2 points under the baseline in each seed (60.0 − 60.2 and 60.1 − 60.3 differ by 1e-14 in floats)
    for seed, base in enumerate([0.602, 0.603]):
        write_run(tmp_path, "cnn-sa", "mr", seed, base, base - 0.002, wall=100)
    out = tmp_path / "table.md"
    assert study_tables.main([str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| cnn-sa | mr |"))
    assert [c.strip() for c in row.strip("|").split("|")][8] == "-0.20 (the same in every seed: no spread to test)"
    assert "no spread (every seed differs by the same): 1 cells (cnn-sa/mr)" in text
    assert "baseline better" not in text


def test_seeds_option_keeps_only_those_runs(tmp_path, study_tables):
    # Seeds 0 and 2 only: baseline 80, 75 → 77.50 ± 3.54; differences +1, +3 points → mean +2.00,
    # sd √2, t = 2/(√2/√2) = 2 with 1 df (Cauchy): p = 1 − 2·atan(2)/π = 0.295.
    for seed, (base, drga) in enumerate([(0.80, 0.81), (0.70, 0.72), (0.75, 0.78)]):
        write_run(tmp_path, "cnn-sa", "mr", seed, base, drga, wall=100)
    for seed in (2, 5):  # started, not finished: only seed 2's counts
        (tmp_path / f"mr-cnn-sa-seed{seed}-retry").mkdir()
        (tmp_path / f"mr-cnn-sa-seed{seed}-retry" / "config.toml").write_text(f"[run]\nseed = {seed}\n")
    out = tmp_path / "table.md"
    assert study_tables.main([str(tmp_path), "--seeds", "0", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert "--seeds 0 2" in text.splitlines()[0] and "2 finished runs, 1 unfinished" in text
    row = next(line for line in text.splitlines() if line.startswith("| cnn-sa | mr |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert (cells[2], cells[4]) == ("2", "77.50 ± 3.54")
    assert cells[8].startswith("+2.00 (p = 0.295;")


def test_no_finished_runs_is_a_clear_error(tmp_path, study_tables, capsys):
    with pytest.raises(SystemExit):
        study_tables.main([str(tmp_path)])
    assert "no finished runs" in capsys.readouterr().err


def test_paired_comparison_by_hand(study_stats):
    # d = 1, 1.5, 1 (tests/integration/test_analysis.py's paired t-test): t = 7, p = 0.0198
    comparison = study_stats.paired_comparison([1, 2, 3], [2, 3.5, 4])
    assert comparison.differences == (1.0, 1.5, 1.0) and comparison.n == 3 and comparison.spread
    assert comparison.p == pytest.approx(0.0198, abs=1e-4)
    # 60.0 − 60.2 and 60.1 − 60.3 are both −0.2 but differ by ~1e-14 in floats: no spread, no test
    assert 60.0 - 60.2 != 60.1 - 60.3
    flat = study_stats.paired_comparison([60.2, 60.3], [60.0, 60.1])
    assert not flat.spread and math.isnan(flat.p)
    assert math.isnan(study_stats.paired_comparison([1.0], [2.0]).p)  # one pair: no test
    with pytest.raises(ValueError, match="as many"):
        study_stats.paired_comparison([1.0, 2.0], [1.0])


def test_holm_adjustment_by_hand(study_stats):
    # m = 4: sorted 0.01, 0.02, 0.03, 0.5 → 4·0.01 = 0.04, 3·0.02 = 0.06, max(0.06, 2·0.03) = 0.06, max(0.06, 0.5) = 0.5
    adjusted = study_stats.holm_adjust([0.03, 0.5, 0.01, 0.02, float("nan")])
    assert adjusted[:4] == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert math.isnan(adjusted[4])


def test_t_interval_by_hand(study_stats):
    from drga.analysis.stats import t_quantile

    t_interval = study_stats.t_interval

    assert t_quantile(0.975, 9) == pytest.approx(2.262157, abs=1e-5)  # the textbook table value
    assert t_quantile(0.975, 2) == pytest.approx(4.302653, abs=1e-5)
    # values 1, 2, 3: mean 2, sd 1, half-width 4.302653 / √3
    low, high = t_interval([1.0, 2.0, 3.0])
    assert (low, high) == pytest.approx((2 - 4.302653 / math.sqrt(3), 2 + 4.302653 / math.sqrt(3)), abs=1e-5)
    assert t_interval([2.0, 2.0, 2.0]) == pytest.approx((2.0, 2.0))  # no spread: the mean itself
    assert all(math.isnan(end) for end in t_interval([2.0]))


def test_equal_weight_interval_by_hand():
    from drga.analysis.stats import equal_weight_interval, t_quantile

    # groups 1, 3 (mean 2, s² 2, n 2: v = 1) and 2, 4, 6 (mean 4, s² 4, n 3: v = 4/3):
    # mean (2 + 4)/2 = 3, SE² = (1 + 4/3)/4 = 7/12, df = (7/3)² / (1²/1 + (4/3)²/2) = 49/17
    pooled = equal_weight_interval([[1.0, 3.0], [2.0, 4.0, 6.0]])
    assert pooled.mean == pytest.approx(3.0)
    assert pooled.df == pytest.approx(49 / 17)
    half = t_quantile(0.975, 49 / 17) * math.sqrt(7 / 12)
    assert (pooled.low, pooled.high) == pytest.approx((3 - half, 3 + half))
    # the group's size does not weigh: a third value at the first group's mean moves the mean not at all
    assert equal_weight_interval([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]).mean == pytest.approx(3.0)
    no_spread = equal_weight_interval([[1.0, 1.0], [3.0, 3.0]])
    assert (no_spread.mean, no_spread.low, no_spread.high) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="two values or more"):
        equal_weight_interval([[1.0, 2.0], [3.0]])


# Subnormals excluded: a library imported earlier on the same worker may set flush-to-zero, and hypothesis
# then refuses to draw them (CI failed that way once).
@settings(max_examples=60)
@given(
    st.lists(st.lists(st.floats(-5, 5, allow_subnormal=False), min_size=2, max_size=12), min_size=1, max_size=5),
    st.floats(-3, 3, allow_subnormal=False),
)
def test_equal_weight_interval_properties(study_stats, groups, shift):
    from drga.analysis.stats import equal_weight_interval

    assume(all(max(g) - min(g) > 1e-3 for g in groups))
    pooled = equal_weight_interval(groups)
    assert pooled.low < pooled.mean < pooled.high
    moved = equal_weight_interval([[v + shift for v in g] for g in groups])  # a shift moves the interval with it
    assert (moved.low - shift, moved.high - shift) == pytest.approx((pooled.low, pooled.high), abs=1e-9)
    if len(groups) == 1:  # one group: the plain t interval, df = n − 1
        assert (pooled.low, pooled.high) == pytest.approx(study_stats.t_interval(groups[0]))
        assert pooled.df == pytest.approx(len(groups[0]) - 1)
