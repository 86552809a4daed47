"""The data sets ``--dataset`` selects: name → loader, and :func:`load_dataset`."""

from __future__ import annotations

from collections.abc import Callable

from drga.data.aspects import load_semeval
from drga.data.documents import load_movie_reviews
from drga.data.news import load_ag_news
from drga.data.planted import load_planted_mr, load_planted_subj
from drga.data.text import DatasetSplits, load_mr, load_sst, load_subj, load_tsv

LoaderFn = Callable[..., DatasetSplits]


def _semeval(**options: object) -> DatasetSplits:
    return load_semeval(**options)  # type: ignore[arg-type]


def _ag_news(**options: object) -> DatasetSplits:
    """AG News, 4 classes: official train.csv + test.csv when present, else a seeded 80/10/10 split of test.csv."""
    return load_ag_news(**options)  # type: ignore[arg-type]


def _movie_reviews(**options: object) -> DatasetSplits:
    """Movie reviews v2.0 documents (Pang & Lee 2004), 1,000 neg + 1,000 pos, seeded 80/10/10 (hierarchical nets)."""
    return load_movie_reviews(**options)  # type: ignore[arg-type]


def _semeval_loader(name: str, year: str, domain: str) -> tuple[LoaderFn, dict[str, object]]:
    def loader(**options: object) -> DatasetSplits:
        return _semeval(**options)

    loader.__doc__ = f"SemEval-{year} {domain} aspect-term polarity, 3 classes (official test; dev = 10% of train)."
    return loader, {"name": name}


#: Data sets selectable with ``--dataset``: name → (loader, fixed keyword arguments).
DATASETS: dict[str, tuple[LoaderFn, dict[str, object]]] = {
    "mr": (load_mr, {}),
    "subj": (load_subj, {}),
    "sst": (load_sst, {"binary": False}),
    "sst2": (load_sst, {"binary": True}),
    "tsv": (load_tsv, {}),
    "ag-news": (_ag_news, {}),
    "semeval14-laptop": _semeval_loader("semeval14-laptop", "2014", "laptop"),
    "semeval14-restaurant": _semeval_loader("semeval14-restaurant", "2014", "restaurant"),
    "semeval15-restaurant": _semeval_loader("semeval15-restaurant", "2015", "restaurant"),
    "semeval16-restaurant": _semeval_loader("semeval16-restaurant", "2016", "restaurant"),
    "movie-reviews": (_movie_reviews, {}),
    "planted-subj": (load_planted_subj, {}),
    "planted-mr": (load_planted_mr, {}),
}


def load_dataset(name: str, **options: object) -> DatasetSplits:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset '{name}'; choose one of: {', '.join(sorted(DATASETS))}")
    loader, fixed = DATASETS[name]
    return loader(**options, **fixed)


# --- translation (parallel text): registered here so `drga datasets` lists them ----------------


def _translation_loader(name: str, doc: str) -> tuple[LoaderFn, dict[str, object]]:
    def loader(**options: object) -> DatasetSplits:
        from drga.data.parallel import load_parallel_dataset

        return load_parallel_dataset(name, **options)  # type: ignore[return-value]

    loader.__doc__ = doc
    return loader, {}


DATASETS["multi30k-en-de"] = _translation_loader(
    "multi30k-en-de", "Multi30k task 1 English→German translation, official train/val/test2016 (seq2seq networks)."
)
DATASETS["parallel"] = _translation_loader(
    "parallel", "Your line-aligned parallel text (plain or gzip): --data-dir with train/val/test.{src,tgt} or nmt.*_files."
)
