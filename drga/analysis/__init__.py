"""What DRGA did to the attention: the paper's analyses as functions, pictures and tables.

One module per analysis (``drga analyze`` runs them all, ``drga compare`` is the significance
tool); ``attention`` holds what they share: which attention arrays span a sentence, the rule
that squashes them to one weight per token, token-level edits of the attention, and the
per-example records (original α, revised α′, output distributions) the analyses read.
"""

from drga.analysis.attention import DOCUMENT_RULE, SQUASH_RULE, AttentionRecord, compute_records, squash_attention

__all__ = ["DOCUMENT_RULE", "SQUASH_RULE", "AttentionRecord", "compute_records", "squash_attention"]
