"""DRGA tuned per data set against an equal search for the baseline (issue 40), resumable from committed files.

    python experiments/tuned_study.py pretrain [--sst]                          # one pretrained network per cell (seed 0)
    python experiments/tuned_study.py search --arm drga --trials 40 [--sst]     # drga tune from that network
    python experiments/tuned_study.py search --arm baseline --trials 40 [--sst]
    python experiments/tuned_study.py test --seeds 0-9 [--sst]                  # each arm's best at 10 seeds
    python experiments/tuned_study.py tables                                    # docs/results/tuned.md from the files

Every subcommand prints its plan (runs or trials, CPU hours projected from the paper-regime study's
per-epoch seconds) before it starts, ``--dry-run`` prints it only, and finished work is skipped: a
pretrained network whose result file is committed, a search's finished trials (its SQLite file),
a test run whose result file is committed. So the study continues on another machine from the
committed files alone (a pretrained network missing there is pretrained again and must give the
recorded checksum: the same code at one thread gives the same network). Paths are relative to the
repository root (the script works from there).

- ``pretrain``: per cell (LSTM+SA and CNN+SA on MR and SUBJ; LSTM+SA on SST-5 with ``--sst``) a
  pretrain-only run of the paper regime (experiments/configs/paper_regime.toml, agent and
  co-training 0 epochs) at seed 0; its network's path and checksum go to
  ``tuned-search/pretrained.json``, its result file to ``tuned-regime/pretrain/``.
- ``search --arm drga|baseline --trials N``: `drga tune` (its Python API) from that network
  (``train.init_from``), TPE with median pruning on each epoch's dev accuracy, the trials in
  ``tuned-search/<dataset>-<net>-<arm>.db`` (SQLite; every trial's wall and CPU seconds in it). The
  DRGA arm searches :data:`DRGA_SEARCH`, the agent's size (:data:`AGENT_SIZES`, the paper's Table I)
  and the variant (:data:`VARIANTS`), and is scored by co-training's best dev accuracy with the agent
  (epoch 0, the agent on the frozen network, competing); the baseline arm searches
  :data:`BASELINE_SEARCH` and is scored by the equal-budget baseline's best dev accuracy (epoch 0,
  the pretrained network, competing).
- ``test --seeds 0-9``: per seed a pretrain-only run (new pretraining per seed, as in the main study),
  then from its network each arm's best configuration (``tuned-regime/drga/``, ``tuned-regime/baseline/``)
  and the time-matched baseline (``tuned-regime/time-matched/``): the baseline arm's best
  configuration given as many seconds (``train.baseline_seconds``) as that seed's tuned DRGA run
  spent on its agent and co-training phases (:data:`MATCHED_PHASES`), with no epoch cap or early stop.
- ``tables``: experiments/tuned_tables.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.names import PhaseName, best_checkpoint
from drga.sweep.results import portable_path
from drga.tune.space import Dimension, named_choice, overrides, parse_search

ROOT = checkout.ROOT

CONFIG = "experiments/configs/paper_regime.toml"
#: The main study, whose per-epoch seconds project every plan.
MAIN_STUDY = ROOT / "experiments" / "results" / "paper-regime"
#: The cells: LSTM+SA and CNN+SA on MR and SUBJ; ``--sst`` adds LSTM+SA on SST-5.
NETS, DATASETS, SST_CELL = ("lstm-sa", "cnn-sa"), ("mr", "subj"), ("lstm-sa", "sst")
#: Settings of every run of a data set: the main study's SST-5 cells ran with the fused Adam (paper_regime.sh).
DATASET_SETTINGS = {"sst": ["train.fused_adam=true"]}
#: A pretrain-only run (the main study's Transformer/SST-5 ones: experiments/paper_regime.sh).
PRETRAIN_ONLY = ["train.agent_epochs=0", "train.cotrain_epochs=0", "train.fair_baseline=false"]
#: The DRGA arm: agent phase and co-training from the given network, no baseline phase.
DRGA_RUN = ["train.fair_baseline=false"]
#: The baseline arm: the equal-budget baseline phase alone from the given network.
BASELINE_RUN = ["train.agent_epochs=0", "train.cotrain_epochs=0", "train.fair_baseline=true"]
#: DRGA's knobs, around the paper's values (γ 0.2, β0 0.4, half-life 5, √L0 0.2, δ 0.85, agent lr 5e-4, K 5).
DRGA_SEARCH = (
    "reward.gamma=0.02:1.0:log", "adjust.beta0=0.1:1.0", "adjust.beta_half_life_epochs=1.0:20.0:log",
    "reward.sqrt_l0=0.05:0.6", "reward.delta=0.7:0.95", "agent.lr=1e-4:5e-3:log", "agent.samples=2:10",
    "train.cotrain_epochs=1:10", "train.patience=1:5", "adjust.trainable_beta=true,false",
)
#: The agent's sizes of the paper's Table I (layers × hidden units; 2 × 300 was its best).
AGENT_SIZES = {f"{layers}x{hidden}": [f"agent.hidden_sizes={','.join([str(hidden)] * layers)}"]
               for layers, hidden in ((1, 100), (1, 200), (1, 300), (2, 100), (2, 200), (2, 300), (2, 400), (3, 100), (3, 200), (3, 300))}
#: The variants of experiments/variants.sh that a fixed pretrained network allows (holdout does not: its network
#: must not have trained on the agent's slice of the training split).
VARIANTS = {
    "paper": [], "self-critical": ["agent.reward_baseline=self-critical"], "closeness": ["reward.closeness=0.5"],
    "own-attention": ["train.original_attention_loss=0.5"],
}
#: The baseline's knobs: learning rate, dropout, extra epochs, the plateau decay of the learning rate.
BASELINE_SEARCH = (
    "train.lr=1e-4:3e-3:log", "network.dropout=0.1:0.7", "train.baseline_epochs=1:15", "train.plateau_lr_factor=0.1:1.0",
    "train.plateau_patience=1,2,3",
)
#: The DRGA phases whose seconds the time-matched baseline gets: everything DRGA trains after pretraining.
MATCHED_PHASES = ("agent", "cotrain")
#: The time-matched baseline's epoch cap: its time budget, not epochs, ends it.
MATCHED_EPOCH_CAP = 1000
ARMS = ("drga", "baseline")
#: Means of the searched epoch ranges, for the projection (no pruning, no early stop: an upper bound).
SEARCHED_EPOCHS = {"drga": 5.5, "baseline": 8.0}


def dimensions(arm: str) -> list[Dimension]:
    """What the arm searches."""
    if arm == "drga":
        return [*parse_search(list(DRGA_SEARCH)), named_choice("agent.size", AGENT_SIZES), named_choice("variant", VARIANTS)]
    return parse_search(list(BASELINE_SEARCH))


@dataclass(frozen=True)
class Layout:
    """Where the study's files go: committed ones under ``results``, run folders under ``logdir``."""

    results: Path
    logdir: Path

    @property
    def search(self) -> Path:
        return self.results / "tuned-search"

    @property
    def regime(self) -> Path:
        return self.results / "tuned-regime"

    @property
    def pretrained_record(self) -> Path:
        return self.search / "pretrained.json"

    def storage(self, cell: tuple[str, str], arm: str) -> Path:
        return self.search / f"{study_name(cell, arm)}.db"

    def run_folder(self, kind: str, cell: tuple[str, str], seed: int) -> Path:
        return self.logdir / kind / run_name(cell, seed)

    def result_file(self, kind: str, cell: tuple[str, str], seed: int) -> Path:
        return self.regime / kind / f"{run_name(cell, seed)}.json"


def run_name(cell: tuple[str, str], seed: int) -> str:
    net, dataset = cell
    return f"{dataset}-{net}-seed{seed}"


def cell_name(cell: tuple[str, str]) -> str:
    net, dataset = cell
    return f"{dataset}-{net}"


def study_name(cell: tuple[str, str], arm: str) -> str:
    return f"{cell_name(cell)}-{arm}"


def cells_of(args: argparse.Namespace) -> list[tuple[str, str]]:
    cells = [(net, dataset) for dataset in args.datasets for net in args.nets]
    return cells + [SST_CELL] if args.sst and SST_CELL not in cells else cells


def seeds_of(text: str) -> list[int]:
    """``0-9``, ``0,3,5`` or ``2``."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += list(range(int(low), int(high or low) + 1))
    return seeds


def read_json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# --- what the main study measured: the projection ------------------------------------------------


def epoch_seconds(cell: tuple[str, str]) -> dict[str, float]:
    """Mean seconds of an epoch of each phase, and of a whole pretraining, in the paper-regime study's runs of ``cell``."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(MAIN_STUDY.glob(f"{cell_name(cell)}-seed*.json"))]
    seconds: dict[str, float] = {}
    for phase in ("pretrain", "baseline", "agent", "cotrain"):
        epochs = [h["seconds"] for r in runs for h in r["history"] if h["phase"] == phase and "seconds" in h]
        if epochs:
            seconds[phase] = statistics.mean(epochs)
    pretraining = [r["phases"]["pretrain"]["seconds"] for r in runs if (r.get("phases") or {}).get("pretrain")]
    if pretraining:
        seconds["pretraining"] = statistics.mean(pretraining)
    return seconds


def agent_epochs(config: str, extra: list[str]) -> int:
    from drga.config import load_config

    return load_config(config, extra).train.agent_epochs


def projected_seconds(kind: str, seconds: dict[str, float], agent: int) -> float | None:
    """One run (or trial) of ``kind``, at the main study's pace; None when that cell was not measured."""
    try:
        drga = agent * seconds["agent"]
        cost = {
            "pretrain": seconds["pretraining"],
            "drga-trial": drga + SEARCHED_EPOCHS["drga"] * seconds["cotrain"],
            "baseline-trial": SEARCHED_EPOCHS["baseline"] * seconds["baseline"],
            # the test runs at the paper's 5 co-training epochs (the best configuration is not known yet) and 8 baseline epochs
            "drga": drga + 5 * seconds["cotrain"],
            "baseline": 8 * seconds["baseline"],
            "time-matched": drga + 5 * seconds["cotrain"],
        }[kind]
    except KeyError:
        return None
    return cost


def say_plan(args: argparse.Namespace, todo: list[tuple[str, tuple[str, str], int]]) -> None:
    """``todo``: (kind, cell, count) of runs or trials still to do; their projected CPU hours (one thread each)."""
    total, unmeasured = 0.0, set()
    for kind, cell, count in todo:
        cost = projected_seconds(kind, epoch_seconds(cell), agent_epochs(args.config, args.set))
        if cost is None:
            unmeasured.add(f"{cell[0]}/{cell[1]}")
            print(f"[plan] {cell[0]}/{cell[1]}: {count} × {kind} (not projected: the main study has no run of this cell)", flush=True)
            continue
        total += count * cost
        print(f"[plan] {cell[0]}/{cell[1]}: {count} × {kind}, ~{cost / 60:.1f} CPU min each, {count * cost / 3600:.2f} CPU h", flush=True)
    if not todo:
        print("[plan] nothing to do: every piece is finished", flush=True)
        return
    missing = f"; not projected: {', '.join(sorted(unmeasured))}" if unmeasured else ""
    print(f"[plan] projected: {total / 3600:.1f} CPU hours at one thread per run (the main study's per-epoch seconds; "
          f"no pruning or early stopping counted, so an upper bound){missing}", flush=True)


# --- running: drga sweep and drga tune ----------------------------------------------------------


def sweep(args: argparse.Namespace, kind: str, cell: tuple[str, str], seeds: list[int], settings: list[str],
          results: Path | None) -> int:
    """Runs of one cell through `drga sweep` (its Python entry point), in ``<logdir>/<kind>/``."""
    from drga.sweep.cli import main as sweep_main

    net, dataset = cell
    argv = ["--config", args.config, "--nets", net, "--datasets", dataset, "--seeds", *map(str, seeds),
            "--logdir", str(args.layout.logdir / kind), "--jobs", str(args.jobs), "--threads-per-run", str(args.threads)]
    if results is not None:
        argv += ["--results", str(results)]
    for item in [*args.set, *DATASET_SETTINGS.get(dataset, []), *settings]:
        argv += ["--set", item]
    return sweep_main(argv)


def checksum_of(path: Path) -> str | None:
    from drga.checkpoint_format import CheckpointPayload

    return CheckpointPayload.read(path).tensor_checksum if path.exists() else None


def pretrained_network(args: argparse.Namespace, cell: tuple[str, str], seed: int) -> Path:
    """The pretrain-only run's network of ``cell`` and ``seed`` on this disk: trained if its result file is not committed,
    trained again if the file is committed but the network is not here (then it must have the recorded checksum)."""
    layout = args.layout
    network = best_checkpoint(layout.run_folder("pretrain", cell, seed), PhaseName.PRETRAIN)
    record = read_json(layout.result_file("pretrain", cell, seed))
    if record is None:
        if sweep(args, "pretrain", cell, [seed], PRETRAIN_ONLY, layout.regime / "pretrain") != 0:
            raise SystemExit(f"the pretraining of {run_name(cell, seed)} failed: see {network.parent / 'train.log'}")
        record = read_json(layout.result_file("pretrain", cell, seed))
    if checksum_of(network) == record["pretrain_checksum"]:
        return network
    if (network.parent / "results.json").exists():
        raise SystemExit(f"{network.parent} holds another network than the committed {layout.result_file('pretrain', cell, seed)} "
                         "records; move that folder away and run again")
    print(f"[pretrain] {run_name(cell, seed)}: its network is not on this disk; pretraining it again", flush=True)
    if sweep(args, "pretrain", cell, [seed], PRETRAIN_ONLY, None) != 0 or checksum_of(network) != record["pretrain_checksum"]:
        raise SystemExit(f"pretraining {run_name(cell, seed)} again did not give the recorded network (checksum "
                         f"{record['pretrain_checksum'][:12]}): other code or thread count than the committed run's")
    return network


def cmd_pretrain(args: argparse.Namespace) -> int:
    layout = args.layout
    todo = [cell for cell in args.cells if not layout.result_file("pretrain", cell, 0).exists()]
    say_plan(args, [("pretrain", cell, 1) for cell in todo])
    if args.dry_run:
        return 0
    record = read_json(layout.pretrained_record) or {}
    for cell in args.cells:
        network = pretrained_network(args, cell, 0)
        result = read_json(layout.result_file("pretrain", cell, 0))
        record[cell_name(cell)] = {  # paths from the repository root or their run root: no machine's absolute path
            "seed": 0, "checkpoint": portable_path(str(network)), "checksum": result["pretrain_checksum"], "commit": result["commit"],
            "result_file": portable_path(str(layout.result_file("pretrain", cell, 0))),
        }
        print(f"[pretrain] {cell[0]}/{cell[1]}: {network} (checksum {result['pretrain_checksum'][:12]})", flush=True)
    layout.pretrained_record.parent.mkdir(parents=True, exist_ok=True)
    layout.pretrained_record.write_text(json.dumps(dict(sorted(record.items())), indent=1) + "\n", encoding="utf-8")
    return 0


def tune_settings(args: argparse.Namespace, cell: tuple[str, str], arm: str, network: Path | None) -> Any:
    from drga.tune.study import TuneSettings

    net, dataset = cell
    base = [*args.set, *DATASET_SETTINGS.get(dataset, []), f"data.dataset={dataset}", f"network.name={net}", "run.seed=0",
            f"run.threads={args.threads}", f"train.init_from={network.resolve()}", *(DRGA_RUN if arm == "drga" else BASELINE_RUN)]
    return TuneSettings(
        config=args.config, base=base, dimensions=dimensions(arm), trials=args.trials, folder=args.layout.logdir / "search" /
        study_name(cell, arm), study_name=study_name(cell, arm), storage=f"sqlite:///{args.layout.storage(cell, arm).resolve()}",
        sampler_seed=args.sampler_seed, log=lambda line: print(f"[{study_name(cell, arm)}] {line}", flush=True),
    )


def finished_count(storage: Path, name: str) -> int:
    if not storage.exists():
        return 0
    from drga.tune.study import finished_trials, optuna_module

    optuna = optuna_module()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return len(finished_trials(optuna.load_study(study_name=name, storage=f"sqlite:///{storage.resolve()}")))


def cmd_search(args: argparse.Namespace) -> int:
    from drga.tune.study import summary, tune

    layout = args.layout
    todo = []
    for cell in args.cells:
        left = args.trials - finished_count(layout.storage(cell, args.arm), study_name(cell, args.arm))
        if left > 0:
            todo.append((f"{args.arm}-trial", cell, left))
    keys = [d.key for d in dimensions(args.arm)]
    print(f"[plan] search of the {args.arm} arm: {args.trials} finished trials per cell, over {', '.join(keys)}", flush=True)
    say_plan(args, todo)
    if args.dry_run:
        return 0
    recorded = read_json(layout.pretrained_record) or {}
    for _, cell, _ in todo:
        entry = recorded.get(cell_name(cell))
        if entry is None:
            raise SystemExit(f"no pretrained network recorded for {cell[0]}/{cell[1]}: run `tuned_study.py pretrain` first")
        network = pretrained_network(args, cell, 0)
        if checksum_of(network) != entry["checksum"]:
            raise SystemExit(f"{network} is not the network the search started from (checksum {entry['checksum'][:12]})")
        settings = tune_settings(args, cell, args.arm, network)
        print(summary(settings, tune(settings)), flush=True)
    return 0


# --- the test at several seeds ------------------------------------------------------------------


def best_overrides(layout: Layout, cell: tuple[str, str], arm: str) -> list[str]:
    """The arm's best trial's settings for `drga train` (its named choices as their settings)."""
    from drga.tune.study import best_trial, optuna_module

    storage = layout.storage(cell, arm)
    if not storage.exists():
        raise SystemExit(f"no search of the {arm} arm for {cell[0]}/{cell[1]} ({storage}): run `tuned_study.py search --arm {arm}` first")
    optuna = optuna_module()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    best = best_trial(optuna.load_study(study_name=study_name(cell, arm), storage=f"sqlite:///{storage.resolve()}"))
    if best is None:
        raise SystemExit(f"the {arm} arm's search for {cell[0]}/{cell[1]} has no completed trial yet")
    return overrides(best.params, dimensions(arm))


def matched_seconds(result: dict[str, Any]) -> float:
    """What a DRGA run spent on the phases the time-matched baseline is given."""
    return round(sum((result["phases"].get(phase) or {}).get("seconds", 0.0) for phase in MATCHED_PHASES), 2)


def cmd_test(args: argparse.Namespace) -> int:
    layout = args.layout
    kinds = ("pretrain", "drga", "baseline", "time-matched")
    todo = [(kind, cell, count) for cell in args.cells for kind in kinds
            if (count := sum(not layout.result_file(kind, cell, seed).exists() for seed in args.seeds))]
    say_plan(args, todo)
    if args.dry_run or not todo:
        return 0
    status = 0
    for cell in args.cells:
        arms = {arm: best_overrides(layout, cell, arm) for arm in ARMS}
        for arm, settings in arms.items():
            print(f"[test] {cell[0]}/{cell[1]}, the {arm} arm's best: {' '.join(settings)}", flush=True)
        for seed in args.seeds:
            if all(layout.result_file(kind, cell, seed).exists() for kind in kinds):
                continue
            network = pretrained_network(args, cell, seed)
            start = [f"train.init_from={network.resolve()}"]
            for arm in ARMS:
                run = DRGA_RUN if arm == "drga" else BASELINE_RUN
                status = max(status, sweep(args, arm, cell, [seed], [*run, *arms[arm], *start], layout.regime / arm))
            drga = read_json(layout.result_file("drga", cell, seed))
            if drga is None:
                continue  # its DRGA run failed: nothing to match
            budget = [f"train.baseline_epochs={MATCHED_EPOCH_CAP}", "train.patience=0", f"train.baseline_seconds={matched_seconds(drga)}"]
            status = max(status, sweep(args, "time-matched", cell, [seed], [*BASELINE_RUN, *arms["baseline"], *budget, *start],
                                       layout.regime / "time-matched"))
    return status


# --- the command line ---------------------------------------------------------------------------


def add_run_options(
    sub: argparse.ArgumentParser, logdir: str = "runs/tuned-study", jobs_help: str = "runs at a time in a sweep (pretrain, test)",
    threads_help: str = "torch threads per run or trial (default 1, as the main study)",
) -> None:
    """The options of a subcommand that runs (this study's, and experiments/agent_size_study.py's ``run``), which
    :func:`sweep`, :func:`say_plan` and the layout read: the base config and its overrides, where files go, the
    parallelism and ``--dry-run``."""
    sub.add_argument("--config", default=CONFIG, help=f"the base TOML file (default {CONFIG})")
    sub.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override of every run (repeatable)")
    sub.add_argument("--results", default="experiments/results", help="where the committed files go (default experiments/results)")
    sub.add_argument("--logdir", default=logdir, help=f"run folders and networks (default {logdir})")
    sub.add_argument("--jobs", type=int, default=1, help=jobs_help)
    sub.add_argument("--threads", type=int, default=1, help=threads_help)
    sub.add_argument("--dry-run", action="store_true", help="print the plan only")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    for name in ("pretrain", "search", "test"):
        sub = commands.add_parser(name)
        sub.add_argument("--nets", nargs="+", default=list(NETS))
        sub.add_argument("--datasets", nargs="+", default=list(DATASETS))
        sub.add_argument("--sst", action="store_true", help="also LSTM+SA on SST-5")
        add_run_options(sub)
        if name == "search":
            sub.add_argument("--arm", choices=ARMS, required=True)
            sub.add_argument("--trials", type=int, required=True, help="finished trials each cell's study should have")
            sub.add_argument("--sampler-seed", type=int, default=0)
        if name == "test":
            sub.add_argument("--seeds", type=seeds_of, default=list(range(10)), help="0-9 (default), 0,3,5 or 2")
    tables = commands.add_parser("tables")
    tables.add_argument("--results", default="experiments/results")
    tables.add_argument("--out", default="docs/results/tuned.md")
    tables.add_argument("--figures", default="docs/results/tuned", help="folder of the PNGs (default docs/results/tuned)")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.chdir(ROOT)  # the paths are the repository's; the sweep's runs use this checkout's drga from here
    if args.command == "tables":
        import importlib.util

        spec = importlib.util.spec_from_file_location("tuned_tables", ROOT / "experiments" / "tuned_tables.py")
        tables = importlib.util.module_from_spec(spec)
        sys.modules["tuned_tables"] = tables
        spec.loader.exec_module(tables)
        return tables.main(["--results", args.results, "--out", args.out, "--figures", args.figures])
    args.layout = Layout(Path(args.results), Path(args.logdir))
    args.cells = cells_of(args)
    return {"pretrain": cmd_pretrain, "search": cmd_search, "test": cmd_test}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
