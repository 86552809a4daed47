"""Rewrite the ``config`` block of result files in the saved form of the toolkit's current version: ``[network]`` and
``[reward]`` hold their own fields and the chosen plug-in's settings only (``drga/config.py`` · ``PluginSection``), where
files written before kept every built-in network's keys and eq. 5's. Nothing a run measured changes.

    python experiments/migrate_saved_configs.py            # every result file under experiments/results/
    python experiments/migrate_saved_configs.py --check    # exit 1 if any file is not in the current form
    python experiments/migrate_saved_configs.py --results DIR

A file whose settings fingerprint was computed from its own ``config`` block gets the fingerprint of the rewritten
block; one whose fingerprint was not (another version's set of fingerprinted keys) keeps it, and ``drga sweep`` compares
its settings key by key as before. A file is rewritten only if writing it back unchanged would reproduce it byte for byte.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.config import config_from_dict, flatten, settings_fingerprint
from drga.files import write_text_atomic
from drga.tasks.translation.config import translation_config_from_dict

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("network", "reward")


def _writer(payload: Any, text: str) -> Any:
    """The way ``text`` was written from ``payload`` (``drga sweep``'s indent of 1, drga/sweep/results.py, or a
    script's 2), as a function of a payload; None if neither reproduces it."""
    for indent in (1, 2):
        for end in ("\n", ""):
            if json.dumps(payload, indent=indent) + end == text:
                return lambda new, indent=indent, end=end: json.dumps(new, indent=indent) + end
    return None


def migrated(block: dict[str, Any]) -> dict[str, Any]:
    """``block`` with its ``[network]`` and ``[reward]`` in the current saved form, every other section as it was."""
    config = translation_config_from_dict(block) if "nmt" in block else config_from_dict(block)
    saved = config.to_dict()
    return {section: (saved[section] if section in SECTIONS and section in saved else values) for section, values in block.items()}


def migrate(path: Path) -> tuple[str, str | None]:
    """What to do with one file: ("current" | "rewritten" | "no config" | "skipped: why", the new text or None)."""
    text = path.read_text(encoding="utf-8")
    payload = json.loads(text)
    block = payload.get("config") if isinstance(payload, dict) else None
    if not isinstance(block, dict):
        return "no config", None
    writer = _writer(payload, text)
    if writer is None:
        return "skipped: written back, it would not be the same file", None
    new_block = migrated(block)
    if new_block == block and list(map(list, new_block.values())) == list(map(list, block.values())):
        return "current", None
    fingerprint = payload.get("fingerprint")
    if isinstance(fingerprint, dict) and fingerprint.get("settings") == settings_fingerprint(flatten(block)):
        fingerprint = {**fingerprint, "settings": settings_fingerprint(flatten(new_block))}
    new = {key: (new_block if key == "config" else fingerprint if key == "fingerprint" else value) for key, value in payload.items()}
    return "rewritten", writer(new)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "experiments" / "results")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is not in the current form")
    args = parser.parse_args(argv)
    counts: dict[str, int] = {}
    stale = []
    for path in sorted(args.results.rglob("*.json")):
        outcome, new = migrate(path)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome.startswith("skipped"):
            print(f"{path}: {outcome}", file=sys.stderr)
        if new is not None:
            stale.append(path)
            if not args.check:
                write_text_atomic(path, new)
    print(", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items())))
    if args.check and stale:
        print(f"{len(stale)} result files are not in the current saved form: python experiments/migrate_saved_configs.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
