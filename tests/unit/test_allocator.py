"""drga/runtime/allocator.py: glibc's malloc told to keep freed memory, or left alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from drga.runtime.allocator import keep_freed_memory

CHECK = (
    "from drga.runtime.allocator import keep_freed_memory; import torch; "
    "print(keep_freed_memory()); print(float(torch.ones(4_000_000).sum()))"
)


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's mallopt exists on Linux only")
@pytest.mark.parametrize("setting, applied", [("1", "True"), ("0", "False")])
def test_keep_freed_memory_applies_unless_switched_off(setting, applied):
    # in a fresh process: the setting is process-wide; a large tensor is allocated and used after it.
    # The rest of the environment is kept: an interpreter may need it to import torch or drga
    # (PYTHONPATH, LD_LIBRARY_PATH on a CUDA image).
    env = {**os.environ, "DRGA_KEEP_FREED_MEMORY": setting}
    lines = subprocess.run([sys.executable, "-c", CHECK], env=env, check=True, capture_output=True, text=True).stdout.split()
    assert lines == [applied, "4000000.0"]


def test_keep_freed_memory_is_a_no_op_off_linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert keep_freed_memory() is False
    assert torch.ones(3).sum().item() == 3.0
