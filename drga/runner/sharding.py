"""Whether a task's dev and test are sharded over torchrun's processes: :class:`ShardedEvaluation`, which a task inherits
(``drga/runner/task_options.py`` lists what else it may add). Its own module, below the run context that combines the
scores and the loop that shards the batches, and free of torch, as a task's module must be."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["ShardedEvaluation"]


class ShardedEvaluation(ABC):
    """Under torchrun, dev and test sharded over the processes and each process's scores combined into everyone's.
    Without it, every process scores them whole."""

    @abstractmethod
    def combine_over_processes(self, result: Any, batches: Any) -> Any:
        """This process's scores of its shard (``batches``) → everyone's."""
