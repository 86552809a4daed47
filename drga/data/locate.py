"""Finding benchmark data on disk. Nothing here touches the network."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from drga.errors import UserError

#: Where the repository lives; ``../shared/data`` is looked up beside it as well as beside the cwd.
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


class DataNotFoundError(UserError, FileNotFoundError):
    """The data set's files are in none of the places searched."""


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "drga" / "data"


def candidate_roots(explicit: str | os.PathLike | None = None) -> list[Path]:
    """Data roots in the order they are searched: explicit, $DRGA_DATA, ../shared/data, user cache."""
    roots: list[Path] = []
    if explicit:
        roots.append(Path(explicit).expanduser())
    if os.environ.get("DRGA_DATA"):
        roots.append(Path(os.environ["DRGA_DATA"]).expanduser())
    roots += [Path.cwd().parent / "shared" / "data", _PROJECT_ROOT.parent / "shared" / "data", user_cache_dir()]
    unique: list[Path] = []
    for root in roots:
        if root not in unique:
            unique.append(root)
    return unique


def find_dataset_dir(
    subdir: str, required: Sequence[str], explicit: str | os.PathLike | None = None, search_others: bool = False
) -> Path:
    """The first folder holding every file in ``required``.

    ``explicit`` (``--data-dir``, ``data.data_dir``) may name the data set's own folder or a data root containing
    ``subdir/``; a folder the user names is where the data must be, so without ``search_others`` nothing else is
    searched (another copy found elsewhere would be read without a word). Without ``explicit``, and with
    ``search_others`` after it (word vectors found by name), every candidate root is searched for ``subdir/``, then
    the package's own copy.
    """
    if explicit and not search_others:
        named = Path(explicit).expanduser()
        for folder in (named, named / subdir):
            if all((folder / name).is_file() for name in required):
                return folder
        raise DataNotFoundError(
            f"data set '{subdir}' not found in {named}, the folder --data-dir (data.data_dir) names: expected the files "
            f"{', '.join(required)} in it or in {named / subdir}; nothing else is searched when a folder is named. Point "
            "--data-dir at the folder that holds them, or leave it out to search the usual places" + download_hint(subdir, required)
        )
    searched: list[Path] = []
    folders: list[Path] = []
    if explicit:
        folders.append(Path(explicit).expanduser())
    folders += [root / subdir for root in candidate_roots(explicit)]
    folders += bundled_folders(subdir)
    for folder in folders:
        if folder in searched:
            continue
        searched.append(folder)
        if all((folder / name).is_file() for name in required):
            return folder
    raise DataNotFoundError(
        f"data set '{subdir}' not found. Expected the files {', '.join(required)} in a folder '{subdir}/' "
        "under one of these (searched in this order):\n  "
        + "\n  ".join(str(p) for p in searched)
        + "\nPoint to your copy with --data-dir DIR or the DRGA_DATA environment variable."
        + download_hint(subdir, required)
    )


# --- Copies bundled with the package: searched last ----------------------------------------------

#: Small data sets the package ships (SUBJ, and the GloVe rows of its words) so that the demo runs
#: in a clone or an installed package with no data at all; a copy found anywhere else comes first.
BUNDLED_ROOT = Path(__file__).resolve().parent / "bundled"


def bundled_folders(subdir: str) -> list[Path]:
    """The package's own copy of ``subdir``, where it ships one."""
    folder = BUNDLED_ROOT / subdir
    return [folder] if folder.is_dir() else []


def is_bundled(folder: Path) -> bool:
    """Whether ``folder`` is the package's own copy of a data set (for the data line to say so)."""
    return folder.resolve().is_relative_to(BUNDLED_ROOT)


# --- the `drga download` command that fetches a missing data set (drga/data/sources.py) -------


def download_hint(subdir: str, required: Sequence[str]) -> str:
    """The sentence naming ``drga download NAME`` for a data folder, or "" when nothing fetches it."""
    from drga.data.sources import source_for_files

    source = source_for_files(subdir, list(required))
    return f"\nOr fetch it: drga download {source.name}" if source else ""
