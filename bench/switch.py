"""What one switch does to training speed, side by side.

Runs ``bench/throughput.py --json`` twice per round for the same networks, once with the switch
off and once on, alternating the order from round to round, and prints each phase's epoch time
both ways, the speed-up, and the co-training/baseline ratio both ways. The switches:

- ``allocator``: glibc's malloc defaults against freed memory kept mapped (``drga/runtime/allocator.py``,
  ``DRGA_KEEP_FREED_MEMORY``);
- ``fused-adam``: the for-each Adam against PyTorch's fused kernel (``train.fused_adam``).

    python bench/switch.py allocator --net disan transformer --train-fraction 0.1
    python bench/switch.py fused-adam --net lstm-sa cnn-sa --dataset sst --config experiments/configs/paper_regime.toml
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

THROUGHPUT = Path(__file__).with_name("throughput.py")


@dataclass(frozen=True)
class Switch:
    off: str  #: column title with the switch off
    on: str  #: and on
    environment: str | None = None  #: an environment variable set to 0 / 1
    setting: str | None = None  #: a configuration key set to false / true
    reported: str | None = None  #: a key of throughput.py's JSON that says whether it took effect


SWITCHES = {
    "allocator": Switch("malloc defaults", "freed memory kept", environment="DRGA_KEEP_FREED_MEMORY", reported="kept"),
    "fused-adam": Switch("for-each Adam", "fused Adam", setting="train.fused_adam"),
}


def run(switch: Switch, on: bool, args: argparse.Namespace) -> list[dict]:
    command = [sys.executable, str(THROUGHPUT), "--json", "--net", *args.net, "--train-fraction", str(args.train_fraction),
               "--repeats", str(args.repeats), "--clock", args.clock, *(["--dataset", args.dataset] if args.dataset else []),
               *(["--config", args.config] if args.config else []), *(f"--set={item}" for item in args.set)]
    if switch.setting:
        command.append(f"--set={switch.setting}={'true' if on else 'false'}")
    env = {**os.environ, **({switch.environment: "1" if on else "0"} if switch.environment else {})}
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    results = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    if switch.reported and any(r[switch.reported] != on for r in results):
        sys.exit(f"bench/switch.py: the switch did not take effect ({switch.reported} is not {on}: not Linux with glibc?)")
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("switch", choices=sorted(SWITCHES))
    parser.add_argument("--net", nargs="+", default=["disan", "transformer"])
    parser.add_argument("--dataset", default=None, help="data set for every --net (default: each network's own)")
    parser.add_argument("--config", default=None, help="a TOML configuration under both modes (e.g. the paper regime's)")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value, both modes")
    parser.add_argument("--train-fraction", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=2, help="epochs per phase in each measurement")
    parser.add_argument("--rounds", type=int, default=1, help="measurements per mode, the modes alternated")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    args = parser.parse_args(argv)
    switch = SWITCHES[args.switch]
    seconds: dict[tuple[str, bool, str], list[float]] = {}
    for round_ in range(args.rounds):
        for on in ((False, True) if round_ % 2 == 0 else (True, False)):
            for r in run(switch, on, args):
                for phase in ("baseline", "cotrain"):
                    seconds.setdefault((r["net"], on, phase), []).append(r[phase])
    print(f"# {args.switch}: train fraction {args.train_fraction}, {args.repeats} epochs per phase, {args.rounds} round(s), "
          f"{args.clock} clock, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
          + (f", data set {args.dataset}" if args.dataset else "") + (f", config {args.config}" if args.config else ""))
    print(f"| network | phase | epoch (s), {switch.off} | epoch (s), {switch.on} | speed-up | ratio, {switch.off} | ratio, {switch.on} |")
    print("|---|---|---|---|---|---|---|")
    for net in args.net:
        mean = {(on, phase): statistics.mean(seconds[(net, on, phase)]) for on in (False, True) for phase in ("baseline", "cotrain")}
        ratios = {on: mean[(on, "cotrain")] / mean[(on, "baseline")] for on in (False, True)}
        for phase in ("baseline", "cotrain"):
            print(f"| {net} | {phase} | {mean[(False, phase)]:.2f} | {mean[(True, phase)]:.2f} "
                  f"| {mean[(False, phase)] / mean[(True, phase)]:.2f}x | {ratios[False]:.2f}x | {ratios[True]:.2f}x |")


if __name__ == "__main__":
    main()
