"""How much the random, never-trained ``<unk>`` vector moved the pretrained networks' accuracy.

    python experiments/unk_effect.py runs/paper-regime [--out docs/results/unk-effect.md]

For every ``<run>/pretrain_best.pt`` under the folder (runs made before ``<unk>`` started at zero),
dev and test accuracy as trained, then with the ``<unk>`` row of the embedding set to zero
(nothing else changes). With a vocabulary of every training word no training token is unknown,
so that row kept its random initial value, which every unknown dev or test word read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
import torch

from drga.config import load_config
from drga.data import BatchIterator
from drga.names import PhaseName, best_checkpoint_name
from drga.tasks.classification.data import prepare_data
from drga.tasks.classification.evaluation import evaluate
from drga.tasks.classification.trained import load_trained, on_model_labels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    lines = ["| run | dev, random <unk> | dev, zero <unk> | test, random <unk> | test, zero <unk> | Δ test |", "|---|---|---|---|---|---|"]
    deltas: dict[str, list[float]] = {}
    for checkpoint in sorted(args.runs.glob(f"*/{best_checkpoint_name(PhaseName.PRETRAIN)}")):
        model = load_trained(checkpoint)
        config = load_config(checkpoint.parent / "config.toml")
        data = on_model_labels(prepare_data(config, vocab=model.vocab), model, checkpoint)  # labels matched by name
        network = model.network.eval()
        scores = []
        for zero in (False, True):
            if zero:
                with torch.no_grad():
                    network.embedding.weight[1].zero_()
            for split in (data.dev, data.test):
                scores.append(100 * evaluate(network, BatchIterator(split, 128, shuffle=False), config.reward, "net-only").accuracy)
        dev_random, test_random, dev_zero, test_zero = scores
        deltas.setdefault(checkpoint.parent.name.rsplit("-seed", 1)[0], []).append(test_zero - test_random)
        cells = [dev_random, dev_zero, test_random, test_zero]
        lines.append(f"| {checkpoint.parent.name} | " + " | ".join(f"{v:.2f}" for v in cells) + f" | {test_zero - test_random:+.2f} |")
    lines += ["", "| cell | mean Δ test (points) |", "|---|---|"]
    lines += [f"| {cell} | {statistics.mean(values):+.2f} |" for cell, values in deltas.items()]
    text = "\n".join([f"<!-- {' '.join(['python experiments/unk_effect.py', str(args.runs)])} -->", "", *lines, ""])
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
