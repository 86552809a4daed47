"""Checkpoints: written atomically with a checksum of their tensors, read with ``weights_only=True``,
checked before use (checksum, finite weights, format)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from drga.errors import UserError

#: 2: β's learned factor is exp(log_factor) (was exp(−softplus(rho))); the Transformer's head
#: revision is additive; the networks' classifier dropout masks are drawn in ``encode``.
FORMAT_VERSION = 2


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be used here (missing, corrupt, or from another network)."""


#: The entries of a model checkpoint that hold module weights (checked to be finite at load).
WEIGHT_ENTRIES = ("network", "policy", "strength")


def tensor_checksum(payload: Any) -> str:
    """SHA-256 of every tensor in a (nested) payload, in key order: their dtypes, shapes and bytes."""
    digest = hashlib.sha256()

    def visit(value: Any, where: str) -> None:
        if isinstance(value, torch.Tensor):
            flat = value.detach().cpu().contiguous().reshape(-1)
            digest.update(f"{where}:{flat.dtype}:{tuple(value.shape)}\0".encode())
            digest.update(flat.view(torch.uint8).numpy().tobytes())
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                if key != "tensor_checksum":
                    visit(value[key], f"{where}/{key}")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                visit(item, f"{where}[{index}]")

    visit(payload, "")
    return digest.hexdigest()


def save_atomic(payload: dict[str, Any], path: str | Path) -> None:
    """Write to a temporary file in the same folder, then rename: a crash never leaves half a file.

    A dict payload gets ``tensor_checksum`` (:func:`tensor_checksum`), which :func:`load_checkpoint`
    verifies."""
    if isinstance(payload, dict):
        payload = {**payload, "tensor_checksum": tensor_checksum(payload)}
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
        hint = (
            "; it was written by an older version of the toolkit: retrain it" if isinstance(found, int) and found < FORMAT_VERSION else ""
        )
        raise CheckpointError(f"{path} is not a DRGA checkpoint of format {FORMAT_VERSION}{hint}")
    expected = payload.get("tensor_checksum")
    if expected is not None and tensor_checksum(payload) != expected:
        raise CheckpointError(f"{path} is corrupted: its tensors do not match the checksum written with them")
    for entry in WEIGHT_ENTRIES:
        for name, tensor in (payload.get(entry) or {}).items():
            if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise CheckpointError(f"{path}: the {entry}'s {name} holds NaN or infinite values; it cannot be used")
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
