"""SemEval aspect-term polarity (2014 Task 4, 2015 Task 12, 2016 Task 5) in the three-line ``$T$`` format.

Each example is three lines: the sentence with the aspect term replaced by ``$T$``, the aspect
term, and its polarity (-1, 0, 1 → negative, neutral, positive). The sentence given to the
network is the original one (``$T$`` replaced back by the aspect's tokens) and the aspect's
token positions in it are kept (``extras["aspect_span"]`` = [start, end), end exclusive).

The files have an official train/test split and no dev split: the dev set is a stratified 10%
of the training file drawn with ``split_seed`` (said so in the run's notes).
"""

from __future__ import annotations

from pathlib import Path

from drga.data.locate import find_dataset_dir
from drga.data.text import DataFormatError, DatasetSplits, TextExample, stratified_split

POLARITY_NAMES = ["negative", "neutral", "positive"]

#: data set name → (folder, train file, test file)
SEMEVAL_FILES: dict[str, tuple[str, str, str]] = {
    "semeval14-laptop": ("semeval14", "Laptops_Train.xml.seg", "Laptops_Test_Gold.xml.seg"),
    "semeval14-restaurant": ("semeval14", "Restaurants_Train.xml.seg", "Restaurants_Test_Gold.xml.seg"),
    "semeval15-restaurant": ("semeval15", "restaurant_train.raw", "restaurant_test.raw"),
    "semeval16-restaurant": ("semeval16", "restaurant_train.raw", "restaurant_test.raw"),
}


def read_aspect_file(path: Path, lowercase: bool = True) -> list[TextExample]:
    """Every example of one three-line ``$T$`` file, in file order."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) % 3:
        raise DataFormatError(f"{path}: {len(lines)} lines is not a multiple of 3 (sentence, aspect, polarity)")
    examples = []
    for start in range(0, len(lines), 3):
        sentence, aspect, polarity = (line.strip() for line in lines[start : start + 3])
        where = f"{path}:{start + 1}"
        if sentence.count("$T$") != 1:
            raise DataFormatError(f"{where}: the sentence must hold '$T$' exactly once: {sentence!r}")
        if polarity not in ("-1", "0", "1"):
            raise DataFormatError(f"{path}:{start + 3}: polarity must be -1, 0 or 1, got {polarity!r}")
        # Split before lowercasing: a few sentences hold a lowercase "$t$" artefact ("sea$t$")
        # that is a word, not the placeholder.
        left, right = sentence.split("$T$")
        if lowercase:
            left, aspect, right = left.lower(), aspect.lower(), right.lower()
        aspect_tokens = aspect.split()
        if not aspect_tokens:
            raise DataFormatError(f"{path}:{start + 2}: empty aspect term")
        left_tokens, right_tokens = left.split(), right.split()
        tokens = left_tokens + aspect_tokens + right_tokens
        span = [len(left_tokens), len(left_tokens) + len(aspect_tokens)]
        examples.append(TextExample(tokens, int(polarity) + 1, {"aspect": aspect_tokens, "aspect_span": span}))
    return examples


def load_semeval(name: str, data_dir=None, split_seed: int = 1234, lowercase: bool = True, **_: object) -> DatasetSplits:
    """SemEval aspect-term polarity, 3 classes; official test, dev = stratified 10% of train."""
    if name not in SEMEVAL_FILES:
        raise DataFormatError(f"unknown SemEval data set '{name}'; choose one of {', '.join(SEMEVAL_FILES)}")
    subdir, train_file, test_file = SEMEVAL_FILES[name]
    folder = find_dataset_dir(subdir, [train_file, test_file], data_dir)
    train_all = read_aspect_file(folder / train_file, lowercase)
    test = read_aspect_file(folder / test_file, lowercase)
    train, dev_a, dev_b = stratified_split(train_all, split_seed, (0.9, 0.1, 0.0))
    dev = dev_a + dev_b
    notes = [
        f"{name}: {len(train_all)} training and {len(test)} test aspect terms from {folder}; official test split, "
        f"dev = stratified 10% of the training file with split seed {split_seed} ({len(train)}/{len(dev)})"
    ]
    return DatasetSplits(name, train, dev, test, list(POLARITY_NAMES), notes, provides="aspect")
