"""Rewrite the absolute paths in committed result files as portable ones (issue 55); numbers untouched.

    python experiments/portable_result_files.py [--check] [FOLDER ...]     # default: experiments/results

Every JSON string of a committed file that is an absolute path (a run folder, a checkpoint, a logdir on the
machine that ran it: ``/work/runs/tuned-study/drga``) becomes :func:`drga.sweep.results.portable_path` of it,
taken from the repository root: below the repository, relative to it (``/work/main/runs/paper-regime`` →
``runs/paper-regime``); elsewhere from its run root on (``/work/runs/tuned-study/drga`` → ``runs/tuned-study/drga``).
The rewrite is textual, string by string, so every other byte of a file (its numbers, their formatting, the
key order) stays as it was; each rewritten file is read back and must equal the original with only those
strings changed. ``--check`` rewrites nothing and exits 1 if a file would change.

Folders a running study still writes are skipped (:data:`LIVE`): their writers export portable paths already.
Result files written since (``drga sweep --results``, tuned_study.py, tune_reward.py, brevity_probe.py) hold
portable paths from the start, so this is a one-off for the files committed before.

A run's ``.log`` under the folders (the translation study's ``logs/``: its train logs, as a run printed them) is
rewritten the same way, path by path, with :func:`portable_log`: every absolute path in its text (a command's
interpreter ``/work/main/.venv/bin/python``, the data ``/work/shared/data/multi30k/train.en.gz``, a run folder, a
traceback's file) becomes :func:`log_path` of it; every other byte of the log stays as it was. A path in a checkout
of this repository, this one or another (a copy frozen at a commit, ``/work/frozen/experiments/configs/x.toml``, or
the GPU machine's tree), is written from the checkout on (``experiments/configs/x.toml``); any other as
:func:`~drga.sweep.results.portable_path` writes it (``../shared/data/multi30k/train.en.gz``). The CPU study
(experiments/translation_cpu.py) and the GPU archives' unpacking (experiments/translation_gpu.py) write their logs
through it; a log copied in by an older checkout's code (a unit started before they did) is made portable
afterwards with the same command::

    python experiments/portable_result_files.py --check     # exit 1, naming every file (.json or .log) that would change
    python experiments/portable_result_files.py             # rewrite them; then commit
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from checkout import ROOT

from drga.sweep.results import portable_path, portable_paths

#: Result folders a running study writes (issue 57's agent-size study): not rewritten under it.
LIVE = ("agent-size",)
#: A JSON string that is an absolute path of two folders or more (no escapes or spaces inside: these paths have none).
PATH_STRING = re.compile(r'"(/[^"\\\s/]+(?:/[^"\\\s]*)+)"')
#: An absolute path of two folders or more in a log's text, where a path can start: at a line's start, after a space,
#: a quote, a backtick, a bracket or ``=`` (``--logdir=/x/y``, as tests/studies/test_portable_paths.py scans for them).
LOG_PATH = re.compile(r"(?:^|(?<=[\s\"'`=(\[,;:]))(/[A-Za-z0-9._~+@%-]+(?:/[A-Za-z0-9._~+@%-]*)+)", re.MULTILINE)
#: Folders at the top of a checkout of this repository that no other tree has at its top: an absolute path through one
#: (``/work/frozen/experiments/...``, ``/anywhere/.venv/bin/python``) is a path in a checkout, written from it on.
CHECKOUT_FOLDERS = (".gpu", ".venv", "drga", "experiments", "runs")


def rewritten(text: str) -> str:
    """``text`` with every absolute-path string made portable (from the repository root)."""
    return PATH_STRING.sub(lambda match: json.dumps(portable_path(match.group(1), ROOT)), text)


def log_path(path: str, start: str | Path = ROOT) -> str:
    """An absolute path of a log, portable: below ``start``, relative to it; in another checkout of this repository
    (through one of :data:`CHECKOUT_FOLDERS`), from that folder on; else :func:`portable_path` of it. A path's
    trailing ``/`` stays."""
    absolute = os.path.normpath(path)
    start = os.path.abspath(start)
    if absolute != start and not absolute.startswith(start.rstrip(os.sep) + os.sep):
        parts = PurePosixPath(absolute).parts  # ('/', 'work', 'frozen', '.venv', 'bin', 'python')
        folder = next((i for i in range(2, len(parts)) if parts[i] in CHECKOUT_FOLDERS), None)
        if folder is not None:
            return "/".join(parts[folder:]) + ("/" if path.endswith("/") else "")
    return portable_path(absolute, start) + ("/" if path.endswith("/") and absolute != start else "")


def portable_log(text: str, start: str | Path = ROOT) -> str:
    """A log's ``text`` with every absolute path in it :func:`log_path`; nothing else changed."""
    return LOG_PATH.sub(lambda match: log_path(match.group(1), start), text)


def same_but_paths(before: Any, after: Any) -> bool:
    """Whether ``after`` is ``before`` with its absolute paths made portable and nothing else changed."""
    return portable_paths(before, ROOT) == after


def files(folders: list[Path]) -> list[Path]:
    found = []
    for folder in folders:
        found += [p for p in sorted([*folder.rglob("*.json"), *folder.rglob("*.log")])
                  if not set(p.relative_to(folder).parts) & set(LIVE)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, default=[ROOT / "experiments" / "results"])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    changed = []
    for path in files(args.folders):
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")  # a log's stray byte stays the byte it was
        new = portable_log(text) if path.suffix == ".log" else rewritten(text)
        if new == text:
            continue
        if path.suffix == ".json" and not same_but_paths(json.loads(text), json.loads(new)):
            raise SystemExit(f"{path}: the rewrite changed more than its paths; nothing written")
        changed.append(path)
        if not args.check:
            path.write_bytes(new.encode("utf-8", errors="surrogateescape"))
    verb = "would rewrite" if args.check else "rewrote"
    print(f"{verb} the paths of {len(changed)} file(s)")
    for path in changed:
        print(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
