"""Pretrained word vectors in the GloVe text format: ``word v1 v2 ... vD`` per line.

A vector set is named by a short name (:data:`VECTOR_SETS`, found through the same data
lookup as the data sets: explicit folder, ``$DRGA_DATA``, ``../shared/data``, the user cache)
or by the path of a file, plain (``.txt``) or gzip'd (``.txt.gz``). The reader:

- takes the vector as the *last* D fields of a line and the word as everything before them,
  so keys that contain spaces (glove.840B.300d has some) are read whole;
- counts rows it cannot use and reports them with their first line numbers, never failing on
  one bad row: rows with too few fields, and rows of vocabulary words with a field that is no
  number, NaN or inf (other rows are not parsed: that keeps a 400,000-row file fast); a file
  whose width disagrees with ``embedding_dim`` from its first line on is one clear error;
- looks a vocabulary word up in its exact form, then in its lowercase form (GloVe 6B is
  uncased), and reports the coverage;
- caches the matrix for a (file, vocabulary, width, seed) in the user cache, so the second
  load of the same file for the same vocabulary reads one small tensor file.

Words the file lacks get random vectors drawn (seeded) with the found vectors' spread, as
Kim (2014) does; ``<pad>`` and ``<unk>`` are all zeros.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import torch

from drga.data.locate import DataNotFoundError, find_dataset_dir, user_cache_dir
from drga.data.vocab import Vocabulary
from drga.errors import UserError
from drga.files import atomic_path

#: User-facing warnings (rows of a vector file skipped) go to the ``drga`` logger, one sentence each.
LOGGER = logging.getLogger(__name__)

#: Short name → (data subfolder, file name, width) of the vector sets the toolkit knows. The file is
#: found gzip'd (as named) or as ``drga download`` unpacks it (the name without ``.gz``).
VECTOR_SETS: dict[str, tuple[str, str, int]] = {
    "glove-6b-50d": ("glove", "glove.6B.50d.txt.gz", 50),
    "glove-6b-100d": ("glove", "glove.6B.100d.txt.gz", 100),
    "glove-6b-200d": ("glove", "glove.6B.200d.txt.gz", 200),
    "glove-6b-300d": ("glove", "glove.6B.300d.txt.gz", 300),
    "glove-840b-300d": ("glove", "glove.840B.300d.txt.gz", 300),
    # The rows of glove-6b-50d that SUBJ's words can look up (every token of SUBJ, exact and
    # lowercased), bundled with the package (drga/data/bundled/glove/) so that the demo runs with
    # no data at hand and gives the numbers the full file gives. A name of its own, not a silent
    # fallback for "glove-6b-50d": on any other data set it would leave most words random while
    # the run seemed to use GloVe; asked for by name, its coverage line shows what it is.
    "glove-6b-50d-subj": ("glove", "glove.6B.50d.subj.txt.gz", 50),
}

#: Bump when the cached content's meaning changes, so that old caches are not read.
_CACHE_VERSION = 2


class VectorFileError(UserError, ValueError):
    """A vector file the toolkit cannot use as a whole (wrong width, no usable row)."""


@dataclass
class PretrainedVectors:
    """An embedding matrix [len(vocab), dim] for a vocabulary and what the file gave it."""

    matrix: torch.Tensor
    source: str
    found_exact: int  #: vocabulary words found in their exact form
    found_lowercase: int  #: vocabulary words found only through their lowercase form
    vocabulary_size: int  #: words that could be looked up (the vocabulary less <pad> and <unk>)
    bad_rows: int = 0  #: rows skipped: too few fields, a field that is no number, NaN or inf
    bad_row_lines: list[int] = field(default_factory=list)  #: the first few skipped rows' line numbers
    from_cache: bool = False

    @property
    def found(self) -> int:
        return self.found_exact + self.found_lowercase

    @property
    def coverage(self) -> float:
        return self.found / max(self.vocabulary_size, 1)

    def describe(self) -> str:
        text = (
            f"vectors: vocabulary {self.vocabulary_size:,} words, {100 * self.coverage:.1f}% found in {self.source} "
            f"({self.found_exact:,} exact, {self.found_lowercase:,} lowercased)"
        )
        if self.bad_rows:
            where = ", ".join(map(str, self.bad_row_lines)) + (", ..." if self.bad_rows > len(self.bad_row_lines) else "")
            text += f"; {self.bad_rows:,} unusable rows skipped (lines {where})"
        return text + (" [cache]" if self.from_cache else "")


def resolve_vectors(name_or_path: str, data_dir: str | os.PathLike | None = None) -> tuple[Path, int | None]:
    """The file of a short name (:data:`VECTOR_SETS`) or a path, and its width when known."""
    if name_or_path in VECTOR_SETS:
        subdir, filename, dim = VECTOR_SETS[name_or_path]
        unpacked = filename.removesuffix(".gz")
        try:
            return find_dataset_dir(subdir, [filename], data_dir, search_others=True) / filename, dim
        except DataNotFoundError as gzipped_missing:
            try:
                return find_dataset_dir(subdir, [unpacked], data_dir, search_others=True) / unpacked, dim
            except DataNotFoundError:
                raise DataNotFoundError(str(gzipped_missing).replace(filename, f"{filename} (or {unpacked})", 1)) from None
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        known = ", ".join(VECTOR_SETS)
        raise FileNotFoundError(f"word vectors '{name_or_path}': no such file, and not a known name ({known})")
    return path, None


def load_vectors(
    name_or_path: str | os.PathLike,
    vocab: Vocabulary,
    dim: int,
    seed: int = 0,
    data_dir: str | os.PathLike | None = None,
    cache: bool = True,
) -> PretrainedVectors:
    """The embedding matrix for ``vocab`` from a vector set (short name or path); see the module docstring."""
    path, known_dim = resolve_vectors(str(name_or_path), data_dir)
    if known_dim is not None and known_dim != dim:
        raise VectorFileError(f"word vectors '{name_or_path}' are {known_dim}-dimensional; set network.embedding_dim = {known_dim}")
    cache_file = _cache_path(path, vocab, dim, seed) if cache else None
    if cache_file is not None and cache_file.is_file():
        try:
            saved = torch.load(cache_file, weights_only=True)
            return PretrainedVectors(**{**saved, "source": str(path), "from_cache": True})
        except Exception:  # a torn or foreign cache file: read the vectors again
            cache_file.unlink(missing_ok=True)
    vectors = _read(path, vocab, dim, seed)
    if cache_file is not None:
        _write_cache(cache_file, vectors)
    return vectors


def _open_text(path: Path) -> IO[str]:
    # Vector files are UTF-8; a stray byte must not stop 400,000 good rows (it only spoils one key).
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def _read(path: Path, vocab: Vocabulary, dim: int, seed: int) -> PretrainedVectors:
    exact = {word: index for index, word in enumerate(vocab.itos) if index > 1}
    by_lowercase: dict[str, list[int]] = {}
    for word, index in exact.items():
        by_lowercase.setdefault(word.lower(), []).append(index)
    scan = _scan_rows(path, dim, exact, by_lowercase)
    _report_bad_rows(path, scan)
    matrix = _random_rows(len(vocab), dim, seed, scan.rows)
    for index, values in scan.rows.items():
        matrix[index] = torch.tensor(values)
    matrix[:2] = 0.0  # <pad>, and <unk>: no training word is unknown, so nothing would train a random one
    return PretrainedVectors(
        matrix=matrix,
        source=str(path),
        found_exact=len(scan.exact_hits),
        found_lowercase=len(scan.rows) - len(scan.exact_hits),
        vocabulary_size=len(exact),
        bad_rows=scan.bad_rows,
        bad_row_lines=scan.bad_lines,
    )


@dataclass
class _RowScan:
    """What one pass over a vector file found for a vocabulary."""

    rows: dict[int, list[float]] = field(default_factory=dict)  #: vocabulary index → its vector
    exact_hits: set[int] = field(default_factory=set)  #: indices whose row matched the word exactly
    bad_rows: int = 0
    bad_lines: list[int] = field(default_factory=list)  #: the first 5 bad rows' line numbers

    def skip(self, line_number: int) -> None:
        self.bad_rows += 1
        if len(self.bad_lines) < 5:
            self.bad_lines.append(line_number)


def _scan_rows(path: Path, dim: int, exact: dict[str, int], by_lowercase: dict[str, list[int]]) -> _RowScan:
    """The rows of the vocabulary's words, each word's exact row winning over a lowercase match."""
    scan = _RowScan()
    width_checked = False
    with _open_text(path) as handle:
        for line_number, line in enumerate(handle, start=1):
            fields = split_row(line, dim)
            if line_number == 1 and len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
                continue  # a word2vec-style header: "count width"
            if not width_checked:
                _check_width(path, line_number, line, dim)
                width_checked = True
            if len(fields) != dim + 1 or not fields[0]:
                scan.skip(line_number)
                continue
            key = fields[0]
            exact_index = exact.get(key)
            lowercase_indices = [i for i in by_lowercase.get(key, ()) if i not in scan.exact_hits and i != exact_index]
            if exact_index is None and not lowercase_indices:
                continue  # parsing only the vocabulary's rows keeps a 400,000-row file fast
            values = _finite_values(fields[1:], dim)
            if values is None:
                scan.skip(line_number)
                continue
            if exact_index is not None:
                scan.rows[exact_index] = values
                scan.exact_hits.add(exact_index)
            for index in lowercase_indices:  # an exact row met later replaces this one
                scan.rows[index] = values
    return scan


def split_row(line: str, dim: int) -> list[str]:
    """A row's word and its ``dim`` value fields (fewer fields for a short row); the word may hold spaces."""
    return line.rstrip("\r\n").rstrip(" ").rsplit(" ", dim)


def lookup_keys(words: Iterable[str]) -> set[str]:
    """Every row key the reader uses for a vocabulary of ``words``: each word and its lowercase form."""
    return {form for word in words for form in (word, word.lower())}


def _finite_values(fields: list[str], dim: int) -> list[float] | None:
    """The ``dim`` numbers of a row, or None when one is no number, NaN or inf."""
    try:
        values = [float(x) for x in fields]
    except ValueError:
        values = []
    if len(values) != dim or not all(math.isfinite(v) for v in values):
        return None
    return values


def _report_bad_rows(path: Path, scan: _RowScan) -> None:
    """A file with bad rows and no usable one is an error; a few bad rows among good ones, a warning."""
    if not scan.rows and scan.bad_rows:
        raise VectorFileError(f"{path}: no usable row for this vocabulary ({scan.bad_rows} unusable rows)")
    if scan.bad_rows:
        where = ", ".join(map(str, scan.bad_lines)) + (", ..." if scan.bad_rows > len(scan.bad_lines) else "")
        LOGGER.warning(
            f"{path}: skipped {scan.bad_rows} unusable {'row (line' if scan.bad_rows == 1 else 'rows (lines'} {where}: "
            "a number missing, text in place of one, NaN or inf); "
            "words found only in those rows start from random vectors"
        )


def _check_width(path: Path, line_number: int, line: str, dim: int) -> None:
    """The first row decides: a file whose vectors are not ``dim`` wide is one error, not 400,000 skipped rows."""
    parts = line.split()
    width = 0
    for part in reversed(parts[1:]):
        try:
            float(part)
        except ValueError:
            break
        width += 1
    if width != dim:
        raise VectorFileError(
            f"{path}:{line_number}: expected a word and {dim} numbers (network.embedding_dim), got {width}; "
            "set network.embedding_dim to the file's width"
        )


def _random_rows(size: int, dim: int, seed: int, rows: dict[int, list[float]]) -> torch.Tensor:
    """Uniform vectors with the found vectors' variance (Kim 2014), for the words the file lacks."""
    spread = 0.25
    if len(rows) > 1:
        spread = math.sqrt(3.0) * torch.tensor(list(rows.values())).std().item()
    generator = torch.Generator().manual_seed(seed)
    return torch.empty(size, dim).uniform_(-spread, spread, generator=generator)


def cache_dir() -> Path:
    """``~/.cache/drga/vectors`` (or under ``$XDG_CACHE_HOME``), beside the data sets' user cache."""
    return user_cache_dir().parent / "vectors"


def _cache_path(path: Path, vocab: Vocabulary, dim: int, seed: int) -> Path:
    stat = path.stat()
    digest = hashlib.sha256()
    for part in (_CACHE_VERSION, path.resolve(), stat.st_size, stat.st_mtime_ns, dim, seed):
        digest.update(f"{part}\0".encode())
    digest.update("\n".join(vocab.itos).encode("utf-8", errors="surrogatepass"))
    return cache_dir() / f"{path.name}.{digest.hexdigest()[:24]}.pt"


def _write_cache(cache_file: Path, vectors: PretrainedVectors) -> None:
    """Atomically; a cache that cannot be written (read-only home) only costs the next load its time."""
    saved = {k: v for k, v in vars(vectors).items() if k not in ("source", "from_cache")}
    try:
        with atomic_path(cache_file) as partial:
            torch.save(saved, partial)
    except OSError:
        pass
