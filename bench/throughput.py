"""Throughput of DRGA co-training against plain network training, measured side by side.

For each network (on its data set), two trainers start from the same weights: one trains the
network alone (cross-entropy only), the other co-trains (K action samples, reward, REINFORCE,
the network trained on the revised attention). Every training batch is stepped by both, one
right after the other, and each step is timed; an "epoch" is the sum of a phase's steps over
the training set, ``--repeats`` times. Alternating batch by batch pairs the two phases on the
same data and within fractions of a second of each other, so that a machine whose speed drifts
(a shared virtual machine does) slows both alike. Prints sequences/second of each, the ratio of
the total times (the budget: co-training at most 2.5× a baseline epoch) and the range of the
per-epoch ratios.

    python bench/throughput.py                                  # LSTM+SA on SUBJ
    python bench/throughput.py --net all --train-fraction 0.25  # every classifier, one table
    python bench/throughput.py --net transformer --dataset mr --repeats 3
    python bench/throughput.py --net all --clock cpu   # CPU seconds: for a machine busy with other work

``--net all`` runs every classification network on its default data set (``DEFAULT_DATASET``).
``--train-fraction`` times a seeded slice of the training set: the ratio is what matters,
and a slice keeps the whole table within minutes on two CPU cores. ``--clock cpu`` times the
process's CPU seconds instead of wall seconds: the work a step costs, unaffected by other
processes competing for the cores (with one torch thread the two agree on an idle machine).
A step is the runner's own (``PhaseRunner.train_step``); what an epoch adds around the steps
(collating batches, the progress bar) is the same for both phases and is left out, which if
anything raises the ratio.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from typing import Any

import torch

from drga.allocator import keep_freed_memory
from drga.config import load_config
from drga.trainer import Trainer

PHASES = ("baseline", "cotrain")
#: The data set each network is benchmarked on (its family's main data set in the issue).
DEFAULT_DATASET = {
    "lstm-sa": "subj", "cnn-sa": "subj", "transformer": "subj", "disan": "subj",
    "atae-lstm": "semeval14-restaurant", "ian": "semeval14-restaurant", "han": "movie-reviews",
}


def measure(net: str, dataset: str, args: argparse.Namespace) -> dict[str, Any]:
    """Seconds of each phase's steps per epoch, the two phases stepped batch by batch in turn."""
    overrides = [
        f"data.dataset={dataset}", f"network.name={net}", *([f"agent.samples={args.samples}"] if args.samples else []),
        f"data.train_fraction={args.train_fraction}", f"run.device={args.device}", "run.progress=false",
        f"run.seed={args.seed}", *args.set,
    ]
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    with tempfile.TemporaryDirectory() as logdir:
        trainers = {}
        for phase in PHASES:
            config = load_config(None, [*overrides, f"run.logdir={logdir}/{phase}"])
            trainers[phase] = Trainer(config, log=lambda _: None)  # the same seed: the same initial weights
        device = trainers["baseline"].device
        seconds: dict[str, list[float]] = {phase: [] for phase in PHASES}
        for repeat in range(args.repeats):
            begun = {}
            for phase, trainer in trainers.items():
                begun[phase] = trainer.begin_phase(phase)
                seconds[phase].append(0.0)
            batches = trainers["baseline"].train_batches
            batches.set_epoch(repeat + 1)
            for step, batch in enumerate(batches):
                # which phase goes first alternates, so neither always follows the other
                for phase in PHASES if step % 2 == 0 else PHASES[::-1]:
                    started = clock()
                    trainers[phase].train_step(begun[phase], batch.to(device))
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    seconds[phase][-1] += clock() - started
        for trainer in trainers.values():
            trainer.writer.close()
    ratios = [c / b for b, c in zip(seconds["baseline"], seconds["cotrain"])]
    return {"sequences": len(trainers["baseline"].data.train), "samples": config.agent.samples,
            "gradient_samples": config.train.task_loss_samples or config.agent.samples,
            "baseline": statistics.mean(seconds["baseline"]), "cotrain": statistics.mean(seconds["cotrain"]),
            "ratio": sum(seconds["cotrain"]) / sum(seconds["baseline"]), "low": min(ratios), "high": max(ratios)}


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
    parser.add_argument("--json", action="store_true", help="one JSON object per network instead of the table")
    args = parser.parse_args()
    kept = keep_freed_memory()  # as drga train does (drga/allocator.py); DRGA_KEEP_FREED_MEMORY=0 leaves malloc alone
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu measures CPU work; on a GPU use the wall clock")
    nets = list(DEFAULT_DATASET) if args.net == ["all"] else args.net
    unknown = [net for net in nets if net not in DEFAULT_DATASET and args.dataset is None]
    if unknown:
        parser.error(f"no default data set for {unknown}; pass --dataset")

    if args.json:
        for net in nets:
            dataset = args.dataset or DEFAULT_DATASET[net]
            print(json.dumps({"net": net, "dataset": dataset, "kept": kept, **measure(net, dataset, args)}), flush=True)
        return
    samples = args.samples or "each network's default"
    print(f"# K = {samples}, train fraction {args.train_fraction}, {args.repeats} epochs each, stepped batch by batch in turn, "
          f"{args.clock} clock, device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{platform.processor() or platform.machine()}, freed memory {'kept' if kept else 'returned (malloc defaults)'}"
          + (f"; overrides {' '.join(args.set)}" if args.set else ""))
    print("| network | data set | training sequences | K (gradient through) | baseline epoch (s) | co-training epoch (s) "
          "| baseline seq/s | co-training seq/s | ratio (budget 2.5x) | per-epoch ratios |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for net in nets:
        dataset = args.dataset or DEFAULT_DATASET[net]
        m = measure(net, dataset, args)
        print(
            f"| {net} | {dataset} | {m['sequences']} | {m['samples']} ({m['gradient_samples']}) | {m['baseline']:.1f} | {m['cotrain']:.1f} "
            f"| {m['sequences'] / m['baseline']:.0f} | {m['sequences'] / m['cotrain']:.0f} "
            f"| {m['ratio']:.2f}x{'' if m['ratio'] <= 2.5 else ' OVER'} | {m['low']:.2f}-{m['high']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
