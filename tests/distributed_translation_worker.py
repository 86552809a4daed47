"""One process of the 2-process translation run in tests/integration/test_distributed_translation.py, started by torchrun.

``python -m torch.distributed.run --nproc_per_node 2 -m tests.distributed_translation_worker --root R --out D``

Each process trains a tiny Luong network on the synthetic corpus under ``R`` through every phase,
keeps a copy of network, agent and β after every epoch, and saves them with its results and the
files it wrote under the log folder to ``D/rank<R>.pt``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import torch

from drga.runtime import distributed
from drga.trainer import TranslationTrainer
from tests.distributed_worker import MODULES, record_writes
from tests.nmt_helpers import tiny_translation_config


class SnapshotTranslationTrainer(TranslationTrainer):
    def __init__(self, *args: Any, **kwargs: Any):
        self.snapshots: dict[str, dict[str, dict[str, torch.Tensor]]] = {}
        super().__init__(*args, **kwargs)

    def save_last(self) -> None:  # every process calls it after every epoch
        key = f"{self.plan[self.state.progress.index].name}/{self.state.progress.epoch}"
        self.snapshots[key] = {
            name: {k: v.detach().cpu().clone() for k, v in getattr(self, name).state_dict().items()} for name in MODULES
        }
        super().save_last()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    root = Path(args.root)
    writes: list[str] = []
    record_writes(root / "runs", writes)
    config = tiny_translation_config(root, **{"run.threads": 1, "train.cotrain_epochs": 2, "run.run_name": "ddp"})
    trainer = SnapshotTranslationTrainer(config, log=lambda _: None)
    results = trainer.run()
    record = {"rank": distributed.rank(), "world": distributed.world_size(), "snapshots": trainer.snapshots,
              "results": results, "writes": list(writes)}
    distributed.barrier()
    distributed.cleanup()
    torch.save(record, Path(args.out) / f"rank{record['rank']}.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
