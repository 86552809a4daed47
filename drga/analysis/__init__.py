"""What DRGA did to the attention: the paper's analyses as functions, pictures and tables.

One module per analysis (``drga analyze`` runs them all, ``drga compare`` is the significance
tool); ``attention`` holds what they share: which attention arrays span a sentence, the rule
that squashes them to one weight per token, token-level edits of the attention, and the
per-example records (original α, revised α′, output distributions) the analyses read.
"""

import importlib
from typing import Any

__all__ = ["DOCUMENT_RULE", "SQUASH_RULE", "AttentionRecord", "compute_records", "squash_attention"]


def __getattr__(name: str) -> Any:
    # imported when first used (PEP 562): the command line registers `drga analyze` without torch
    if name in __all__:
        return getattr(importlib.import_module("drga.analysis.attention"), name)
    raise AttributeError(f"module 'drga.analysis' has no attribute {name!r}")
