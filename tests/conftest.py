"""Shared test helpers.

Tests that read the real benchmark files use ``require_data``: where the data folder is
absent (a user's clone) they skip, but under CI (CI=true) a missing folder is a failure.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import settings

from drga.data.locate import candidate_roots
from tests.scripts import ROOT, data_root

# No per-example deadline in the property tests: on a loaded machine an example's first call (an import, a kernel's first run)
# can take longer than hypothesis's 200 ms, which says nothing of the property tested.
settings.register_profile("drga", deadline=None)
settings.load_profile("drga")


def require_data(subdir: str) -> Path:
    """The folder of a benchmark data set; skip (or fail under CI=true) when it is absent."""
    root = data_root()
    if root is not None and (root / subdir).is_dir():
        return root / subdir
    message = f"benchmark data '{subdir}' not found (searched {', '.join(map(str, candidate_roots()))})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — CI must have ../shared/data")
    pytest.skip(message)


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):  # the cores this process may run on (a container's or a CI job's share)
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def pytest_configure(config) -> None:
    """On a pytest-xdist worker (make test), a share of the cores for the worker and the processes its tests start:
    each worker with torch's default of every core would oversubscribe the machine. A test that sets its own thread
    count (run.threads) still does, and an OMP_NUM_THREADS the user set is kept."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and "OMP_NUM_THREADS" not in os.environ:
        threads = max(1, _cores() // int(workers))
        os.environ["OMP_NUM_THREADS"] = str(threads)
        torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _single_thread_and_seed():
    """Deterministic, and kind to a 2-core machine."""
    torch.manual_seed(0)
    yield


@contextlib.contextmanager
def drga_messages(level: int) -> Iterator[list[str]]:
    """The messages the ``drga`` logger gives at ``level`` and above meanwhile, in a list that fills as they
    come (a handler of its own: the command line keeps the logger's records from pytest's)."""
    messages: list[str] = []
    handler = logging.Handler(level)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("drga")
    previous = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


@pytest.fixture
def drga_warnings():
    """The warnings the ``drga`` logger gives during the test."""
    with drga_messages(logging.WARNING) as messages:
        yield messages


#: The settings of a study script's end-to-end test (tests/studies/test_tuned_study.py, tests/studies/test_agent_size_study.py): LSTM+SA
#: on a slice of bundled SUBJ, every phase one epoch of networks and agents a few units wide, so that each run takes seconds.
TINY_STUDY_CONFIG = """[data]
batch_size = 64
max_length = 30
train_fraction = 0.05

[network]
embedding_dim = 8
hidden_size = 8
attention_size = 8
classifier_hidden = 8
dropout = 0.0

[agent]
hidden_sizes = [8]
samples = 2

[train]
pretrain_epochs = 1
agent_epochs = 1
cotrain_epochs = 1
patience = 0
lr = 0.01

[run]
report_to = []
"""


@pytest.fixture
def tiny_study_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Set-up of a study script's end-to-end test; the path of :data:`TINY_STUDY_CONFIG` written to ``tmp_path``.

    The test works from the repository root, as the scripts' ``main()`` does (the test's folder comes back afterwards);
    each run the script starts is a process with one torch thread that imports this checkout's drga (PYTHONPATH).
    """
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_STUDY_CONFIG)
    return config


def pytest_terminal_summary(terminalreporter) -> None:
    """Say which comparison the regression fixture made (exact only on the machine that pinned it)."""
    kinds = [
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for key, value in getattr(report, "user_properties", ())
        if key == "regression comparison" and getattr(report, "when", "call") == "call"
    ]
    if kinds:
        from tests.regression_runs import load_fixture, machine

        pinned_on, _ = load_fixture()
        counts = ", ".join(f"{kinds.count(kind)} {kind}" for kind in sorted(set(kinds)))
        where = "this machine pinned it" if "portable" not in kinds else f"pinned on {pinned_on}, this machine {machine()}"
        terminalreporter.write_line(f"regression fixture: {counts} comparison(s) ({where})")
