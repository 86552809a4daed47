"""Short fixed-seed runs whose every number is pinned in ``tests/fixtures/regression.json``.

A refactor of the training machinery must change no number: ``tests/test_regression.py`` reruns
these and compares every ``results.json`` row and every epoch record (wall times aside) with the
fixture, exactly. One run per attention family on a small slice of its real data set, the
variants beyond the paper, a stable-baselines3 agent phase, and a translation run.

    python -m tests.regression_runs             # how far this code's numbers are from the fixture, per run
    python -m tests.regression_runs --write     # (re)pin the fixture: only in a commit that says why
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import torch

FIXTURE = Path(__file__).parent / "fixtures" / "regression.json"

#: Small networks, one thread, one or two epochs per phase: each run takes seconds.
SMALL = {
    "network.embedding_dim": 16, "network.hidden_size": 16, "network.attention_size": 8, "network.classifier_hidden": 8,
    "network.feedforward_size": 24, "network.layers": 1, "network.heads": 2, "network.kernel_sizes": "3,5",
    "agent.hidden_sizes": "12,12", "agent.samples": 3, "data.batch_size": 16, "data.max_length": 30,
    "data.max_sentences": 8, "data.max_sentence_length": 20, "train.pretrain_epochs": 2, "train.agent_epochs": 1,
    "train.cotrain_epochs": 1, "train.patience": 0, "train.lr": 0.005, "run.seed": 7, "run.threads": 1, "run.progress": False,
}

#: name → (data folder, overrides): one network per family, and the variants beyond the paper.
CLASSIFICATION: dict[str, tuple[str, dict[str, Any]]] = {
    "lstm-sa": ("mr", {"network.name": "lstm-sa", "data.dataset": "mr", "data.train_fraction": 0.03}),
    "transformer": ("subj", {"network.name": "transformer", "data.dataset": "subj", "data.train_fraction": 0.03}),
    "disan": ("subj", {"network.name": "disan", "data.dataset": "subj", "data.train_fraction": 0.03}),
    "ian": ("semeval14", {"network.name": "ian", "data.dataset": "semeval14-laptop", "data.train_fraction": 0.15}),
    "han": ("movie_reviews", {"network.name": "han", "data.dataset": "movie-reviews", "data.train_fraction": 0.1}),
    "lstm-sa-variants": ("mr", {
        "network.name": "lstm-sa", "data.dataset": "mr", "data.train_fraction": 0.03, "data.agent_holdout": 0.3,
        "agent.reward_baseline": "self-critical", "reward.closeness": 0.5, "train.original_attention_loss": 0.5,
        "train.select_mode": "net-only", "train.task_loss_samples": 2,
    }),
    "cnn-sa-sb3-ppo": ("mr", {
        "network.name": "cnn-sa", "data.dataset": "mr", "data.train_fraction": 0.03, "agent.algorithm": "sb3-ppo",
    }),
}

TRANSLATION: dict[str, dict[str, Any]] = {
    "seq2seq-luong": {"network.name": "seq2seq-luong", "train.pretrain_epochs": 2, "run.seed": 7, "run.threads": 1},
}


def comparable(results: dict[str, Any]) -> dict[str, Any]:
    """What must not change: every row's numbers and epochs, and every epoch record bar its wall time."""
    rows = {
        label: {key: value for key, value in row.items() if key != "checkpoint"} for label, row in results["results"].items()
    }
    history = [{key: value for key, value in record.items() if key != "seconds"} for record in results["history"]]
    return json.loads(json.dumps({"rows": rows, "history": history}, allow_nan=True))


def run_classification(name: str, data_root: Path, logdir: Path) -> dict[str, Any]:
    from drga.api import train
    from drga.config import load_config

    folder, overrides = CLASSIFICATION[name]
    settings = {**SMALL, **overrides, "data.data_dir": str(data_root / folder), "run.logdir": str(logdir), "run.run_name": name}
    torch.manual_seed(0)
    config = load_config(None, [f"{key}={value}" for key, value in settings.items()])
    return comparable(train(config))


def run_translation(name: str, logdir: Path) -> dict[str, Any]:
    from drga.nmt.trainer import TranslationTrainer
    from tests.nmt_helpers import tiny_translation_config

    torch.manual_seed(0)
    config = tiny_translation_config(logdir, **TRANSLATION[name], **{"run.run_name": name})
    return comparable(TranslationTrainer(config, log=lambda _: None).run())


def run_all(data_root: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: run_classification(name, data_root, Path(tmp)) for name in CLASSIFICATION}
        results.update({name: run_translation(name, Path(tmp) / "nmt") for name in TRANSLATION})
    return results


def differences(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Every path at which two JSON values differ (NaN equals NaN)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = [f"{where}/{key}: only in {'fixture' if key in expected else 'run'}" for key in expected.keys() ^ actual.keys()]
        return found + [d for key in expected.keys() & actual.keys() for d in differences(expected[key], actual[key], f"{where}/{key}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} entries pinned, {len(actual)} now"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{where}[{i}]")]
    both_nan = isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual)
    return [] if expected == actual or both_nan else [f"{where}: pinned {expected!r}, now {actual!r}"]


def main() -> None:
    from tests.conftest import data_root

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="pin the fixture to this code's numbers")
    args = parser.parse_args()
    root = data_root()
    if root is None:
        raise SystemExit("the benchmark data folder is needed (see tests/conftest.py)")
    results = run_all(root)
    if args.write:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"pinned {len(results)} runs in {FIXTURE}")
    else:  # what a re-pin would change: per run, how many numbers and by how much at most
        pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))
        for name, result in results.items():
            found, largest = differences(pinned.get(name), result), largest_relative_difference(pinned.get(name), result)
            print(f"{name}: {len(found)} numbers differ, largest relative difference {largest:.2g}")


def largest_relative_difference(expected: Any, actual: Any) -> float:
    """max |a − e| / max(|e|, 1e-12) over the numbers two JSON values hold at the same paths
    (inf where their structure or a non-number differs): rounding shows as ~1e-6 or less."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return math.inf
        return max((largest_relative_difference(expected[k], actual[k]) for k in expected), default=0.0)
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return math.inf
        return max((largest_relative_difference(e, a) for e, a in zip(expected, actual)), default=0.0)
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and not isinstance(expected, bool):
        if math.isnan(expected) or math.isnan(actual):
            return 0.0 if math.isnan(expected) and math.isnan(actual) else math.inf
        return abs(actual - expected) / max(abs(expected), 1e-12)
    return 0.0 if expected == actual else math.inf


if __name__ == "__main__":
    main()
