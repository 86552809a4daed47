"""Translation with DRGA: encoder-decoder cross-attention retrofitted by the agent.

- :mod:`drga.nmt.config`: the ``[nmt]`` section and the translation defaults;
- :mod:`drga.nmt.trainer`: the phases of Algorithm 1 (and the equal-budget baseline) for
  translation, with perplexity and BLEU;
- :mod:`drga.nmt.decoding`: greedy and beam search, ``net-only`` and ``with-agent``;
- :mod:`drga.nmt.metrics`: perplexity, sacrebleu BLEU and chrF;
- :mod:`drga.nmt.evaluation`: a split's perplexity, reward, BLEU and chrF in one mode (training
  and ``drga evaluate``);
- :mod:`drga.nmt.cli`: ``drga translate`` and the dispatch of ``drga train`` and ``drga evaluate``.

See docs/nmt.md.
"""
