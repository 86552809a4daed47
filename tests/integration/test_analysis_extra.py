"""The analysis extra (issue 63): the base install needs neither scipy, captum nor vaderSentiment; a command or a
measure that needs one says which extra to install, in one message, before it starts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import tomllib

from drga.errors import UserError

ROOT = Path(__file__).resolve().parents[2]


def test_the_base_install_does_not_pull_the_analysis_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = " ".join(project["dependencies"]).lower()
    for package in ("scipy", "captum", "vadersentiment", "statsmodels"):
        assert package not in base
        assert any(spec.lower().startswith(package) for spec in project["optional-dependencies"]["analysis"])


def test_a_missing_package_names_the_extra(monkeypatch):
    from drga.analysis import extra

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "captum" else real(name, *a))
    with pytest.raises(UserError, match=r"^drga analyze needs captum, from the analysis extra: pip install 'drga\[analysis\]'$"):
        extra.require_extra("drga analyze")
    extra.require_extra("drga compare", ("scipy",))  # what it needs is there
    with pytest.raises(UserError, match=r"Kendall's τ needs nosuchpackage, from the analysis extra: pip install 'drga\[analysis\]'"):
        extra.needs_extra("nosuchpackage.stats", "Kendall's τ")


def test_drga_analyze_says_so_before_it_starts(monkeypatch, capsys, tmp_path):
    from drga.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vaderSentiment" else real(name, *a))
    assert main(["analyze", str(tmp_path / "no-such.pt"), "--out", str(tmp_path / "out")]) == 2
    assert "drga analyze needs vaderSentiment, from the analysis extra: pip install 'drga[analysis]'" in capsys.readouterr().err
