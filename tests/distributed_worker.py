"""One process of the 2-process run in tests/integration/test_distributed.py, started by torchrun.

``python -m torch.distributed.run --nproc_per_node 2 -m tests.distributed_worker --config C --out D``

Each process trains the same configuration three times: run ``a`` straight through; run ``b``
interrupted (on every process) at the start of its 7th epoch, then resumed. It records the
modules' state after every epoch (:class:`SnapshotTrainer`) and every file it opened for writing,
created, renamed or removed under ``run.logdir`` (an audit hook), and saves them to
``D/rank<R>.pt``. The test compares the processes with each other and with one process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import torch

import drga.baselines as baselines
from drga.config import load_config
from drga.runtime import distributed
from drga.trainer import Trainer
from tests.tiny_network import TinyAttentionNet

MODULES = ("network", "policy", "strength")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class SnapshotTrainer(Trainer):
    """A Trainer that keeps a copy of network, agent and β after every epoch; ``interrupt_at``:
    raise KeyboardInterrupt when the n-th epoch starts (as Ctrl-C would, on every process)."""

    def __init__(self, *args: Any, interrupt_at: int | None = None, **kwargs: Any):
        self.snapshots: dict[str, dict[str, dict[str, torch.Tensor]]] = {}
        self._interrupt_at = interrupt_at
        self._epochs_started = 0
        super().__init__(*args, **kwargs)

    def train_epoch(self, phase, epoch: int, epochs: int) -> dict[str, float]:
        self._epochs_started += 1
        if self._epochs_started == self._interrupt_at:
            raise KeyboardInterrupt
        return super().train_epoch(phase, epoch, epochs)

    def save_last(self) -> None:  # every process calls it after every epoch
        key = f"{self.plan[self.state.progress.index].name}/{self.state.progress.epoch}"
        self.snapshots[key] = {
            name: {k: v.detach().cpu().clone() for k, v in getattr(self, name).state_dict().items()} for name in MODULES
        }
        super().save_last()


def record_writes(root: Path, writes: list[str]) -> None:
    """Audit hook: note every path under ``root`` this process opens for writing, creates, renames or removes."""
    root_text = str(root.resolve())

    def under_root(path: Any) -> str | None:
        if isinstance(path, int):
            return None
        text = os.path.abspath(os.fsdecode(path))
        return text if text.startswith(root_text) else None

    def hook(event: str, args: tuple) -> None:
        if event == "open" and args and args[0] is not None:
            mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
            by_flags = isinstance(flags, int) and flags & WRITE_FLAGS
            writing = by_flags or (isinstance(mode, str) and any(c in mode for c in "wax+"))
            path = under_root(args[0]) if writing else None
        elif event == "os.rename" and len(args) >= 2:  # os.replace too: an atomic write (drga/files.py) names its file here
            path = under_root(args[1]) or under_root(args[0])
        elif event in ("os.mkdir", "os.remove", "os.rmdir", "shutil.rmtree", "os.truncate"):
            path = under_root(args[0]) if args and args[0] is not None else None
        else:
            return
        if path is not None:
            writes.append(f"{event} {path}")

    sys.addaudithook(hook)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    baselines.NETWORKS["tiny"] = TinyAttentionNet
    logdir = Path(load_config(args.config).run.logdir)
    writes: list[str] = []
    record_writes(logdir, writes)
    quiet = lambda _: None  # noqa: E731

    a = SnapshotTrainer(load_config(args.config, ["run.run_name=a"]), log=quiet)
    results_a = a.run()
    try:
        SnapshotTrainer(load_config(args.config, ["run.run_name=b"]), interrupt_at=7, log=quiet).run()
    except KeyboardInterrupt:
        pass
    distributed.barrier()  # rank 0's last.pt of the interrupted run is written before anyone resumes it
    b = SnapshotTrainer(load_config(args.config, ["run.run_name=b"]), resume=True, log=quiet)
    results_b = b.run()

    rank = distributed.rank()
    record = {
        "rank": rank, "world": distributed.world_size(), "device": str(a.device),
        "a": a.snapshots, "results_a": results_a, "b": b.snapshots, "results_b": results_b, "writes": list(writes),
    }
    distributed.barrier()
    distributed.cleanup()
    torch.save(record, Path(args.out) / f"rank{rank}.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
