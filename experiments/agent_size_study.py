"""The paper's Table I (issue 57): DRGA on LSTM+SA/SUBJ with each of the paper's 10 agent sizes, resumable from committed files.

    python experiments/agent_size_study.py run --seeds 0-4 [--dry-run]    # the runs still to do (plan first)
    python experiments/agent_size_study.py tables                         # docs/results/agent_size.md from the files

The classification study's paper regime (experiments/configs/paper_regime.toml: GloVe 50d, 300-unit
LSTM+SA, dropout 0.5, 3 agent epochs and 5 co-training epochs, SUBJ's tuned √L0 0.5 and δ 0.85).
Per seed, one pretrained network (a pretrain-only run with the tuned study's settings, so the same
training as that study's seed: ``agent-size/pretrain/``; its result file records the network's
checksum, and a network missing on this disk is pretrained again and must give it) is the start of
- the equal-budget baseline (8 epochs of the network alone): ``agent-size/baseline/``;
- DRGA with each agent size of :data:`AGENT_SIZES` (the agent phase, then co-training):
  ``agent-size/<layers>x<hidden>/``.

Every run's small result file is written as it finishes and a finished one is skipped, so the study
continues on another machine from the committed files alone. ``parameters.json`` records the
parameter counts (network; agent per size) read from the first seed's checkpoints. Paths are relative
to the repository root (the script works from there).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

import agent_size_tables
import checkout  # noqa: F401  (first: this checkout's drga)
import tuned_study
from agent_size_tables import BASELINE, CELL, STUDY
from tuned_study import AGENT_SIZES, BASELINE_RUN, DRGA_RUN, Layout, read_json, say_plan, seeds_of, sweep

from drga.names import PhaseName, best_checkpoint

ROOT = checkout.ROOT


class AgentSizeLayout(Layout):
    """The tuned study's layout with every file under ``agent-size/``: its pretrain-only runs in ``agent-size/pretrain/``."""

    @property
    def regime(self) -> Path:
        """The study's folder of result files (the tuned study's ``tuned-regime/``, which its pretraining writes to)."""
        return self.results / STUDY

    @property
    def parameters(self) -> Path:
        return self.regime / "parameters.json"

    def size_result(self, kind: str, seed: int) -> Path:
        return self.regime / kind / f"{tuned_study.run_name(CELL, seed)}.json"

    def size_folder(self, kind: str, seed: int) -> Path:
        return self.logdir / kind / tuned_study.run_name(CELL, seed)


def kinds() -> list[str]:
    """The runs of a seed, in order: the baseline, then the sizes from the paper's 2 × 300 outwards in Table I's order."""
    return [BASELINE, *AGENT_SIZES]


def settings_of(kind: str, equal_budget: int) -> list[str]:
    """``equal_budget``: the DRGA runs' agent and co-training epochs, which the baseline gets for the network alone
    (given explicitly: with the agent and co-training phases off, an unset ``train.baseline_epochs`` would be 0)."""
    return [*BASELINE_RUN, f"train.baseline_epochs={equal_budget}"] if kind == BASELINE else [*DRGA_RUN, *AGENT_SIZES[kind]]


def equal_budget_epochs(config: str, settings: list[str]) -> int:
    from drga.config import load_config

    train = load_config(config, settings).train
    return train.agent_epochs + train.cotrain_epochs


def parameter_count(checkpoint: Path, entry: str) -> int:
    from drga.checkpoint_format import CheckpointPayload

    payload = CheckpointPayload.read(checkpoint)
    state = {"network": payload.network_state, "policy": payload.policy_state}[entry]
    return int(sum(tensor.numel() for tensor in state.values()))


def record_parameters(layout: AgentSizeLayout, seed: int, config: str) -> None:
    """The network's and each size's agent's parameter counts, from ``seed``'s best checkpoints (the same at every seed)."""
    record = read_json(layout.parameters) or {}
    network = best_checkpoint(layout.run_folder("pretrain", CELL, seed), PhaseName.PRETRAIN)
    if "network" not in record and network.exists():
        record["network"] = parameter_count(network, "network")
    agents = record.setdefault("agent", {})
    for size in AGENT_SIZES:
        best = best_checkpoint(layout.size_folder(size, seed), PhaseName.AGENT)
        if size not in agents and best.exists():
            agents[size] = parameter_count(best, "policy")
    from drga.config import load_config

    log = network.parent / "train.log"
    if "train_examples" not in record and log.exists():
        found = re.search(r"^data  train: (\d+) examples", log.read_text(encoding="utf-8"), re.MULTILINE)
        if found is None:
            raise SystemExit(f"{log} does not say how many training examples the run had ('data  train: N examples')")
        batch = load_config(config, [f"data.dataset={CELL[1]}", f"network.name={CELL[0]}"]).data.batch_size
        record.update(train_examples=int(found.group(1)), batch_size=batch, steps_per_epoch=math.ceil(int(found.group(1)) / batch))
    layout.parameters.parent.mkdir(parents=True, exist_ok=True)
    layout.parameters.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def cmd_run(args: argparse.Namespace) -> int:
    layout: AgentSizeLayout = args.layout
    todo: list[tuple[str, tuple[str, str], int]] = []
    unfinished = [seed for seed in args.seeds if not all(layout.size_result(kind, seed).exists() for kind in kinds())]
    # a seed still to run needs its network: pretrained (again, to the recorded checksum) where it is not on this disk
    pretrain = sum(not best_checkpoint(layout.run_folder("pretrain", CELL, seed), PhaseName.PRETRAIN).exists() for seed in unfinished)
    if pretrain:
        todo.append(("pretrain", CELL, pretrain))
    baseline = sum(not layout.size_result(BASELINE, seed).exists() for seed in args.seeds)
    drga = sum(not layout.size_result(size, seed).exists() for size in AGENT_SIZES for seed in args.seeds)
    todo += [(kind, CELL, count) for kind, count in (("baseline", baseline), ("drga", drga)) if count]
    print(f"[plan] Table I: LSTM+SA on SUBJ, seeds {', '.join(map(str, args.seeds))}: the equal-budget baseline and "
          f"{len(AGENT_SIZES)} agent sizes per seed, each from the seed's pretrained network", flush=True)
    say_plan(args, todo)
    if args.dry_run:
        return 0
    status, equal_budget = 0, equal_budget_epochs(args.config, args.set)
    for seed in args.seeds:
        if seed not in unfinished:
            record_parameters(layout, seed, args.config)  # what a finished seed's checkpoints on this disk still add
            continue
        network = tuned_study.pretrained_network(args, CELL, seed)
        for kind in kinds():
            if layout.size_result(kind, seed).exists():
                continue
            print(f"[run] seed {seed}: {kind}", flush=True)
            status = max(status, sweep(args, kind, CELL, [seed], [*settings_of(kind, equal_budget), f"train.init_from={network}"],
                                       layout.regime / kind))
        record_parameters(layout, seed, args.config)
    return status


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="the runs still to do")
    run.add_argument("--seeds", type=seeds_of, default=list(range(5)), help="0-4 (default), 0,3 or 2")
    tuned_study.add_run_options(run, logdir="runs/agent-size", jobs_help="runs at a time in a sweep",
                                threads_help="torch threads per run (default 1: the recorded networks' count)")
    tables = commands.add_parser("tables", help="the page from the committed files alone")
    tables.add_argument("--results", default="experiments/results")
    tables.add_argument("--out", default="docs/results/agent_size.md")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.chdir(ROOT)  # the paths are the repository's; the sweep's runs use this checkout's drga from here
    if args.command == "tables":
        return agent_size_tables.main(["--results", args.results, "--out", args.out])
    args.layout = AgentSizeLayout(Path(args.results), Path(args.logdir))
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
