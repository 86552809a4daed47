"""Tune the reward's √L0 and δ (eq. 5) for one data set on dev, as the paper does per task: a `drga tune` grid.

Starting from a finished run's pretrained network (``<run>/pretrain_best.pt``, frozen, by
``train.init_from``), the agent is pretrained (phase 2) once per (√L0, δ) of a grid, with the same
seed every time, and each setting is scored by the agent's best dev accuracy with the agent (ties:
the higher dev reward, then the setting nearer the paper's √L0 = 0.2, δ = 0.85). The agent phase is
the part of DRGA that the two values steer, and on a frozen network it is cheap: a 12-setting grid
on MR is a few minutes on one core. Test data is never read for the choice. It is the study

    drga tune --config <run>/config.toml --set train.init_from=<run>/pretrain_best.pt \\
        --set train.agent_epochs=2 --set train.cotrain_epochs=0 --set train.fair_baseline=false \\
        --search reward.sqrt_l0=0.1,0.2,0.3,0.5 --search reward.delta=0.8,0.85,0.9 --sampler grid --no-prune \\
        --study reward --dir <run>-reward-tuning

with this script's report on top:

    python experiments/tune_reward.py runs/paper-regime/mr-lstm-sa-seed0 \\
        [--sqrt-l0 0.1 0.2 0.3 0.5] [--delta 0.8 0.85 0.9] [--agent-epochs 2] \\
        [--out experiments/results/reward-tuning/mr-lstm-sa.json]

It prints the TOML lines to paste into a study config (``[reward.per_dataset.<dataset>]``),
and writes every setting's dev scores to ``--out``. Resumable: the study's database (in the
work folder) keeps the finished settings, and the same command trains only the others.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.config import load_config
from drga.tune.space import parse_search
from drga.tune.study import TuneSettings, tune

PAPER = {"sqrt_l0": 0.2, "delta": 0.85}


def settings(run_dir: Path, sqrt_l0s: list[float], deltas: list[float], agent_epochs: int, workdir: Path) -> TuneSettings:
    """The `drga tune` study of the grid."""
    source = run_dir / "pretrain_best.pt"
    if not source.exists():
        raise SystemExit(f"{source} does not exist: tune from a run whose pretraining finished")
    search = [f"reward.sqrt_l0={','.join(map(str, sqrt_l0s))}", f"reward.delta={','.join(map(str, deltas))}"]
    base = [f"train.init_from={source.resolve()}", f"train.agent_epochs={agent_epochs}", "train.cotrain_epochs=0",
            "train.fair_baseline=false"]
    return TuneSettings(config=str(run_dir / "config.toml"), base=base, dimensions=parse_search(search),
                        trials=len(sqrt_l0s) * len(deltas), folder=workdir, study_name="reward", sampler="grid", prune=False,
                        log=lambda line: print(line, flush=True))


def tune_grid(run_dir: Path, sqrt_l0s: list[float], deltas: list[float], agent_epochs: int, workdir: Path) -> dict:
    """Every setting's dev scores, in grid order, and the chosen setting."""
    study = tune(settings(run_dir, sqrt_l0s, deltas, agent_epochs, workdir))
    scores = {}
    for trial in study.get_trials(deepcopy=False):
        if trial.state.name == "COMPLETE":
            dev = trial.user_attrs["dev"]
            scores[(trial.params["reward.sqrt_l0"], trial.params["reward.delta"])] = {
                "dev_accuracy": dev["accuracy"], "dev_reward": dev["reward"],
                "dev_highlighted_fraction": dev.get("highlighted_fraction"), "epoch": trial.user_attrs["epoch"],
            }
    settings_scored = [{"sqrt_l0": s, "delta": d, **scores[(s, d)]} for s in sqrt_l0s for d in deltas if (s, d) in scores]

    def key(s: dict) -> tuple:
        distance = abs(s["sqrt_l0"] - PAPER["sqrt_l0"]) + abs(s["delta"] - PAPER["delta"])
        return (round(s["dev_accuracy"], 6), round(s["dev_reward"], 6), -distance)

    best = max(settings_scored, key=key)
    return {"run": str(run_dir), "agent_epochs": agent_epochs, "settings": settings_scored,
            "chosen": {"sqrt_l0": best["sqrt_l0"], "delta": best["delta"]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a finished run folder (its config.toml and pretrain_best.pt)")
    parser.add_argument("--sqrt-l0", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5])
    parser.add_argument("--delta", type=float, nargs="+", default=[0.8, 0.85, 0.9])
    parser.add_argument("--agent-epochs", type=int, default=2)
    parser.add_argument("--workdir", type=Path, help="where the settings' runs and the study go (default <run>-reward-tuning)")
    parser.add_argument("--out", type=Path, help="JSON of every setting's dev scores and the choice")
    args = parser.parse_args(argv)
    if not (args.run / "config.toml").exists():
        parser.error(f"{args.run} holds no config.toml: give the folder of a finished run")
    workdir = args.workdir or args.run.with_name(args.run.name + "-reward-tuning")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    report = tune_grid(args.run, args.sqrt_l0, args.delta, args.agent_epochs, workdir)
    config = load_config(args.run / "config.toml")
    chosen = report["chosen"]
    report["dataset"], report["net"] = config.data.dataset, config.network.name
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    command = f"python experiments/tune_reward.py {args.run}"
    print(f"\n# {command}\n[reward.per_dataset.{config.data.dataset}]\nsqrt_l0 = {chosen['sqrt_l0']}\ndelta = {chosen['delta']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
