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
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from checkout import ROOT

from drga.sweep.results import portable_path, portable_paths

#: Result folders a running study writes (issue 57's agent-size study): not rewritten under it.
LIVE = ("agent-size",)
#: A JSON string that is an absolute path of two folders or more (no escapes or spaces inside: these paths have none).
PATH_STRING = re.compile(r'"(/[^"\\\s/]+(?:/[^"\\\s]*)+)"')


def rewritten(text: str) -> str:
    """``text`` with every absolute-path string made portable (from the repository root)."""
    return PATH_STRING.sub(lambda match: json.dumps(portable_path(match.group(1), ROOT)), text)


def same_but_paths(before: Any, after: Any) -> bool:
    """Whether ``after`` is ``before`` with its absolute paths made portable and nothing else changed."""
    return portable_paths(before, ROOT) == after


def files(folders: list[Path]) -> list[Path]:
    found = []
    for folder in folders:
        found += [p for p in sorted(folder.rglob("*.json")) if not set(p.relative_to(folder).parts) & set(LIVE)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, default=[ROOT / "experiments" / "results"])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    changed = []
    for path in files(args.folders):
        text = path.read_text(encoding="utf-8")
        new = rewritten(text)
        if new == text:
            continue
        if not same_but_paths(json.loads(text), json.loads(new)):
            raise SystemExit(f"{path}: the rewrite changed more than its paths; nothing written")
        changed.append(path)
        if not args.check:
            path.write_text(new, encoding="utf-8")
    verb = "would rewrite" if args.check else "rewrote"
    print(f"{verb} the paths of {len(changed)} file(s)")
    for path in changed:
        print(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
