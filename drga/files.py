"""Writing the toolkit's files so that a fault of the machine never leaves half of one.

Every file a command writes whole (a checkpoint, ``results.json``, ``config.toml``, a result file of
a sweep, ``best.toml``, an analysis' tables, a cache) goes through :func:`atomic_path`: it is written
to a temporary file beside its place and renamed onto it (``os.replace``, atomic on one file system)
only once it is complete. A full disk or a folder that vanished mid-write leaves the earlier file, or
none, and never a truncated one; the temporary file is removed. What a fault then says is
:func:`drga.errors.fault_message`'s, printed by the command line (``drga/cli.py`` · ``main``).

Files that grow line by line (``train.log``, ``metrics.csv``, TensorBoard's event files) are appended
and flushed instead: a fault there loses at most the line being written.

Every write, whole or appended, happens inside :func:`writing`: whichever library fails to write
(Python's ``open``, safetensors, torch, TensorBoard's event writer, sqlite under Optuna), the failure
leaves the block as one :class:`OSError` naming the file and its errno, which the command line says
in one line (:func:`drga.errors.io_failure`, :func:`drga.errors.fault_message`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from drga.errors import io_failure

__all__ = ["writing", "writing_stdout", "atomic_path", "open_atomic", "write_text_atomic", "write_bytes_atomic"]


@contextlib.contextmanager
def writing(path: str | os.PathLike) -> Iterator[None]:
    """A block that writes ``path``: a failure to write it, whatever library raised it, leaves the block as an
    :class:`OSError` with its errno and ``path`` (where the library named none); any other exception passes as it is."""
    try:
        yield
    except Exception as error:
        fault = io_failure(error, path)
        if fault is None or fault is error:
            raise
        raise fault from error


@contextlib.contextmanager
def writing_stdout() -> Iterator[None]:
    """A block that prints a command's output: :func:`writing` the file standard output is redirected to (its name read
    from the system where it can be), and flushed before the block ends, so that a full disk is met here and not in
    Python's flush at exit. A reader that went away (``| head``) is the caller's ``BrokenPipeError``, as before."""
    with writing(stdout_name()):
        yield
        sys.stdout.flush()


def stdout_name() -> str:
    """The file standard output goes to (``/proc/self/fd/1``'s target on Linux), else "the standard output"."""
    try:
        target = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
    except (OSError, ValueError, AttributeError):  # no /proc, or a stdout without a descriptor (a test's capture)
        return "the standard output"
    return target if target.startswith("/") else "the standard output"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` (its folder created) to write the whole file to; renamed onto ``path`` when the
    block ends, removed if it raises. The temporary name keeps ``path``'s suffix, for writers that read the format
    from it."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a folder of the path should be: said as such (drga.errors.fault_message)
        blocking = next(folder for folder in (path.parent, *path.parent.parents) if folder.exists() and not folder.is_dir())
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(blocking)) from None
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(handle)
    try:
        with writing(path):
            yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8", newline: str | None = None) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing a file whole (``"w"`` or ``"wb"``), through :func:`atomic_path`."""
    if "b" in mode:
        encoding = None
    with atomic_path(path) as temporary, open(temporary, mode, encoding=encoding, newline=newline) as handle:
        yield handle


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """``Path(path).write_text(text)``, never half written."""
    with open_atomic(path, "w", encoding=encoding) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """``Path(path).write_bytes(data)``, never half written."""
    with open_atomic(path, "wb") as handle:
        handle.write(data)
