"""REINFORCE vs stable-baselines3 PPO vs A2C for phase 2: the comparison in docs/sb3.md.

Runs `drga train --agent A` for each learner with one config (same network, data, seed and
budget of environment steps; finished runs are skipped, interrupted ones resumed), then writes
the test accuracies in both modes and the training-reward curves read back from TensorBoard.

    python experiments/sb3_compare.py [--config experiments/configs/sb3_compare.toml]
        [--agents reinforce sb3-a2c sb3-ppo] [--logdir runs/sb3-compare] [--set SECTION.KEY=VALUE ...]
        [--out FILE.md] [--plot FILE.png]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from drga.config import load_config
from drga.names import Mode, PhaseName, ResultRow
from drga.records import RunResults
from drga.sweep.results import accuracy as result_accuracy
from drga.tasks.classification.data import prepare_data

#: The trainer's training reward: (TensorBoard run, tag) of phase 2 and of co-training (drga/runner/tensorboard.py).
TAGS = (("agent", "agent/reward"), ("drga", "agent/reward"))


def train(agent: str, args: argparse.Namespace) -> Path:
    run_dir = Path(args.logdir) / f"subj-lstm-sa-{agent}"
    if (run_dir / "results.json").exists():
        print(f"[skip] {run_dir} is finished", flush=True)
        return run_dir
    command = [sys.executable, "-m", "drga.cli", "train", "--config", args.config, "--agent", agent,
               "--logdir", args.logdir, "--run-name", run_dir.name, "--no-progress"]
    command += [f"--set={item}" for item in args.set]
    command += ["--resume"] if (run_dir / "last.pt").exists() else []
    print("[run]", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    return run_dir


def scalars(folder: Path, tags: tuple[str, ...]) -> dict[str, list[tuple[int, float]]]:
    """TensorBoard scalars of one event folder (its files only, not its subfolders)."""
    if not folder.is_dir():
        return {}
    events = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in tags if tag in events.Tags()["scalars"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="experiments/configs/sb3_compare.toml")
    parser.add_argument("--agents", nargs="+", default=["reinforce", "sb3-a2c", "sb3-ppo"])
    parser.add_argument("--logdir", default="runs/sb3-compare")
    parser.add_argument("--out", default=None, help="also write the tables to this markdown file")
    parser.add_argument("--plot", default=None, help="also plot the TensorBoard reward curves to this PNG")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting of the config in every run (repeatable), as drga train --set")
    args = parser.parse_args()

    config = load_config(args.config, args.set)
    train_split = prepare_data(config).train
    tokens = sum(len(example.ids) for example in train_split)  # LSTM+SA: one site, one step per token
    batches = math.ceil(len(train_split) / config.data.batch_size)
    steps_per_batch = config.agent.samples * tokens / batches  # REINFORCE: K episodes of each sentence
    accuracy = [
        "| phase 2 learner | env steps in phase 2 | phase 2 wall-clock (s) | agent on frozen network, with-agent "
        "| DRGA net-only | DRGA with-agent | equal-budget baseline, net-only |",
        "|---|---|---|---|---|---|---|",
    ]
    training = [
        "| phase 2 learner | epoch | mean training reward | N/L | policy σ | dev accuracy with-agent |",
        "|---|---|---|---|---|---|",
    ]
    curves = {}
    for agent in args.agents:
        run_dir = train(agent, args)
        payload = RunResults.read(run_dir / "results.json")
        phase2 = [record for record in payload.history if record.phase == PhaseName.AGENT]
        env_steps = phase2[-1].train.get("env_steps", len(phase2) * config.agent.samples * tokens)
        test = lambda row, mode, payload=payload: "-" if (score := result_accuracy(payload, row, mode)) is None else f"{100 * score:.2f}"
        accuracy.append(
            f"| {agent} | {env_steps:,.0f} | {sum(r.seconds or 0.0 for r in phase2):.0f} "
            f"| {test(ResultRow.AGENT_ON_FROZEN, 'with-agent')} | {test(ResultRow.DRGA, 'net-only')} "
            f"| {test(ResultRow.DRGA, 'with-agent')} | {test(ResultRow.EQUAL_BUDGET, 'net-only')} |"
        )
        for r in phase2:
            training.append(
                f"| {agent} | {r.epoch} | {r.train['reward']:.3f} | {r.train['highlighted_fraction']:.2f} | {r.train['policy_sigma']:.3f} "
                f"| {100 * r.dev_number(Mode.WITH_AGENT, 'accuracy'):.2f} |"
            )
        curves[agent] = {
            "trainer": {run: scalars(run_dir / "tb" / run, (tag,)).get(tag, []) for run, tag in TAGS},
            "sb3": scalars(run_dir / "tb" / agent, ("rollout/ep_rew_mean",)).get("rollout/ep_rew_mean", []),
            "start": 0,  # each arm's step axis starts at its phase
        }
    text = "\n".join(accuracy + [""] + training)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.plot:
        plot(curves, steps_per_batch, args.plot)


def plot(curves: dict, steps_per_batch: float, path: str):
    """Phase 2 by environment steps (SB3's own episode-reward curve, the trainer's reward points), then co-training.

    The analyses' figure style (drga.analysis.plots: type of at least 11 pt, at most 10 inches
    wide); colour is the learner, the marks say which curve; one legend below both panels.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    from drga.analysis.plots import DOC_WIDTH, legend_below, new_figure, save_png, style

    with style():
        figure = new_figure(DOC_WIDTH, 4.6, layout="constrained")
        phase2, cotrain = figure.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]}, sharey=True)
        handles = []
        for index, (agent, curve) in enumerate(curves.items()):
            color = f"C{index}"
            points = curve["trainer"][TAGS[0][0]]
            phase2.plot([(s - curve["start"]) * steps_per_batch for s, _ in points], [v for _, v in points], "o", color=color,
                        ms=7, markeredgecolor="white", zorder=3)
            if curve["sb3"]:
                phase2.plot([s for s, _ in curve["sb3"]], [v for _, v in curve["sb3"]], "-", color=color, linewidth=1.2)
            points = curve["trainer"][TAGS[1][0]]
            cotrain.plot([s for s, _ in points], [v for _, v in points], "o-", color=color, ms=6)
            handles.append(Line2D([], [], color=color, lw=6, label=agent))
        marks = [
            Line2D([], [], color="#555", marker="o", ls="none", ms=7, label="trainer: agent/reward"),
            Line2D([], [], color="#555", lw=1.2, label="SB3: rollout/ep_rew_mean"),
        ]
        # the legend fills column by column: learners in its first row, the kinds of mark in its second
        learners, handles = handles, []
        for index, handle in enumerate(learners):
            handles += [handle] + marks[index : index + 1]
        handles += marks[len(learners) :]
        phase2.set(title="phase 2: agent on the frozen network", xlabel="environment steps", ylabel="training reward (eq. 5)")
        cotrain.set(title="phase 3: co-training (REINFORCE in all)", xlabel="trainer step")
        phase2.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / 1000:g}k" if value else "0"))
        legend_below(figure, handles, [h.get_label() for h in handles], ncol=len(curves))
        save_png(figure, path)
    return figure


if __name__ == "__main__":
    main()
