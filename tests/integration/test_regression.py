"""A refactor changes no number: short fixed-seed runs of every family reproduce the pinned fixture.

Exactly on the machine that pinned it, within a stated tolerance elsewhere (the test output says
which: see the summary line "regression fixture: ..."). The runs, the two comparisons and how to
re-pin: ``tests/regression_runs.py``; two versions of the code compared exactly on any machine:
``make regression BASE=<rev>``.
"""

import math
import re

import pytest

from tests.conftest import require_data
from tests.regression_runs import (
    CLASSIFICATION,
    PORTABLE_RELATIVE_TOLERANCE,
    TRANSLATION,
    compare,
    comparison_kind,
    differences,
    load_fixture,
    machine,
    run,
)


def _check(name: str, tmp_path, record_property) -> None:
    data = require_data(CLASSIFICATION[name][0]).parent if name in CLASSIFICATION else None
    pinned_on, pinned = load_fixture()
    kind = comparison_kind(pinned_on)
    record_property("regression comparison", kind)  # summarised at the end of the run (tests/conftest.py)
    found = compare(name, pinned[name], run(name, data, tmp_path), kind)
    assert not found, f"{kind} comparison (fixture pinned on {pinned_on}, this machine {machine()}):\n" + "\n".join(found[:20])


@pytest.mark.parametrize("name", list(CLASSIFICATION))
def test_classification_run_reproduces_the_pinned_numbers(name, tmp_path, record_property):
    _check(name, tmp_path, record_property)


@pytest.mark.parametrize("name", list(TRANSLATION))
def test_translation_run_reproduces_the_pinned_numbers(name, tmp_path, record_property):
    _check(name, tmp_path, record_property)


def test_a_changed_reward_is_caught(tmp_path, monkeypatch):
    # The test of the test: a one-line change to eq. 5 (the penalty's second term weighted by 1.1)
    # must fail the exact comparison and the portable one, wherever this runs.
    import drga.core.reward

    original = drga.core.reward.saliency_penalty
    monkeypatch.setattr(drga.core.reward, "saliency_penalty", lambda highlighted, length, l0: original(highlighted, length, 1.1 * l0))
    pinned_on, pinned = load_fixture()
    result = run("lstm-sa", require_data("mr").parent, tmp_path)
    portable = compare("lstm-sa", pinned["lstm-sa"], result, "portable")
    assert any("reward" in line for line in portable), portable
    assert differences(pinned["lstm-sa"], result)
    # training before the agent does not use the reward: its losses are unchanged, only its dev rewards moved
    assert not [line for line in portable if "task_loss" in line and line.startswith(("/history[0]", "/history[1]"))]


def test_the_portable_comparison_allows_rounding_and_nothing_more():
    pinned = {
        "history": [{"phase": "pretrain", "epoch": 1, "task_loss": 0.5, "dev_net-only_accuracy": 0.5, "dev_net-only_examples": 1000}],
        "rows": {"r": {"phase": "agent", "epoch": 1, "test": {"reward": -1.0, "examples": 1000}, "agent_loss": 0.01}},
    }

    def changed(**values):
        record = {**pinned["history"][0], **values}
        return {"history": [record], "rows": pinned["rows"]}

    rounding = 0.5 * PORTABLE_RELATIVE_TOLERANCE
    assert compare("lstm-sa", pinned, changed(task_loss=0.5 * (1 + rounding)), "portable") == []
    assert compare("lstm-sa", pinned, changed(task_loss=0.5 * (1 + 2 * PORTABLE_RELATIVE_TOLERANCE)), "portable")
    assert compare("lstm-sa", pinned, changed(**{"dev_net-only_accuracy": 0.501}), "portable") == []  # one of 1000 flipped
    assert compare("lstm-sa", pinned, changed(**{"dev_net-only_accuracy": 0.502}), "portable")  # two
    assert compare("lstm-sa", pinned, changed(epoch=2), "portable")  # counts and epochs exactly
    assert compare("lstm-sa", pinned, changed(**{"dev_net-only_examples": 999}), "portable")
    exclusions = {**pinned, "rows": {"r": {**pinned["rows"]["r"], "agent_loss": 0.02}}}
    assert compare("lstm-sa", pinned, exclusions, "portable") == []  # the REINFORCE surrogate is left out
    assert compare("lstm-sa", pinned, exclusions, "exact")
    nan = {"history": [{**pinned["history"][0], "task_loss": math.nan}], "rows": pinned["rows"]}
    assert compare("lstm-sa", nan, nan, "portable") == [] and compare("lstm-sa", pinned, nan, "portable")
    missing = {"history": pinned["history"], "rows": {}}
    assert compare("lstm-sa", pinned, missing, "portable")


def test_an_sb3_run_is_compared_by_value_only_in_its_network_phases():
    pinned = {"history": [{"phase": "pretrain", "epoch": 1, "task_loss": 0.5}, {"phase": "agent", "epoch": 1, "reward": -1.0}],
              "rows": {}}
    drifted = {"history": [pinned["history"][0], {"phase": "agent", "epoch": 1, "reward": -1.1}], "rows": {}}
    assert compare("cnn-sa-sb3-ppo", pinned, drifted, "portable") == []
    assert compare("lstm-sa", pinned, drifted, "portable")
    renamed = {"history": [pinned["history"][0], {"phase": "agent", "epoch": 1, "rewards": -1.0}], "rows": {}}
    assert compare("cnn-sa-sb3-ppo", pinned, renamed, "portable")


def test_the_fixture_records_the_machine_that_pinned_it():
    pinned_on, pinned = load_fixture()
    assert set(pinned_on) == set(machine()) and set(pinned) == {*CLASSIFICATION, *TRANSLATION}
    assert comparison_kind(pinned_on) == ("exact" if pinned_on == machine() else "portable")


def test_a_changed_number_is_reported():
    pinned = {"rows": {"a": {"test": {"accuracy": 0.5, "reward": float("nan")}}}, "history": [{"epoch": 1}]}
    changed = {"rows": {"a": {"test": {"accuracy": 0.5000001, "reward": float("nan")}}}, "history": [{"epoch": 1}]}
    assert differences(pinned, pinned) == []
    assert differences(pinned, changed) == ["/rows/a/test/accuracy: pinned 0.5, now 0.5000001"]


def test_make_regression_compares_two_revisions_exactly(tmp_path):
    # `make regression BASE=<rev>`: a revision against the working tree on this machine. A copy of this
    # checkout committed as the base, then the reward's second term weighted by 1.1 in its working tree.
    import os
    import subprocess
    import sys

    from tests.regression_runs import ROOT

    data = require_data("mr").parent
    tree = tmp_path / "checkout"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_symlink():  # drga/agents, drga/baselines, drga/envs: links to the top-level folders
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).symlink_to(os.readlink(ROOT / name))
        elif (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes((ROOT / name).read_bytes())
    git = ["git", "-C", str(tree), "-c", "user.name=test", "-c", "user.email=test@localhost"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(git + command, check=True, capture_output=True)
    reward = tree / "drga" / "core" / "reward.py"
    source = reward.read_text(encoding="utf-8")
    assert source.count("return ratio + l0 / ratio") == 1
    reward.write_text(source.replace("return ratio + l0 / ratio", "return ratio + 1.1 * l0 / ratio"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree), "DRGA_DATA": str(data)}
    command = [sys.executable, "-m", "tests.regression_runs", "--base", "HEAD", "--runs", "lstm-sa"]
    ran = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "HEAD vs the working tree on this machine, exactly: 1 run(s) changed" in ran.stdout
    # a reward among the changed numbers it lists (in sorted order: the same lines in every process)
    assert re.search(r"/[\w-]*reward: pinned", ran.stdout), ran.stdout
