"""Another process holding a run folder's lock (drga/runtime/run_lock.py), for tests of what meets it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOLD = ("import sys, time; from pathlib import Path; from drga.runtime.run_lock import acquire_run_lock; "
        "handle = acquire_run_lock(Path(sys.argv[1])); print('locked' if handle else 'busy', flush=True); time.sleep(120)")


@contextlib.contextmanager
def lock_held_elsewhere(run_dir: Path) -> Iterator[int]:
    """A process that holds ``run_dir``'s lock while the block runs, then is killed outright
    (SIGKILL: the operating system drops its lock); yields its pid."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder.pid
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
