"""Where a sweep's runs train: the executors, one interface.

- ``local`` (:class:`LocalExecutor`, the default, no dependency): ``--jobs`` runs at a time on this
  machine, each a child process (:func:`drga.sweep.child.train_to_end`);
- ``ray`` (:class:`drga.sweep.ray_executor.RayExecutor`, ``pip install drga[ray]``): each run a Ray
  task with its CPUs and GPUs, on an embedded Ray or a cluster.

An executor skips a run that another process is training (it holds the folder's lock,
``drga/runtime/run_lock.py``), trains the others, and settles each as it ends with :func:`settle`.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from typing import Protocol

from drga.runtime.run_lock import run_lock_holder
from drga.sweep.child import train_to_end
from drga.sweep.grid import Run, command, source_commit
from drga.sweep.results import export_result


class Executor(Protocol):
    #: Runs at a time (the projected wall time divides by it).
    jobs: int

    def run(self, todo: list[Run]) -> bool:
        """Train ``todo``; False if interrupted (Ctrl-C, SIGTERM), with the runs stopped in order."""


def busy(run: Run) -> bool:
    """Whether another process (another sweep, a terminal's `drga train --resume`) trains the run now: say so."""
    holder = run_lock_holder(run.folder)
    if holder is None:
        return False
    run.status = "busy"
    print(f"[busy] {run.name}: another process{f' (pid {holder})' if holder > 0 else ''} is training it; "
          "skipped (run the sweep again when it has finished)", flush=True)
    return True


class Tally:
    """How many of the runs to do have ended, for each run's closing line (threads share it)."""

    def __init__(self, total: int):
        self.total, self.ended = total, 0
        self.lock = threading.Lock()

    def one_more(self) -> str:
        with self.lock:
            self.ended += 1
            return f"{self.ended} of {self.total} ended"


def settle(run: Run, returncode: int | None, seconds: float, stopped: bool, tally: Tally, where: str = "",
           failure: str = "") -> None:
    """The run's status after a piece of it ended, its result file (``--results``), and one line about it."""
    run.returncode = returncode
    if stopped and not run.finished:
        run.status = "interrupted"
        return
    count = tally.one_more()
    if returncode == 0 and run.redo and (run.folder / "results.json").exists():  # trained again: its new results stand
        run.redo = False
        run.status = "finished"
        export_result(run, run.commit, replace=True)
        print(f"[done] {run.name} in {seconds:.0f}s{f' on {where}' if where else ''}, trained again ({count})", flush=True)
    elif returncode == 0 and run.finished:
        run.status = "finished"
        export_result(run, run.commit)
        print(f"[done] {run.name} in {seconds:.0f}s{f' on {where}' if where else ''} ({count})", flush=True)
    else:
        run.status = "failed"
        why = failure or f"exit {returncode}"
        print(f"[fail] {run.name}: {why}; see {run.folder / 'train.log'} ({count})", flush=True)


class LocalExecutor:
    """``--jobs`` runs at a time on this machine: a thread per job slot, each training the next run
    of the grid as a child process until none is left."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.jobs = args.jobs

    def run(self, todo: list[Run]) -> bool:
        waiting: queue.Queue[Run] = queue.Queue()
        for run in todo:
            waiting.put(run)
        stop = threading.Event()
        running: set[str] = set()
        tally = Tally(len(todo))
        failures: list[Exception] = []  # what stopped a job slot (a result file on a full disk): raised in the main thread

        def work() -> None:
            try:
                take_runs()
            except Exception as error:
                failures.append(error)
                stop.set()  # the other slots' runs stop as on Ctrl-C: the same command resumes them

        def take_runs() -> None:
            while not stop.is_set():
                try:
                    run = waiting.get_nowait()
                except queue.Empty:
                    return
                if busy(run):
                    continue
                running.add(run.name)
                run.status = "running"
                run.commit = source_commit()  # the code this run starts with (a tree edited meanwhile says -dirty)
                piece = train_to_end(run.folder, command(run, self.args), self.args.threads_per_run, stop,
                                     announce=lambda line: print(line, flush=True))
                settle(run, piece.returncode, piece.seconds, piece.stopped, tally)
                running.discard(run.name)

        workers = [threading.Thread(target=work, name=f"sweep-job-{slot}", daemon=True) for slot in range(self.jobs)]
        for worker in workers:
            worker.start()
        try:
            while any(worker.is_alive() for worker in workers):
                time.sleep(0.1)  # the main thread stays free for Ctrl-C and SIGTERM
        except KeyboardInterrupt:
            print(f"\ninterrupted: stopping {len(running)} run(s); the same command resumes them", file=sys.stderr, flush=True)
            stop.set()
            for worker in workers:
                worker.join()
            return False
        if failures:
            raise failures[0]
        return True
