"""Throughput of DRGA co-training against plain network training, measured side by side.

For each network (on its data set), alternate one epoch of baseline training (cross-entropy
only) and one epoch of co-training (K action samples, reward, REINFORCE, network trained on the
revised attention), ``--repeats`` times, in one process. Prints sequences/second of each and
the ratio of median epoch times (the budget: co-training at most 2.5× a baseline epoch).

    python bench/throughput.py                                  # LSTM+SA on SUBJ
    python bench/throughput.py --net all --train-fraction 0.25  # every classifier, one table
    python bench/throughput.py --net transformer --dataset mr --repeats 3
    python bench/throughput.py --net all --clock cpu   # CPU seconds: for a machine busy with other work

``--net all`` runs every classification network on its default data set (``DEFAULT_DATASET``).
``--train-fraction`` times a seeded slice of the training set: the ratio is what matters,
and a slice keeps the whole table within minutes on two CPU cores. ``--clock cpu`` times the
process's CPU seconds instead of wall seconds: the work an epoch costs, unaffected by other
processes competing for the cores (with one torch thread the two agree on an idle machine).
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

#: The data set each network is benchmarked on (its family's main data set in the issue).
DEFAULT_DATASET = {
    "lstm-sa": "subj", "cnn-sa": "subj", "transformer": "subj", "disan": "subj",
    "atae-lstm": "semeval14-restaurant", "ian": "semeval14-restaurant", "han": "movie-reviews",
}


def measure(net: str, dataset: str, args: argparse.Namespace) -> dict[str, float]:
    """Median seconds of a baseline epoch and of a co-training epoch, alternated in one process."""
    with tempfile.TemporaryDirectory() as logdir:
        config = load_config(None, [
            f"data.dataset={dataset}", f"network.name={net}", *([f"agent.samples={args.samples}"] if args.samples else []),
            f"data.train_fraction={args.train_fraction}", f"run.device={args.device}",
            f"run.logdir={logdir}", "run.progress=false", f"run.seed={args.seed}", *args.set,
        ])
        trainer = Trainer(config, log=lambda _: None)
        seconds: dict[str, list[float]] = {"baseline": [], "cotrain": []}
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        for repeat in range(args.repeats):
            for phase in ("baseline", "cotrain"):
                started = clock()
                trainer.train_one_epoch(phase, epoch=repeat + 1)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                seconds[phase].append(clock() - started)
        trainer.writer.close()
        return {"sequences": len(trainer.data.train), "batch": config.data.batch_size, "samples": config.agent.samples,
                "gradient_samples": config.train.task_loss_samples or config.agent.samples,
                "baseline": statistics.median(seconds["baseline"]), "cotrain": statistics.median(seconds["cotrain"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", nargs="+", default=["lstm-sa"], help="network names, or 'all'")
    parser.add_argument("--dataset", default=None, help="data set for every --net (default: each network's own)")
    parser.add_argument("--samples", type=int, default=None,
                        help="K action samples per sequence (default: the network's default, drga/config.py)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--train-fraction", type=float, default=1.0, help="time a seeded slice of the training set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall seconds, or the process's CPU seconds (for a busy machine; CPU device only)")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    args = parser.parse_args()
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu measures CPU work; on a GPU use the wall clock")
    nets = list(DEFAULT_DATASET) if args.net == ["all"] else args.net
    unknown = [net for net in nets if net not in DEFAULT_DATASET and args.dataset is None]
    if unknown:
        parser.error(f"no default data set for {unknown}; pass --dataset")

    samples = args.samples or "each network's default"
    print(f"# K = {samples}, train fraction {args.train_fraction}, median of {args.repeats} epochs each, "
          f"{args.clock} clock, device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{platform.processor() or platform.machine()}" + (f"; overrides {' '.join(args.set)}" if args.set else ""))
    print("| network | data set | training sequences | K (gradient through) | baseline epoch (s) | co-training epoch (s) "
          "| baseline seq/s | co-training seq/s | ratio (budget 2.5x) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for net in nets:
        dataset = args.dataset or DEFAULT_DATASET[net]
        m = measure(net, dataset, args)
        ratio = m["cotrain"] / m["baseline"]
        print(f"| {net} | {dataset} | {m['sequences']} | {m['samples']} ({m['gradient_samples']}) | {m['baseline']:.1f} | {m['cotrain']:.1f} "
              f"| {m['sequences'] / m['baseline']:.0f} | {m['sequences'] / m['cotrain']:.0f} "
              f"| {ratio:.2f}x{'' if ratio <= 2.5 else ' OVER'} |", flush=True)


if __name__ == "__main__":
    main()
