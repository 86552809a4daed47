"""Throughput of DRGA co-training against plain network training, measured side by side.

One run: LSTM+SA on SUBJ, alternating one epoch of baseline training (cross-entropy only) and
one epoch of co-training (K action samples, reward, REINFORCE, network on revised attention),
``--repeats`` times. Prints sentences/second of each and the ratio of epoch times (the issue's
budget: co-training at most 2.5× a baseline epoch).

    python bench/throughput.py [--dataset subj] [--net lstm-sa] [--samples 5] [--repeats 2]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time

import torch

from drga.config import load_config
from drga.trainer import Trainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="subj")
    parser.add_argument("--net", default="lstm-sa")
    parser.add_argument("--samples", type=int, default=5, help="K action samples per sequence")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as logdir:
        config = load_config(None, [
            f"data.dataset={args.dataset}", f"network.name={args.net}", f"agent.samples={args.samples}",
            f"run.device={args.device}", f"run.logdir={logdir}", "run.progress=false", *args.set,
        ])
        trainer = Trainer(config, log=lambda _: None)
        sentences = len(trainer.data.train)
        seconds: dict[str, list[float]] = {"baseline": [], "cotrain": []}
        for repeat in range(args.repeats):
            for phase in ("baseline", "cotrain"):
                started = time.perf_counter()
                trainer.train_one_epoch(phase, epoch=repeat + 1)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                seconds[phase].append(time.perf_counter() - started)
        trainer.writer.close()

    base, co = statistics.median(seconds["baseline"]), statistics.median(seconds["cotrain"])
    print(f"# {args.net} on {args.dataset}: {sentences} training sentences, batch {config.data.batch_size}, "
          f"K = {args.samples}, device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{platform.processor() or platform.machine()}")
    print(f"| epoch | seconds (median of {args.repeats}) | sentences/s |")
    print("|---|---|---|")
    print(f"| baseline training | {base:.1f} | {sentences / base:.0f} |")
    print(f"| DRGA co-training | {co:.1f} | {sentences / co:.0f} |")
    print(f"co-training / baseline epoch time: {co / base:.2f}x (budget 2.5x)")


if __name__ == "__main__":
    main()
