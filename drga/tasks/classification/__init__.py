"""Text classification (MR, SST, SUBJ, the aspect and document sets): the task, its evaluation and
the loading of a trained checkpoint.

- :mod:`drga.tasks.classification.task`: :class:`ClassificationTask`, the task half of a run and its registration in
  the task registry (``drga/registry.py``; its
  trainer: :mod:`drga.tasks.classification.trainer` · ``Trainer``, re-exported by :mod:`drga.trainer`);
- :mod:`drga.tasks.classification.config`: its configuration loader, checked against its networks and data sets;
- :mod:`drga.tasks.classification.api`: the notebook API (``TextData``, ``retrofit``; public as :mod:`drga.api`);
- :mod:`drga.tasks.classification.prediction`: new texts classified (``drga.load``; public as :mod:`drga.prediction`);
- :mod:`drga.tasks.classification.commands`: what ``drga predict`` and ``drga evaluate`` do with its checkpoints;
- :mod:`drga.tasks.classification.data`: the data set encoded, its batches, the attention network;
- :mod:`drga.tasks.classification.evaluation`: a split's accuracy and reward in one mode;
- :mod:`drga.tasks.classification.trained`: a trained checkpoint's network, agent and β, and its data.
"""
