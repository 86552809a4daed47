"""``drga sweep``: a grid of `drga train` runs (networks × data sets × seeds), resumable, on this
machine or on a Ray cluster.

Each run is a separate `drga train` process in its own folder ``<logdir>/<dataset>-<net>-seed<seed>/``,
its output in ``train.log`` there. A run whose folder has ``results.json`` is finished and skipped;
one with ``last.pt`` but no results was interrupted and continues with ``--resume``. So after a
crash, a reboot or Ctrl-C, the same command picks up where the grid stopped. A run that another
process is training (it holds the folder's lock, ``drga/run_lock.py``) is skipped, so two sweeps
over one grid never train a run at once. At the end (also after an interruption, with what is
finished) one results table is written: every run, then mean ± std over seeds.

    drga sweep --nets lstm-sa cnn-sa --datasets subj mr --seeds 0 1 2 \\
        [--jobs 2] [--config experiments/configs/lstm_sa_study.toml] [--logdir runs/sweep] \\
        [--set section.key=value ...] [--out FILE.md] [--threads-per-run N] [--cli MODULE|SCRIPT.py] [--dry-run] \\
        [--executor ray [--address HOST:PORT|ray://HOST:PORT|auto] [--cpus-per-run 1] [--gpus-per-run 0]]

``--results DIR`` keeps a small JSON per finished run in DIR (``<run name>.json``: config, seed,
commit, data checksum, every row's dev and test numbers, phase timings, the epoch record), to
commit as runs finish: a run whose file is there counts as finished, so the study resumes on a
fresh machine from the committed files alone, and its tables are rebuilt from them.

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

from drga.errors import UserError
from drga.sweep.executors import Executor, LocalExecutor
from drga.sweep.grid import Run, command, plan, source_commit
from drga.sweep.results import export_result, projected_compute, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nets", nargs="+", default=["lstm-sa"], help="attention networks (see `drga networks`)")
    parser.add_argument("--datasets", nargs="+", default=["subj"], help="data sets (see `drga datasets`)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--jobs", type=int, default=1, help="local executor: runs at the same time")
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
    parser.add_argument("--cli", default="drga.cli", help="module (run with -m) or script with the `train` command")
    parser.add_argument("--dry-run", action="store_true", help="print the commands of the runs still to do")
    ray = parser.add_argument_group("Ray executor (pip install drga[ray]; docs/distributed.md)")
    ray.add_argument("--executor", choices=["local", "ray"], default="local", help="where the runs train (default local)")
    ray.add_argument("--address", help="a Ray cluster to join: HOST:PORT, ray://HOST:PORT or auto (default: start an embedded Ray)")
    ray.add_argument("--cpus-per-run", type=float, default=1.0, help="CPUs each run's Ray task needs (default 1)")
    ray.add_argument("--gpus-per-run", type=float, default=0.0, help="GPUs each run's Ray task needs (default 0)")
    ray.add_argument("--num-cpus", type=int, help="embedded Ray: CPUs it may use (default: all cores)")
    ray.add_argument("--retries", type=int, default=3, help="times Ray retries a run whose worker or node died (default 3)")
    ray.add_argument("--no-dashboard", action="store_true", help="embedded Ray: without its dashboard (lighter)")


def finish_arguments(args: argparse.Namespace, error: Callable[[str], Any]) -> argparse.Namespace:
    """Check the arguments and fill in the defaults that depend on others."""
    if args.jobs < 1:
        error("--jobs must be at least 1")
    if args.executor == "local" and (args.address or args.num_cpus):
        error("--address and --num-cpus are for --executor ray")
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


def skip_finished(runs: list[Run]) -> list[Run]:
    """The runs still to do; each finished one is said and keeps its result file."""
    todo = []
    commit = source_commit()
    for run in runs:
        run.commit = commit
        export_result(run, commit)  # a run finished by an earlier invocation that had not kept its file
        if run.finished:
            run.status = "finished earlier"
            print(f"[skip] {run.name} is finished", flush=True)
        else:
            todo.append(run)
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
    todo = skip_finished(runs)
    if args.dry_run:
        print(projected_compute(todo, runs, args), flush=True)
        for run in todo:
            print(" ".join(command(run, args)))
        return 0
    # SIGTERM (a scheduler, `kill`) stops the runs the way Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        completed = True
        if not todo:
            print(projected_compute(todo, runs, args), flush=True)
        else:  # the executor first: Ray's says how many runs fit at a time
            executor = make_executor(args)
            args.jobs = executor.jobs
            print(projected_compute(todo, runs, args), flush=True)
            completed = executor.run(todo)
    except KeyboardInterrupt:  # before any run started (connecting to Ray, say)
        completed = False
    finally:
        signal.signal(signal.SIGTERM, previous)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    text = table(runs, args.out)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print("\n" + text + f"\n\nresults table: {args.out} (and {Path(args.out).with_suffix('.csv')})", flush=True)
    if not completed:
        return 130
    return 1 if any(run.status == "failed" for run in runs) else 0


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``sweep`` subcommand to ``drga``; return its handler."""
    parser = commands.add_parser(
        "sweep", help="a grid of runs (networks × data sets × seeds), resumable, here or on a Ray cluster",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return {"sweep": lambda args: sweep(finish_arguments(args, parser.error))}


def main(argv: list[str] | None = None) -> int:
    """The sweep as a program of its own (experiments/sweep.py)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return sweep(finish_arguments(args, parser.error))
    except UserError as error:
        print(f"sweep: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
