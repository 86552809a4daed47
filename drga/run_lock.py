"""One process at a time in a run folder: an advisory lock on ``<run folder>/.lock``.

Two processes training into one folder (a sweep started twice, a second terminal's ``--resume``)
would overwrite each other's ``last.pt`` and mix their curves. The training process holds an
exclusive ``flock`` on the folder's lock file while it runs; the operating system drops it when the
process ends, also when it is killed, so a lock can never go stale. The lock file says which
process holds it, for the error message. Standard library only: the sweep probes locks without
loading torch. Where ``fcntl`` is missing (Windows) nothing is locked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; folders are not guarded there
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


def acquire_run_lock(run_dir: Path) -> IO[str] | None:
    """Lock ``run_dir`` (created if missing) for this process; keep the returned file open for as long
    as the lock should last and close it to release. None if another process holds the lock, or
    (Windows) the open file without a lock."""
    run_dir.mkdir(parents=True, exist_ok=True)
    handle = open(run_dir / LOCK_NAME, "a+", encoding="utf-8")  # "a+": never truncates another holder's pid
    if fcntl is None:
        return handle
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def run_lock_holder(run_dir: Path) -> int | None:
    """The pid of the process that holds ``run_dir``'s lock now; None if no process does."""
    lock = run_dir / LOCK_NAME
    if fcntl is None or not lock.exists():
        return None
    with open(lock, encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = handle.read().strip()
            return int(text) if text.isdigit() else -1  # held, by a process that has not written its pid yet
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None
