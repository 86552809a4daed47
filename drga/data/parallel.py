"""Parallel text for translation: reading line-aligned file pairs, subword encoding, batching.

Any pair of line-aligned files works (plain text or gzip, detected from the file's first bytes,
UTF-8): line i of the source file translates line i of the target file. This is the format of
Multi30k, of WMT's and IWSLT's plain-text releases, and of anything ``sacrebleu --echo`` or
``paste`` produces. A pair whose two files differ in line count is an error naming both files
and the first line without a partner; a line that is not UTF-8 names the file and the line.
Pairs with an empty side are skipped and counted (the notes of the run say how many).

Data sets:

- ``multi30k-en-de``: Multi30k task 1 (Elliott et al. 2016), English→German, the official
  train (29,000) / val (1,014) / test_2016_flickr (1,000) files.
- ``parallel``: your files. Either a folder holding ``train.SRC``, ``val.SRC`` (or ``valid`` /
  ``dev``), ``test.SRC`` and the same for TGT (``.gz`` allowed), with SRC/TGT the languages
  of ``nmt.source_lang`` / ``nmt.target_lang``; or the files named one by one with
  ``nmt.train_files``, ``nmt.dev_files``, ``nmt.test_files`` (each ``[source, target]``).

A batch (:class:`baselines.protocol.Batch`) of parallel text holds the source ids as ``tokens``
[B, T_x] (``mask`` True on real source tokens) and the target ids followed by ``</s>`` as
``labels`` [B, T_y], padded with 0; ``extras["index"]`` [B] is each pair's position in its
split, so decoded hypotheses can be put back in corpus order after length-sorted batching.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from drga.baselines.protocol import Batch
from drga.data.locate import find_dataset_dir
from drga.data.subword import EOS_ID, PAD_ID, UNK_ID, SubwordTokenizer
from drga.data.text import DataFormatError


@dataclass
class ParallelPair:
    """One sentence pair, untokenized, as it is in the files."""

    source: str
    target: str


@dataclass
class ParallelSplits:
    """Train / dev / test sentence pairs of a translation data set."""

    name: str
    train: list[ParallelPair]
    dev: list[ParallelPair]
    test: list[ParallelPair]
    source_lang: str
    target_lang: str
    #: Facts a results table should state (files read, pairs skipped, ...).
    notes: list[str] = field(default_factory=list)
    #: What the examples carry (see ``baselines.NETWORK_INPUTS``): source and target text.
    provides: str = "parallel"

    @property
    def content_fingerprint(self) -> str:
        """A short hash of the pairs as read, split by split (the same files give the same value)."""
        digest = hashlib.sha256(f"{self.source_lang}>{self.target_lang}".encode())
        for split in (self.train, self.dev, self.test):
            for pair in split:
                digest.update(json.dumps([pair.source, pair.target]).encode() + b"\n")
            digest.update(b"|")
        return digest.hexdigest()[:16]


def _open_binary(path: Path):
    if not path.is_file():
        raise FileNotFoundError(f"parallel text file {path} does not exist")
    with path.open("rb") as probe:
        compressed = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if compressed else path.open("rb")


def open_text(path: str | os.PathLike) -> io.TextIOBase:
    """A UTF-8 text stream of a plain or gzip file (gzip recognised by its magic bytes, not the name)."""
    return io.TextIOWrapper(_open_binary(Path(path)), encoding="utf-8", errors="strict", newline=None)


def _lines(path: Path) -> Iterator[str]:
    # Decoded line by line (not in chunks) so that a stray byte is reported with its own line number.
    with _open_binary(path) as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8-sig" if line_number == 1 else "utf-8")  # a leading BOM is not text
            except UnicodeDecodeError as error:
                raise DataFormatError(f"{path}:{line_number}: not valid UTF-8 ({error.reason})") from None


def read_parallel(source_path: str | os.PathLike, target_path: str | os.PathLike) -> tuple[list[ParallelPair], int]:
    """Sentence pairs of two line-aligned files, and the number of pairs skipped for an empty side.

    Surrounding whitespace is stripped (a trailing ``\\r`` of Windows files too); the text is
    otherwise kept as it is: true case, untokenized.
    """
    source_path, target_path = Path(source_path), Path(target_path)
    pairs: list[ParallelPair] = []
    skipped = 0
    missing = object()
    for line_number, (source, target) in enumerate(
        itertools.zip_longest(_lines(source_path), _lines(target_path), fillvalue=missing), start=1
    ):
        if not isinstance(source, str) or not isinstance(target, str):  # zip_longest's fill: one file ended first
            longer, shorter = (target_path, source_path) if source is missing else (source_path, target_path)
            raise DataFormatError(
                f"{longer}:{line_number}: misaligned parallel files: {shorter} ends after {line_number - 1} lines "
                f"but {longer} goes on (line {line_number} has no partner)"
            )
        source, target = source.strip(), target.strip()
        if not source or not target:
            skipped += 1
            continue
        pairs.append(ParallelPair(source, target))
    if not pairs:
        raise DataFormatError(f"{source_path} and {target_path} hold no non-empty sentence pair")
    return pairs, skipped


def _read_split(name: str, files: Sequence[Path], notes: list[str]) -> list[ParallelPair]:
    pairs, skipped = read_parallel(files[0], files[1])
    notes.append(f"{name}: {len(pairs)} pairs from {files[0]} + {files[1]}")
    if skipped:
        notes.append(f"{name}: skipped {skipped} pairs with an empty side")
    return pairs


MULTI30K_FILES = {
    "train": "train",
    "dev": "val",
    "test": "test_2016_flickr",
}


def load_multi30k(
    data_dir: str | os.PathLike | None = None, source_lang: str = "en", target_lang: str = "de", **_: object
) -> ParallelSplits:
    """Multi30k task 1 (Elliott et al. 2016), English→German: 29,000 / 1,014 / 1,000 (test2016) pairs."""
    if {source_lang, target_lang} != {"en", "de"}:
        raise DataFormatError(f"Multi30k here has English and German only, not {source_lang}→{target_lang}")
    required = [f"{stem}.{lang}.gz" for stem in MULTI30K_FILES.values() for lang in ("en", "de")]
    folder = find_dataset_dir("multi30k", required, data_dir)
    notes: list[str] = []
    parts = {
        split: _read_split(split, [folder / f"{stem}.{source_lang}.gz", folder / f"{stem}.{target_lang}.gz"], notes)
        for split, stem in MULTI30K_FILES.items()
    }
    return ParallelSplits(
        f"multi30k-{source_lang}-{target_lang}", parts["train"], parts["dev"], parts["test"], source_lang, target_lang, notes
    )


#: File stems tried for each split of a ``parallel`` folder, in order.
SPLIT_STEMS = {"train": ("train",), "dev": ("val", "valid", "dev"), "test": ("test",)}


def _find_pair(folder: Path, split: str, source_lang: str, target_lang: str) -> list[Path]:
    tried = []
    for stem in SPLIT_STEMS[split]:
        for suffix in ("", ".gz"):
            pair = [folder / f"{stem}.{source_lang}{suffix}", folder / f"{stem}.{target_lang}{suffix}"]
            tried.append(f"{pair[0].name} + {pair[1].name}")
            if all(p.is_file() for p in pair):
                return pair
    raise FileNotFoundError(f"no {split} files in {folder}; looked for {', '.join(tried)}")


def load_parallel(
    data_dir: str | os.PathLike | None = None,
    source_lang: str = "en",
    target_lang: str = "de",
    train_files: Sequence[str] | None = None,
    dev_files: Sequence[str] | None = None,
    test_files: Sequence[str] | None = None,
    **_: object,
) -> ParallelSplits:
    """Your line-aligned parallel files (plain or gzip): a folder of train/val/test.LANG, or files named in [nmt]."""
    explicit = {"train": train_files, "dev": dev_files, "test": test_files}
    folder = Path(data_dir).expanduser() if data_dir else None
    notes: list[str] = []
    parts: dict[str, list[ParallelPair]] = {}
    for split, files in explicit.items():
        if files:
            if len(files) != 2:
                raise DataFormatError(f"nmt.{split}_files must name two files, [source, target]; got {list(files)}")
            paths = [Path(f).expanduser() for f in files]
        elif folder is not None:
            if not folder.is_dir():
                raise FileNotFoundError(f"parallel data folder {folder} does not exist")
            paths = _find_pair(folder, split, source_lang, target_lang)
        else:
            raise DataFormatError(
                "the parallel data set needs files: --data-dir DIR with train/val/test.{src,tgt}, "
                "or --set nmt.train_files=SRC,TGT (and nmt.dev_files, nmt.test_files)"
            )
        parts[split] = _read_split(split, paths, notes)
    return ParallelSplits(
        f"parallel-{source_lang}-{target_lang}", parts["train"], parts["dev"], parts["test"], source_lang, target_lang, notes
    )


#: Translation data sets by name; each loader takes (data_dir, source_lang, target_lang, train_files, dev_files, test_files).
PARALLEL_DATASETS: dict[str, Callable[..., ParallelSplits]] = {
    "multi30k-en-de": load_multi30k,
    "parallel": load_parallel,
}


def load_parallel_dataset(name: str, **options: object) -> ParallelSplits:
    """The translation data set ``name`` (see :data:`PARALLEL_DATASETS`)."""
    if name not in PARALLEL_DATASETS:
        raise DataFormatError(f"unknown translation data set '{name}'; choose one of: {', '.join(sorted(PARALLEL_DATASETS))}")
    return PARALLEL_DATASETS[name](**options)


# --------------------------------------------------------------------------- encoding, batching


@dataclass
class EncodedPair:
    """Subword ids of one pair (no begin/end markers) and the pair's position in its split."""

    source: list[int]
    target: list[int]
    index: int


@dataclass
class ParallelReport:
    """What encoding a split did: pairs kept, dropped or cut, tokens, unknown pieces."""

    pairs: int
    dropped: int  #: training pairs left out for exceeding a max length
    truncated: int  #: dev/test pairs cut to a max length
    source_tokens: int
    target_tokens: int
    unknown: int

    def describe(self, split: str) -> str:
        total = max(self.source_tokens + self.target_tokens, 1)
        parts = [
            f"{split}: {self.pairs} pairs",
            f"{self.source_tokens / max(self.pairs, 1):.1f} / {self.target_tokens / max(self.pairs, 1):.1f} subwords per source / target",
        ]
        if self.dropped:
            parts.append(f"{self.dropped} longer than the max length dropped")
        if self.truncated:
            parts.append(f"{self.truncated} truncated to the max length")
        parts.append(f"{100.0 * self.unknown / total:.2f}% unknown pieces")
        return ", ".join(parts)


def encode_pairs(
    pairs: Sequence[ParallelPair],
    source_tokenizer: SubwordTokenizer,
    target_tokenizer: SubwordTokenizer,
    max_source_length: int,
    max_target_length: int,
    drop_long: bool,
) -> tuple[list[EncodedPair], ParallelReport]:
    """Subword ids of every pair. Over-long pairs are dropped (``drop_long``, for training) or cut.

    ``max_target_length`` counts the target's pieces without the end marker.
    """
    if max_source_length < 1 or max_target_length < 1:
        raise ValueError(f"max lengths must be at least 1, got {max_source_length} and {max_target_length}")
    sources = source_tokenizer.encode_batch([p.source for p in pairs])
    targets = target_tokenizer.encode_batch([p.target for p in pairs])
    encoded, dropped, truncated, src_tokens, tgt_tokens, unknown = [], 0, 0, 0, 0, 0
    for index, (source, target) in enumerate(zip(sources, targets)):
        if len(source) > max_source_length or len(target) > max_target_length:
            if drop_long:
                dropped += 1
                continue
            truncated += 1
            source, target = source[:max_source_length], target[:max_target_length]
        src_tokens += len(source)
        tgt_tokens += len(target)
        unknown += sum(1 for i in source if i == UNK_ID) + sum(1 for i in target if i == UNK_ID)
        encoded.append(EncodedPair(source, target, index))
    return encoded, ParallelReport(len(encoded), dropped, truncated, src_tokens, tgt_tokens, unknown)


def _pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    length = max(max(len(r) for r in rows), 1)
    out = torch.full((len(rows), length), PAD_ID, dtype=torch.long)
    for row, values in enumerate(rows):
        out[row, : len(values)] = torch.tensor(values, dtype=torch.long)
    return out


def collate_parallel(pairs: Sequence[EncodedPair]) -> Batch:
    """A padded batch: source ids as ``tokens``, target ids + ``</s>`` as ``labels``."""
    if not pairs:
        raise ValueError("cannot collate an empty list of sentence pairs")
    if any(not p.source for p in pairs):
        raise ValueError("a sentence pair has an empty source")
    tokens = _pad([p.source for p in pairs])
    labels = _pad([list(p.target) + [EOS_ID] for p in pairs])
    index = torch.tensor([p.index for p in pairs], dtype=torch.long)
    return Batch(tokens=tokens, mask=tokens != PAD_ID, labels=labels, extras={"index": index})


class ParallelBatchIterator:
    """Batches of pairs of similar length, in an order fixed by (seed, epoch).

    The same scheme as :class:`drga.data.BatchIterator`: with ``shuffle``, permute, cut into pools
    of 50 batches, sort each pool by length, batch, permute the batches; without, sort by length.

    ``epoch_size`` > 0 (with ``shuffle``) makes an epoch that many pairs, drawn without
    replacement from the whole set by the (seed, epoch) permutation: a fixed amount of work per
    epoch on a large corpus, while every epoch sees different pairs.
    """

    def __init__(self, pairs: Sequence[EncodedPair], batch_size: int, shuffle: bool, seed: int = 0, epoch_size: int = 0):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if not pairs:
            raise ValueError("no sentence pairs to batch")
        if epoch_size < 0:
            raise ValueError(f"epoch_size must be ≥ 0, got {epoch_size}")
        self.pairs = list(pairs)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.epoch_size = min(epoch_size, len(self.pairs)) if (shuffle and epoch_size) else len(self.pairs)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return (self.epoch_size + self.batch_size - 1) // self.batch_size

    def _length(self, i: int) -> tuple[int, int]:
        return (len(self.pairs[i].source), len(self.pairs[i].target))

    @property
    def examples(self) -> list[EncodedPair]:
        return self.pairs

    @staticmethod
    def collate(pairs: list[EncodedPair]) -> Batch:
        """One batch of the given pairs (what :class:`drga.runtime.distributed.ShardedBatches` calls on a shard)."""
        return collate_parallel(pairs)

    def __iter__(self) -> Iterator[Batch]:
        for indices in self.index_batches():
            yield collate_parallel([self.pairs[i] for i in indices])

    def index_batches(self, epoch: int | None = None) -> list[list[int]]:
        """The batches of this epoch (or of ``epoch``) as lists of pair indices, in order."""
        epoch = self.epoch if epoch is None else epoch
        n = len(self.pairs)
        if not self.shuffle:
            order = sorted(range(n), key=self._length)
            batches = [order[i : i + self.batch_size] for i in range(0, n, self.batch_size)]
        else:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            permutation = torch.randperm(n, generator=generator).tolist()[: self.epoch_size]
            pool = self.batch_size * 50
            batches = []
            for start in range(0, len(permutation), pool):
                chunk = sorted(permutation[start : start + pool], key=self._length)
                batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
        return batches


__all__ = [
    "ParallelPair",
    "ParallelSplits",
    "EncodedPair",
    "ParallelReport",
    "ParallelBatchIterator",
    "open_text",
    "read_parallel",
    "load_multi30k",
    "load_parallel",
    "load_parallel_dataset",
    "PARALLEL_DATASETS",
    "encode_pairs",
    "collate_parallel",
    "PAD_ID",
]
