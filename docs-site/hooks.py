"""MkDocs hooks of the documentation site (mkdocs.yml; ``make docs`` builds it).

The pages are written to be read in the repository too: a link from a page to a file outside ``docs/``
(a config, a script) has no page on the site and is shown as its text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


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
