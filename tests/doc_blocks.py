"""The runnable code of the documentation: for tests/integration/test_docs.py and tests/wheel_check.py."""

from __future__ import annotations

import re


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks, except those that show a file of the user's (first line '# name.py')."""
    blocks = re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)
    return [b for b in blocks if not re.match(r"#\s*\S+\.py\s*\n", b)]
