"""Data: finding files, loading benchmarks, vocabularies, batching, pretrained vectors."""

from drga.data.batching import BatchIterator, EncodedExample, EncodingReport, collate, encode_examples
from drga.data.embeddings import load_glove
from drga.data.locate import DataNotFoundError, candidate_roots, find_dataset_dir
from drga.data.text import DATASETS, DataFormatError, DatasetSplits, TextExample, load_dataset, parse_tree, stratified_split
from drga.data.vocab import Vocabulary

__all__ = [
    "BatchIterator", "EncodedExample", "EncodingReport", "collate", "encode_examples", "load_glove",
    "DataNotFoundError", "candidate_roots", "find_dataset_dir", "DATASETS", "DataFormatError",
    "DatasetSplits", "TextExample", "load_dataset", "parse_tree", "stratified_split", "Vocabulary",
]
