"""One run of a sweep as a `drga train` child process, from its start to its end or to a stop request.

Both executors run a run through :func:`train_to_end`: the local one in a thread per job slot, the
Ray one inside a Ray task on whichever node the task landed. The run's output goes to its
``train.log``; its wall time, summed over its resumed pieces, to ``wall_seconds.txt`` while it goes.
The child runs in a session of its own: Ctrl-C reaches the sweep only, which then stops its runs in
order (SIGINT, so that a run saves, then SIGKILL after :data:`STOP_GRACE_SECONDS`).

``python -m drga.sweep.child PARENT_PID PROGRAM ARGS...`` execs ``PROGRAM ARGS...`` so that it is
killed when the process that started it dies: on a cluster, a node that dies takes its Ray workers
with it, and a training process left behind would hold the run's lock against the retry.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from drga.files import write_text_atomic, writing

#: Seconds a run gets to save and exit after SIGINT before it is killed.
STOP_GRACE_SECONDS = 30.0
#: How often a running run's wall time is written down; a sweep killed outright loses at most this.
WALL_RECORD_SECONDS = 1.0
#: Linux's prctl option that sends the child a signal when its parent dies.
PR_SET_PDEATHSIG = 1


@dataclass
class Piece:
    """What one start of a run did."""

    returncode: int
    seconds: float  #: this piece's wall time
    stopped: bool  #: stopped on request (Ctrl-C, SIGTERM, a cancelled Ray task)


class WallClock:
    """The run's ``wall_seconds.txt``: the seconds of its earlier pieces plus this one's so far.

    Written while the run goes, not only when it ends: a sweep killed outright (a session's end,
    SIGKILL) would otherwise lose the whole piece, and a resumed run would under-report its cost."""

    def __init__(self, folder: Path, fresh: bool = False):
        """``fresh``: the run is trained anew (``--overwrite``): the seconds of the run it replaces do not count."""
        self.path = folder / "wall_seconds.txt"
        self.before = float(self.path.read_text()) if self.path.exists() and not fresh else 0.0
        self.started = time.time()

    def record(self) -> float:
        elapsed = time.time() - self.started
        write_text_atomic(self.path, f"{self.before + elapsed:.0f}\n")
        return elapsed


def train_to_end(folder: Path, command: list[str], threads: int, stop: threading.Event | None = None,
                 announce: Callable[[str], None] = print, where: str = "", die_with_parent: bool = False,
                 cwd: Path | None = None) -> Piece:
    """Run ``command`` (a `drga train` command) for the run in ``folder`` until it ends, or until ``stop``
    is set or a KeyboardInterrupt arrives (then the run is stopped in order and the interrupt re-raised).
    ``threads``: OMP/MKL threads of the child. ``where``: the node, written into train.log. ``cwd``: the
    child's working folder (the sweep's, where its relative paths point), which ``folder`` is relative to."""
    folder = Path(cwd or ".") / folder
    resumed = "--resume" in command
    announce(f"[{'resume' if resumed else 'start'}] {folder.name}  (log: {folder / 'train.log'})")
    folder.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ, PYTHONUNBUFFERED="1")
    # Several runs on few cores: give each its share instead of letting every one take them all.
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        environment[variable] = str(threads)
    started = [command[0], "-m", "drga.sweep.child", str(os.getpid()), *command] if die_with_parent else command
    with writing(folder / "train.log"), open(folder / "train.log", "a", encoding="utf-8") as log:
        log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}{f'  [{where}]' if where else ''}\n")
        log.flush()
        process = subprocess.Popen(started, stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=cwd,
                                   start_new_session=True)
    clock = WallClock(folder, fresh="--overwrite" in command)
    recorded = time.time()
    try:
        while process.poll() is None:
            if stop is not None and stop.is_set():
                return Piece(halt(process), clock.record(), stopped=True)
            time.sleep(0.1)
            if time.time() - recorded >= WALL_RECORD_SECONDS:
                recorded = time.time()
                clock.record()
    except KeyboardInterrupt:
        halt(process)
        clock.record()
        raise
    return Piece(process.returncode, clock.record(), stopped=False)


def halt(process: subprocess.Popen) -> int:
    """SIGINT to the run, then wait; a run loses at most its current epoch (last.pt is per epoch)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        return process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:  # it exited just now
            pass
        return process.wait()


def exec_dying_with_parent(parent: int, command: list[str]) -> None:
    """Become ``command``, to be killed by SIGKILL when ``parent`` dies (Linux; elsewhere just become it)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before the request was in place
            sys.exit(f"the process that started this run ({parent}) has gone")
    os.execv(command[0], command)


if __name__ == "__main__":
    exec_dying_with_parent(int(sys.argv[1]), sys.argv[2:])
