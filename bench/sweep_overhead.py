"""The wall time Ray adds to a sweep: one grid through the local executor and through an embedded Ray, side by side.

The grid is short runs of the demo (LSTM+SA on SUBJ, the bundled data; one epoch per phase on a slice
of the training set), ``--jobs`` at a time both ways (the embedded Ray gets as many CPUs), one thread
per run. Prints each executor's wall time, the mean wall time of its runs, the difference, and
whether the two gave the same result files (wall-clock fields aside).

    python bench/sweep_overhead.py [--seeds 0 1 2 3] [--jobs 2] [--train-fraction 0.1] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drga.sweep.results import without_clock  # noqa: E402  (this checkout's drga)


def sweep(work: Path, executor: list[str], args: argparse.Namespace) -> tuple[float, list[float]]:
    """Run the grid into ``work`` (which the result files' paths share both ways); its wall seconds and each run's."""
    short = ["train.pretrain_epochs=1", "train.agent_epochs=1", "train.cotrain_epochs=1", f"data.train_fraction={args.train_fraction}"]
    command = [
        sys.executable, "-m", "drga.cli", "sweep", "--config", "demo", "--nets", "lstm-sa", "--datasets", "subj",
        "--seeds", *map(str, args.seeds), "--threads-per-run", "1", "--logdir", str(work / "runs"), "--results", str(work / "results"),
        *[item for setting in short for item in ("--set", setting)], *executor,
    ]
    environment = dict(os.environ, OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=environment)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    runs = [float(p.read_text()) for p in sorted((work / "runs").glob("*/wall_seconds.txt"))]
    return seconds, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, both ways")
    parser.add_argument("--train-fraction", type=float, default=0.1)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="drga-sweep-overhead-"))
    executors = {
        "local": ["--jobs", str(args.jobs)],
        "embedded Ray": ["--executor", "ray", "--num-cpus", str(args.jobs), "--no-dashboard"],
    }
    measured, files = {}, {}
    try:
        for name, executor in executors.items():
            measured[name] = sweep(work, executor, args)
            files[name] = {p.name: without_clock(json.loads(p.read_text())) for p in sorted((work / "results").glob("*.json"))}
            shutil.move(work / "runs", work / f"runs-{name.replace(' ', '-')}")  # the next executor fills the same paths
            shutil.move(work / "results", work / f"results-{name.replace(' ', '-')}")
    finally:
        if args.keep:
            print(f"work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(args.seeds)} runs (LSTM+SA, SUBJ, demo config, 1 epoch per phase on {args.train_fraction:g} of the training set), "
          f"{args.jobs} at a time, 1 thread each:\n")
    print("| executor | sweep wall (s) | mean run wall (s) |\n|---|---|---|")
    for name, (seconds, runs) in measured.items():
        print(f"| {name} | {seconds:.1f} | {sum(runs) / max(len(runs), 1):.1f} |")
    local, ray = measured["local"][0], measured["embedded Ray"][0]
    print(f"\nRay adds {ray - local:.1f} s ({100 * (ray - local) / local:.0f} %) to this grid; "
          f"identical result files: {'yes' if files['local'] == files['embedded Ray'] else 'NO'}")
    for name in sorted(set(files["local"]) | set(files["embedded Ray"])):
        one, other = files["local"].get(name, {}), files["embedded Ray"].get(name, {})
        differing = sorted(key for key in set(one) | set(other) if one.get(key) != other.get(key))
        if differing:  # "commit" differs when the tree was edited between the two sweeps (it says -dirty)
            print(f"  {name} differs in: {', '.join(differing)}")


if __name__ == "__main__":
    main()
