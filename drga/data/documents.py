"""Documents for hierarchical attention: Polarity data set v2.0 ("movie reviews", Pang & Lee 2004).

One review per file under ``pos/`` and ``neg/``, one tokenized sentence per line. A document is a
:class:`~drga.data.text.TextExample` whose ``tokens`` are all its words (for the vocabulary) and
whose ``extras["sentences"]`` are its sentences as in the file (empty lines dropped). The
sentence and sentence-length limits are applied when encoding (``data.max_sentences``,
``data.max_sentence_length``), where truncation is counted.
"""

from __future__ import annotations

import os
from pathlib import Path

from drga.data.locate import DataNotFoundError, candidate_roots, download_hint
from drga.data.text import DataFormatError, DatasetSplits, TextExample, stratified_split


def read_document(path: Path, label: int, lowercase: bool = True) -> TextExample:
    text = path.read_text(encoding="utf-8", errors="replace")
    sentences = [(line.lower() if lowercase else line).split() for line in text.splitlines()]
    sentences = [s for s in sentences if s]
    if not sentences:
        raise DataFormatError(f"{path}: the document has no text")
    return TextExample([w for s in sentences for w in s], label, {"sentences": sentences})


def find_document_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The first candidate folder with ``pos/`` and ``neg/`` subfolders (explicit folder or root first)."""
    folders = [Path(explicit).expanduser()] if explicit else []
    if explicit:  # a folder the user names is where the data must be (drga/data/locate.py · find_dataset_dir)
        folders.append(folders[0] / "movie_reviews")
    else:
        folders += [root / "movie_reviews" for root in candidate_roots()]
    for folder in folders:
        if (folder / "pos").is_dir() and (folder / "neg").is_dir():
            return folder
    raise DataNotFoundError(
        "data set 'movie_reviews' not found. Expected folders pos/ and neg/ of one-review-per-file .txt "
        "in a folder 'movie_reviews/' under one of these (searched in this order):\n  "
        + "\n  ".join(str(p) for p in folders)
        + "\nPoint to your copy with --data-dir DIR or the DRGA_DATA environment variable."
        + download_hint("movie_reviews", ["pos", "neg"])
    )


def load_movie_reviews(
    data_dir: str | os.PathLike | None = None, split_seed: int = 1234, lowercase: bool = True, **_: object
) -> DatasetSplits:
    """Movie reviews v2.0 (Pang & Lee 2004): 1,000 negative + 1,000 positive documents, seeded 80/10/10."""
    folder = find_document_dir(data_dir)
    examples = []
    for label, sub in enumerate(("neg", "pos")):
        files = sorted((folder / sub).glob("*.txt"))
        if not files:
            raise DataFormatError(f"{folder / sub} holds no .txt review")
        examples += [read_document(path, label, lowercase) for path in files]
    train, dev, test = stratified_split(examples, split_seed)
    notes = [
        f"movie-reviews: {len(examples)} documents from {folder}; no official split, stratified 80/10/10 "
        f"with split seed {split_seed}"
    ]
    return DatasetSplits("movie-reviews", train, dev, test, ["negative", "positive"], notes, provides="document")
