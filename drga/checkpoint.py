"""Checkpoints: written atomically, read with ``weights_only=True``, checked before use."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

#: 2: β's learned factor is exp(log_factor) (was exp(−softplus(rho))); the Transformer's head
#: revision is additive; the networks' classifier dropout masks are drawn in ``encode``.
FORMAT_VERSION = 2


class CheckpointError(ValueError):
    """A checkpoint that cannot be used here (missing, corrupt, or from another network)."""


def save_atomic(payload: dict[str, Any], path: str | Path) -> None:
    """Write to a temporary file in the same folder, then rename: a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        torch.save(payload, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file: say so instead of a pickle traceback
        raise CheckpointError(f"{path} is not a readable DRGA checkpoint ({type(error).__name__}: {error})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
        found = payload.get("format") if isinstance(payload, dict) else None
        hint = "; it was written by an older version of the toolkit: retrain it" if isinstance(found, int) and found < FORMAT_VERSION else ""
        raise CheckpointError(f"{path} is not a DRGA checkpoint of format {FORMAT_VERSION}{hint}")
    return payload


def load_module_state(module: nn.Module, state: dict[str, Any], what: str, source: str | Path) -> None:
    """``load_state_dict`` with an error that says which checkpoint and which keys disagree."""
    own = module.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    wrong = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or wrong:
        details = []
        if missing:
            details.append(f"missing {missing[:4]}")
        if unexpected:
            details.append(f"unexpected {unexpected[:4]}")
        if wrong:
            details.append(f"shape differs for {wrong[:4]}")
        raise CheckpointError(f"{source}: the {what} in this checkpoint does not fit ({'; '.join(details)})")
    module.load_state_dict(state)
