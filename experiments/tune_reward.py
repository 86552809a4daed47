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

A translation run is tuned the same way, by its own selection key (dev BLEU, then perplexity), with
γ searched too and a cheaper agent epoch where whole passes cost hours (issue 39's search):

    python experiments/tune_reward.py runs/translation-probes/multi30k-en-de-transformer-nmt-seed0 \\
        --sqrt-l0 0.1 0.2 0.4 --delta 0.8 0.9 --gamma 0.1 0.2 --agent-epochs 1 --set nmt.epoch_pairs=5000

It prints the TOML lines to paste into a study config (``[reward.per_dataset.<dataset>]``),
and writes every setting's dev scores to ``--out``. Resumable: the study's database (in the
work folder) keeps the finished settings, and the same command trains only the others.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.names import PhaseName, best_checkpoint
from drga.sweep.results import portable_path
from drga.tasks.run_config import experiment, load_run_config
from drga.tune.space import parse_search
from drga.tune.study import TuneSettings, tune

PAPER = {"sqrt_l0": 0.2, "delta": 0.85, "gamma": 0.2}


def settings(run_dir: Path, grid: dict[str, list[float]], agent_epochs: int, workdir: Path, extra: list[str]) -> TuneSettings:
    """The `drga tune` study of the grid (``grid``: reward coefficient → its values)."""
    source = best_checkpoint(run_dir, PhaseName.PRETRAIN)
    if not source.exists():
        raise SystemExit(f"{source} does not exist: tune from a run whose pretraining finished")
    search = [f"reward.{name}={','.join(map(str, values))}" for name, values in grid.items()]
    base = [f"train.init_from={source.resolve()}", f"train.agent_epochs={agent_epochs}", "train.cotrain_epochs=0",
            "train.fair_baseline=false", *extra]
    return TuneSettings(config=str(run_dir / "config.toml"), base=base, dimensions=parse_search(search),
                        trials=math.prod(len(values) for values in grid.values()), folder=workdir, study_name="reward",
                        sampler="grid", prune=False, log=lambda line: print(line, flush=True))


def scored_setting(trial, names: list[str]) -> dict:
    """One grid point's values and dev scores (classification: accuracy and reward; translation: BLEU, perplexity, reward)."""
    dev = trial.user_attrs["dev"]
    scores = {f"dev_{key}": dev[key] for key in ("accuracy", "bleu", "perplexity", "reward", "highlighted_fraction") if key in dev}
    return {**{name: trial.params[f"reward.{name}"] for name in names}, **scores,
            "selection_key": trial.user_attrs["selection_key"], "epoch": trial.user_attrs["epoch"]}


def tune_grid(run_dir: Path, grid: dict[str, list[float]], agent_epochs: int, workdir: Path, extra: list[str] = ()) -> dict:
    """Every setting's dev scores, in grid order, and the chosen setting: the best selection key (the run's own:
    dev accuracy then reward, or dev BLEU then perplexity), ties broken towards the paper's values."""
    study = tune(settings(run_dir, grid, agent_epochs, workdir, list(extra)))
    names = list(grid)
    done = {tuple(t.params[f"reward.{n}"] for n in names): t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"}
    settings_scored = [scored_setting(done[point], names) for point in itertools.product(*grid.values()) if point in done]

    def key(s: dict) -> tuple:
        distance = sum(abs(s[name] - PAPER[name]) for name in names)
        return (*(round(part, 6) for part in s["selection_key"]), -distance)

    best = max(settings_scored, key=key)
    return {"run": portable_path(str(run_dir)), "agent_epochs": agent_epochs, "settings": settings_scored,
            "chosen": {name: best[name] for name in names}}


def side_by_side(report: dict, earlier: dict) -> str:
    """A markdown table of two grids' dev scores per setting (e.g. a committed result and its reproduction)."""
    names = [name for name in ("sqrt_l0", "delta", "gamma") if name in report["chosen"]]
    metric = next(key for key in ("dev_accuracy", "dev_bleu") if key in report["settings"][0])
    point = lambda s: tuple(s[name] for name in names)  # noqa: E731
    before = {point(s): s for s in earlier["settings"]}
    lines = [f"| {' | '.join(names)} | {metric}, {earlier['run']} | {metric}, {report['run']} | difference |",
             "|" + "---|" * (len(names) + 3)]
    for s in report["settings"]:
        old = before.get(point(s), {}).get(metric)
        cells = [f"{s[name]:g}" for name in names] + [f"{old:.4f}" if old is not None else "-", f"{s[metric]:.4f}",
                                                      f"{s[metric] - old:+.4f}" if old is not None else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    chosen = lambda r: ", ".join(f"{k} = {v:g}" for k, v in r["chosen"].items())  # noqa: E731
    lines += ["", f"chosen: {chosen(earlier)} (earlier), {chosen(report)} (this run)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a finished run folder (its config.toml and pretrain_best.pt); or a grid's "
                        "--out JSON, to --compare it with another without training")
    parser.add_argument("--sqrt-l0", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5])
    parser.add_argument("--delta", type=float, nargs="+", default=[0.8, 0.85, 0.9])
    parser.add_argument("--gamma", type=float, nargs="+", help="γ's values too (default: γ stays the run's)")
    parser.add_argument("--agent-epochs", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a setting of every grid point (repeatable), e.g. nmt.epoch_pairs=5000 for a cheaper agent epoch")
    parser.add_argument("--workdir", type=Path, help="where the settings' runs and the study go (default <run>-reward-tuning)")
    parser.add_argument("--out", type=Path, help="JSON of every setting's dev scores and the choice")
    parser.add_argument("--compare", type=Path, help="an earlier --out JSON: print both grids' dev scores side by side")
    args = parser.parse_args(argv)
    if args.run.suffix == ".json":  # a finished grid's --out: only --compare's table, from the committed files
        if not args.compare:
            parser.error("a JSON report is read only to --compare it with another")
        report, earlier = (json.loads(path.read_text(encoding="utf-8")) for path in (args.run, args.compare))
        print(side_by_side(report, earlier))
        return 0
    if not (args.run / "config.toml").exists():
        parser.error(f"{args.run} holds no config.toml: give the folder of a finished run")
    workdir = args.workdir or args.run.with_name(args.run.name + "-reward-tuning")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    grid = {"sqrt_l0": args.sqrt_l0, "delta": args.delta, **({"gamma": args.gamma} if args.gamma else {})}
    report = tune_grid(args.run, grid, args.agent_epochs, workdir, args.set)
    config = experiment(load_run_config(str(args.run / "config.toml"), []))
    chosen = report["chosen"]
    report["dataset"], report["net"] = config.data.dataset, config.network.name
    if args.set:
        report["settings_of_every_point"] = args.set
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    command = f"python experiments/tune_reward.py {args.run}"
    lines = [f"{name} = {value}" for name, value in chosen.items() if name != "gamma"]  # per data set: √L0 and δ only
    print(f"\n# {command}\n[reward.per_dataset.{config.data.dataset}]\n" + "\n".join(lines))
    if "gamma" in chosen:
        print(f"# and in [reward]: gamma = {chosen['gamma']}")
    if args.compare:
        print("\n" + side_by_side(report, json.loads(args.compare.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
