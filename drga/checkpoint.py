"""Checkpoints: written atomically with a checksum of their tensors, read with ``weights_only=True``,
checked before use (checksum, finite weights, format)."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import warnings
import zipfile
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
    payload = _read_torch_file(path)
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


#: Where a DRGA checkpoint comes from, said when a file is not one.
WHAT_A_CHECKPOINT_IS = "DRGA checkpoints are the .pt files of a run folder, such as runs/<run>/cotrain_best.pt"
NOT_READABLE = "PyTorch cannot read it (a truncated copy, or a file of another kind)"


def _read_torch_file(path: Path) -> Any:
    """``torch.load`` with ``weights_only=True``; a file it cannot read is a :class:`CheckpointError` that says
    what the file is, without PyTorch's own text (its advice to load untrusted files unsafely or to report an issue)."""
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path} is empty, not a checkpoint (an interrupted copy?); {WHAT_A_CHECKPOINT_IS}")
    with warnings.catch_warnings(record=True) as caught:  # the unpickler's warnings about foreign pickles, shown only on success
        warnings.simplefilter("always")
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            if not zipfile.is_zipfile(path):  # torch.save writes a zip archive: this is a file of another kind
                raise CheckpointError(f"{path} is not a DRGA checkpoint: {NOT_READABLE}; {WHAT_A_CHECKPOINT_IS}") from None
            raise CheckpointError(
                f"{path} is not a DRGA checkpoint: it holds Python objects (a whole pickled model, say), where a checkpoint holds "
                f"tensors and plain values only; {WHAT_A_CHECKPOINT_IS}"
            ) from None
        except Exception:  # a truncated file, or a file of another kind
            raise CheckpointError(f"{path} is not a DRGA checkpoint: {NOT_READABLE}; {WHAT_A_CHECKPOINT_IS}") from None
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
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
