"""Translation with DRGA: encoder-decoder cross-attention retrofitted by the agent.

- :mod:`drga.tasks.translation.config`: the ``[nmt]`` section and the translation defaults;
- :mod:`drga.tasks.translation.trainer`: the phases of Algorithm 1 (and the equal-budget baseline) for
  translation, with perplexity and BLEU;
- :mod:`drga.tasks.translation.decoding`: greedy and beam search, ``net-only`` and ``with-agent``;
- :mod:`drga.tasks.translation.metrics`: perplexity, sacrebleu BLEU and chrF;
- :mod:`drga.tasks.translation.evaluation`: a split's perplexity, reward, BLEU and chrF in one mode (training
  and ``drga evaluate``);
- :mod:`drga.tasks.translation.cli`: ``drga translate`` and the dispatch of ``drga train`` and ``drga evaluate``.

See docs/nmt.md.
"""
