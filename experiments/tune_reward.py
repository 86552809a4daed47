"""Tune the reward's √L0 and δ (eq. 5) for one data set on dev, as the paper does per task.

Starting from a finished run's pretrained network (``<run>/pretrain_best.pt``, frozen), the
agent is pretrained (phase 2) once per (√L0, δ) of a grid, with the same seed every time, and
each setting is scored by the agent's best dev accuracy with the agent (ties: the higher dev
reward, then the setting nearer the paper's √L0 = 0.2, δ = 0.85). The agent phase is the part of
DRGA that the two values steer, and on a frozen network it is cheap: a 12-setting grid on MR is
a few minutes on one core. Test data is never read for the choice.

    python experiments/tune_reward.py runs/paper-regime/mr-lstm-sa-seed0 \\
        [--sqrt-l0 0.1 0.2 0.3 0.5] [--delta 0.8 0.85 0.9] [--agent-epochs 2] \\
        [--out experiments/results/reward-tuning/mr-lstm-sa.json]

It prints the TOML lines to paste into a study config (``[reward.per_dataset.<dataset>]``),
and writes every setting's dev scores to ``--out``. Resumable: a setting whose run finished
is read back, not trained again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drga.config import load_config  # noqa: E402
from drga.trainer import Trainer  # noqa: E402

PAPER = {"sqrt_l0": 0.2, "delta": 0.85}


def tune(run_dir: Path, sqrt_l0s: list[float], deltas: list[float], agent_epochs: int, workdir: Path) -> dict:
    source = run_dir / "pretrain_best.pt"
    if not source.exists():
        raise SystemExit(f"{source} does not exist: tune from a run whose pretraining finished")
    settings = []
    for sqrt_l0 in sqrt_l0s:
        for delta in deltas:
            name = f"l0-{sqrt_l0:g}-delta-{delta:g}"
            overrides = [
                f"reward.sqrt_l0={sqrt_l0}", f"reward.delta={delta}", "train.pretrain_epochs=0", "train.cotrain_epochs=0",
                "train.fair_baseline=false", f"train.agent_epochs={agent_epochs}", f"run.logdir={workdir}",
                f"run.run_name={name}", "run.progress=false",
            ]
            config = load_config(run_dir / "config.toml", overrides)
            folder = workdir / name
            results_file = folder / "results.json"
            if not results_file.exists():
                folder.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, folder / "pretrain_best.pt")  # the agent phase starts from it, frozen
                Trainer(config, resume=(folder / "last.pt").exists(), log=lambda _: None).run()
            row = json.loads(results_file.read_text())["results"]["agent on frozen network"]
            dev = row["dev_with-agent"]
            settings.append({"sqrt_l0": sqrt_l0, "delta": delta, "dev_accuracy": dev["accuracy"], "dev_reward": dev["reward"],
                             "dev_highlighted_fraction": dev.get("highlighted_fraction"), "epoch": row["epoch"]})
            print(f"√L0 {sqrt_l0:<5g} δ {delta:<5g} dev acc with-agent {dev['accuracy']:.4f}  reward {dev['reward']:.3f}", flush=True)

    def key(s: dict) -> tuple:
        distance = abs(s["sqrt_l0"] - PAPER["sqrt_l0"]) + abs(s["delta"] - PAPER["delta"])
        return (round(s["dev_accuracy"], 6), round(s["dev_reward"], 6), -distance)

    best = max(settings, key=key)
    return {"run": str(run_dir), "agent_epochs": agent_epochs, "settings": settings,
            "chosen": {"sqrt_l0": best["sqrt_l0"], "delta": best["delta"]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a finished run folder (its config.toml and pretrain_best.pt)")
    parser.add_argument("--sqrt-l0", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5])
    parser.add_argument("--delta", type=float, nargs="+", default=[0.8, 0.85, 0.9])
    parser.add_argument("--agent-epochs", type=int, default=2)
    parser.add_argument("--workdir", type=Path, help="where the settings' runs go (default <run>-reward-tuning)")
    parser.add_argument("--out", type=Path, help="JSON of every setting's dev scores and the choice")
    args = parser.parse_args(argv)
    if not (args.run / "config.toml").exists():
        parser.error(f"{args.run} holds no config.toml: give the folder of a finished run")
    workdir = args.workdir or args.run.with_name(args.run.name + "-reward-tuning")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    report = tune(args.run, args.sqrt_l0, args.delta, args.agent_epochs, workdir)
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
