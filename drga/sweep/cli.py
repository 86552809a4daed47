"""``drga sweep``: a grid of `drga train` runs (networks × data sets × seeds), resumable, on this
machine or on a Ray cluster.

Each run is a separate `drga train` process in its own folder ``<logdir>/<dataset>-<net>-seed<seed>/``,
its output in ``train.log`` there. A run whose folder has ``results.json`` is finished and skipped;
one with ``last.pt`` but no results was interrupted and continues with ``--resume``. So after a
crash, a reboot or Ctrl-C, the same command picks up where the grid stopped. A run that another
process is training (it holds the folder's lock, ``drga/runtime/run_lock.py``) is skipped, so two sweeps
over one grid never train a run at once. At the end (also after an interruption, with what is
finished) one results table is written: every run, then mean ± std over seeds.

    drga sweep --nets lstm-sa cnn-sa --datasets subj mr --seeds 0 1 2 \\
        [--jobs 2] [--config experiments/configs/lstm_sa_study.toml] [--logdir runs/sweep] \\
        [--set section.key=value ...] [--out FILE.md] [--threads-per-run N] [--cli MODULE|SCRIPT.py] [--dry-run] \\
        [--executor ray [--address HOST:PORT|ray://HOST:PORT|auto] [--cpus-per-run 1] [--gpus-per-run 0]]

``--results DIR`` keeps a small JSON per finished run in DIR (``<run name>.json``: config, seed,
commit, data checksum, fingerprint, every row's dev and test numbers, phase timings, the epoch record),
to commit as runs finish: a run whose file is there counts as finished, so the study resumes on a
fresh machine from the committed files alone, and its tables are rebuilt from them.

A sweep never mixes settings: a finished run is skipped only when it was made with the settings and
data this sweep would give it (the fingerprint its results record, drga/sweep/fingerprints.py);
where they differ the sweep names the runs and the settings and stops (exit 2), unless
``--rerun-changed`` trains them again (each old run is deleted only once its new run has saved its
first epoch). The table says the settings it was made from.

``--cli`` runs another entry point with the same `train` arguments, e.g. a module of yours that
registers your own network before calling ``drga.cli.main`` (docs/custom-network.md).

``--executor ray`` (``pip install drga[ray]``) runs each run as a Ray task: on an embedded Ray
without ``--address``, else on the cluster there; failed tasks are retried and resume from their
``last.pt`` (docs/distributed.md, "A grid on a cluster").
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drga.errors import report_command_failure
from drga.files import write_text_atomic
from drga.sweep.executors import Executor, LocalExecutor
from drga.sweep.fingerprints import SettingsCheck, check_settings, refusal, settings_lines
from drga.sweep.grid import DEFAULT_CLI, Run, command, plan, source_commit
from drga.sweep.results import export_result, projected_compute, table

#: The options only ``--executor ray`` reads.
RAY_ONLY = ("address", "cpus_per_run", "gpus_per_run", "num_cpus", "retries", "no_dashboard")
#: Where each option of ``drga sweep`` is read (see ``drga.cli.OPTION_SCOPES``).
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "sweep": {
        **{name: None for name in ("nets", "datasets", "seeds", "threads_per_run", "config", "set", "logdir", "out", "results", "cli",
                                   "dry_run", "rerun_changed", "executor")},
        "jobs": "the local executor",
        **{name: "--executor ray" for name in RAY_ONLY},
    }
}
#: The Ray options' values when not given (their parser defaults are None, so that a given one is told apart).
RAY_DEFAULTS = {"cpus_per_run": 1.0, "gpus_per_run": 0.0, "retries": 3, "no_dashboard": False}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nets", nargs="+", default=["lstm-sa"], help="attention networks (see `drga networks`)")
    parser.add_argument("--datasets", nargs="+", default=["subj"], help="data sets (see `drga datasets`)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--jobs", type=int, help="local executor: runs at the same time (default 1)")
    parser.add_argument(
        "--threads-per-run", type=int, default=0,
        help="torch threads per run (default: $OMP_NUM_THREADS if set, else cores / jobs; Ray: --cpus-per-run)",
    )
    parser.add_argument("--config", help="TOML file for every run")
    parser.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override for every run (repeatable); {seed}, {dataset} and {net} stand for the run's",
    )
    parser.add_argument("--logdir", default="runs/sweep", help="parent folder of the run folders")
    parser.add_argument("--out", help="results table (markdown; a .csv beside it); default <logdir>/sweep_results.md")
    parser.add_argument("--results", help="folder of the per-run result files to commit (see above)")
    parser.add_argument("--cli", default=DEFAULT_CLI, help="module (run with -m) or script with the `train` command")
    parser.add_argument("--dry-run", action="store_true", help="print the commands of the runs still to do")
    parser.add_argument(
        "--rerun-changed", action="store_true",
        help="train again the finished runs made with other settings or data than this sweep gives them (else the sweep refuses)",
    )
    ray = parser.add_argument_group("Ray executor (pip install drga[ray]; docs/distributed.md)")
    ray.add_argument("--executor", choices=["local", "ray"], default="local", help="where the runs train (default local)")
    ray.add_argument("--address", help="a Ray cluster to join: HOST:PORT, ray://HOST:PORT or auto (default: start an embedded Ray)")
    ray.add_argument("--cpus-per-run", type=float, help="CPUs each run's Ray task needs (default 1)")
    ray.add_argument("--gpus-per-run", type=float, help="GPUs each run's Ray task needs (default 0)")
    ray.add_argument("--num-cpus", type=int, help="embedded Ray: CPUs it may use (default: all cores)")
    ray.add_argument("--retries", type=int, help="times Ray retries a run whose worker or node died (default 3)")
    ray.add_argument("--no-dashboard", action="store_true", default=None, help="embedded Ray: without its dashboard (lighter)")


def finish_arguments(args: argparse.Namespace, error: Callable[[str], Any]) -> argparse.Namespace:
    """Check the arguments, refuse those this sweep would not read, and fill in the defaults that depend on others."""
    if args.executor == "local":
        given = ["--" + name.replace("_", "-") for name in RAY_ONLY if getattr(args, name) is not None]
        if given:
            error(f"{', '.join(given)} applies to --executor ray, and nothing here reads it: add --executor ray, or drop "
                  f"{', '.join(given)}")
    elif args.jobs is not None:
        error("--jobs applies to the local executor (Ray runs as many at a time as the cluster holds), and nothing here reads it: "
              "drop --jobs, or set what each run needs with --cpus-per-run and --gpus-per-run")
    if args.address is not None and (args.num_cpus is not None or args.no_dashboard):
        flag = "--num-cpus" if args.num_cpus is not None else "--no-dashboard"
        error(f"{flag} applies to an embedded Ray (without --address), and nothing here reads it: drop it, or drop --address")
    for name, value in RAY_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.jobs = 1 if args.jobs is None else args.jobs
    if args.jobs < 1:
        error("--jobs must be at least 1")
    if args.cpus_per_run < 0 or args.gpus_per_run < 0 or args.retries < 0:
        error("--cpus-per-run, --gpus-per-run and --retries must be ≥ 0")
    if not args.threads_per_run:
        inherited = os.environ.get("OMP_NUM_THREADS", "")
        if args.executor == "ray":
            args.threads_per_run = max(1, int(args.cpus_per_run))
        elif inherited.isdigit() and int(inherited) > 0:
            args.threads_per_run = int(inherited)
        else:
            args.threads_per_run = max(1, (os.cpu_count() or 1) // args.jobs)
    args.out = args.out or str(Path(args.logdir) / "sweep_results.md")
    return args


def skip_finished(runs: list[Run], check: SettingsCheck, rerun_changed: bool = False) -> list[Run]:
    """The runs still to do; each finished one is said and keeps its result file. A run there that was made with other
    settings or data than this sweep gives it (:mod:`drga.sweep.fingerprints`) is refused, naming them, or with
    ``rerun_changed`` trained again."""
    todo, changed = [], []
    commit = source_commit()
    for run in runs:
        run.commit = commit
        export_result(run, commit)  # a run finished by an earlier invocation that had not kept its file
        if run.finished:
            comparison = check.compare_finished(run)
            if comparison.differs:
                changed.append(comparison)
                todo.append(run)
                continue
            run.status = "finished earlier"
            print(f"[skip] {run.name} is finished" + (f" ({comparison.note})" if comparison.note else ""), flush=True)
        else:
            if run.interrupted and (comparison := check.compare_interrupted(run)).differs:
                changed.append(comparison)
            todo.append(run)
    if changed and not rerun_changed:
        raise refusal(changed)
    for comparison in changed:
        comparison.run.redo = True
        print(f"[rerun] {comparison.run.name}: made with other settings or data ({'; '.join(comparison.differences[:3])}); "
              "trained again (--rerun-changed)", flush=True)
    return todo


def make_executor(args: argparse.Namespace) -> Executor:
    if args.executor == "ray":
        from drga.sweep.ray_executor import RayExecutor  # imports Ray: only when asked for

        return RayExecutor(args)
    return LocalExecutor(args)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def sweep(args: argparse.Namespace) -> int:
    """Run the grid; write the table. 0: every run finished; 1: some failed; 130: interrupted."""
    runs = plan(args.nets, args.datasets, args.seeds, args.logdir, args.results)
    check = SettingsCheck(args)
    check_settings(runs, check)  # every run's settings, before any run starts
    todo = skip_finished(runs, check, args.rerun_changed)
    if args.dry_run:
        print(projected_compute(todo, runs, args, [check.threads(run) for run in todo]), flush=True)
        for run in todo:
            print(" ".join(command(run, args)))
        return 0
    # SIGTERM (a scheduler, `kill`) stops the runs the way Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        completed = True
        if not todo:
            print(projected_compute(todo, runs, args, [check.threads(run) for run in todo]), flush=True)
        else:  # the executor first: Ray's says how many runs fit at a time
            executor = make_executor(args)
            args.jobs = executor.jobs
            print(projected_compute(todo, runs, args, [check.threads(run) for run in todo]), flush=True)
            completed = executor.run(todo)
    except KeyboardInterrupt:  # before any run started (connecting to Ray, say)
        completed = False
    finally:
        signal.signal(signal.SIGTERM, previous)
    text = table(runs, args.out, settings_lines(runs, check))
    write_text_atomic(args.out, text + "\n")
    print("\n" + text + f"\n\nresults table: {args.out} (and {Path(args.out).with_suffix('.csv')})", flush=True)
    if not completed:
        return 130
    return 1 if any(run.status == "failed" for run in runs) else 0


def plain(docstring: str | None) -> str:
    """A module docstring as --help shows it: reStructuredText's double backticks dropped."""
    return (docstring or "").replace("``", "")


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``sweep`` subcommand to ``drga``; return its handler."""
    parser = commands.add_parser(
        "sweep", help="a grid of runs (networks × data sets × seeds), resumable, here or on a Ray cluster",
        description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return {"sweep": lambda args: sweep(finish_arguments(args, parser.error))}


def main(argv: list[str] | None = None) -> int:
    """The sweep as a program of its own (experiments/sweep.py)."""
    parser = argparse.ArgumentParser(description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return sweep(finish_arguments(args, parser.error))
    except Exception as error:  # the command line's one rule (drga/cli.py · main): a mistake or a fault is one message
        return report_command_failure(error, "sweep: error: ")


if __name__ == "__main__":
    sys.exit(main())
