"""Keep freed CPU tensor memory mapped (Linux, glibc), so that a training step does not
page-fault its temporaries in again every step.

PyTorch takes every CPU buffer from ``malloc``. By default glibc serves a large request
(above a threshold that adapts up to 32 MiB) with a fresh ``mmap`` and unmaps it when it is
freed, and hands the top of its heap back to the operating system once more than 128 KiB
of it is free. A step that allocates and frees the same large temporaries every time (the
K action samples of a co-training step are K copies of a [B, T, H] tensor) then pays for a
page fault on every page of them on every step. On a virtual machine, where a page fault is
expensive, that can cost more than the arithmetic (``python bench/allocator.py`` measures it side
by side; docs/RESULTS.md has the figures). :func:`keep_freed_memory` raises the mmap threshold to its
maximum and stops trimming, so freed buffers stay in the heap for the next step to reuse;
the process then holds on to its peak heap. ``drga`` commands and the benchmarks call it at
start-up; set ``DRGA_KEEP_FREED_MEMORY=0`` to leave glibc's defaults.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: mallopt parameters (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The largest mmap threshold glibc accepts on a 64-bit system (DEFAULT_MMAP_THRESHOLD_MAX).
LARGEST_MMAP_THRESHOLD = 32 * 1024 * 1024
#: Free heap kept before trimming: the largest value mallopt's int takes (2 GiB).
TRIM_THRESHOLD = 2**31 - 1


def keep_freed_memory() -> bool:
    """Tune glibc's malloc as described in the module docstring; whether it was applied.

    Does nothing (returns False) off Linux, without glibc (``mallopt`` missing, as with musl),
    or when ``DRGA_KEEP_FREED_MEMORY=0``. It changes only how freed memory is kept, never a
    result; it affects the whole process, so applications call it once, at start-up.
    """
    if sys.platform != "linux" or os.environ.get("DRGA_KEEP_FREED_MEMORY", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    trimmed = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    mapped = mallopt(M_MMAP_THRESHOLD, LARGEST_MMAP_THRESHOLD)
    return bool(trimmed and mapped)
