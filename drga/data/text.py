"""Loaders for the sentence-classification benchmarks: MR, SUBJ, SST (5-class and binary), TSV.

Every loader returns a :class:`DatasetSplits` of tokenized examples. Data sets without an
official split (MR, SUBJ, a single TSV file) get a stratified 80/10/10 split that is a pure
function of ``split_seed``: the same seed gives the same split on every machine, and the
training seed does not change it (so seeds vary the model, not the test set).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drga.data.locate import DataNotFoundError, find_dataset_dir, is_bundled
from drga.data.tokenize import raw_text_tokens, whitespace_tokens
from drga.errors import UserError

#: User-facing warnings (data read with a repair) go to the ``drga`` logger, one sentence each.
LOGGER = logging.getLogger(__name__)


@dataclass
class TextExample:
    """One tokenized example. ``extras`` holds family-specific fields (e.g. an aspect term)."""

    tokens: list[str]
    label: int
    extras: dict[str, Any] = field(default_factory=dict)  #: values of the family's own types (token lists, spans, ids)


@dataclass
class DatasetSplits:
    name: str
    train: list[TextExample]
    dev: list[TextExample]
    test: list[TextExample]
    label_names: list[str]
    #: Facts a results table should state (split used, lines skipped, ...).
    notes: list[str] = field(default_factory=list)
    #: What the examples carry beyond tokens: "text"; "aspect" when extras hold an aspect term
    #: (``extras["aspect"]``, ``extras["aspect_span"]``); "document" when ``extras["sentences"]``
    #: holds the sentences of a document.
    provides: str = "text"
    #: How the texts became tokens (:data:`drga.data.tokenize.TOKENIZERS`'s names, or "custom"):
    #: checkpoints record it, and ``drga predict`` splits new text the same way.
    tokenizer: str = "whitespace"

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    @property
    def content_fingerprint(self) -> str:
        """A short hash of the data as read: the label names, and each split's examples (tokens, label, extras) in order.
        The same files read with the same settings give the same value (a sweep compares it before skipping a run)."""
        digest = hashlib.sha256(json.dumps(self.label_names).encode())
        for split in (self.train, self.dev, self.test):
            for example in split:
                digest.update(json.dumps([example.label, example.tokens, example.extras], sort_keys=True, default=str).encode())
                digest.update(b"\n")
            digest.update(b"|")
        return digest.hexdigest()[:16]


class DataFormatError(UserError, ValueError):
    """A data file holds a line the loader cannot read; the message names file and line."""


def stratified_split(
    examples: Sequence[TextExample], seed: int, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)
) -> tuple[list[TextExample], list[TextExample], list[TextExample]]:
    """Split each class by the same fractions, with a permutation drawn from ``seed`` alone.

    Hand-written on purpose, not scikit-learn's ``train_test_split(stratify=...)``: this split defines
    the data of every committed study run (experiments/results) and of the regression fixture, and
    sklearn's (a legacy ``RandomState``, its own rounding of the class counts) does not reproduce it
    for the same seed. Measured on MR and SUBJ, seeds 0-2, 80/10/10 in two stratified steps: 34 % of the
    examples land in another part (3,375-3,642 of 10,000-10,662), the test sets share 9-11 % of their
    examples, about what two unrelated splits share, and MR's parts come out one example apart in size.
    Switching would move every number and break the comparison with the committed studies.
    """
    import numpy as np  # here, not at the top: `drga --help` and the other commands that load no data stay fast

    rng = np.random.default_rng(seed)
    parts: tuple[list[TextExample], list[TextExample], list[TextExample]] = ([], [], [])
    for label in sorted({ex.label for ex in examples}):
        members = [ex for ex in examples if ex.label == label]
        order = rng.permutation(len(members))
        n_train = int(round(fractions[0] * len(members)))
        n_dev = int(round(fractions[1] * len(members)))
        for rank, index in enumerate(order):
            part = 0 if rank < n_train else 1 if rank < n_train + n_dev else 2
            parts[part].append(members[index])
    return parts


#: ``TextExample.extras`` key of the examples that must stay on one side of a held-out split:
#: the index of the SST tree a phrase comes from.
GROUP = "group"


def holdout_split(examples: Sequence[TextExample], seed: int, fraction: float) -> tuple[list[TextExample], list[TextExample]]:
    """(kept, held out): ``fraction`` of the examples held out, stratified by label (``data.agent_holdout``).

    Examples that share ``extras["group"]`` go to one side together, stratified by the label of the
    group's longest example: an SST sentence held out while the network trains on its own phrases
    would not be held out at all. Without groups this is ``stratified_split``'s first two parts.
    """
    if not any(GROUP in example.extras for example in examples):
        kept, held_out, _ = stratified_split(examples, seed, (1.0 - fraction, fraction, 0.0))
        return kept, held_out
    members: dict[object, list[int]] = {}
    for index, example in enumerate(examples):
        members.setdefault(example.extras.get(GROUP, ("ungrouped", index)), []).append(index)
    keys = list(members)
    # one stand-in per group, carrying its position in ``keys``, split as single examples are
    stand_ins = []
    for position, key in enumerate(keys):
        longest = max(members[key], key=lambda i: len(examples[i].tokens))
        stand_ins.append(TextExample(examples[longest].tokens, examples[longest].label, {"position": position}))
    _, held_stand_ins, _ = stratified_split(stand_ins, seed, (1.0 - fraction, fraction, 0.0))
    held_keys = {keys[int(stand_in.extras["position"])] for stand_in in held_stand_ins}
    held = {index for key in held_keys for index in members[key]}
    kept = [example for index, example in enumerate(examples) if index not in held]
    return kept, [example for index, example in enumerate(examples) if index in held]


def _read_sentence_files(folder: Path, files: Sequence[str], lowercase: bool) -> tuple[list[TextExample], int]:
    examples, empty = [], 0
    for label, name in enumerate(files):
        with (folder / name).open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                tokens = whitespace_tokens(line, lowercase)
                if not tokens:
                    empty += 1
                    continue
                examples.append(TextExample(tokens, label))
    return examples, empty


def _load_sentence_pair(
    name: str, subdir: str, files: Sequence[str], label_names: list[str], data_dir, split_seed: int, lowercase: bool
) -> DatasetSplits:
    folder = find_dataset_dir(subdir, files, data_dir)
    examples, empty = _read_sentence_files(folder, files, lowercase)
    train, dev, test = stratified_split(examples, split_seed)
    where = f"{folder} (the copy bundled with the package)" if is_bundled(folder) else str(folder)
    notes = [f"{name}: {len(examples)} sentences from {where}; no official split, stratified 80/10/10 with split seed {split_seed}"]
    if empty:
        notes.append(f"{name}: skipped {empty} empty lines")
    return DatasetSplits(name, train, dev, test, label_names, notes)


def load_mr(data_dir=None, split_seed: int = 1234, lowercase: bool = True, **_: object) -> DatasetSplits:
    """Movie Review sentence polarity (Pang & Lee 2005): 5,331 negative + 5,331 positive."""
    return _load_sentence_pair(
        "mr", "mr", ["rt-polarity.neg", "rt-polarity.pos"], ["negative", "positive"], data_dir, split_seed, lowercase
    )


def load_subj(data_dir=None, split_seed: int = 1234, lowercase: bool = True, **_: object) -> DatasetSplits:
    """Subjectivity (Pang & Lee 2004): 5,000 objective (plot) + 5,000 subjective (quote) sentences."""
    return _load_sentence_pair(
        "subj", "subj", ["plot.tok.gt9.5000", "quote.tok.gt9.5000"], ["objective", "subjective"], data_dir, split_seed, lowercase
    )


# --- SST: PTB-style bracketed trees ------------------------------------------------------


@dataclass
class Tree:
    label: int
    children: list[Tree]
    word: str | None = None

    def leaves(self) -> list[str]:
        """The sentence's tokens, in order (a multi-piece leaf gives several tokens)."""
        return self.word.split() if self.word is not None else [w for c in self.children for w in c.leaves()]

    def subtrees(self):
        yield self
        for child in self.children:
            yield from child.subtrees()


_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def _unescape(token: str) -> str:
    return _PTB_ESCAPES.get(token, token.replace("\\/", "/").replace("\\*", "*"))


def parse_tree(text: str) -> Tree:
    """Parse ``(3 (2 The) (4 (3 good) (2 film)))``; raises ValueError on malformed input."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    if not tokens:
        raise ValueError("empty line")
    position = 0

    def node() -> Tree:
        nonlocal position
        if position >= len(tokens) or tokens[position] != "(":
            raise ValueError(f"expected '(' at token {position}")
        position += 1
        if position >= len(tokens) or not tokens[position].lstrip("-").isdigit():
            raise ValueError(f"expected a numeric label at token {position}")
        label = int(tokens[position])
        position += 1
        if position < len(tokens) and tokens[position] not in ("(", ")"):
            # A leaf may hold several space-separated pieces ("8 1\\/2" in SST).
            start = position
            while position < len(tokens) and tokens[position] not in ("(", ")"):
                position += 1
            tree = Tree(label, [], " ".join(_unescape(t) for t in tokens[start:position]))
        else:
            children = []
            while position < len(tokens) and tokens[position] == "(":
                children.append(node())
            if not children:
                raise ValueError(f"node with label {label} has neither a word nor children")
            tree = Tree(label, children)
        if position >= len(tokens) or tokens[position] != ")":
            raise ValueError(f"missing ')' at token {position}")
        position += 1
        return tree

    tree = node()
    if position != len(tokens):
        raise ValueError(f"unexpected text after the tree at token {position}")
    return tree


def read_trees(path: Path) -> list[Tree]:
    trees = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                trees.append(parse_tree(line))
            except ValueError as error:
                raise DataFormatError(f"{path}:{line_number}: malformed tree: {error}") from None
    return trees


SST_LABELS = ["very negative", "negative", "neutral", "positive", "very positive"]


def _sst_examples(trees: list[Tree], binary: bool, phrases: bool, lowercase: bool) -> tuple[list[TextExample], int]:
    """The examples of some trees, and how many repeated phrases were dropped.

    With ``phrases`` every labelled phrase of every tree is an example, once: a phrase that
    recurs with the same label (single words, common phrases) is kept only at its first
    occurrence, as in the literature's ~150k training phrases of SST. Each phrase's
    ``extras["group"]`` is its tree's index, so that ``holdout_split`` keeps a tree together.
    """
    examples, seen, repeated = [], set(), 0
    for number, tree in enumerate(trees):
        nodes = list(tree.subtrees()) if phrases else [tree]
        for node in nodes:
            label = node.label
            if binary:
                if label == 2:
                    continue
                label = int(label > 2)
            tokens = [w.lower() if lowercase else w for w in node.leaves()]
            if phrases:
                key = (tuple(tokens), label)
                if key in seen:
                    repeated += 1
                    continue
                seen.add(key)
            # a phrase belongs to the first tree it occurs in (repeats are dropped)
            examples.append(TextExample(tokens, label, {GROUP: number} if phrases else {}))
    return examples, repeated


def load_sst(data_dir=None, binary: bool = False, phrase_level: bool = False, lowercase: bool = True, **_: object) -> DatasetSplits:
    """Stanford Sentiment Treebank, official splits; SST-2 drops neutral and merges 0,1 / 3,4.

    ``phrase_level`` trains on every labelled phrase of the training trees (dev/test stay
    sentence-level, as in the literature).
    """
    files = ["train.txt", "dev.txt", "test.txt"]
    folder = find_dataset_dir("sst", files, data_dir)
    trees = {name: read_trees(folder / f"{name}.txt") for name in ("train", "dev", "test")}
    splits, repeated = {}, 0
    for split, split_trees in trees.items():
        splits[split], dropped = _sst_examples(split_trees, binary, phrase_level and split == "train", lowercase)
        repeated += dropped
    labels = ["negative", "positive"] if binary else list(SST_LABELS)
    name = "sst2" if binary else "sst"
    notes = [
        f"{name}: official splits from {folder} ({len(trees['train'])}/{len(trees['dev'])}/{len(trees['test'])} trees)"
        + (
            f", phrase-level training: {len(splits['train'])} distinct labelled phrases ({repeated} repeats dropped)"
            if phrase_level
            else ", sentence-level"
        )
    ]
    return DatasetSplits(name, splits["train"], splits["dev"], splits["test"], labels, notes)


# --- user data: label<TAB>text ----------------------------------------------------------


#: First-line labels taken for a header row when ``tsv_header`` is "auto".
HEADER_LABELS = {"label", "labels", "class", "classes", "category", "target", "y", "sentiment", "polarity"}


@dataclass
class TsvFile:
    """The rows of one ``label<TAB>text`` file and what reading it skipped or repaired."""

    rows: list[tuple[str, list[str], int]]  #: (label as written, tokens, line number)
    empty: int = 0  #: lines with a label but no text
    header: bool = False  #: the first line was a header and was skipped
    replaced: int = 0  #: lines that held undecodable bytes, read with U+FFFD (``encoding_errors="replace"``)
    #: The first line with an empty label (0: none), refused by :meth:`check` after the training file's
    #: column check, so that a file with its columns swapped is named as such rather than by an empty text.
    empty_label_line: int = 0

    def check(self, path: Path, columns: bool) -> None:
        """Refuse a label column that holds texts (``columns``: the training file's, :func:`check_label_column`), then an empty label."""
        if columns:
            check_label_column([label for label, _, _ in self.rows], [" ".join(tokens) for _, tokens, _ in self.rows], str(path))
        if self.empty_label_line:
            raise DataFormatError(f"{path}:{self.empty_label_line}: empty label")


#: A label column with at least this many distinct values, most of them written once, holds text, not labels.
MANY_LABELS = 20
#: A text column with at most this many distinct values is named in the message as what looks like the labels.
FEW_TEXTS = 10


def check_label_column(labels: Sequence[str], texts: Sequence[str], where: str) -> None:
    """Refuse labels that look like texts (many distinct values, most written once): the columns were swapped.

    Such data would otherwise fail later and elsewhere (an empty dev split, an empty label, labels
    differing only in case), none of which names the cause.
    """
    counts = Counter(labels)
    once = sum(1 for count in counts.values() if count == 1)
    if len(counts) < MANY_LABELS or 2 * once < len(counts):
        return
    shown = ", ".join(repr(label if len(label) <= 40 else label[:37] + "...") for label in list(counts)[:2])
    distinct_texts = sorted(set(texts))
    hint = ""
    if len(distinct_texts) <= FEW_TEXTS:
        hint = f", while the text column holds only {len(distinct_texts)} distinct values ({', '.join(map(repr, distinct_texts))})"
    raise DataFormatError(
        f"{where}: {len(counts)} distinct labels in {len(labels)} rows, {once} of them written once (e.g. {shown}){hint}: "
        "are the columns swapped? Each line must be label<TAB>text, the label first"
    )


def read_tsv(path: Path, lowercase: bool, header: str = "auto", encoding: str = "utf-8", encoding_errors: str = "strict") -> TsvFile:
    """Read ``label<TAB>text`` lines; a UTF-8 byte-order mark is stripped.

    ``header``: "auto" skips a first line whose label is a column name (:data:`HEADER_LABELS`),
    "yes" always skips the first line, "no" never. Bytes that are not ``encoding`` stop the
    load with the file, line and byte offset, unless ``encoding_errors`` is "replace", which
    reads them as U+FFFD and counts the lines.
    """
    raw = path.read_bytes()
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        text = raw.decode(codec, errors="strict")
        replaced = 0
    except UnicodeDecodeError as error:
        if encoding_errors != "replace":
            bad_line = raw[: error.start].count(b"\n") + 1
            raise DataFormatError(
                f"{path}:{bad_line}: byte 0x{raw[error.start]:02x} at offset {error.start} is not valid {encoding}; "
                "fix the file, or load it with data.encoding (another encoding) or data.encoding_errors=replace"
            ) from None
        text = raw.decode(codec, errors="replace")
        lines = [number for number, line in enumerate(text.splitlines(), start=1) if "\ufffd" in line]
        replaced = len(lines)
        where = ", ".join(map(str, lines[:5])) + (", ..." if replaced > 5 else "")
        LOGGER.warning(
            f"{path}: {replaced} {'line holds' if replaced == 1 else 'lines hold'} bytes that are not valid {encoding} "
            f"(line{'s' if replaced > 1 else ''} {where}); read with U+FFFD in their place (data.encoding_errors=replace)"
        )
    result = TsvFile(rows=[], replaced=replaced)
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if "\t" not in line:
            raise DataFormatError(f"{path}:{line_number}: expected 'label<TAB>text', found no tab")
        label, body = line.split("\t", 1)
        if not result.rows and not result.header and line_number == _first_line(text):
            if header == "yes" or (header == "auto" and label.strip().lower() in HEADER_LABELS):
                result.header = True
                continue
        if "\t" in body:  # a third column would be read as more text, without a word
            raise DataFormatError(
                f"{path}:{line_number}: {line.count(chr(9)) + 1} tab-separated columns; each line must be label<TAB>text, and "
                "a further column would be merged into the text: remove it, or replace the tabs inside the text by spaces"
            )
        if not label.strip():
            result.empty_label_line = result.empty_label_line or line_number
            continue
        tokens = raw_text_tokens(body, lowercase)  # users' text is raw: punctuation split off (drga/data/tokenize.py)
        if not tokens:
            result.empty += 1
            continue
        result.rows.append((label, tokens, line_number))
    return result


def _first_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return number
    return 0


def _canonical_label(label: str) -> str:
    """The spelling-free form of a label: stripped, lowercase, and numbers as numbers (1, 1.0, 01)."""
    value = label.strip().lower()
    try:
        number = float(value)
    except ValueError:
        return value
    return repr(int(number)) if number.is_integer() else repr(number)


def _check_label_spellings(files: dict[Path, TsvFile]) -> list[str]:
    """The label names, each written one way; labels that differ only in spelling are an error."""
    spellings: dict[str, dict[str, tuple[Path, int]]] = {}
    for path, tsv in files.items():
        for label, _, line_number in tsv.rows:
            spellings.setdefault(_canonical_label(label), {}).setdefault(label, (path, line_number))
    clashes = {key: forms for key, forms in spellings.items() if len(forms) > 1}
    if clashes:
        described = "; ".join(
            " vs ".join(f"{form!r} ({where.name}:{line})" for form, (where, line) in forms.items()) for forms in clashes.values()
        )
        raise DataFormatError(f"labels that differ only in spelling would become different classes: {described}; write each label one way")
    return sorted(next(iter(forms)) for forms in spellings.values())


#: A training label with fewer examples than this, where another label has :data:`RARE_RATIO` times as many, is questioned.
RARE_COUNT = 5
#: ... and so is one with fewer than this share of the commonest label's examples, however many it has.
RARE_SHARE = 0.01
#: How many times more examples the commonest label needs before a label under :data:`RARE_COUNT` is questioned.
RARE_RATIO = 10
#: Lines of a rare label named in the message (then "...").
SHOWN_LINES = 5


def rare_labels(counts: Counter) -> list[str]:
    """The labels with far fewer examples than the commonest one: under :data:`RARE_COUNT` where the commonest has
    :data:`RARE_RATIO` times as many, or under :data:`RARE_SHARE` of its count (a typo makes a class of one row)."""
    commonest = max(counts.values(), default=0)
    return sorted(
        label for label, count in counts.items()
        if (count < RARE_COUNT and RARE_RATIO * count <= commonest) or count < RARE_SHARE * commonest
    )


def check_rare_labels(rows: Sequence[tuple[str, int]], where: str, policy: str = "refuse", unit: str = "line") -> None:
    """Refuse a training label that has far fewer examples than the others (:func:`rare_labels`), unless ``policy``
    is "keep" (``data.rare_labels``): name its lines and the closest other labels (difflib), for a typo such as
    ``subjectiv`` beside ``subjective`` would otherwise train as a class of its own. ``rows``: (label, line number), or
    another ``unit``'s number (the Python API's pairs)."""
    if policy == "keep":
        return
    counts = Counter(label for label, _ in rows)
    rare = rare_labels(counts)
    if not rare:
        return
    commonest = max(counts, key=lambda label: (counts[label], label))
    described = []
    for label in rare:
        lines = [line for name, line in rows if name == label]
        shown = ", ".join(map(str, lines[:SHOWN_LINES])) + (", ..." if len(lines) > SHOWN_LINES else "")
        others = [name for name in counts if name != label]
        closest = sorted(others, key=lambda name: (-difflib.SequenceMatcher(None, label, name).ratio(), -counts[name], name))[:2]
        nearest = ", ".join(repr(name) for name in closest)
        examples = "example" if counts[label] == 1 else "examples"
        described.append(f"label {label!r} has {counts[label]} {examples} ({unit}{'s' if len(lines) > 1 else ''} {shown}) where "
                         f"{commonest!r} has {counts[commonest]}; the closest other labels: {nearest}")
    first = min(line for _, line in rows)
    header = unit == "line" and any([line for name, line in rows if name == label] == [first] for label in rare)
    raise DataFormatError(
        f"{where}: " + "; ".join(described) + ". A misspelt label would "
        "train as a class of its own: correct it, or, if it is a class, keep it with "
        + ("--set data.rare_labels=keep" if unit == "line" else "rare_labels='keep'")
        + (f" (if line {first} is a header, skip it with --set data.tsv_header=yes)" if header else "")
    )


def _notes_for(location: Path, files: dict[Path, TsvFile]) -> list[str]:
    notes = []
    for path, tsv in files.items():
        if tsv.header:
            notes.append(f"tsv: {path.name}: first line read as a header and skipped (data.tsv_header)")
        if tsv.empty:
            notes.append(f"tsv: {path.name}: skipped {tsv.empty} line{'s' if tsv.empty != 1 else ''} with empty text")
    return notes


def load_tsv(
    data_dir=None,
    tsv_path: str | os.PathLike | None = None,
    split_seed: int = 1234,
    lowercase: bool = True,
    tsv_header: str = "auto",
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    rare_labels: str = "refuse",
    **_: object,
) -> DatasetSplits:
    """Users' own data: a folder with train.tsv, dev.tsv, test.tsv, or one .tsv file (split 80/10/10).

    Each line is ``label<TAB>text``; labels are any strings, numbered in sorted order. A label
    written two ways (``1`` and ``1.0``, ``pos`` and ``Pos``, `` 1``) is refused, as is a dev or
    test label that training never has, and a training label with far fewer examples than the
    others (:func:`check_rare_labels`; ``rare_labels="keep"`` trains it); see :func:`read_tsv`
    for headers and encodings.
    """
    location = tsv_path or data_dir
    if location is None:
        raise DataNotFoundError("the tsv data set needs a path: --tsv PATH (a .tsv file or a folder with train/dev/test.tsv)")
    location = Path(location).expanduser()
    read = lambda path: read_tsv(path, lowercase, tsv_header, encoding, encoding_errors)  # noqa: E731
    if location.is_dir():
        missing = [n for n in ("train.tsv", "dev.tsv", "test.tsv") if not (location / n).is_file()]
        if missing:
            raise FileNotFoundError(f"{location} lacks {', '.join(missing)} (expected train.tsv, dev.tsv and test.tsv)")
        files = {location / f"{n}.tsv": read(location / f"{n}.tsv") for n in ("train", "dev", "test")}
        for path, tsv in files.items():
            tsv.check(path, columns=path.name == "train.tsv")
        label_names = _check_label_spellings(files)
        trained = {label for label, _, _ in files[location / "train.tsv"].rows}
        for path, tsv in files.items():
            unseen = sorted({label for label, _, _ in tsv.rows} - trained)
            if unseen:
                first = next(line for label, _, line in tsv.rows if label == unseen[0])
                raise DataFormatError(
                    f"{path}:{first}: label {unseen[0]!r} never occurs in train.tsv"
                    + (f" (nor do {', '.join(map(repr, unseen[1:]))})" if len(unseen) > 1 else "")
                    + "; a model cannot learn a class it is never shown"
                )
        label_names = sorted(trained)
        train_file = location / "train.tsv"
        check_rare_labels([(label, line) for label, _, line in files[train_file].rows], str(train_file), rare_labels)
        index = {name: i for i, name in enumerate(label_names)}
        train, dev, test = ([TextExample(t, index[label]) for label, t, _ in tsv.rows] for tsv in files.values())
        notes = [f"tsv: official train/dev/test from {location}"]
    elif location.is_file():
        files = {location: read(location)}
        files[location].check(location, columns=True)
        label_names = _check_label_spellings(files)
        rows = files[location].rows
        if len(label_names) >= 2:  # one label is refused below, in its own words
            check_rare_labels([(label, line) for label, _, line in rows], str(location), rare_labels)
        index = {name: i for i, name in enumerate(label_names)}
        train, dev, test = stratified_split([TextExample(t, index[label]) for label, t, _ in rows], split_seed)
        notes = [f"tsv: {len(rows)} rows from {location}, stratified 80/10/10 with split seed {split_seed}"]
    else:
        raise FileNotFoundError(f"TSV data not found at {location}")
    if not label_names:
        empty = location / "train.tsv" if location.is_dir() else location
        raise DataFormatError(f"{empty}: no labelled line (each line must be label<TAB>text); is it the file you meant?")
    if len(label_names) < 2:
        raise DataFormatError(f"{location}: every line has the label {label_names[0]!r}; a classifier needs at least two labels")
    return DatasetSplits("tsv", train, dev, test, label_names, notes + _notes_for(location, files), tokenizer="raw-text")
