"""Translation with DRGA: encoder-decoder cross-attention retrofitted by the agent.

- :mod:`drga.tasks.translation.task`: :class:`TranslationTask`, the task half of a run and its registration in the
  task registry (``drga/registry.py``; its trainer:
  :mod:`drga.tasks.translation.trainer` · ``TranslationTrainer``, re-exported by :mod:`drga.trainer`);
- :mod:`drga.tasks.translation.config`: the ``[nmt]`` section, the translation defaults and the loader;
- :mod:`drga.tasks.translation.data`: the parallel corpus, its subword models, the network;
- :mod:`drga.tasks.translation.decoding`: greedy and beam search, ``net-only`` and ``with-agent``;
- :mod:`drga.tasks.translation.metrics`: perplexity, sacrebleu BLEU and chrF;
- :mod:`drga.tasks.translation.evaluation`: a split's perplexity, reward, BLEU and chrF in one mode (training
  and ``drga evaluate``);
- :mod:`drga.tasks.translation.trained`: a trained checkpoint's network, agent, β and subword models;
- :mod:`drga.tasks.translation.commands`: what ``drga translate`` and ``drga evaluate`` do with a translation checkpoint.

See docs/nmt.md.
"""
