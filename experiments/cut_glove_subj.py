"""Cut the bundled GloVe subset (``glove-6b-50d-subj``) from the full GloVe 6B 50-d file, or check it.

The subset keeps every row of ``glove.6B.50d.txt.gz`` whose key the vector reader can use for a
vocabulary of SUBJ's words: every token of all 10,000 sentences, read as the SUBJ loader reads
them (lowercased and not), in its exact and lowercase forms (``lookup_keys``). Rows stay in the
file's order and byte for byte as they were, so any SUBJ vocabulary gets the same matrix from
either file. The gzip stream is written without a name or time, so a re-cut is byte-identical.

    python experiments/cut_glove_subj.py            # write drga/data/bundled/glove/glove.6B.50d.subj.txt.gz
    python experiments/cut_glove_subj.py --check    # re-cut in memory; compare with the bundled file and
                                                    # check that both files give SUBJ's words the same vectors

The full file and SUBJ are found like any data (``--data-dir``, ``$DRGA_DATA``, ``../shared/data``, ...).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
import torch

from drga.data import Vocabulary, load_dataset
from drga.data.embeddings import VECTOR_SETS, load_vectors, lookup_keys, resolve_vectors, split_row
from drga.data.locate import BUNDLED_ROOT, find_dataset_dir

SUBSET = "glove-6b-50d-subj"
FULL = "glove-6b-50d"


def subj_words(data_dir: str | None) -> list[str]:
    """Every token of SUBJ's 10,000 sentences as the loader gives them, lowercased or not, sorted."""
    words: set[str] = set()
    for lowercase in (True, False):
        splits = load_dataset("subj", data_dir=data_dir, lowercase=lowercase)
        words.update(token for examples in (splits.train, splits.dev, splits.test) for ex in examples for token in ex.tokens)
    return sorted(words)


def cut(full: Path, keys: set[str], dim: int) -> tuple[bytes, int, int]:
    """(the kept rows' text, rows kept, rows read); each row's key read as the vector reader reads it."""
    kept, read = io.BytesIO(), 0
    with gzip.open(full, "rb") as handle:
        for raw in handle:
            read += 1
            # strict decoding and no stray carriage return: the reader's text mode sees these very lines
            line = raw.decode("utf-8")
            if "\r" in line.rstrip("\n"):
                raise ValueError(f"{full}:{read}: a carriage return inside a row; cut the file in text mode instead")
            if split_row(line, dim)[0] in keys:
                kept.write(raw)
    return kept.getvalue(), len(kept.getvalue().splitlines()), read


def gzipped(text: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as handle:
        handle.write(text)
    return buffer.getvalue()


def same_vectors(full: Path, subset: Path, words: list[str], dim: int) -> bool:
    """Whether both files give a vocabulary of every SUBJ word the same matrix and the same hits."""
    vocab = Vocabulary(["<pad>", "<unk>", *words])
    a = load_vectors(full, vocab, dim, cache=False)
    b = load_vectors(subset, vocab, dim, cache=False)
    print(f"full:   {a.describe()}\nsubset: {b.describe()}")
    hits = (a.found_exact, a.found_lowercase, a.bad_rows) == (b.found_exact, b.found_lowercase, b.bad_rows)
    return hits and torch.equal(a.matrix, b.matrix)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="data root holding subj/ and glove/ (default: the usual lookup)")
    parser.add_argument("--check", action="store_true", help="compare a re-cut with the bundled file instead of writing it")
    args = parser.parse_args(argv)

    subdir, filename, dim = VECTOR_SETS[SUBSET]
    full, _ = resolve_vectors(FULL, args.data_dir)
    subj = find_dataset_dir("subj", ["plot.tok.gt9.5000", "quote.tok.gt9.5000"], args.data_dir)
    words = subj_words(args.data_dir)
    text, kept, read = cut(full, lookup_keys(words), dim)
    print(f"SUBJ ({subj}): {len(words):,} distinct tokens; {full}: {read:,} rows read, {kept:,} kept")
    print(f"subset text: {len(text):,} bytes, sha256 {hashlib.sha256(text).hexdigest()}")
    target = BUNDLED_ROOT / subdir / filename
    if not args.check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzipped(text))
        print(f"wrote {target} ({target.stat().st_size:,} bytes)")
    with gzip.open(target, "rb") as handle:
        bundled_text = handle.read()
    if bundled_text != text:
        print(f"{target} differs from the re-cut", file=sys.stderr)
        return 1
    if not same_vectors(full, target, words, dim):
        print("the subset and the full file give SUBJ's words different vectors", file=sys.stderr)
        return 1
    print("ok: the bundled subset is the re-cut, and gives every SUBJ word the full file's vector")
    return 0


if __name__ == "__main__":
    sys.exit(main())
