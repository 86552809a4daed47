"""Run the real files of `drga download` through it on 127.0.0.1 and compare them with a data root.

    python experiments/check_downloads.py FILES ROOT [--against ../shared/data]

FILES holds the real files as FILES/<download name>/<file name> (fetched by hand, or taken from
the public repositories' git objects at the commits pinned in drga/data/sources.py). Each
source is served from a local HTTP server with its pinned SHA-256 unchanged (only the host in
the URL differs), downloaded into ROOT, and its folder compared file by file with the same
folder under --against; then every data set it provides is loaded from both and compared
example by example. This is how docs/data.md's "byte-identical" claims were checked.
"""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import functools
import http.server
import os
import threading
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.data import DATASETS, load_dataset
from drga.data.download import download
from drga.data.sources import SOURCES


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        pass


def _differences(comparison: filecmp.dircmp) -> list[str]:
    found = comparison.diff_files + comparison.left_only + comparison.right_only
    return found + [name for sub in comparison.subdirs.values() for name in _differences(sub)]


def _examples(splits) -> list[list[tuple]]:
    def key(example):
        return (example.tokens, example.label) if hasattr(example, "tokens") else (example.source, example.target)

    return [[key(example) for example in part] for part in (splits.train, splits.dev, splits.test)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path)
    parser.add_argument("root", type=Path)
    parser.add_argument("--against", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    os.environ["NO_PROXY"] = "127.0.0.1"
    handler = functools.partial(_QuietHandler, directory=str(args.files))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    for source in SOURCES.values():
        if not (args.files / source.name).is_dir():
            continue
        local = tuple(dataclasses.replace(r, url=f"{base}/{source.name}/{r.filename}") for r in source.files)
        folder = download(dataclasses.replace(source, files=local), args.root)
        differing = _differences(filecmp.dircmp(folder, args.against / source.folder))
        print(f"{source.name}: {folder} vs {args.against / source.folder}: " + (", ".join(differing) or "identical files"))
        for name in source.provides:
            if name in DATASETS:
                same = _examples(load_dataset(name, data_dir=folder)) == _examples(load_dataset(name, data_dir=args.against))
                print(f"  {name}: {'the same' if same else 'DIFFERENT'} train/dev/test examples")
    server.shutdown()


if __name__ == "__main__":
    main()
