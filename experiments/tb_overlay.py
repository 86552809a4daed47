"""The TensorBoard overlay of a run as a picture: the equal-budget baseline against DRGA on one axis.

    python experiments/tb_overlay.py runs/demo-subj-lstm-sa --out docs/tensorboard-overlay.png

Reads the run's sibling TensorBoard runs (``tb/baseline``, ``tb/drga``, ``tb/agent``; see
drga/runner/tensorboard.py) and draws what TensorBoard's Scalars tab draws for the same tags: dev accuracy
per arm against network updates since the comparison began, the training loss, and the agent's
signals (how far it moves attention, its σ, the highlighted fraction N/L).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

PANELS = [
    ("dev accuracy (%)", [("baseline", "dev/accuracy_net_only", "equal-budget baseline"),
                          ("drga", "dev/accuracy_net_only", "DRGA, net-only"),
                          ("drga", "dev/accuracy_with_agent", "DRGA, with agent")], 100.0),
    ("training loss (eq. 12)", [("baseline", "train/task_loss", "equal-budget baseline"),
                                ("drga", "train/task_loss", "DRGA (on revised attention)")], 1.0),
    ("agent signals (co-training)", [("drga", "agent/attention_shift", "TV(α, α′)"),
                                     ("drga", "agent/highlighted_fraction", "N/L"),
                                     ("drga", "agent/policy_sigma", "policy σ")], 1.0),
]


def series(tb: Path, arm: str, tag: str) -> tuple[list[int], list[float]]:
    folder = tb / arm
    if not folder.is_dir():
        return [], []
    events = EventAccumulator(str(folder)).Reload()
    if tag not in events.Tags()["scalars"]:
        return [], []
    points = events.Scalars(tag)
    return [p.step for p in points], [p.value for p in points]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a run folder (it holds tb/)")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = parser.parse_args(argv)
    tb = args.run / "tb"
    if not (tb / "baseline").is_dir() or not (tb / "drga").is_dir():
        parser.error(f"{tb} has no baseline and drga runs: give a run folder trained with the equal-budget baseline and co-training")
    figure, axes = plt.subplots(1, len(PANELS), figsize=(6.0 * len(PANELS), 5.0))
    for axis, (title, lines, scale) in zip(axes, PANELS):
        for arm, tag, label in lines:
            steps, values = series(tb, arm, tag)
            if steps:
                axis.plot(steps, [scale * v for v in values], marker="." if tag.startswith("dev/") else None, label=label)
        axis.set_title(title, fontsize=13)
        axis.set_xlabel("network updates since the comparison began", fontsize=11)
        axis.tick_params(labelsize=10)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)  # below, off the data
    figure.suptitle(f"{args.run.name}: TensorBoard tags shared by the arms (tb/baseline, tb/drga)", fontsize=13)
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
