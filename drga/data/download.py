"""``drga download NAME``: fetch a data set with pooch, check its SHA-256, arrange it where the loaders look.

The steps, for a source of :data:`drga.data.sources.SOURCES` and a data root (``--dir``, else
``$DRGA_DATA``, else ``~/.cache/drga/data``):

1. each file is fetched into ``<root>/downloads/<name>/`` by pooch, which streams it into a
   temporary file there and keeps it only when its SHA-256 is the pinned one; a file already
   in that folder (one a user put there by hand) is checked instead of fetched;
2. the files are unpacked and arranged into a hidden staging folder ``<root>/.partial-<name>-*``,
   in the layout the loaders read, and every data set they provide is loaded from there;
3. only then is each entry moved into ``<root>/<folder>/`` with one rename, and the downloads
   are deleted.

So a checksum mismatch, a broken transfer, a missing network or a file the loaders cannot
read leaves nothing in the folders the loaders search. The network is touched only in step 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TextIO

from drga.data.locate import candidate_roots, user_cache_dir
from drga.data.sources import SOURCES, DataSource, RemoteFile, source_for
from drga.errors import UserError

logger = logging.getLogger("drga")

#: Seconds pooch waits for the server to answer (or to send the next bytes) before giving up.
TIMEOUT_S = 60


class DownloadError(UserError):
    """A file could not be fetched, did not match its checksum, or did not read as the loaders expect."""


def default_root() -> Path:
    """Where ``drga download`` puts data without ``--dir``: ``$DRGA_DATA``, else the user cache."""
    return Path(os.environ["DRGA_DATA"]).expanduser() if os.environ.get("DRGA_DATA") else user_cache_dir()


def resolve_names(names: list[str]) -> list[DataSource]:
    """The sources of download names, data-set names or vector names, each once, in order."""
    chosen: list[DataSource] = []
    for name in names:
        source = source_for(name)
        if source is None:
            raise DownloadError(f"nothing to download for '{name}'; choose one of: {', '.join(SOURCES)} (drga download --list)")
        if source not in chosen:
            chosen.append(source)
    return chosen


def is_complete(source: DataSource, folder: Path) -> bool:
    return all((folder / name).exists() for name in source.produces)


def find_source(source: DataSource) -> Path | None:
    """The first folder in the lookup order that holds what the loaders need of ``source``."""
    for root in candidate_roots():
        folder = root / source.folder
        if all((folder / name).exists() for name in source.required):
            return folder
    return None


def download(source: DataSource, root: Path | None = None, progress: bool = False) -> Path:
    """Fetch, check and arrange ``source`` under ``root``; return its folder (see the module docstring)."""
    root = Path(root).expanduser() if root is not None else default_root()
    target = root / source.folder
    if is_complete(source, target):
        logger.info(f"{source.name}: already in {target}")
        return target
    inbox = root / "downloads" / source.name
    fetched = [fetch(source.name, remote, inbox, progress) for remote in source.files]
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{source.name}-", dir=root))
    try:
        staged = staging / source.folder
        for remote, path in zip(source.files, fetched):
            _arrange(remote, path, staged)
        missing = [name for name in source.produces if not (staged / name).exists()]
        if missing:
            raise DownloadError(f"{source.name}: the downloaded files do not hold {', '.join(missing)}; nothing was put in place")
        _check_readable(source, staged)
        _move_into_place(staged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(inbox, ignore_errors=True)
    with contextlib.suppress(OSError):  # downloads/ itself goes once nothing else waits in it
        inbox.parent.rmdir()
    logger.info(f"{source.name}: ready in {target}")
    return target


# --------------------------------------------------------------------------- step 1: fetch and verify


def fetch(name: str, remote: RemoteFile, inbox: Path, progress: bool = False) -> Path:
    """``remote`` in ``inbox``, its SHA-256 checked: fetched by pooch unless a copy is already there."""
    import pooch
    import requests

    path = inbox / remote.filename
    if path.is_file():
        found = pooch.file_hash(str(path))
        if found != remote.sha256:
            raise DownloadError(
                f"{path} has SHA-256 {found}, not the pinned {remote.sha256}: it is not the file of {remote.url}; "
                "delete it and run the command again"
            )
        return path
    logger.info(f"{name}: fetching {remote.url} ({remote.size / 1e6:,.1f} MB)")
    downloader = _HashingDownloader(pooch.HTTPDownloader(progressbar=progress, timeout=TIMEOUT_S))
    pooch_logger = pooch.get_logger()
    level = pooch_logger.level
    pooch_logger.setLevel(logging.WARNING)  # our own line above says what is fetched
    try:
        pooch.retrieve(remote.url, known_hash=f"sha256:{remote.sha256}", fname=remote.filename, path=inbox, downloader=downloader)
    except ValueError:  # pooch's verdict on a hash mismatch; it has deleted the download already
        got = f" (got {downloader.sha256})" if downloader.sha256 else ""
        raise DownloadError(
            f"refused {remote.url}: its SHA-256 is not the pinned {remote.sha256}{got}, so nothing was kept. "
            "The host may have changed the file, or the transfer was corrupted; docs/data.md says where each checksum comes from"
        ) from None
    except requests.exceptions.RequestException as error:
        raise DownloadError(
            f"could not fetch {remote.url} ({_reason(error)}); nothing was kept. Without a network here, fetch that URL "
            f"elsewhere and put the file in {inbox}/ as {remote.filename}, then run `drga download {name}` again: "
            "it checks the SHA-256 and unpacks it"
        ) from None
    finally:
        pooch_logger.setLevel(level)
    return path


class _HashingDownloader:
    """pooch's HTTP downloader that also notes the SHA-256 of what arrived, for the mismatch message."""

    def __init__(self, http: Callable) -> None:
        self.http = http
        self.sha256 = ""

    def __call__(self, url: str, output_file: str, pooch_object: object, check_only: bool = False) -> object:
        import pooch

        result = self.http(url, output_file, pooch_object, check_only=check_only)
        if not check_only:
            self.sha256 = pooch.file_hash(output_file)
        return result


def _reason(error: Exception) -> str:
    import requests

    if isinstance(error, requests.exceptions.HTTPError) and error.response is not None:
        return f"HTTP {error.response.status_code}"
    if isinstance(error, requests.exceptions.ChunkedEncodingError):
        return "the transfer was cut off before the end"
    if isinstance(error, requests.exceptions.Timeout):
        return f"no answer within {TIMEOUT_S} s"
    if isinstance(error, requests.exceptions.ConnectionError):
        return "no connection to the host"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


# --------------------------------------------------------------------------- step 2: arrange and read


def _arrange(remote: RemoteFile, path: Path, folder: Path) -> None:
    """Put ``path`` (or the part ``remote.unpack`` of the zip at ``path``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    if remote.unpack is None:
        shutil.copyfile(path, folder / remote.filename)
        return
    prefix = PurePosixPath(remote.unpack).parts
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                parts = PurePosixPath(member.filename).parts
                if member.is_dir() or parts[: len(prefix)] != prefix or len(parts) == len(prefix):
                    continue
                relative = parts[len(prefix) :]
                if any(part in ("..", "") for part in relative) or member.filename.startswith("/"):
                    raise DownloadError(f"{path}: refusing the archive member '{member.filename}', which points outside its folder")
                destination = folder.joinpath(*relative)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, destination.open("wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
    except zipfile.BadZipFile as error:
        raise DownloadError(f"{path} is not a readable zip archive ({error}); nothing was put in place") from None


def _check_readable(source: DataSource, folder: Path) -> None:
    """Load every data set ``source`` provides from ``folder`` (vectors: the first row's width)."""
    from drga.data.embeddings import VECTOR_SETS
    from drga.data.registry import DATASETS, load_dataset

    for name in source.provides:
        try:
            if name in DATASETS:
                load_dataset(name, data_dir=folder)
            elif name in VECTOR_SETS:
                _check_vector_width(folder / VECTOR_SETS[name][1].removesuffix(".gz"), VECTOR_SETS[name][2])
        except (UserError, ValueError, UnicodeDecodeError) as error:
            message = f"{source.name}: the downloaded files do not read as '{name}' ({error}); nothing was put in place"
            raise DownloadError(message) from None


def _check_vector_width(path: Path, dim: int) -> None:
    with path.open(encoding="utf-8", errors="replace") as handle:
        fields = handle.readline().rstrip("\n").split(" ")
    if len(fields) < dim + 1:
        raise DownloadError(f"{path.name}: the first row has {len(fields) - 1} values, not {dim}")


# --------------------------------------------------------------------------- step 3: move into place


def _move_into_place(staged: Path, target: Path) -> None:
    """Each entry of ``staged`` replaces its namesake in ``target`` with one rename (same file system)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(staged.iterdir()):
        destination = target / entry.name
        if entry.is_dir() and destination.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".replaced-{entry.name}-", dir=target))
            os.replace(destination, retired / entry.name)
            os.replace(entry, destination)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(entry, destination)


# --------------------------------------------------------------------------- listing


def describe_sources(out: TextIO | None = None) -> None:
    """``drga download --list``: every source, what it serves, its size, licence and URLs."""
    out = out or sys.stdout
    for source in SOURCES.values():
        print(f"{source.name:14s} {source.size / 1e6:9,.1f} MB  {source.title}", file=out)
        print(f"{'':14s} serves: {', '.join(source.provides)}; licence: {source.licence}", file=out)
        for remote in source.files:
            print(f"{'':14s} {remote.url}", file=out)
    print(f"\ninto --dir DIR, else $DRGA_DATA, else {user_cache_dir()}; checksums and their sources: docs/data.md", file=out)
