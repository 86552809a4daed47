"""Checkpoints: safetensors files written atomically with checksums of their tensors and of their other
entries, checked before use (checksums, finite weights, format).

A checkpoint is a dict of tensors and plain values (the modules' state dicts, the configuration,
the optimisers' states, the random state, the history). It is written without pickle: its tensors
as a safetensors file's tensors, named by where they sit (``network/embedding.weight``), and the
rest as JSON in the file's metadata, where each tensor is ``{"$tensor": name}`` and the values JSON
has no type for are tagged too (tuples, bytes, dicts with other than string keys). Files keep the
``.pt`` name runs always gave them. Only the current :data:`FORMAT_VERSION` is read; a ``torch.save`` file is named as
such, never unpickled.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from drga.errors import UserError
from drga.files import atomic_path
from drga.records import EpochRecord

#: 2: β's learned factor is exp(log_factor) (was exp(−softplus(rho))); the Transformer's head
#: revision is additive; the networks' classifier dropout masks are drawn in ``encode``. The version of
#: what a checkpoint holds, not of its container (safetensors, or torch.save's before it).
FORMAT_VERSION = 2

#: The safetensors metadata keys of a checkpoint's JSON entries and of their SHA-256.
ENTRIES_KEY = "drga"
ENTRIES_CHECKSUM_KEY = "drga_sha256"


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be used here (missing, corrupt, or from another network)."""


#: The entries of a model checkpoint that hold module weights (checked to be finite at load).
WEIGHT_ENTRIES = ("network", "policy", "strength")

#: The one entry under which a checkpoint keeps its task's own entries (``Task.checkpoint_content``: classification's
#: vocabulary, label names and tokenizer; translation's subword models; the data's fingerprints), beside ``task``, the
#: task's name.
TASK_ENTRIES = "task_entries"


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


def _encode(value: Any, where: str, tensors: dict[str, torch.Tensor]) -> Any:
    """``value`` as JSON, its tensors moved into ``tensors`` under their place in the payload."""
    if isinstance(value, torch.Tensor):
        name = where.lstrip("/") or "tensor"
        while name in tensors:  # two keys that print alike ("1" and 1): never two tensors under one name
            name += "'"
        tensors[name] = value.detach().to("cpu").contiguous()
        return {"$tensor": name}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(item, f"{where}/{index}", tensors) for index, item in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(item, f"{where}/{index}", tensors) for index, item in enumerate(value)]
    if isinstance(value, dict):
        if all(isinstance(key, str) and not key.startswith("$") for key in value):
            return {key: _encode(item, f"{where}/{key}", tensors) for key, item in value.items()}
        # an optimiser's state is keyed by parameter number: JSON's keys are strings, so the pairs are kept
        return {"$items": [[_encode(key, where, tensors), _encode(item, f"{where}/{key}", tensors)] for key, item in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a checkpoint holds tensors and plain values, not {type(value).__name__} (at {where or '/'})")


def _decode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """The inverse of :func:`_encode`."""
    if isinstance(value, list):
        return [_decode(item, tensors) for item in value]
    if isinstance(value, dict):
        if len(value) == 1:
            tag, inner = next(iter(value.items()))
            if tag == "$tensor":
                return tensors[inner]
            if tag == "$bytes":
                return base64.b64decode(inner)
            if tag == "$tuple":
                return tuple(_decode(item, tensors) for item in inner)
            if tag == "$items":
                return {_decode(key, tensors): _decode(item, tensors) for key, item in inner}
        return {key: _decode(item, tensors) for key, item in value.items()}
    return value


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_atomic(payload: Mapping[str, Any], path: str | Path) -> None:
    """Write ``payload`` as a checkpoint (module docstring) with ``tensor_checksum`` (:func:`tensor_checksum`), which
    :func:`load_checkpoint` verifies: to a temporary file in the same folder, then renamed, so a crash never leaves half a file."""
    from safetensors.torch import save_file

    payload = dict(payload)  # a CheckpointPayload's entries: the checksum visits dicts
    payload = {**payload, "tensor_checksum": tensor_checksum(payload)}
    tensors: dict[str, torch.Tensor] = {}
    entries = json.dumps(_encode(payload, "", tensors))
    storages: set[int] = set()
    for name, tensor in tensors.items():  # tied weights: safetensors refuses two tensors in one storage
        if tensor.untyped_storage().data_ptr() in storages:
            tensors[name] = tensor.clone()
        storages.add(tensors[name].untyped_storage().data_ptr())
    with atomic_path(path) as temporary:
        save_file(tensors, str(temporary), metadata={ENTRIES_KEY: entries, ENTRIES_CHECKSUM_KEY: _sha256(entries)})


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """A checkpoint's payload, read and verified (its format, its checksums, finite weights)."""
    path = Path(path)
    if path.is_dir():
        inside = sorted(entry.name for entry in path.glob("*.pt"))
        example = path / ("cotrain_best.pt" if "cotrain_best.pt" in inside else inside[0]) if inside else None
        what = f"the checkpoints in it: {', '.join(inside)}; give one, e.g. {example}" if inside else \
            f"it holds no .pt file; {WHAT_A_CHECKPOINT_IS}"
        raise CheckpointError(f"{path} is a folder, not a checkpoint: {what}")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path} is empty, not a checkpoint (an interrupted copy?); {WHAT_A_CHECKPOINT_IS}")
    if zipfile.is_zipfile(path):  # torch.save's archive (of a state_dict, a whole model): never unpickled here
        raise CheckpointError(f"{path} is a torch.save file but not a DRGA checkpoint (those are safetensors files written by "
                              f"drga train); {WHAT_A_CHECKPOINT_IS}")
    payload = _read_safetensors(path)
    found = payload.get("format")
    if found != FORMAT_VERSION:
        hint = ("it was written by an older version of the toolkit: retrain it" if isinstance(found, int) and found < FORMAT_VERSION
                else "it was written by a newer version of the toolkit: upgrade drga")
        raise CheckpointError(f"{path} is a DRGA checkpoint of format {found}, and this version reads format {FORMAT_VERSION}; {hint}")
    expected = payload.get("tensor_checksum")
    if expected is not None and tensor_checksum(payload) != expected:
        raise CheckpointError(f"{path} is corrupted: its tensors do not match the checksum written with them")
    for entry in WEIGHT_ENTRIES:
        for name, tensor in (payload.get(entry) or {}).items():
            if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise CheckpointError(f"{path}: the {entry}'s {name} holds NaN or infinite values; it cannot be used")
    return payload


def recorded_task(path: str | Path) -> str | None:
    """The task a checkpoint names, read from its header alone (its tensors not loaded, so that finding the task that
    loads it costs no second read); a file that is no readable checkpoint: :func:`load_checkpoint`'s error for it."""
    from safetensors import safe_open

    path = Path(path)
    if path.is_file() and path.stat().st_size > 0 and not zipfile.is_zipfile(path):
        try:
            with safe_open(path, framework="pt", device="cpu") as handle:
                metadata = handle.metadata() or {}
        except Exception:  # safetensors' own error, an OS error: load_checkpoint names it below
            metadata = {}
        entries = metadata.get(ENTRIES_KEY)
        if entries is not None and _sha256(entries) == metadata.get(ENTRIES_CHECKSUM_KEY):
            task = json.loads(entries).get("task")
            return task if isinstance(task, str) else None
    return load_checkpoint(path).get("task")  # raises what is wrong with the file


_ABSENT = object()


class CheckpointPayload(Mapping[str, Any]):
    """A checkpoint's entries (:func:`load_checkpoint`'s dict), each read by name: what ``drga/runner/checkpoints.py``
    writes. A model checkpoint (``kind`` model: a phase's best) holds the modules, their sizes, the configuration and
    the dev scores, its task's name and its task's own entries under :data:`TASK_ENTRIES` (classification: vocabulary,
    label names, tokenizer; translation: the subword models); a resume checkpoint (``kind`` resume: ``last.pt``) adds
    the progress, history, optimisers and random state. Still a read-only mapping, for code that reads an entry by its
    key."""

    def __init__(self, entries: Mapping[str, Any]):
        self.entries: Mapping[str, Any] = entries

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> CheckpointPayload:
        """``payload`` itself if it is one, else its entries (a loaded dict) as one."""
        return payload if isinstance(payload, CheckpointPayload) else cls(payload)

    @classmethod
    def model(
        cls, *, phase: str, epoch: int, net_name: str, has_agent: bool, config: Mapping[str, Any], task: str,
        task_entries: Mapping[str, Any], state_size: int, action_size: int, half_life_steps: float, network: Mapping[str, Any],
        policy: Mapping[str, Any], strength: Mapping[str, Any], dev: Mapping[str, Any], plateau_cuts: int | None,
    ) -> CheckpointPayload:
        """A model checkpoint (``kind`` model: a phase's best), written from its parts, each entry under the name its
        property reads back: the modules' states and sizes, the configuration, the dev scores of ``epoch``, the plateau
        cuts its network trained at, the task's name (``task``) and the task's own entries (``Task.checkpoint_content``),
        nested under :data:`TASK_ENTRIES`."""
        return cls({
            "format": FORMAT_VERSION, "kind": "model", "phase": phase, "epoch": epoch, "net_name": net_name, "has_agent": has_agent,
            "config": config, "task": task, TASK_ENTRIES: dict(task_entries), "state_size": state_size, "action_size": action_size,
            "half_life_steps": float(half_life_steps), "network": network, "policy": policy, "strength": strength,
            "dev": dict(dev), "plateau_cuts": plateau_cuts,
        })

    def resumable(self, *, progress: Mapping[str, Any], history: Sequence[EpochRecord], global_step: int,
                  optimisers: Mapping[str, Any], rng_cpu: Any, rng_cuda: list[Any]) -> CheckpointPayload:
        """This model checkpoint as ``last.pt`` (``kind`` resume): plus the progress, the epoch records, the step, the
        optimisers' states (``net_optimizer``, ``agent_optimizer``, ``lr_schedule``) and the random state."""
        return CheckpointPayload({
            **self.entries, "kind": "resume", "progress": progress, "history": [record.to_dict() for record in history],
            "global_step": global_step,
            **optimisers, "rng_cpu": rng_cpu, "rng_cuda": rng_cuda,
        })

    @classmethod
    def read(cls, path: str | Path) -> CheckpointPayload:
        """A checkpoint file, read and verified (:func:`load_checkpoint`)."""
        return cls(load_checkpoint(path))

    def save(self, path: str | Path) -> None:
        """Write it atomically with its tensors' checksum (:func:`save_atomic`)."""
        save_atomic(self.entries, path)

    def __getitem__(self, key: str) -> Any:
        return self.entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"CheckpointPayload(kind={self.kind!r}, phase={self.entries.get('phase')!r}, net_name={self.net_name!r})"

    # ------------------------------------------------------------------ every checkpoint

    @property
    def format(self) -> int | None:
        return self.entries.get("format")

    @property
    def kind(self) -> str | None:
        """``model`` (a phase's best) or ``resume`` (``last.pt``)."""
        return self.entries.get("kind")

    @property
    def tensor_checksum(self) -> str | None:
        """The SHA-256 of its tensors (:func:`tensor_checksum`): what identifies the network a run started from."""
        return self.entries.get("tensor_checksum")

    # ------------------------------------------------------------------ a model checkpoint

    @property
    def phase(self) -> str:
        return str(self.entries["phase"])

    @property
    def epoch(self) -> int:
        """The phase's epoch it was saved at (0: the phase's starting point)."""
        return int(self.entries["epoch"])

    @property
    def net_name(self) -> str | None:
        return self.entries.get("net_name")

    @property
    def has_agent(self) -> bool:
        """Whether it holds a trained agent (a phase from the agent's on)."""
        return bool(self.entries["has_agent"])

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration, as ``to_dict`` wrote it."""
        return self.entries["config"]

    @property
    def task(self) -> str | None:
        """The name of the task it was trained by (``translation``, ``classification``, yours)."""
        return self.entries.get("task")

    @property
    def task_entries(self) -> dict[str, Any]:
        """Its task's own entries (``Task.checkpoint_content``), nested under :data:`TASK_ENTRIES`."""
        nested = self.entries.get(TASK_ENTRIES)
        return dict(nested) if isinstance(nested, Mapping) else {}

    def task_entry(self, key: str, default: Any = None) -> Any:
        """Its task's own entry ``key`` (under :data:`TASK_ENTRIES`), else ``default``."""
        return self.task_entries.get(key, default)

    def required_task_entry(self, key: str) -> Any:
        """:meth:`task_entry` of an entry every checkpoint of its task holds; its absence, a :class:`CheckpointError`."""
        found = self.task_entry(key, _ABSENT)
        if found is _ABSENT:
            raise CheckpointError(f"the checkpoint holds no '{key}' entry, which every {self.task or 'classification'} checkpoint "
                                  "drga train writes holds: retrain it")
        return found

    @property
    def state_size(self) -> int:
        return int(self.entries["state_size"])

    @property
    def action_size(self) -> int:
        return int(self.entries["action_size"])

    @property
    def half_life_steps(self) -> float:
        """β's schedule position."""
        return float(self.entries["half_life_steps"])

    @property
    def network_state(self) -> dict[str, Any]:
        return self.entries["network"]

    @property
    def policy_state(self) -> dict[str, Any]:
        """The agent's weights."""
        return self.entries["policy"]

    @property
    def strength_state(self) -> dict[str, Any]:
        """The adjusting module's weights (β's learned factor)."""
        return self.entries["strength"]

    @property
    def dev(self) -> dict[str, Any]:
        """Mode → the dev scores of the epoch it was saved at (as the task's ``as_dict``)."""
        return self.entries["dev"]

    def dev_scores(self, mode: str) -> Any:
        """The dev scores in ``mode`` of the epoch it was saved at; None where that mode was not evaluated."""
        return self.dev.get(mode)

    @property
    def plateau_cuts(self) -> int | None:
        """The plateau cuts of the learning rate its network trained at (None: unrecorded, or it did not train)."""
        return self.entries.get("plateau_cuts")

    @property
    def data_checksum(self) -> str | None:
        """The fingerprint of the data it was trained on."""
        return self.task_entry("data_checksum")

    @property
    def vocab_fingerprint(self) -> str | None:
        """A classifier's vocabulary's, a translation model's subword models' fingerprint."""
        return self.task_entry("vocab_fingerprint")

    # ------------------------------------------------------------------ a classifier's entries

    @property
    def vocab(self) -> list[str]:
        return self.required_task_entry("vocab")

    @property
    def label_names(self) -> list[str]:
        return self.required_task_entry("label_names")

    @property
    def tokenizer(self) -> str:
        """How its data's texts became tokens (a registered tokenizer's name, or your own's mark)."""
        return self.required_task_entry("tokenizer")

    # ------------------------------------------------------------------ a translation model's entries

    @property
    def source_tokenizer(self) -> bytes:
        """The source language's subword model."""
        return self.required_task_entry("source_tokenizer")

    @property
    def target_tokenizer(self) -> bytes:
        return self.required_task_entry("target_tokenizer")

    @property
    def shared_tokenizer(self) -> bool:
        """Whether source and target share one subword model."""
        return bool(self.task_entry("shared_tokenizer"))

    # ------------------------------------------------------------------ a resume checkpoint (last.pt)

    @property
    def progress(self) -> dict[str, Any]:
        """``PhaseProgress.to_dict``."""
        return self.entries["progress"]

    @property
    def history(self) -> list[EpochRecord]:
        """The epoch records so far."""
        return [EpochRecord.from_dict(record) for record in self.entries["history"]]

    @property
    def global_step(self) -> int:
        return int(self.entries["global_step"])

    @property
    def rng_cpu(self) -> Any:
        return self.entries["rng_cpu"]

    @property
    def rng_cuda(self) -> list[Any]:
        return self.entries["rng_cuda"]

    @property
    def network_optimizer_state(self) -> dict[str, Any] | None:
        """``last.pt``: the network optimiser's state (None: the phase had none)."""
        return self.entries["net_optimizer"]

    @property
    def agent_optimizer_state(self) -> dict[str, Any] | None:
        """``last.pt``: the agent optimiser's state (None: the phase had none)."""
        return self.entries["agent_optimizer"]

    @property
    def lr_schedule_state(self) -> dict[str, Any] | None:
        """``last.pt``: the network's learning-rate schedule (None: the phase had none)."""
        return self.entries.get("lr_schedule")


#: Where a DRGA checkpoint comes from, said when a file is not one.
WHAT_A_CHECKPOINT_IS = "DRGA checkpoints are the .pt files of a run folder, such as runs/<run>/cotrain_best.pt"
NOT_READABLE = "it cannot be read (a truncated copy, or a file of another kind)"


def _read_safetensors(path: Path) -> dict[str, Any]:
    """A checkpoint written by :func:`save_atomic`: its tensors and its JSON entries, the entries checked against their checksum."""
    from safetensors import safe_open

    try:
        with safe_open(path, framework="pt", device="cpu") as handle:
            metadata = handle.metadata() or {}
            # copied out of the file's memory map: a tensor must outlive a rewrite of its file in place (a bus error otherwise)
            tensors = {name: handle.get_tensor(name).clone() for name in handle.keys()}
    except Exception:  # safetensors' own error, or an OS error: a truncated file, or a file of another kind
        raise CheckpointError(f"{path} is not a DRGA checkpoint: {NOT_READABLE}; {WHAT_A_CHECKPOINT_IS}") from None
    entries = metadata.get(ENTRIES_KEY)
    if entries is None:
        raise CheckpointError(f"{path} is a safetensors file but not a DRGA checkpoint (it has no DRGA entries); {WHAT_A_CHECKPOINT_IS}")
    if _sha256(entries) != metadata.get(ENTRIES_CHECKSUM_KEY):
        raise CheckpointError(f"{path} is corrupted: its entries do not match the checksum written with them")
    try:
        return _decode(json.loads(entries), tensors)
    except (ValueError, KeyError, TypeError):  # entries that hash right but do not fit the tensors: written by something else
        raise CheckpointError(f"{path} is corrupted: its entries do not fit its tensors") from None


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
