"""Short fixed-seed runs whose every number is pinned in ``tests/fixtures/regression.json``.

A refactor of the training machinery must change no number: ``tests/integration/test_regression.py`` reruns
these and compares every ``results.json`` row and every epoch record (wall times aside) with the
fixture. One run per attention family on a small slice of its real data set, the variants beyond
the paper, a stable-baselines3 agent phase, and a translation run.

Float kernels round differently on different CPUs (another vector width, another ATen dispatch),
and the difference grows through training, so the fixture records the machine that pinned it and
the comparison depends on where it runs:

- **exact**, on the machine that pinned it (same torch, ATen CPU capability, CPU model and
  threads): every number bit for bit.
- **portable**, anywhere else: the structure (every key, every epoch of every phase, every count
  and selected epoch) exactly, and every float within ``PORTABLE_RELATIVE_TOLERANCE``, except
  what rounding legitimately moves further (``PORTABLE_EXCLUSIONS``). Measured across kernels
  (AVX2 vs ``ATEN_CPU_CAPABILITY=default`` on one CPU, and AVX2 against another machine's pin),
  the compared numbers drift by at most 5e-5 relative, 20× below the tolerance; a change to an
  equation moves them by far more (``test_a_changed_reward_is_caught``).

To compare two versions of the code exactly on any machine, run both here:
``make regression BASE=<rev>`` (``python -m tests.regression_runs --base REV``).

    python -m tests.regression_runs             # how far this code's numbers are from the fixture, per run
    python -m tests.regression_runs --write     # (re)pin the fixture on this machine: only in a commit that says why
    python -m tests.regression_runs --out F     # write this code's numbers to F
    python -m tests.regression_runs --base REV [--head REV]   # REV's numbers against the working tree's (or --head's), exactly
    ... --runs lstm-sa transformer                            # any of the above for some runs only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

FIXTURE = Path(__file__).parent / "fixtures" / "regression.json"
ROOT = Path(__file__).resolve().parents[1]

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

#: The portable comparison's tolerance on a float: relative, with an absolute floor for numbers near zero.
PORTABLE_RELATIVE_TOLERANCE = 1e-3
PORTABLE_ABSOLUTE_TOLERANCE = 1e-6
#: What the portable comparison leaves out, and why:
PORTABLE_EXCLUSIONS = {
    # REINFORCE's surrogate loss sums advantage × log-probability over samples whose advantages
    # nearly cancel, so its relative rounding error is unbounded (measured up to 5% across kernels).
    "agent_loss": "a sum of nearly cancelling terms",
}
#: Runs whose agent is a stable-baselines3 algorithm: its minibatch updates amplify rounding (measured
#: 0.8% in the first agent epoch's reward, 48% in co-training's agent loss, one dev sentence flipped),
#: so across machines only their network-training phases are compared by value.
NETWORK_PHASES_ONLY = {"cnn-sa-sb3-ppo"}
NETWORK_PHASES = {"pretrain", "baseline"}


def machine() -> dict[str, Any]:
    """What decides the float rounding of the runs: exact comparison holds only where all of it is equal."""
    return {
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_model": _cpu_model(),
        "architecture": platform.machine(),
        "threads": SMALL["run.threads"],
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def comparable(results: Any) -> dict[str, Any]:
    """What must not change: every row's numbers and epochs, and every epoch record bar its wall time.

    ``results``: a run's :class:`~drga.records.RunResults`, read as results.json's content (the rows and records as
    the fixture keeps them); or that content itself, as the code of a revision older than the typed records returns it
    (``numbers_at`` runs this harness on such a revision's code)."""
    content = results if isinstance(results, dict) else results.to_dict()
    rows = {
        label: {key: value for key, value in row.items() if key != "checkpoint"} for label, row in content["results"].items()
    }
    history = [{key: value for key, value in record.items() if key != "seconds"} for record in content["history"]]
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
    from drga.trainer import TranslationTrainer
    from tests.nmt_helpers import tiny_translation_config

    torch.manual_seed(0)
    config = tiny_translation_config(logdir, **TRANSLATION[name], **{"run.run_name": name})
    return comparable(TranslationTrainer(config, log=lambda _: None).run())


def run(name: str, data_root: Path, logdir: Path) -> dict[str, Any]:
    if name in CLASSIFICATION:
        return run_classification(name, data_root, logdir)
    return run_translation(name, logdir / "nmt")


def run_all(data_root: Path, names: list[str] | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: run(name, data_root, Path(tmp)) for name in names or [*CLASSIFICATION, *TRANSLATION]}


def load_fixture() -> tuple[dict[str, Any], dict[str, Any]]:
    """(the machine that pinned the fixture, the pinned runs)."""
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return pinned["machine"], pinned["runs"]


def comparison_kind(pinned_on: dict[str, Any]) -> str:
    return "exact" if pinned_on == machine() else "portable"


def compare(name: str, pinned: dict[str, Any], actual: dict[str, Any], kind: str) -> list[str]:
    """The differences that ``kind`` ("exact" or "portable") counts between a pinned run and this one."""
    if kind == "exact":
        return differences(pinned, actual)
    if kind != "portable":
        raise ValueError(f"unknown comparison {kind!r}")
    by_value = (lambda phase: phase in NETWORK_PHASES) if name in NETWORK_PHASES_ONLY else (lambda phase: True)
    found = differences(sorted(pinned), sorted(actual), "/keys")
    history_pinned, history_actual = pinned.get("history", []), actual.get("history", [])
    epochs = [[(r.get("phase"), r.get("epoch")) for r in history] for history in (history_pinned, history_actual)]
    if epochs[0] != epochs[1]:
        found.append(f"/history: epochs pinned {epochs[0]}, now {epochs[1]}")
    rows_pinned, rows_actual = pinned.get("rows", {}), actual.get("rows", {})
    found += differences(sorted(rows_pinned), sorted(rows_actual), "/rows")
    pairs = [(f"/history[{i}]", e, a) for i, (e, a) in enumerate(zip(history_pinned, history_actual))]
    pairs += [(f"/rows/{label}", rows_pinned[label], rows_actual[label]) for label in rows_pinned if label in rows_actual]
    for where, expected, got in pairs:
        if by_value(expected.get("phase")):
            found += differences(expected, got, where, compare="non-floats") + close_differences(expected, got, where)
        else:
            found += differences(expected, got, where, compare="keys")
    return found


def differences(expected: Any, actual: Any, where: str = "", compare: str = "all") -> list[str]:
    """Every path at which two JSON values differ (NaN equals NaN).

    ``compare``: "all" values, "non-floats" (floats left to another comparison), or "keys" only.
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        # sorted: the same paths in the same order in every process (a set's order follows the hash seed)
        found = [f"{where}/{key}: only in {'fixture' if key in expected else 'run'}" for key in sorted(expected.keys() ^ actual.keys())]
        return found + [
            d for key in sorted(expected.keys() & actual.keys()) for d in differences(expected[key], actual[key], f"{where}/{key}", compare)
        ]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} entries pinned, {len(actual)} now"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{where}[{i}]", compare)]
    if compare == "keys" or (compare == "non-floats" and isinstance(expected, float) and isinstance(actual, float)):
        return []
    both_nan = isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual)
    return [] if expected == actual or both_nan else [f"{where}: pinned {expected!r}, now {actual!r}"]


def close_differences(expected: Any, actual: Any, where: str) -> list[str]:
    """The floats of two records (nested dicts) that differ by more than the portable tolerance.

    An accuracy may also differ by one example of its set (a prediction on the decision boundary
    that rounding flips): its ``examples`` count sits beside it.
    """
    found = []
    for key, value in expected.items():
        if key in PORTABLE_EXCLUSIONS or key not in actual:
            continue
        if isinstance(value, dict):
            found += close_differences(value, actual[key], f"{where}/{key}")
            continue
        if not isinstance(value, float) or not isinstance(actual[key], (int, float)):
            continue
        got = float(actual[key])
        if math.isnan(value) or math.isnan(got):
            if not (math.isnan(value) and math.isnan(got)):
                found.append(f"{where}/{key}: pinned {value!r}, now {got!r}")
            continue
        slack = 0.0
        if key.endswith("accuracy"):
            examples = expected.get(key[: -len("accuracy")] + "examples")
            slack = 1.0 / examples + 1e-12 if examples else 0.0
        allowed = max(PORTABLE_RELATIVE_TOLERANCE * abs(value), PORTABLE_ABSOLUTE_TOLERANCE, slack)
        if abs(got - value) > allowed:
            found.append(f"{where}/{key}: pinned {value!r}, now {got!r} (more than {allowed:.2g} apart)")
    return found


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


def numbers_at(revision: str | None, data_root: Path, out: Path, runs: list[str] | None = None) -> None:
    """Run the fixture's runs with the code of ``revision`` (None: the working tree) in a fresh process."""
    env = {**os.environ, "DRGA_DATA": str(data_root), "OMP_NUM_THREADS": "1"}
    if revision is None:
        tree = ROOT
    else:
        tree = Path(tempfile.mkdtemp(prefix=f"drga-regression-{revision.replace('/', '_')[:20]}-"))
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=False)
        if archive.returncode != 0:
            raise SystemExit(f"git archive {revision} failed: {archive.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        own = tree / "tests" / "regression_runs.py"
        if not own.exists() or "--out" not in own.read_text(encoding="utf-8"):
            shutil.copy(Path(__file__), own)  # a revision older than --out: the runs as this harness defines them
    env["PYTHONPATH"] = str(tree)  # ahead of the editable install of the checkout
    print(f"[regression] running the fixture's runs with the code of {revision or 'the working tree'} ({tree})", flush=True)
    try:
        only = ["--runs", *runs] if runs else []
        subprocess.run([sys.executable, "-m", "tests.regression_runs", "--out", str(out), *only], cwd=tree, env=env, check=True)
    finally:
        if revision is not None:
            shutil.rmtree(tree, ignore_errors=True)


def main() -> None:
    from tests.scripts import data_root

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="pin the fixture to this code's numbers on this machine")
    parser.add_argument("--out", type=Path, help="write this code's numbers (and this machine) to a JSON file")
    parser.add_argument("--base", help="a git revision: its numbers against the working tree's (or --head's), exactly")
    parser.add_argument("--head", help="with --base: the other revision (default: the working tree)")
    parser.add_argument("--runs", nargs="+", choices=[*CLASSIFICATION, *TRANSLATION], help="only these runs (not with --write)")
    args = parser.parse_args()
    if args.write and args.runs:
        parser.error("--write pins every run: leave out --runs")
    root = data_root()
    if root is None:
        raise SystemExit("the benchmark data folder is needed (see tests/conftest.py)")
    if args.base:
        with tempfile.TemporaryDirectory() as tmp:
            base_file, head_file = Path(tmp) / "base.json", Path(tmp) / "head.json"
            numbers_at(args.base, root, base_file, args.runs)
            numbers_at(args.head, root, head_file, args.runs)
            base, head = (json.loads(f.read_text(encoding="utf-8"))["runs"] for f in (base_file, head_file))
        changed = 0
        for name in sorted(base.keys() | head.keys()):
            found = differences(base.get(name), head.get(name))
            changed += bool(found)
            largest = largest_relative_difference(base.get(name), head.get(name))
            print(f"{name}: {len(found)} numbers differ, largest relative difference {largest:.2g}")
            for line in found[:10]:
                print(f"    {line}")
        print(f"[regression] {args.base} vs {args.head or 'the working tree'} on this machine, exactly: "
              + ("every number equal" if not changed else f"{changed} run(s) changed"))
        raise SystemExit(1 if changed else 0)
    results = run_all(root, args.runs)
    if args.out:
        args.out.write_text(json.dumps({"machine": machine(), "runs": results}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.write:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps({"machine": machine(), "runs": results}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"pinned {len(results)} runs in {FIXTURE} on {machine()}")
    elif not args.out:  # what a re-pin would change: per run, how many numbers and by how much at most
        pinned_on, pinned = load_fixture()
        kind = comparison_kind(pinned_on)
        print(f"comparison: {kind} (pinned on {pinned_on}; this machine {machine()})")
        for name, result in results.items():
            found, largest = compare(name, pinned.get(name), result, kind), largest_relative_difference(pinned.get(name), result)
            print(f"{name}: {len(found)} numbers differ ({kind}), largest relative difference {largest:.2g}")


if __name__ == "__main__":
    main()
