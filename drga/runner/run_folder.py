"""A run's folder: its name, refusing to overwrite a run by accident, and ``config.toml``."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from drga.checkpoint_format import CheckpointError
from drga.config import ExperimentConfig
from drga.errors import UserError
from drga.files import write_text_atomic
from drga.runtime.run_lock import LOCK_NAME, acquire_run_lock, run_lock_holder

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
    """Hold ``run_dir`` for this process (``drga/runtime/run_lock.py``) until the returned lock is released."""
    refuse_file_in_the_way(run_dir)
    handle = acquire_run_lock(run_dir)
    if handle is None:
        pid = run_lock_holder(run_dir)
        holder = f" (pid {pid})" if pid and pid > 0 else ""
        raise RunInUseError(f"{run_dir} is in use by another training process{holder}; wait for it to end, or stop it and resume")
    return handle


def refuse_file_in_the_way(run_dir: Path) -> None:
    """Refuse a run folder that is a file, or lies under one: ``--logdir`` naming a file, or ``--run-name c1/last.pt``
    (a run's checkpoint). Named as the options that chose it, before anything is created."""
    for folder in (run_dir, *run_dir.parents):
        if folder.exists() and not folder.is_dir():
            if folder == run_dir:
                raise UserError(f"the run folder {run_dir} is a file, not a folder: --run-name (run.run_name) names a folder "
                                f"inside --logdir ({run_dir.parent}); choose another name")
            raise UserError(f"{folder} is a file, not a folder, and the run folder {run_dir} would lie inside it: --logdir "
                            "(run.logdir) and --run-name (run.run_name) name folders; choose others")
        if folder.is_dir():
            return


def default_run_name(config: ExperimentConfig) -> str:
    """``run.run_name``, or <dataset>-<net>-seed<seed>."""
    return config.run.run_name or f"{config.data.dataset}-{config.network.name}-seed{config.run.seed}"


#: Inside a run folder: the run that a new one replaces (``--overwrite``), kept there until the new run has saved its first
#: epoch, and put back if it fails before.
REPLACED = ".replaced"
#: Files of the process that started the run, which it may hold open (``drga sweep``'s train.log and wall_seconds.txt,
#: ``drga tune``'s train.log): they stay where they are when a run is replaced.
STARTER_FILES = frozenset({"train.log", "wall_seconds.txt"})
#: What marks a folder as a run's (ours to move aside): a run writes config.toml first.
RUN_MARKERS = ("config.toml", "last.pt", "results.json")


def prepare_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> Path:
    """Check the run folder for ``resume`` / ``overwrite`` and return its ``last.pt`` path; nothing is removed.

    A folder that holds a run (``last.pt``) is refused unless resumed or overwritten, and resuming
    needs ``last.pt``. What a new run replaces is moved aside when it starts writing and deleted only
    once it has saved its first epoch (:class:`RunFolder`).
    """
    last = run_dir / "last.pt"
    if resume and overwrite:
        raise UserError("--resume continues the run in the folder and --overwrite replaces it: give one of them")
    if last.exists() and not (resume or overwrite):
        raise RunExistsError(f"{run_dir} already holds a run; continue it with --resume or replace it with --overwrite")
    if resume and not last.exists():
        raise CheckpointError(f"nothing to resume: {last} does not exist")
    return last


class RunFolder:
    """A run's folder from the check before the run to its first saved epoch: nothing that was there is lost first.

    Made before the folder is locked (which creates it). :meth:`check` refuses what cannot be done (a
    run there, and neither resume nor overwrite); :meth:`open`, once the data and the network are
    ready, moves what a fresh run replaces into ``.replaced/`` and writes ``config.toml``;
    :meth:`keep`, after the first saved epoch, deletes ``.replaced/``. A run that fails before that
    calls :meth:`abandon`: what it wrote is removed, what it moved aside is put back, and a folder
    that did not exist before it is removed with its lock file. A ``.replaced/`` left by a process
    killed outright is put back by the next run's :meth:`check`.
    """

    def __init__(self, run_dir: Path):
        self.path = run_dir
        #: whether the folder held anything but a lock file before this run
        self.existed = run_dir.is_dir() and any(entry.name != LOCK_NAME for entry in run_dir.iterdir())
        self.before: set[str] = set()
        self.checked = self.kept = False

    def check(self, resume: bool, overwrite: bool, log: Callable[[str], None] = log_info) -> Path:
        """Put back a run an earlier, killed, process had moved aside; then :func:`prepare_run_dir`. Call it holding the lock."""
        self.recover(log)
        last = prepare_run_dir(self.path, resume, overwrite)
        self.before = {entry.name for entry in self.path.iterdir()} if self.path.is_dir() else set()
        self.checked = True
        return last

    def recover(self, log: Callable[[str], None]) -> None:
        replaced = self.path / REPLACED
        if not replaced.is_dir():
            return
        if (self.path / "last.pt").exists():  # the replacing run had saved an epoch: what it replaced was to go
            shutil.rmtree(replaced)
            return
        self._clear(keep=STARTER_FILES)
        self._put_back(replaced)
        log(f"{self.path}: put back the run that an interrupted --overwrite had moved aside (its replacement saved no epoch)")

    def open(self, config_toml: str, replace: bool) -> None:
        """Create the folder and write ``config.toml`` (the loggers add their files: :mod:`drga.runner.loggers`); ``replace``
        (a fresh run): first move a run that is there into ``.replaced/``."""
        self.path.mkdir(parents=True, exist_ok=True)
        if replace and any((self.path / name).exists() for name in RUN_MARKERS):
            replaced = self.path / REPLACED
            replaced.mkdir()
            for entry in list(self.path.iterdir()):
                if entry.name not in (LOCK_NAME, REPLACED, *STARTER_FILES):
                    entry.rename(replaced / entry.name)
        write_text_atomic(self.path / "config.toml", config_toml)

    def keep(self) -> None:
        """The new run has something to keep (an epoch saved, or its results): what it replaced goes."""
        if self.kept:
            return
        self.kept = True
        if (self.path / REPLACED).is_dir():
            shutil.rmtree(self.path / REPLACED)

    def abandon(self) -> None:
        """The run failed before :meth:`keep`: the folder as it was before it (none, if there was none). Call it holding the lock."""
        if self.kept or not self.path.is_dir():
            return
        if not self.existed:  # also when the check refused the run (a --resume of a run that never was): no lone .lock
            shutil.rmtree(self.path)  # with the lock file: on Unix the held lock goes with the descriptor
            return
        if not self.checked:  # refused before the check ended: the folder is as it was
            return
        replaced = self.path / REPLACED
        untouched = {name for name in self.before if not (replaced / name).exists()}
        self._clear(keep=untouched | STARTER_FILES)
        if replaced.is_dir():
            self._put_back(replaced)
        if LOCK_NAME not in self.before:
            (self.path / LOCK_NAME).unlink(missing_ok=True)

    def _clear(self, keep: set[str] | frozenset[str]) -> None:
        """Remove what is in the folder but ``keep``, the lock file and ``.replaced/``."""
        for entry in list(self.path.iterdir()):
            if entry.name in keep or entry.name in (LOCK_NAME, REPLACED):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    def _put_back(self, replaced: Path) -> None:
        for entry in list(replaced.iterdir()):
            target = self.path / entry.name
            if target.exists():  # a starter's file written meanwhile (train.log): the one that was there wins
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            entry.rename(target)
        replaced.rmdir()

