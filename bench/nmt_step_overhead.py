"""Translation: the fixed cost of one training step, and how it scales with the batch (issue 53).

On a GPU a step of the study's networks at batch 64 is bound by Python and kernel launches, not by
arithmetic (docs/results/nmt.md). This measures that fixed cost where no GPU is at hand: the
networks at a tiny width (``--width``, so the arithmetic is negligible beside the dispatch), on the
CPU, one thread. For each phase and batch size it prints the CPU seconds per step (median over
``--steps`` steps after ``--warmup``), the operators one step dispatches (torch.profiler's ``aten::``
events, the forward and the backward and the optimiser; on CUDA most of them are a kernel launch
each), and the CPU seconds per epoch of the 29,000 training pairs that follow from them. A step's cost
that does not grow with the batch is per-step overhead: doubling the batch halves an epoch's count of
it.

    python bench/nmt_step_overhead.py --config experiments/configs/nmt_gpu_luong.toml [--batch 64 128 256] \
        [--phases pretrain cotrain] [--steps 20] [--width 16] [--set section.key=value ...]

``--width 0`` keeps the config's sizes (then the arithmetic is in the measurement too).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

from drga.tasks.translation.config import load_translation_config
from drga.trainer import TranslationTrainer

from stepping import begin_phase, train_step

TRAINING_PAIRS = 29_000


def tiny(width: int) -> list[str]:
    """Overrides that make the networks (and the agent) ``width`` wide: the step's arithmetic small beside its dispatch.
    The vocabulary stays the config's: it sets the subword lengths, and so the steps of Luong's decoder loop and the
    number of attention arrays (the output layer's [batch, length, vocabulary] product is the arithmetic left)."""
    return [f"network.embedding_dim={width}", f"network.hidden_size={width}", f"network.feedforward_size={2 * width}",
            f"agent.hidden_sizes={width},{width}"]


PROFILED_STEPS = 3


def step_costs(trainer: TranslationTrainer, phase_name: str, steps: int, warmup: int) -> tuple[float, float, float]:
    """(median CPU seconds of a step, aten operators a step dispatches, its batch's target length) of ``phase_name``'s
    training steps; the operators and the length are means over :data:`PROFILED_STEPS` steps."""
    phase = begin_phase(trainer, phase_name)
    batches = iter(trainer.train_batches)
    seconds = []
    for index in range(warmup + steps):
        batch = next(batches).to(trainer.device)
        started = time.process_time()
        train_step(trainer, phase, batch)
        if index >= warmup:
            seconds.append(time.process_time() - started)
    profiled = [next(batches).to(trainer.device) for _ in range(PROFILED_STEPS)]
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for batch in profiled:
            train_step(trainer, phase, batch)
    operators = sum(1 for event in profiler.events() if event.name.startswith("aten::")) / PROFILED_STEPS
    length = statistics.mean(batch.labels.shape[1] for batch in profiled)
    return statistics.median(seconds), operators, length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="a translation config (experiments/configs/nmt_gpu_*.toml)")
    parser.add_argument("--batch", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--phases", nargs="+", default=["pretrain", "cotrain"], choices=["pretrain", "baseline", "agent", "cotrain"])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per phase and batch size")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--width", type=int, default=16, help="network and agent width (0: the config's sizes)")
    parser.add_argument("--train-fraction", type=float, default=0.25, help="of the training pairs (the subword model's text too)")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory() as logdir:
        config = load_translation_config(args.config, [
            *(tiny(args.width) if args.width else []), f"data.train_fraction={args.train_fraction}",
            "run.device=cpu", "run.threads=1", f"run.logdir={logdir}", "run.progress=false", "run.report_to=[]", *args.set,
        ])
        trainer = TranslationTrainer(config, log=lambda _: None)  # one subword model and network for every batch size
        for batch in args.batch:
            trainer.train_batches.batch_size = batch
            for phase in args.phases:
                seconds, operators, length = step_costs(trainer, phase, args.steps, args.warmup)
                epoch_steps = -(-TRAINING_PAIRS // batch)
                rows.append((phase, batch, seconds, operators, length, epoch_steps, seconds * epoch_steps))
        trainer.callbacks.close()
    net = config.experiment.network
    print(f"# {net.name}, width {args.width or 'as configured'} (hidden {net.hidden_size}), K = {config.experiment.agent.samples}, "
          f"task_loss_samples {config.experiment.train.task_loss_samples}; torch {torch.__version__}, 1 thread, CPU seconds, "
          f"{platform.processor() or platform.machine()}")
    print("| phase | batch | CPU ms per step (median) | aten operators per step | target length (padded) "
          "| operators per target position | steps per epoch (29,000 pairs) | CPU s per epoch |")
    print("|---|---|---|---|---|---|---|---|")
    for phase, batch, seconds, operators, length, epoch_steps, epoch in sorted(rows, key=lambda r: (r[0] != "pretrain", r[0], r[1])):
        print(f"| {phase} | {batch} | {1000 * seconds:.1f} | {operators:.0f} | {length:.1f} | {operators / length:.0f} "
              f"| {epoch_steps} | {epoch:.1f} |")


if __name__ == "__main__":
    main()
