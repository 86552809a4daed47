"""Switching modules to evaluation mode for a block and restoring what they were."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn


@contextmanager
def eval_mode(*modules: nn.Module | None) -> Iterator[None]:
    """The given modules (``None`` skipped) in eval mode inside the block; each one's previous mode after it."""
    present = [module for module in modules if module is not None]
    previous = [module.training for module in present]
    for module in present:
        module.eval()
    try:
        yield
    finally:
        for module, training in zip(present, previous):
            module.train(training)
