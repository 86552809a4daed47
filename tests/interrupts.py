"""Ctrl-C in the middle of a run, for the tests of resuming one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def ctrl_c_at_call(owner: type, name: str, n: int) -> Iterator[None]:
    """``owner.name`` raises KeyboardInterrupt, as Ctrl-C would, at its ``n``-th call inside the block, which must end
    with it (else the test fails); the method is ``owner``'s own again after the block."""
    original, calls = getattr(owner, name), [0]

    def interrupting(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == n:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:  # undone as monkeypatch undoes it: an inherited method is inherited again
        patch.setattr(owner, name, interrupting)
        with pytest.raises(KeyboardInterrupt):
            yield
