"""Baseline vs +DRGA for LSTM+SA over data sets and seeds, as one markdown table.

Each (data set, seed) is one `drga train` run in its own folder; finished runs (those with a
results.json) are skipped, so an interrupted study continues where it stopped.

    python experiments/lstm_sa_study.py [--datasets subj mr] [--seeds 0 1 2]
        [--config experiments/configs/lstm_sa_study.toml] [--logdir runs/study] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.analysis.stats import mean_std_text
from drga.names import Mode, ResultRow
from drga.records import RunResults
from drga.sweep.results import accuracy

ROWS = [
    ("baseline, pretrain epochs only", ResultRow.PRETRAIN_ONLY, "net-only"),
    ("baseline, equal budget", ResultRow.EQUAL_BUDGET, "net-only"),
    ("agent on frozen pretrained network", ResultRow.AGENT_ON_FROZEN, "with-agent"),
    ("+DRGA, net-only", ResultRow.DRGA, "net-only"),
    ("+DRGA, with-agent", ResultRow.DRGA, "with-agent"),
]


def run(dataset: str, seed: int, config: str, logdir: str, extra: list[str]) -> dict:
    run_dir = Path(logdir) / f"{dataset}-lstm-sa-seed{seed}"
    results = run_dir / "results.json"
    if results.exists():
        print(f"[skip] {run_dir} is finished", flush=True)
    else:
        command = [sys.executable, "-m", "drga.cli", "train", "--config", config, "--dataset", dataset,
                   "--seed", str(seed), "--logdir", logdir, "--no-progress", *extra]
        command += ["--resume"] if (run_dir / "last.pt").exists() else []
        print("[run]", " ".join(command), flush=True)
        started = time.time()
        subprocess.run(command, check=True)
        (run_dir / "wall_seconds.txt").write_text(f"{time.time() - started:.0f}\n")
    wall = run_dir / "wall_seconds.txt"
    return RunResults.read(results), float(wall.read_text()) if wall.exists() else float("nan")


def mean_std(values: list[float]) -> str:
    return mean_std_text([100 * v for v in values])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["subj", "mr"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--config", default="experiments/configs/lstm_sa_study.toml")
    parser.add_argument("--logdir", default="runs/study")
    parser.add_argument("--out", default=None, help="also write the table to this markdown file")
    parser.add_argument("--set", action="append", default=[], help="extra section.key=value for every run")
    args = parser.parse_args()
    extra = [item for value in args.set for item in ("--set", value)]

    lines = [f"Test accuracy (%), mean ± std over seeds {', '.join(map(str, args.seeds))}; config `{args.config}`.", ""]
    header = "| model | " + " | ".join(args.datasets) + " |"
    lines += [header, "|---|" + "---|" * len(args.datasets)]
    table: dict[str, dict[str, list[float]]] = {label: {d: [] for d in args.datasets} for label, _, _ in ROWS}
    gains: dict[str, list[float]] = {d: [] for d in args.datasets}
    walls: dict[str, list[float]] = {d: [] for d in args.datasets}
    for dataset in args.datasets:
        for seed in args.seeds:
            payload, wall_seconds = run(dataset, seed, args.config, args.logdir, extra)
            for label, key, mode in ROWS:
                if (score := accuracy(payload, key, mode)) is not None:
                    table[label][dataset].append(score)
            drga = accuracy(payload, ResultRow.DRGA, Mode.WITH_AGENT)
            base = accuracy(payload, ResultRow.EQUAL_BUDGET, Mode.NET_ONLY)
            if drga is not None and base is not None:
                gains[dataset].append(drga - base)
            walls[dataset].append(wall_seconds)
    for label, _, _ in ROWS:
        lines.append(f"| {label} | " + " | ".join(mean_std(table[label][d]) if table[label][d] else "-" for d in args.datasets) + " |")
    lines.append(
        "| paired gain, DRGA with-agent − equal-budget baseline (points) | "
        + " | ".join(", ".join(f"{100 * g:+.1f}" for g in gains[d]) for d in args.datasets) + " |"
    )
    lines.append("| wall-clock per run (s) | " + " | ".join(f"{statistics.mean(walls[d]):.0f}" for d in args.datasets) + " |")
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
