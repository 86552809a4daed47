"""The errors a user meets: their own mistakes, and faults of the machine.

:class:`UserError` is the one base class of the errors a user can cause and fix: bad settings,
data, files, checkpoints. The command line prints such an error as one message and exits with
status 2 (``--debug`` shows the traceback); any other exception is a bug and keeps its traceback.
Library users can catch :class:`UserError` to tell the two apart.

An :class:`OSError` met while a command reads or writes its files (a full disk, a folder that
cannot be written, a path that is a file, a file that vanished) is no bug either: the command line
prints :func:`fault_message` (the path, the cause in words, what was kept) and exits with
:func:`fault_status`. Files are written whole or not at all (``drga/files.py``), so what a fault
leaves is what was finished before it. Libraries that wrap an I/O failure in their own exception type
(safetensors' ``SafetensorError``, torch's ``RuntimeError`` of its zip writer, sqlite's and SQLAlchemy's
``OperationalError`` under Optuna's storage) are recognised by :func:`io_failure` and said the same way.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path

__all__ = ["UserError", "fault_message", "fault_status", "io_failure", "quiet_thread_io_failures", "FAULT_CAUSES", "report_command_failure"]


class UserError(Exception):
    """Something the user can fix: the message says what and how."""


#: An OSError's errno → its cause in words.
FAULT_CAUSES: dict[int, str] = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "no permission",
    errno.EPERM: "no permission",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOENT: "it does not exist (or it vanished while the command ran)",
    errno.EEXIST: "it already exists",
    errno.ENOTEMPTY: "the folder is not empty",
    errno.EIO: "an input/output error of the device",
    errno.EFBIG: "the file is larger than this process may write (the file-size limit, ulimit -f)",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files on the system",
}
#: Faults of the machine, not of what the user gave (exit status 1); every other OSError names a path the user can
#: correct (exit status 2, as a mistake).
MACHINE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EMFILE, errno.ENFILE, errno.ENOMEM})
#: Files a command keeps when a fault stops it: finished checkpoints, results, the resolved configuration.
KEPT_PATTERNS = ("*.pt", "*.json", "config.toml", "*.md", "*.csv")
#: Kept files named in the message (then "and N more").
SHOWN_KEPT = 8


#: How libraries that do not raise OSError word an errno: Rust's io::Error (safetensors), Python's own text inside
#: another exception's message.
ERRNO_IN_MESSAGE = (re.compile(r"\(os error (\d+)\)"), re.compile(r"\[Errno (\d+)\]"))
#: The words of an I/O failure in a library's message that carries no errno → that errno. sqlite says "database or disk
#: is full" and "disk I/O error"; torch's zip writer only "file write failed" (its cause: :func:`cause_of_failed_write`).
WORDS_OF_FAULTS: tuple[tuple[str, int | None], ...] = (
    ("no space left on device", errno.ENOSPC),
    ("database or disk is full", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT),
    ("file too large", errno.EFBIG),
    ("read-only file system", errno.EROFS),
    ("disk i/o error", errno.EIO),
    ("input/output error", errno.EIO),
    ("file write failed", None),
    ("failed writing file", None),
)


def io_failure(error: BaseException, path: str | os.PathLike | None = None) -> OSError | None:
    """The OSError behind ``error``, or None when it is no failure to read or write a file: ``error`` itself, an OSError
    it was raised from, or a library's own exception whose message says an I/O failure (:data:`ERRNO_IN_MESSAGE`,
    :data:`WORDS_OF_FAULTS`). ``path`` is the file being written, named where the OSError names none."""
    chain: list[BaseException] = []
    link: BaseException | None = error
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__  # an explicit `raise ... from`: a bug raised while handling an OSError stays a bug
    for link in chain:
        if isinstance(link, OSError) and link.errno is not None:
            if link.filename is None and path is not None:
                return OSError(link.errno, link.strerror or os.strerror(link.errno), os.fspath(path))
            return link
    for link in chain:
        if isinstance(link, (UserError, OSError)):
            continue
        found = errno_in_message(str(link), path)
        if found is not None:
            filename = os.fspath(path) if path is not None else None
            return OSError(found, os.strerror(found), filename) if filename else OSError(found, os.strerror(found))
    return None


def errno_in_message(message: str, path: str | os.PathLike | None = None) -> int | None:
    """The errno a library's message gives in number or in words; None if it says no I/O failure."""
    for pattern in ERRNO_IN_MESSAGE:
        match = pattern.search(message)
        if match:
            return int(match.group(1))
    lowered = message.lower()
    for words, number in WORDS_OF_FAULTS:
        if words in lowered:
            return number if number is not None else cause_of_failed_write(path)
    return None


#: Free space below which a write that failed without saying why is taken for a full disk.
NEARLY_FULL_BYTES = 1 << 20


def cause_of_failed_write(path: str | os.PathLike | None) -> int:
    """The errno of a write that failed without one (torch's "file write failed"), read from the machine: a full file
    system where ``path`` lies, else a file-size limit of this process, else an input/output error."""
    import resource

    folder = os.path.dirname(os.path.abspath(path)) if path is not None else None
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    if folder:
        try:
            stats = os.statvfs(folder)
            if stats.f_bavail * stats.f_frsize < NEARLY_FULL_BYTES:
                return errno.ENOSPC
        except OSError:
            pass
    if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY:
        return errno.EFBIG
    return errno.EIO


def fault_status(error: OSError) -> int:
    """The exit status of a command stopped by ``error``: 1 for a fault of the machine, 2 for a path to correct."""
    return 1 if error.errno in MACHINE_FAULTS else 2


def fault_message(error: OSError) -> str:
    """One message for an OSError: the path, the cause in words, and what was kept. An OSError that the toolkit raised
    with its own words (no errno) is its message."""
    if error.errno is None:
        return str(error)
    cause = FAULT_CAUSES.get(error.errno) or (error.strerror or str(error)).lower()
    paths = [str(path) for path in (error.filename, error.filename2) if path is not None]
    where = " → ".join(paths) if paths else "a file"
    kept = kept_files(Path(paths[0])) if paths else []
    shown = ", ".join(kept[:SHOWN_KEPT]) + (f" and {len(kept) - SHOWN_KEPT} more" if len(kept) > SHOWN_KEPT else "")
    what = f"kept as they were: {shown}" if kept else "no finished file was there to keep"
    return f"{where}: {cause}. Nothing was left half-written; {what}"


def kept_files(path: Path) -> list[str]:
    """The finished files (:data:`KEPT_PATTERNS`) in the folder that ``path`` is in or names, the nearest one that exists."""
    folder = path if path.is_dir() else path.parent
    while not folder.is_dir():
        if folder == folder.parent:
            return []
        folder = folder.parent
    try:
        found = sorted({entry for pattern in KEPT_PATTERNS for entry in folder.glob(pattern)
                        if entry.is_file() and not entry.name.startswith(".")})
    except OSError:  # the folder cannot be read either
        return []
    return [os.fspath(entry) for entry in found]


#: The packages of this repository: a module of theirs that is missing is a bug, not the environment's.
OWN_PACKAGES = frozenset({"drga", "agents", "baselines", "envs", "experiments", "tests", "bench"})


def missing_module_message(module: str) -> str:
    """A module the environment lacks: which Python ran, and how to run with the project's environment instead."""
    return (f"this Python ({sys.executable}) has no module '{module}', which this command needs: run it with the project's "
            "environment (`make setup`, then `.venv/bin/python` or `source .venv/bin/activate`), or install the package there")


def command_failure(error: BaseException) -> tuple[str, int] | None:
    """What a command stopped by ``error`` says and its exit status, for an error that is no bug: a :class:`UserError`
    (status 2), a third-party module the Python that runs it lacks (status 2: another environment than the project's), or an
    :class:`OSError` (:func:`fault_message`, :func:`fault_status`). None for anything else (a bug: its
    traceback is kept). The one rule every command's way in applies, through :func:`report_command_failure`."""
    if isinstance(error, UserError):
        return str(error), 2
    if isinstance(error, ModuleNotFoundError) and error.name and error.name.partition(".")[0] not in OWN_PACKAGES:
        return missing_module_message(error.name), 2
    fault = io_failure(error)
    if fault is not None:
        return fault_message(fault), fault_status(fault)
    if isinstance(error, OSError):  # one the toolkit raised with its own words (no errno)
        return fault_message(error), fault_status(error)
    return None


def quiet_thread_io_failures(args) -> None:
    """A ``threading.excepthook`` that keeps quiet about a worker thread's failure to write (TensorBoard's event writer
    raises it in its own thread, then again in the thread that writes next, whose command says it in one line); any other
    exception of a thread is printed as Python does."""
    if isinstance(args.exc_value, Exception) and io_failure(args.exc_value) is not None:
        return
    import threading

    threading.__excepthook__(args)


def report_command_failure(error: BaseException, prefix: str, debug: bool = False) -> int:
    """A command stopped by ``error``: its one message (:func:`command_failure`) printed after ``prefix`` on stderr, and
    its exit status returned; a bug (or any error with ``debug``) is raised again with its traceback. Called from the
    ``except`` of every command's way in (``drga/cli.py`` · ``main``, ``drga sweep``'s and the CPU study's)."""
    failure = command_failure(error)
    if failure is None or debug:
        raise error
    print(f"{prefix}{failure[0]}", file=sys.stderr)
    return failure[1]
