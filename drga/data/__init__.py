"""Data: finding files, loading benchmarks, vocabularies, batching, pretrained vectors."""

from drga.data.batching import BatchIterator, EncodedExample, EncodingReport, collate, encode_examples
from drga.data.embeddings import VECTOR_SETS, PretrainedVectors, VectorFileError, load_glove, load_vectors
from drga.data.locate import DataNotFoundError, candidate_roots, find_dataset_dir
from drga.data.text import DATASETS, DataFormatError, DatasetSplits, TextExample, load_dataset, parse_tree, stratified_split
from drga.data.vocab import Vocabulary

__all__ = [
    "BatchIterator", "EncodedExample", "EncodingReport", "collate", "encode_examples", "load_glove",
    "load_vectors", "PretrainedVectors", "VectorFileError", "VECTOR_SETS",
    "DataNotFoundError", "candidate_roots", "find_dataset_dir", "DATASETS", "DataFormatError",
    "DatasetSplits", "TextExample", "load_dataset", "parse_tree", "stratified_split", "Vocabulary",
]
