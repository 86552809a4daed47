"""One process at a time in a run folder: a ``filelock`` lock on ``<run folder>/.lock``.

Two processes training into one folder (a sweep started twice, a second terminal's ``--resume``)
would overwrite each other's ``last.pt`` and mix their curves. The training process holds the
folder's lock while it runs; on Unix it is an ``flock``, which the operating system drops when the
process ends, also when it is killed, so a lock never goes stale. The lock file says which process
holds it, for the error message. No torch here: the sweep probes locks without loading it.
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_NAME = ".lock"


def _write_pid(descriptor: int) -> None:
    # filelock leaves an existing file's contents alone, so a process refused the lock never erases the holder's pid
    os.ftruncate(descriptor, 0)
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.write(descriptor, f"{os.getpid()}\n".encode())


def acquire_run_lock(run_dir: Path) -> FileLock | None:
    """Lock ``run_dir`` (created if missing) for this process and return the held lock; ``release()``
    it when the run ends. None if another process, or another lock in this one, holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    # thread_local=False: the lock is the process's, released by whichever thread ends the run
    lock = FileLock(run_dir / LOCK_NAME, timeout=0, thread_local=False, on_acquired=_write_pid)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock


def run_lock_holder(run_dir: Path) -> int | None:
    """The pid of the process that holds ``run_dir``'s lock now (-1: held, pid not written yet); None if none does."""
    path = run_dir / LOCK_NAME
    if not path.exists():
        return None
    probe = FileLock(path, timeout=0)
    try:
        probe.acquire()
    except Timeout:
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError:  # Windows: a locked file cannot be read by another process
            text = ""
        return int(text) if text.isdigit() else -1
    probe.release()
    return None
