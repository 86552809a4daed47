"""How a run uses its process and machine, apart from the method (:mod:`drga.core`).

- :mod:`drga.runtime.device`: the run's random seeds and its device (``run.seed``, ``run.device``);
- :mod:`drga.runtime.distributed`: several processes under ``torchrun`` (the process group, sharded batches);
- :mod:`drga.runtime.allocator`: freed CPU tensor memory kept mapped between steps (glibc);
- :mod:`drga.runtime.run_lock`: one process at a time in a run folder (no torch: the sweep probes locks);
- :mod:`drga.runtime.eval_mode`: modules in evaluation mode for a block, restored after it.

This package's ``__init__`` imports none of them, so that importing one loads only what it needs.
"""
