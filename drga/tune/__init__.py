"""``drga tune``: settings of `drga train` searched by Optuna, the trials in a database (docs/distributed.md, "Tuning").

- :mod:`drga.tune.space`: the ``--search`` items (ranges and choices) and the default search;
- :mod:`drga.tune.study`: the study (sampler, pruner, storage), a trial's run, the best config file;
- :mod:`drga.tune.cli`: the command.
"""
