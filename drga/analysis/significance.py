"""``drga compare``: is a difference between two sets of runs (several seeds) real?

Each run folder's ``results.json`` holds rows (``baseline (equal budget)``, ``DRGA
(co-trained)``, ...) with test (and dev) scores per evaluation mode. A *model* is a row and a
mode, written ``ROW:MODE``. Runs are paired by (data set, seed); for each compared pair of
models the table gives, per data set, mean ± std (sample std, n − 1) of each, the paired difference B − A,
a two-sided paired t-test and a percentile-bootstrap 95% confidence interval of the mean
difference.
"""

from __future__ import annotations

import glob
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from drga.analysis.attention import AnalysisError
from drga.analysis.stats import bootstrap_ci, paired_t_test
from drga.errors import UserError
from drga.names import MODES, Mode, ResultRow
from drga.records import ReportRow, RunResults

#: Compared when RUNS_B is omitted: the equal-budget baseline against DRGA in both modes.
DEFAULT_WITHIN = (
    ((ResultRow.EQUAL_BUDGET, Mode.NET_ONLY), (ResultRow.DRGA, Mode.WITH_AGENT)),
    ((ResultRow.EQUAL_BUDGET, Mode.NET_ONLY), (ResultRow.DRGA, Mode.NET_ONLY)),
)


def find_runs(spec: str) -> list[Path]:
    """Run folders (holding results.json) named by ``spec``: a run folder, a folder of them, or a glob."""
    if any(ch in spec for ch in "*?["):
        candidates = [Path(p) for p in sorted(glob.glob(spec))]
    else:
        root = Path(spec)
        if not root.exists():
            raise AnalysisError(f"{spec} does not exist (give a run folder, a folder of run folders, or a quoted glob)")
        candidates = [root] if (root / "results.json").is_file() else sorted(p for p in root.iterdir() if p.is_dir())
    runs = [p for p in candidates if (p / "results.json").is_file()]
    if not runs:
        raise AnalysisError(f"no run folder with a results.json under '{spec}' (runs write it when they finish)")
    return runs


@dataclass(frozen=True)
class ComparedRun:
    """A run's results and what pairs it with a run of the other set: (data set, seed)."""

    folder: str
    key: tuple[Any, Any]
    rows: dict[str, ReportRow]


def load_results(run: Path) -> ComparedRun:
    """A run's results.json with its pairing key (data set, seed)."""
    try:
        results = RunResults.read(run / "results.json")
    except UserError as error:
        raise AnalysisError(str(error)) from None
    config = results.config
    key = (config.get("data", {}).get("dataset"), config.get("run", {}).get("seed"))
    return ComparedRun(str(run), key, results.rows)


def parse_model(text: str) -> tuple[str, str]:
    """'ROW:MODE' → (row, mode); the mode is net-only or with-agent."""
    row, sep, mode = text.rpartition(":")
    if not sep or mode not in MODES:
        raise AnalysisError(
            f"model '{text}' must look like 'ROW:MODE' with MODE net-only or with-agent, e.g. 'DRGA (co-trained):with-agent'"
        )
    return row.strip(), mode


def scores(runs: Sequence[ComparedRun], model: tuple[str, str], metric: str, split: str) -> dict[tuple, float]:
    """{(data set, seed): score} of one model over runs; runs without that row are skipped."""
    row, mode = model
    found: dict[tuple, float] = {}
    for run in runs:
        cell = run.rows[row].scores(split, mode) if row in run.rows else None
        if not cell:
            continue
        if metric not in cell:
            raise AnalysisError(f"{run.folder}: no metric '{metric}' in {row}, {split} {mode} (has: {', '.join(cell)})")
        if run.key in found:
            raise AnalysisError(f"two runs share data set and seed {run.key} in one set; pairing by seed needs one each")
        found[run.key] = float(cell[metric])
    return found


def paired(a: dict[tuple, float], b: dict[tuple, float], resamples: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Statistics of B − A over the keys both have."""
    keys = sorted(set(a) & set(b), key=str)
    x = np.array([a[k] for k in keys])
    y = np.array([b[k] for k in keys])
    d = y - x
    std = lambda v: float(v.std(ddof=1)) if len(v) > 1 else float("nan")
    t, p = paired_t_test(x, y)
    low, high = bootstrap_ci(d, resamples, seed) if len(d) > 1 else (float("nan"), float("nan"))  # one pair: no spread to resample
    return {
        "n": len(keys),
        "seeds": [k[1] for k in keys],
        "unpaired_a": len(a) - len(keys),
        "unpaired_b": len(b) - len(keys),
        "mean_a": float(x.mean()) if len(x) else float("nan"),
        "std_a": std(x),
        "mean_b": float(y.mean()) if len(y) else float("nan"),
        "std_b": std(y),
        "mean_diff": float(d.mean()) if len(d) else float("nan"),
        "std_diff": std(d),
        "t": t,
        "p": p,
        "ci_low": low,
        "ci_high": high,
    }


def _fmt(value: float, digits: int = 4) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def markdown(lines: Sequence[tuple[str, str, str, dict[str, Any]]], metric: str, split: str, resamples: int, seed: int) -> str:
    """The comparison table and how to read it."""
    out = [
        f"| data set | A | B | n | A: {split} {metric} | B: {split} {metric} | B − A | t | p (paired t) | 95% bootstrap CI of B − A |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for dataset, name_a, name_b, s in lines:
        out.append(
            f"| {dataset} | {name_a} | {name_b} | {s['n']} | {_fmt(s['mean_a'])} ± {_fmt(s['std_a'])} | "
            f"{_fmt(s['mean_b'])} ± {_fmt(s['std_b'])} | {s['mean_diff']:+.4f} ± {_fmt(s['std_diff'])} | {_fmt(s['t'], 2)} | "
            f"{_fmt(s['p'], 3)} | [{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}] |"
        )
    notes = [
        "",
        f"Mean ± sample std over seeds; runs paired by (data set, seed); two-sided paired t-test on B − A; percentile "
        f"bootstrap of the mean paired difference ({resamples} resamples, seed {seed}).",
    ]
    if any(s["n"] < 5 for *_, s in lines):
        notes.append("With fewer than 5 pairs the bootstrap interval is coarse (few distinct resamples) and the t-test has little power.")
    for dataset, a, b, s in lines:
        if s["unpaired_a"] or s["unpaired_b"]:
            notes.append(f"{dataset}, {a} vs {b}: left out runs without a partner ({s['unpaired_a']} in A, {s['unpaired_b']} in B).")
    return "\n".join(out + notes)


def compare_runs(
    runs_a: str,
    runs_b: str | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
    metric: str = "accuracy",
    split: str = "test",
    resamples: int = 10000,
    seed: int = 0,
) -> str:
    """The markdown table ``drga compare`` prints (see the module docstring for the defaults)."""
    set_a = [load_results(p) for p in find_runs(runs_a)]
    set_b = [load_results(p) for p in find_runs(runs_b)] if runs_b else set_a
    named = model_a or model_b
    if named:
        first = parse_model(named)
        pairs = [(first, parse_model(model_b) if model_b else first)]
    elif runs_b:
        models_a = {(label, mode) for r in set_a for label, row in r.rows.items() for mode in row.modes if row.scores(split, mode)}
        models_b = {(label, mode) for r in set_b for label, row in r.rows.items() for mode in row.modes if row.scores(split, mode)}
        pairs = [(m, m) for m in sorted(models_a & models_b)]
    else:
        pairs = list(DEFAULT_WITHIN)
    lines = []
    datasets = sorted({r.key[0] for r in set_a + set_b}, key=str)
    for a, b in pairs:
        found_a, found_b = scores(set_a, a, metric, split), scores(set_b, b, metric, split)
        # one line per data set: seeds of different data sets are not pairs of one experiment
        for dataset in datasets:
            mine = lambda found, dataset=dataset: {k: v for k, v in found.items() if k[0] == dataset}
            stats = paired(mine(found_a), mine(found_b), resamples, seed)
            if stats["n"]:
                lines.append((dataset, f"{a[0]}:{a[1]}", f"{b[0]}:{b[1]}", stats))
        if not any(line[1:3] == (f"{a[0]}:{a[1]}", f"{b[0]}:{b[1]}") for line in lines):
            raise AnalysisError(f"no run pairs for '{a[0]}:{a[1]}' vs '{b[0]}:{b[1]}': the sets share no (data set, seed) with both rows")
    header = f"A: {runs_a} ({len(set_a)} runs)" + (f"; B: {runs_b} ({len(set_b)} runs)" if runs_b else "; B: the same runs")
    return header + "\n\n" + markdown(lines, metric, split, resamples, seed)
