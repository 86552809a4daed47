"""Running the trainer as several processes under ``torchrun``: the process group and its helpers.

``drga train`` started by ``torchrun --nproc_per_node N`` (which sets ``WORLD_SIZE``, ``RANK``
and ``LOCAL_RANK``) joins a process group: gloo when the run's device is the CPU, nccl when it
is CUDA, with ``cuda:LOCAL_RANK`` as the process's device. Not started by torchrun (and with no
process group already initialised by the caller), every function here is the identity or a
no-op and the trainer runs exactly as a single process always did.

What the trainer does with it (docs/distributed.md):

- ``data.batch_size`` is the *global* batch: each global batch is cut into ``WORLD_SIZE``
  contiguous shards (:class:`ShardedBatches`), one per process. A process whose shard would be
  empty (a last batch smaller than the world) gets a stand-in example with ``share`` 0.
- :func:`replicate` wraps the modules a phase trains in DistributedDataParallel; each process
  scales its loss by ``WORLD_SIZE · share`` (``share``: its fraction of the global batch), so
  that DDP's gradient average is the gradient of the global batch's mean loss (:func:`backward`).
- Evaluation is sharded the same way and its sums all-reduced, so every process sees the same
  dev scores and takes the same best-epoch and early-stopping decisions.
- Only rank 0 logs, writes TensorBoard, checkpoints and results; see ``is_main``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import torch
import torch.distributed as dist
from torch import Tensor, nn

from drga.baselines.protocol import Batch
from drga.data import BatchIterator
from drga.runtime.device import resolve_device

#: The environment variables torchrun sets for every process it starts.
TORCHRUN_VARIABLES = ("WORLD_SIZE", "RANK", "LOCAL_RANK")

_owned = False  # whether setup() created the process group (and cleanup() should destroy it)


def launched_by_torchrun() -> bool:
    return all(name in os.environ for name in TORCHRUN_VARIABLES)


def active() -> bool:
    """True inside a process group (under torchrun, or one the caller initialised)."""
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if active() else 0


def world_size() -> int:
    return dist.get_world_size() if active() else 1


def is_main() -> bool:
    """Rank 0: the one process that logs and writes files."""
    return rank() == 0


def local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", rank()))


def setup(device_name: str) -> torch.device:
    """The process's device; under torchrun, join the process group first.

    ``device_name`` is ``run.device``. A CUDA device (``cuda``, ``cuda:N`` or ``auto`` with a
    GPU) becomes ``cuda:LOCAL_RANK`` and the backend nccl; the CPU uses gloo.
    """
    global _owned
    if not active() and not launched_by_torchrun():
        return resolve_device(device_name)
    device = resolve_device(device_name.split(":")[0])  # torchrun picks the index: LOCAL_RANK
    if device.type == "cuda":
        device = torch.device("cuda", local_rank())
        torch.cuda.set_device(device)
    if not active():
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, init_method="env://", device_id=device if device.type == "cuda" else None)
        _owned = True
    return device


def cleanup() -> None:
    """Leave the process group, if :func:`setup` created it."""
    global _owned
    if _owned and active():
        dist.destroy_process_group()
    _owned = False


def barrier() -> None:
    if active():
        dist.barrier()


def _collective_device() -> torch.device:
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _sum_over_processes(values: list[float]) -> list[float]:
    """Element-wise sums over processes (float64), bitwise the same on every rank."""
    tensor = torch.tensor(values, dtype=torch.float64, device=_collective_device())
    dist.all_reduce(tensor)
    dist.broadcast(tensor, 0)  # every rank decides (best epoch, early stop) on the very same numbers
    return tensor.tolist()


def weighted_mean(values: dict[str, float], weight: float) -> tuple[dict[str, float], float]:
    """(Σ_r w_r·v_r / Σ_r w_r for each key, Σ_r w_r) over processes; ``values`` and ``weight`` outside a group.

    With ``weight`` = the examples a process scored and ``values`` its means, this gives the
    means over all the examples. A process with weight 0 contributes nothing.
    """
    if not active():
        return values, weight
    keys = list(values)
    sums = _sum_over_processes([weight * values[k] for k in keys] + [weight])
    total = sums.pop()
    return {k: v / total if total > 0 else 0.0 for k, v in zip(keys, sums)}, total


def mean_over_processes(values: dict[str, float]) -> dict[str, float]:
    """The mean over processes of each value (``values`` itself outside a process group)."""
    if not active():
        return values
    keys = list(values)
    return {k: v / world_size() for k, v in zip(keys, _sum_over_processes([values[k] for k in keys]))}


class _Replica(nn.Module):
    """The modules a phase trains, as one module for DDP; its forward passes the loss through."""

    def __init__(self, modules: Sequence[nn.Module]):
        super().__init__()
        self.parts = nn.ModuleList(modules)

    def forward(self, loss: Tensor) -> Tensor:
        return loss


def replicate(modules: Sequence[nn.Module], device: torch.device) -> nn.Module | None:
    """DistributedDataParallel over the modules a phase trains (None outside a process group).

    Only parameters with ``requires_grad`` take part (a frozen network is left out, and β's
    learned factor only when it trains). Building it broadcasts rank 0's parameters and buffers.
    ``find_unused_parameters``: some networks have parameters that only feed the agent's
    (detached) state, e.g. the transformer's head queries.
    """
    if not active():
        return None
    return nn.parallel.DistributedDataParallel(
        _Replica(modules), device_ids=[device.index] if device.type == "cuda" else None, find_unused_parameters=True
    )


def ddp_loss(replica: nn.Module | None, loss: Tensor, share: float = 1.0) -> Tensor:
    """The tensor to call ``backward()`` on: ``loss`` itself without a replica; else ``loss``
    passed through DDP's forward and scaled by ``world · share``.

    The trainer uses the networks through ``encode``/``predict`` and the policy through
    ``distribution``, not through ``forward``, so it computes the loss first and passes it
    through DDP's forward just before ``backward``. That call starts the DDP iteration: it walks
    the loss's autograd graph (finding the parameters the loss does not use) and arms the
    gradient hooks, so that ``backward`` all-reduces (averages) the gradients bucket by bucket.
    ``share`` is this process's fraction of the global batch: with the scaling, DDP's average is
    the gradient of the global batch's mean loss even when the shards differ in size.
    """
    if replica is None:
        return loss
    return replica(loss) * (world_size() * share)


def seed_epoch(seed: int, epoch_key: int) -> None:
    """Under torchrun: seed this process's random stream (action samples, dropout) for one epoch.

    A function of (seed, epoch, rank) only, so processes sample differently and a resumed run
    (which restarts at an epoch boundary) draws exactly what the uninterrupted run drew.
    """
    if active():
        torch.manual_seed(((seed * 100_003 + epoch_key) * 65_537 + rank()) % (2**63))


# --------------------------------------------------------------------------------- batches


def shard_bounds(size: int, rank: int, world: int) -> tuple[int, int]:
    """[start, stop) of rank's contiguous shard of ``size`` items; sizes differ by at most one."""
    base, extra = divmod(size, world)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


class ShardedBatches:
    """This process's shard of every batch of a :class:`BatchIterator` (a DistributedSampler
    for batches of similar length).

    Every process computes the same global order (seeded by the run's seed and
    :meth:`set_epoch`) and takes its contiguous part of each global batch. ``share`` is the
    fraction of the global batch in the shard last yielded. ``pad_empty``: an empty shard (a
    global batch smaller than the world) becomes the global batch's first example with
    ``share`` 0 (training: every process must take part in every step); otherwise it is skipped
    (evaluation).
    """

    def __init__(self, batches: BatchIterator, rank: int, world: int, pad_empty: bool):
        self.batches = batches
        self.rank = rank
        self.world = world
        self.pad_empty = pad_empty
        self.share = 1.0

    def set_epoch(self, epoch: int) -> None:
        self.batches.set_epoch(epoch)

    def __len__(self) -> int:
        return len(self.batches)  # global batches: every process steps as often as one process would

    def local_examples(self) -> int:
        """Real examples in this process's shards (stand-ins not counted)."""
        bounds = (shard_bounds(len(indices), self.rank, self.world) for indices in self.batches.index_batches())
        return sum(stop - start for start, stop in bounds)

    def __iter__(self) -> Iterator[Batch]:
        examples = self.batches.examples
        for indices in self.batches.index_batches():
            start, stop = shard_bounds(len(indices), self.rank, self.world)
            if start == stop:
                if not self.pad_empty:
                    continue
                mine, self.share = indices[:1], 0.0
            else:
                mine, self.share = indices[start:stop], (stop - start) / len(indices)
            yield self.batches.collate([examples[i] for i in mine])


def shard(batches: BatchIterator, pad_empty: bool) -> BatchIterator | ShardedBatches:
    """``batches`` itself outside a process group, else this process's :class:`ShardedBatches`."""
    if not active():
        return batches
    return ShardedBatches(batches, rank(), world_size(), pad_empty)

