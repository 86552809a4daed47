"""Data: finding files, loading benchmarks, vocabularies, batching, pretrained vectors.

The names below are imported from their modules when first used (PEP 562): the loaders need
numpy only, batching and vectors need torch.
"""

import importlib
from typing import Any

_EXPORTS = {
    "BatchIterator": "drga.data.batching", "EncodedExample": "drga.data.batching", "EncodingReport": "drga.data.batching",
    "collate": "drga.data.batching", "encode_examples": "drga.data.batching",
    "VECTOR_SETS": "drga.data.embeddings", "PretrainedVectors": "drga.data.embeddings", "VectorFileError": "drga.data.embeddings",
    "load_vectors": "drga.data.embeddings",
    "DataNotFoundError": "drga.data.locate", "candidate_roots": "drga.data.locate", "find_dataset_dir": "drga.data.locate",
    "DATASETS": "drga.data.registry", "DataFormatError": "drga.data.text", "DatasetSplits": "drga.data.text",
    "TextExample": "drga.data.text", "load_dataset": "drga.data.registry", "parse_tree": "drga.data.text",
    "stratified_split": "drga.data.text", "holdout_split": "drga.data.text", "Vocabulary": "drga.data.vocab",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'drga.data' has no attribute {name!r}")
