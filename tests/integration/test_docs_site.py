"""The documentation site's helpers (docs-site/): docstrings' reStructuredText as Markdown, links out of docs/.

The site itself is built by `make docs` (part of `make test`) in strict mode.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.scripts import ROOT, load_script

pytest.importorskip("griffe", reason="the docs extra: pip install -e '.[docs]'")
rst = load_script("docs-site/griffe_rst.py", "docs_site_griffe_rst")
hooks = load_script("docs-site/hooks.py", "docs_site_hooks")


def test_a_role_into_a_documented_module_is_a_strict_cross_reference():
    assert "drga.core.state" in rst.DOCUMENTED and "drga.runner.callbacks" in rst.DOCUMENTED
    target = "drga.core.state.build_agent_state"
    assert rst.markdown(f"see :func:`{target}`.") == f"see [`{target}`][{target}]."
    assert rst.markdown(":class:`~drga.config.ExperimentConfig`") == "[`ExperimentConfig`][drga.config.ExperimentConfig]"
    assert rst.markdown(":meth:`drga.api.RetrofitResult.table()`") == "[`drga.api.RetrofitResult.table`][drga.api.RetrofitResult.table]"


def test_a_role_into_another_module_is_an_optional_reference():
    optional = '<autoref identifier="drga.runner.loop.PhaseRunner" optional><code>PhaseRunner</code></autoref>'
    assert rst.markdown(":class:`~drga.runner.loop.PhaseRunner`") == optional
    # a module whose name begins like a documented one's is not it
    assert "optional" in rst.markdown(":mod:`drga.runner.callbacks_of_mine`")


def test_literals_and_literal_blocks_become_markdown():
    assert rst.markdown("``run.report_to`` and ``a`b``") == "`run.report_to` and `` a`b ``"
    assert rst.markdown("```python\ncode\n```") == "```python\ncode\n```"  # a fence stays a fence
    assert rst.markdown("Override what you need::\n\n    class A(Callback): ...") == "Override what you need:\n\n    class A(Callback): ..."


def test_a_link_out_of_docs_is_its_text_on_the_site():
    page = SimpleNamespace(file=SimpleNamespace(src_path="sb3.md"))
    config = {"docs_dir": str(ROOT / "docs")}
    markdown = ("[`drga/learners/sb3.py`](../drga/learners/sb3.py), [notebook](notebook.md#classifying-new-texts), "
                "[docs](https://example.org/x.md), [protocol](reference/protocol.md)")
    assert hooks.on_page_markdown(markdown, page=page, config=config) == (
        "`drga/learners/sb3.py`, [notebook](notebook.md#classifying-new-texts), [docs](https://example.org/x.md), "
        "[protocol](reference/protocol.md)"
    )
