"""AG News (Zhang et al. 2015): 4-class news topic from ``"class","title","description"`` CSV rows.

With the official pair ``train.csv`` + ``test.csv`` the test split is official and the dev set
is a stratified 10% of train.csv. With only ``test.csv`` (7,600 rows, as on these machines) the
file is split 80/10/10, stratified, with ``split_seed``; the run's notes say which was used.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from drga.data.locate import DataNotFoundError, find_dataset_dir
from drga.data.text import DataFormatError, DatasetSplits, TextExample, stratified_split
from drga.data.tokenize import raw_text_tokens

AG_NEWS_LABELS = ["World", "Sports", "Business", "Sci/Tech"]

def tokenize_news(text: str, lowercase: bool = True) -> list[str]:
    """Tokens of raw news text; the files' backslash line breaks and ``#36;`` escapes are undone."""
    text = text.replace("\\", " ").replace("#36;", "$").replace("#39;", "'").replace("&lt;", "<").replace("&gt;", ">")
    text = text.replace("&amp;", "&").replace("quot;", '"')
    return raw_text_tokens(text, lowercase)  # the CSV text is raw, unlike the pre-tokenized sentence benchmarks


def read_ag_news_csv(path: Path, lowercase: bool = True) -> list[TextExample]:
    examples = []
    with path.open(encoding="utf-8", newline="") as handle:
        for line_number, row in enumerate(csv.reader(handle), start=1):
            if not row:
                continue
            if len(row) != 3:
                raise DataFormatError(f"{path}:{line_number}: expected 3 columns (class, title, description), got {len(row)}")
            label, title, description = row
            if label.strip() not in ("1", "2", "3", "4"):
                raise DataFormatError(f"{path}:{line_number}: class must be 1..4, got {label!r}")
            tokens = tokenize_news(f"{title} . {description}" if description.strip() else title, lowercase)
            if not tokens:
                raise DataFormatError(f"{path}:{line_number}: empty title and description")
            examples.append(TextExample(tokens, int(label) - 1))
    return examples


def load_ag_news(
    data_dir: str | os.PathLike | None = None, split_seed: int = 1234, lowercase: bool = True, **_: object
) -> DatasetSplits:
    """AG News, 4 classes: official train.csv + test.csv when present, else a seeded 80/10/10 split of test.csv."""
    try:
        folder = find_dataset_dir("ag_news", ["train.csv", "test.csv"], data_dir)
    except DataNotFoundError:
        folder = find_dataset_dir("ag_news", ["test.csv"], data_dir)
        rows = read_ag_news_csv(folder / "test.csv", lowercase)
        train, dev, test = stratified_split(rows, split_seed)
        note = (
            f"ag-news: only the official TEST file was found ({folder / 'test.csv'}, {len(rows)} rows); "
            f"train/dev/test are a stratified 80/10/10 split of it with split seed {split_seed}, "
            "so results are NOT comparable with the official 120,000-row training setup"
        )
    else:
        train_all = read_ag_news_csv(folder / "train.csv", lowercase)
        test = read_ag_news_csv(folder / "test.csv", lowercase)
        train, dev, rest = stratified_split(train_all, split_seed, (0.9, 0.1, 0.0))
        dev = dev + rest
        note = (
            f"ag-news: official train.csv ({len(train_all)} rows) and test.csv ({len(test)} rows) from {folder}; "
            f"dev = stratified 10% of train.csv with split seed {split_seed}"
        )
    return DatasetSplits("ag-news", train, dev, test, list(AG_NEWS_LABELS), [note], tokenizer="raw-text")
