"""What keeping freed memory mapped (drga/allocator.py) does to training speed, side by side.

Runs ``bench/throughput.py --json`` twice per round for the same networks, once with glibc's
malloc defaults (``DRGA_KEEP_FREED_MEMORY=0``) and once with freed memory kept, alternating the
order from round to round, and prints each phase's epoch time in both modes, the speed-up, and
the co-training/baseline ratio in both modes.

    python bench/allocator.py --net disan transformer --train-fraction 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

THROUGHPUT = Path(__file__).with_name("throughput.py")


def run(kept: bool, args: argparse.Namespace) -> list[dict]:
    command = [sys.executable, str(THROUGHPUT), "--json", "--net", *args.net, "--train-fraction", str(args.train_fraction),
               "--repeats", str(args.repeats), "--clock", args.clock]
    env = {**os.environ, "DRGA_KEEP_FREED_MEMORY": "1" if kept else "0"}
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    results = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    if any(r["kept"] != kept for r in results):
        sys.exit("bench/allocator.py: the allocator setting did not take effect (not Linux with glibc?)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", nargs="+", default=["disan", "transformer"])
    parser.add_argument("--train-fraction", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=2, help="epochs per phase in each measurement")
    parser.add_argument("--rounds", type=int, default=1, help="measurements per mode, the modes alternated")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    args = parser.parse_args()
    seconds: dict[tuple[str, bool, str], list[float]] = {}
    for round_ in range(args.rounds):
        for kept in ((False, True) if round_ % 2 == 0 else (True, False)):
            for r in run(kept, args):
                for phase in ("baseline", "cotrain"):
                    seconds.setdefault((r["net"], kept, phase), []).append(r[phase])
    print(f"# train fraction {args.train_fraction}, {args.repeats} epochs per phase, {args.rounds} round(s), "
          f"{args.clock} clock, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print("| network | phase | epoch (s), malloc defaults | epoch (s), freed memory kept | speed-up | ratio, defaults | ratio, kept |")
    print("|---|---|---|---|---|---|---|")
    for net in args.net:
        mean = {(kept, phase): statistics.mean(seconds[(net, kept, phase)]) for kept in (False, True) for phase in ("baseline", "cotrain")}
        ratios = {kept: mean[(kept, "cotrain")] / mean[(kept, "baseline")] for kept in (False, True)}
        for phase in ("baseline", "cotrain"):
            print(f"| {net} | {phase} | {mean[(False, phase)]:.2f} | {mean[(True, phase)]:.2f} "
                  f"| {mean[(False, phase)] / mean[(True, phase)]:.2f}x | {ratios[False]:.2f}x | {ratios[True]:.2f}x |")


if __name__ == "__main__":
    main()
