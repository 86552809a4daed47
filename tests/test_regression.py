"""A refactor changes no number: short fixed-seed runs of every family reproduce the pinned fixture exactly.

The runs and how to re-pin them: ``tests/regression_runs.py``.
"""

import json

import pytest

from tests.conftest import require_data
from tests.regression_runs import CLASSIFICATION, FIXTURE, TRANSLATION, differences, run_classification, run_translation


@pytest.mark.parametrize("name", list(CLASSIFICATION))
def test_classification_run_reproduces_the_pinned_numbers(name, tmp_path):
    require_data(CLASSIFICATION[name][0])
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))[name]
    found = differences(pinned, run_classification(name, require_data(CLASSIFICATION[name][0]).parent, tmp_path))
    assert not found, "\n".join(found[:20])


@pytest.mark.parametrize("name", list(TRANSLATION))
def test_translation_run_reproduces_the_pinned_numbers(name, tmp_path):
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))[name]
    found = differences(pinned, run_translation(name, tmp_path))
    assert not found, "\n".join(found[:20])


def test_a_changed_number_is_reported():
    pinned = {"rows": {"a": {"test": {"accuracy": 0.5, "reward": float("nan")}}}, "history": [{"epoch": 1}]}
    changed = {"rows": {"a": {"test": {"accuracy": 0.5000001, "reward": float("nan")}}}, "history": [{"epoch": 1}]}
    assert differences(pinned, pinned) == []
    assert differences(pinned, changed) == ["/rows/a/test/accuracy: pinned 0.5, now 0.5000001"]
