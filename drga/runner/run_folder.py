"""A run's folder: its name, refusing to overwrite a run by accident, and ``config.toml``."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from filelock import FileLock

from drga.checkpoint_format import CheckpointError
from drga.config import ExperimentConfig
from drga.errors import UserError
from drga.run_lock import LOCK_NAME, acquire_run_lock, run_lock_holder

#: The toolkit's logger: ``logging.getLogger("drga")``. The command line sends it to stdout
#: (``--quiet``: warnings only; ``--verbose``: debug too); a library user configures it with the
#: standard logging calls, and without a handler sees warnings only.
LOGGER = logging.getLogger("drga")


def log_info(line: str) -> None:
    """A runner's default ``log``: one INFO record of the ``drga`` logger per line."""
    LOGGER.info(line)


class RunExistsError(UserError, FileExistsError):
    """The run folder already holds a run; resume it or choose another name."""


class RunInUseError(UserError):
    """Another process is training in the run folder."""


def lock_run_dir(run_dir: Path) -> FileLock:
    """Hold ``run_dir`` for this process (``drga/run_lock.py``) until the returned lock is released."""
    handle = acquire_run_lock(run_dir)
    if handle is None:
        pid = run_lock_holder(run_dir)
        holder = f" (pid {pid})" if pid and pid > 0 else ""
        raise RunInUseError(f"{run_dir} is in use by another training process{holder}; wait for it to end, or stop it and resume")
    return handle


def default_run_name(config: ExperimentConfig) -> str:
    """``run.run_name``, or <dataset>-<net>-seed<seed>."""
    return config.run.run_name or f"{config.data.dataset}-{config.network.name}-seed{config.run.seed}"


def prepare_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> Path:
    """Check the run folder for ``resume`` / ``overwrite`` and return its ``last.pt`` path.

    A folder that holds a run (``last.pt``) is refused unless resumed or overwritten; resuming
    needs ``last.pt``; overwriting removes a run folder of ours (one with ``config.toml``) so that
    old curves and checkpoints do not mix with the new ones.
    """
    last = run_dir / "last.pt"
    if last.exists() and not (resume or overwrite):
        raise RunExistsError(f"{run_dir} already holds a run; continue it with --resume or replace it with --overwrite")
    if resume and not last.exists():
        raise CheckpointError(f"nothing to resume: {last} does not exist")
    if overwrite and not resume and (run_dir / "config.toml").exists():
        for entry in run_dir.iterdir():
            if entry.name == LOCK_NAME:  # this process's lock on the folder stays
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    return last


def open_run_folder(run_dir: Path, config_toml: str) -> None:
    """Create the folder and write ``config.toml`` (the loggers add their files: :mod:`drga.runner.loggers`)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.toml").write_text(config_toml, encoding="utf-8")
