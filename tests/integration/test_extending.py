"""docs/extending.md works as printed: its three files, written into an empty folder beside a TSV file, and every
command line and Python block of the page run there in a subprocess with a clean environment (no ``PYTHONPATH``,
nothing put on ``sys.path`` by the test), as a user in a fresh clone or with the package installed runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_plugins import EXTENDING, file_blocks
from tests.integration.test_trainer import write_keyword_tsv

pytestmark = pytest.mark.timeout(1200)


def page_blocks(kind: str) -> list[str]:
    """The page's ```kind blocks, in order; the Python ones without a file name (the files are :func:`file_blocks`)."""
    blocks = re.findall(rf"```{kind}\n(.*?)```", EXTENDING.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [block for block in blocks if not re.match(r"#\s*\S+\.py\s*\n", block)]


def clean_environment() -> dict[str, str]:
    """What a shell of a user who installed the toolkit has: its ``drga`` and ``python`` on PATH, and nothing of the tests'."""
    bin_folder = str(Path(sys.executable).parent)
    return {"PATH": f"{bin_folder}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1"}


def user_folder(folder: Path) -> Path:
    """An empty folder with the page's three files and the user's data."""
    folder.mkdir()
    for name, text in file_blocks(EXTENDING.read_text(encoding="utf-8")).items():
        (folder / name).write_text(text, encoding="utf-8")
    write_keyword_tsv(folder / "my_data.tsv")
    return folder


def run_shell(block: str, folder: Path) -> str:
    done = subprocess.run(["bash", "-e", "-c", block], cwd=folder, env=clean_environment(), capture_output=True, text=True)
    assert done.returncode == 0, f"{block}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def run_python(block: str, folder: Path, name: str) -> str:
    (folder / name).write_text(block, encoding="utf-8")  # a script of the user's, in the folder of the files
    done = subprocess.run([sys.executable, name], cwd=folder, env=clean_environment(), capture_output=True, text=True)
    assert done.returncode == 0, f"{block}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_page_has_three_files_two_command_blocks_and_three_python_blocks():
    assert set(file_blocks(EXTENDING.read_text(encoding="utf-8"))) == {"my_network.py", "my_reward.py", "my_task.py"}
    assert len(page_blocks("bash")) == 2 and len(page_blocks("python")) == 3
    for block in (*file_blocks(EXTENDING.read_text(encoding="utf-8")).values(), *page_blocks("python")):
        imported = set(re.findall(r"^\s*(?:from|import) (drga[\w.]*)", block, flags=re.MULTILINE))
        assert imported <= {"drga", "drga.extend"}, imported  # one module for extension, the package's own names beside it


def test_a_network_and_a_reward_from_the_command_line_as_printed(tmp_path):
    folder = user_folder(tmp_path / "mine")
    commands = page_blocks("bash")[0]
    assert "PYTHONPATH" not in commands
    out = run_shell(commands, folder)
    assert re.search(r"^bag-attention\s+text", out, flags=re.MULTILINE)
    import json

    results = json.loads((folder / "runs" / "tsv-bag-attention-seed0" / "results.json").read_text())
    assert results["config"]["reward"]["name"] == "sparse" and results["config"]["network"]["temperature"] == 0.5
    for record in results["history"]:  # the reward's own penalty, 0.3 · N/L: not scaled by eq. 5's γ
        if "reward_penalty" in record:
            assert record["reward_penalty"] == pytest.approx(0.3 * record["highlighted_fraction"], rel=1e-5)
            assert record["reward"] == pytest.approx(record["reward_log_likelihood"] - record["reward_penalty"], abs=1e-5)


def test_a_network_and_a_reward_from_python_as_printed(tmp_path):
    folder = user_folder(tmp_path / "mine")
    run_python(page_blocks("python")[0], folder, "train_mine.py")
    assert (folder / "runs" / "tsv-bag-attention-seed0" / "results.json").is_file()


def test_a_task_trains_evaluates_and_predicts_as_printed(tmp_path):
    folder = user_folder(tmp_path / "mine")
    out = run_shell(page_blocks("bash")[1], folder)
    assert "accuracy" in out
    printed = run_python(page_blocks("python")[2], folder, "predict_mine.py").splitlines()
    labels = eval(printed[0])  # the printed list of labels
    assert len(labels) == 2 and set(labels) <= {"pos", "neg"}
    assert set(eval(printed[1])[0]) == {"pos", "neg"}
