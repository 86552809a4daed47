"""``drga sweep``: a grid of `drga train` runs (networks × data sets × seeds), resumable, on this
machine or on a Ray cluster (docs/distributed.md, "A grid on a cluster").

- :mod:`drga.sweep.grid`: the grid's runs, their folders and `drga train` commands;
- :mod:`drga.sweep.child`: one run as a child process, from start to end or to a stop request;
- :mod:`drga.sweep.results`: the per-run result files, the projected compute and the final table;
- :mod:`drga.sweep.executors`: the local executor and the interface the Ray one shares
  (:mod:`drga.sweep.ray_executor`);
- :mod:`drga.sweep.cli`: the command.

Standard library only (Ray is imported by the Ray executor alone), so that the sweep starts at
once and needs no torch: every run is a process of its own.
"""
