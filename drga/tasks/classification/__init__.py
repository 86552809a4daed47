"""Text classification (MR, SST, SUBJ, the aspect and document sets): the task, its evaluation and
the loading of a trained checkpoint.

- :mod:`drga.tasks.classification.task`: :class:`ClassificationTask`, the task half of a run (its
  trainer: :class:`drga.trainer.Trainer`);
- :mod:`drga.tasks.classification.data`: the data set encoded, its batches, the attention network;
- :mod:`drga.tasks.classification.evaluation`: a split's accuracy and reward in one mode;
- :mod:`drga.tasks.classification.trained`: a trained checkpoint's network, agent and β, and its data.
"""
