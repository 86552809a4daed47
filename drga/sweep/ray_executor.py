"""The Ray executor (``drga sweep --executor ray``, ``pip install drga[ray]``): each run a Ray task.

Each run of the grid is a task that needs ``--cpus-per-run`` CPUs and ``--gpus-per-run`` GPUs; Ray
places it on a node with those free, and runs as many at a time as the cluster holds. Without
``--address`` the sweep starts an embedded Ray on this machine (``--num-cpus`` of its cores);
``--address HOST:PORT``, ``ray://HOST:PORT`` or ``auto`` joins a running cluster.

A task that fails for the system's sake (its worker or its node died) is retried by Ray, up to
``--retries`` times; the retry resumes the run from its ``last.pt`` where the run folders are on a
file system every node sees. The task ships the run's ``results.json`` back to the driver, which
keeps it in its own copy of the run folder, so that the table and ``--results`` also work with
folders local to each node (a retry on another node then starts the run afresh).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from drga.errors import UserError
from drga.files import write_text_atomic
from drga.sweep.child import STOP_GRACE_SECONDS, train_to_end
from drga.sweep.executors import Tally, busy, settle
from drga.sweep.grid import Run, train_arguments

#: An embedded Ray's object store: the sweep moves only each run's results.json (tens of kB) through
#: it, and Ray's default (30 % of the memory, in /dev/shm) would take room from the runs.
OBJECT_STORE_BYTES = 128 * 1024**2
#: Nodes listed one per line when the sweep connects.
SHOWN_NODES = 10


def node_resources(node: dict[str, Any]) -> str:
    """A node's CPUs, GPUs and custom resources, as ``CPU 4, GPU 1, big_memory 1`` (Ray's own bookkeeping left out)."""
    own = {key: value for key, value in node.get("Resources", {}).items()
           if not key.startswith(("node:", "accelerator_type:")) and key not in ("memory", "object_store_memory")}
    return ", ".join(f"{key} {value:g}" for key, value in sorted(own.items())) or "no CPUs"


def train_on_node(folder: str, arguments: list[str], threads: int, cwd: str) -> dict[str, Any]:
    """The Ray task: train the run in ``folder`` (relative to ``cwd``, the sweep's working folder, where
    the node has it) to its end with this node's Python, resuming it if it was interrupted (also by the
    death of the node an earlier try ran on). Returns what the driver needs, results.json included."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    where = Path(cwd) if Path(cwd).is_dir() else Path.cwd()
    run_dir = where / folder
    results, wall = run_dir / "results.json", run_dir / "wall_seconds.txt"
    redo = "--overwrite" in arguments  # a finished run trained again (--rerun-changed): its results.json is the old run's
    if redo or not results.exists():  # else a try that ended after training, before it could answer, left it
        interrupted = (run_dir / "last.pt").exists() and not results.exists()
        start = [a for a in arguments if a != "--overwrite" or not interrupted] + (["--resume"] if interrupted else [])
        piece = train_to_end(Path(folder), [sys.executable, *start], threads, announce=lambda line: print(line, flush=True),
                             where=f"node {node}", die_with_parent=True, cwd=where)
        returncode, seconds = piece.returncode, piece.seconds
    else:
        returncode, seconds = 0, 0.0
    return {
        "returncode": returncode,
        "seconds": seconds,
        "node": node,
        "results": results.read_text(encoding="utf-8") if returncode == 0 and results.exists() else None,
        "wall_seconds": wall.read_text() if wall.exists() else None,
    }


class RayExecutor:
    """Runs the grid as Ray tasks; connects (or starts an embedded Ray) when made."""

    def __init__(self, args: argparse.Namespace):
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")  # every run's start line, not "repeated 3x across cluster"
        try:
            import ray
        except ImportError:
            raise UserError("--executor ray needs Ray: pip install 'drga[ray]' (or --executor local)") from None
        self.ray, self.args = ray, args
        try:
            if args.address:
                context = ray.init(address=args.address, logging_level=logging.WARNING)
            else:
                # "local": a Ray of its own, even where `ray start` ran on this machine (a bare ray.init() would join
                # that cluster, or fail on a stale address it left behind)
                context = ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False if args.no_dashboard else None,
                                   object_store_memory=OBJECT_STORE_BYTES, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as error:  # no cluster there, or not one this Ray can join
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise UserError(f"Ray did not start{f' at {args.address}' if args.address else ''}: {first_line}") from None
        resources = ray.cluster_resources()
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        cpus, gpus = resources.get("CPU", 0.0), resources.get("GPU", 0.0)
        fits = [cpus // args.cpus_per_run if args.cpus_per_run else float("inf"),
                gpus // args.gpus_per_run if args.gpus_per_run else float("inf")]
        self.jobs = max(1, int(min(fits))) if min(fits) != float("inf") else len(nodes)
        where = f"the cluster at {args.address}" if args.address else "an embedded Ray"
        print(f"[ray] {where}: {len(nodes)} node(s), {cpus:g} CPUs, {gpus:g} GPUs; each run takes {args.cpus_per_run:g} CPU(s)"
              f"{f' and {args.gpus_per_run:g} GPU(s)' if args.gpus_per_run else ''}: {self.jobs} at a time", flush=True)
        for node in nodes[:SHOWN_NODES]:
            print(f"[ray] node {node['NodeID'][:8]} at {node.get('NodeManagerAddress', '?')}: {node_resources(node)}", flush=True)
        if len(nodes) > SHOWN_NODES:
            print(f"[ray] and {len(nodes) - SHOWN_NODES} more nodes", flush=True)
        dashboard = getattr(context, "dashboard_url", None)
        if dashboard:
            print(f"[ray] dashboard: http://{dashboard}", flush=True)

    def run(self, todo: list[Run]) -> bool:
        ray, args = self.ray, self.args
        task = ray.remote(train_on_node)
        needs = {"num_cpus": args.cpus_per_run, "num_gpus": args.gpus_per_run, "max_retries": args.retries, "retry_exceptions": False}
        tally = Tally(len(todo))
        pending: dict[Any, Run] = {}
        for run in todo:
            if not busy(run):
                arguments = [*train_arguments(run, args), *(["--overwrite"] if run.redo else [])]
                reference = task.options(name=f"drga train {run.name}", **needs).remote(
                    str(run.folder), arguments, args.threads_per_run, os.getcwd())
                pending[reference] = run
        try:
            while pending:
                ended, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for reference in ended:
                    self.settle(pending.pop(reference), reference, tally)
        except KeyboardInterrupt:
            print(f"\ninterrupted: stopping {len(pending)} run(s); the same command resumes them", file=sys.stderr, flush=True)
            for reference in pending:
                ray.cancel(reference)  # a running task gets a KeyboardInterrupt: it stops its run in order
            ray.wait(list(pending), num_returns=len(pending), timeout=STOP_GRACE_SECONDS + 10)
            for run in pending.values():
                run.status = "finished" if run.finished else "interrupted" if run.interrupted else "pending"
            return False
        finally:
            ray.shutdown()
        return True

    def settle(self, run: Run, reference: Any, tally: Tally) -> None:
        """The ended task's run: its results.json kept in the driver's run folder (node-local folders), then settled."""
        try:
            outcome = self.ray.get(reference)
        except self.ray.exceptions.RayError as error:
            first_line = (str(error).strip().splitlines() or [""])[0]
            failure = f"its Ray task failed ({self.args.retries} retries): {type(error).__name__}: {first_line}"
            settle(run, None, 0.0, False, tally, failure=failure)
            return
        if outcome["results"] is not None and (run.redo or not (run.folder / "results.json").exists()):
            run.folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(run.folder / "results.json", outcome["results"])
            if outcome["wall_seconds"] is not None:
                write_text_atomic(run.folder / "wall_seconds.txt", outcome["wall_seconds"])
        settle(run, outcome["returncode"], outcome["seconds"], False, tally, where=f"node {outcome['node'][:8]}")
