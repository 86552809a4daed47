"""The grid of a sweep: its runs (data set × network × seed), their folders and their `drga train` commands.

A run lives in ``<logdir>/<dataset>-<net>-seed<seed>/``. One whose folder has ``results.json`` (or
whose ``--results`` file exists) is finished; one with ``last.pt`` but no results was interrupted
and continues with ``--resume``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    """One cell of the grid and what happened to it in this invocation."""

    net: str
    dataset: str
    seed: int
    folder: Path
    status: str = "pending"  #: pending, running, finished, finished earlier, failed, interrupted, busy
    returncode: int | None = None
    commit: str = "unknown"
    #: ``--results``: the committed per-run result file.
    result_file: Path | None = None
    #: ``--rerun-changed``: a finished run made with other settings or data, trained again (``--overwrite``).
    redo: bool = False

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def finished(self) -> bool:
        if self.redo:  # its results are another configuration's until its new run ends
            return False
        return (self.folder / "results.json").exists() or (self.result_file is not None and self.result_file.exists())

    @property
    def interrupted(self) -> bool:
        return not self.finished and (self.folder / "last.pt").exists() and not (self.folder / "results.json").exists()


def plan(nets: list[str], datasets: list[str], seeds: list[int], logdir: str | Path, results: str | Path | None = None) -> list[Run]:
    """The grid, in the order runs start: data set, then network, then seed."""
    runs = [Run(net, dataset, seed, Path(logdir) / f"{dataset}-{net}-seed{seed}") for dataset in datasets for net in nets for seed in seeds]
    for run in runs:
        run.result_file = Path(results) / f"{run.name}.json" if results else None
    return runs


def train_arguments(run: Run, args: argparse.Namespace) -> list[str]:
    """What follows the Python interpreter in the run's `drga train` command, without ``--resume``
    (a run is resumed or not where and when it starts: on a cluster, after a retry, it may be)."""
    entry = [args.cli] if args.cli.endswith(".py") else ["-m", args.cli]
    arguments = [
        *entry, "train", "--dataset", run.dataset, "--net", run.net, "--seed", str(run.seed),
        "--logdir", str(run.folder.parent), "--run-name", run.name, "--no-progress",
    ]
    if args.config:
        arguments += ["--config", args.config]
    for item in args.set:  # {seed}, {dataset} and {net} stand for the run's
        arguments += ["--set", item.replace("{seed}", str(run.seed)).replace("{dataset}", run.dataset).replace("{net}", run.net)]
    return arguments


def run_settings(run: Run, args: argparse.Namespace) -> list[str]:
    """The sweep's ``--set`` items as the run's `drga train` gets them: {seed}, {dataset} and {net} replaced by the run's."""
    return [item.replace("{seed}", str(run.seed)).replace("{dataset}", run.dataset).replace("{net}", run.net) for item in args.set]


#: The entry point of a run's `drga train` (``--cli``): the toolkit's own command line.
DEFAULT_CLI = "drga.cli"
#: The settings the sweep's own options give each run (``--datasets``, ``--nets``, ``--seeds``, ``--logdir``): a ``--set``
#: of one of them is refused (`drga train` would refuse its option beside it).
OPTION_SETTINGS = {"data.dataset": "--datasets", "network.name": "--nets", "run.seed": "--seeds", "run.logdir": "--logdir",
                   "run.run_name": "the run's folder name"}


def train_overrides(run: Run, args: argparse.Namespace) -> list[str]:
    """The ``section.key=value`` overrides that the run's `drga train` command (:func:`train_arguments`) makes of its options,
    in the order `drga train` applies them (``drga.config.flag_overrides``): what its configuration is resolved from."""
    return [*run_settings(run, args), f"data.dataset={run.dataset}", f"network.name={run.net}", f"run.seed={run.seed}",
            f"run.logdir={run.folder.parent}", f"run.run_name={run.name}", "run.progress=false"]


def command(run: Run, args: argparse.Namespace, python: str = sys.executable) -> list[str]:
    """The run's whole command as it would start now (``--resume`` if it was interrupted; ``--overwrite`` to train a
    finished run again, :attr:`Run.redo`)."""
    return [python, *train_arguments(run, args), *(["--resume"] if run.interrupted else ["--overwrite"] if run.redo else [])]


#: Outside a git checkout, the commit a copy of the tree was made from, as its maker recorded it (a copy sent to
#: another machine without its .git: experiments/translation_gpu.py sets it from the copy's checked fingerprint).
SOURCE_COMMIT_VARIABLE = "DRGA_SOURCE_COMMIT"


def source_commit() -> str:
    """The commit the runs' code is at; ``-dirty`` when tracked files differ from it; outside a git checkout of
    the toolkit (an installed package, a copy without .git) ``$DRGA_SOURCE_COMMIT`` if set, else ``unknown``."""
    root = Path(__file__).resolve().parents[2]
    recorded = os.environ.get(SOURCE_COMMIT_VARIABLE) or "unknown"
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True, check=True).stdout
        if Path(top.strip()).resolve() != root:  # a package installed inside some other repository's tree
            return recorded
        commit = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "."], cwd=root).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return recorded
    return commit + ("-dirty" if dirty else "")
