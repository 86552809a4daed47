"""A griffe extension: the docstrings' reStructuredText spellings as the Markdown mkdocstrings renders.

The code's docstrings use Sphinx's roles and literals (``:func:`drga.core.state.build_agent_state```,
``` ``text`` ```), which read well in the source and in ``help()``. On the site, a role becomes a
cross-reference, a double-backtick literal a Markdown code span, and a paragraph's closing ``::``
a colon. A reference into a module the reference documents (a ``::: module`` line of
docs/reference/) must resolve, or the strict build fails; one into another module (the runner's
internals, torch) is a code span that links where the target happens to be documented.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"
#: The modules the reference renders: their objects are cross-referenced strictly.
DOCUMENTED = tuple(sorted({line[4:].strip() for page in REFERENCE.glob("*.md")
                           for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("::: ")}))

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const):`(~?)([^`<>]+?)`")
LITERAL = re.compile(r"(?<!`)``(?!`)(.+?)(?<!`)``(?!`)")
LITERAL_BLOCK = re.compile(r"(\S)::$", flags=re.MULTILINE)


def documented(target: str) -> bool:
    """Whether ``target`` (a dotted path) is in a module the reference renders."""
    return any(target == module or target.startswith(module + ".") for module in DOCUMENTED)


def _cross_reference(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2).strip().rstrip("()").lstrip(".")
    title = target.rsplit(".", 1)[-1] if short else target
    if documented(target):
        return f"[`{title}`][{target}]"
    return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'


def _code_span(match: re.Match[str]) -> str:
    code = match.group(1)
    return f"`` {code} ``" if "`" in code else f"`{code}`"  # Markdown's code span around a backtick


def markdown(text: str) -> str:
    """``text`` with its roles as cross-references, its ``literals`` as code spans and its ``::`` as colons."""
    text = ROLE.sub(_cross_reference, text)
    text = LITERAL.sub(_code_span, text)
    return LITERAL_BLOCK.sub(r"\1:", text)


class RstToMarkdown(griffe.Extension):
    """Rewrites every docstring with :func:`markdown` once the package is loaded."""

    def on_object(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
