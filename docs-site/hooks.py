"""MkDocs hooks of the documentation site (mkdocs.yml; ``make docs`` builds it).

- The package as installed: the repository keeps ``agents/``, ``baselines/`` and ``envs/`` beside
  ``drga/``, the wheel puts them inside it (``drga.agents``, ...). mkdocstrings reads the source
  without importing it, so it is given a tree of links laid out as installed (``.api-tree/``).
- The pages are written to be read in the repository too: a link from a page to a file outside
  ``docs/`` (a config, a script) has no page on the site and is shown as its text.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Where mkdocstrings finds the package (mkdocs.yml's ``paths``), rebuilt on every build.
TREE = ROOT / ".api-tree"
#: Top-level folders of the repository that install as subpackages of ``drga``.
SUBPACKAGES = ("agents", "baselines", "envs")

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_startup(**_: Any) -> None:
    """Lay out ``.api-tree/drga`` as the installed package: links to ``drga/``'s entries and to the subpackages."""
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "drga"
    package.mkdir(parents=True)
    for entry in (ROOT / "drga").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for name in SUBPACKAGES:
        (package / name).symlink_to(ROOT / name, target_is_directory=True)


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    """A link to a repository file outside ``docs/`` becomes its text (the site has no page for it)."""
    docs = Path(config["docs_dir"]).resolve()
    folder = (docs / page.file.src_path).parent

    def outside(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("mailto:", "/")):
            return match.group(0)
        path = (folder / target).resolve()
        if path.is_relative_to(docs) or not path.is_relative_to(ROOT):
            return match.group(0)
        return match.group(1)

    return LINK.sub(outside, markdown)
