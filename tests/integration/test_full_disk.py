"""A disk that fills while a command writes its files, on a real small file system (tmpfs), not a patched call.

Each command is made to meet the full disk in a phase of its run: train while saving a checkpoint and while
writing TensorBoard's events and metrics.csv, the sweep's result files, tune's SQLite storage, analyze's tables
and predict's output. Every one ends with a non-zero status and one line that names the file and says "no space
left on the device", without a traceback, whichever library was writing (safetensors, torch, TensorBoard,
sqlite); what was finished before stays whole, and a run continues with --resume once space is freed.

Mounting needs root (or a user namespace that allows it): where it is refused the tests skip, except under
CI=true, where a machine that cannot mount fails them.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import baselines
from drga.errors import command_failure
from tests.integration.test_faults_and_mistakes import TINY, At, cli, leftovers, one_message, trained, with_callback
from tests.tiny_network import TinyAttentionNet

__all__ = ["trained"]  # the module's fixture, shared: one tiny finished run

ROOT = Path(__file__).resolve().parents[2]
FULL = "no space left on the device"


class SmallDisk:
    """A tmpfs mounted at ``path``: :meth:`fill` takes its last free byte, :meth:`free` gives the space back."""

    def __init__(self, path: Path):
        self.path = path
        self.filler = path / "filler.bin"

    def fill(self) -> None:
        with open(self.filler, "ab", buffering=0) as handle:
            chunk = b"\0" * 65536
            try:
                while True:
                    handle.write(chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
            try:  # the last partial block
                while True:
                    handle.write(b"\0" * 512)
            except OSError:
                pass

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


@pytest.fixture
def small_disk(tmp_path) -> Iterator[SmallDisk]:
    """A 48 MiB tmpfs under ``tmp_path``, unmounted afterwards."""
    path = tmp_path / "disk"
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(path)], capture_output=True, text=True)
    if mounted.returncode != 0:
        why = f"a tmpfs cannot be mounted here ({(mounted.stderr or mounted.stdout).strip() or mounted.returncode})"
        if os.environ.get("CI") == "true":
            pytest.fail(why + "; under CI=true the full-disk tests must run")
        pytest.skip(why)
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_train_with_the_disk_full_in_the_baseline_phase_keeps_its_checkpoints_and_resumes_once_freed(
    trained, small_disk, monkeypatch, capsys):
    _, good = trained
    folder = small_disk.path / "runs" / "full"
    with_callback(monkeypatch, At(small_disk.fill, phase="baseline"))
    train = ["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "full", *TINY]
    message = one_message(*cli(train, capsys)[::2], code=1)
    assert FULL in message and str(folder) in message and "Nothing was left half-written" in message, message
    assert "SafetensorError" not in message and leftovers(folder) == []
    assert (folder / "pretrain_best.pt").exists() and not (folder / "results.json").exists()
    monkeypatch.undo()
    status, _, err = cli(["evaluate", folder / "pretrain_best.pt", "--tsv", good], capsys)
    assert status == 0, err  # the checkpoint finished before the disk filled is whole
    small_disk.free()
    status, _, err = cli([*train, "--resume"], capsys)
    assert status == 0, err
    assert (folder / "results.json").exists() and (folder / "cotrain_best.pt").exists()


def test_train_with_the_disk_full_under_metrics_csv_is_one_message_naming_it(trained, small_disk, monkeypatch, capsys):
    import drga.runner.loop as loop

    _, good = trained
    folder = small_disk.path / "runs" / "csv"
    original = loop.report_loggers  # the disk fills at the agent's epoch end, just before the logger writes its row
    monkeypatch.setattr(loop, "report_loggers", lambda names: [At(small_disk.fill, phase="agent"), *original(names)])
    argv = ["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "csv", *TINY, "--report-to", "csv"]
    message = one_message(*cli(argv, capsys)[::2], code=1)
    assert f"{folder / 'metrics.csv'}: {FULL}" in message, message
    assert (folder / "pretrain_best.pt").exists() and leftovers(folder) == []


def test_tensorboards_event_writer_on_a_full_disk_is_one_message_naming_its_event_file(small_disk, monkeypatch, capsys):
    from drga.errors import quiet_thread_io_failures
    from drga.runner.tensorboard import PhaseWriters

    monkeypatch.setattr(threading, "excepthook", quiet_thread_io_failures)  # as drga.cli.main sets it
    writers = PhaseWriters(small_disk.path / "tb")
    writers.scalars("agent", {"reward": 1.0}, 0)
    writers.flush()
    small_disk.fill()
    with pytest.raises(OSError) as stopped:  # its writer thread meets the disk; the next call, or the flush, says so
        for step in range(1, 2000):
            writers.scalars("agent", {"reward": float(step)}, step)
        writers.flush()
    failure = command_failure(stopped.value)
    assert failure is not None and failure[1] == 1, repr(stopped.value)
    assert f"{small_disk.path / 'tb' / 'agent'}" in failure[0] and FULL in failure[0], failure[0]
    with pytest.raises(OSError):  # closing says it again, as the same one line
        writers.close()
    assert "Traceback" not in capsys.readouterr().err  # the event writer's own thread kept quiet about it


def test_a_sweep_whose_result_files_meet_a_full_disk_says_so_and_keeps_its_runs(small_disk, tmp_path):
    from tests.integration.test_sweep import FAKE_TRAIN, sweep_command

    fake = tmp_path / "fake_train.py"
    fake.write_text(FAKE_TRAIN)
    results = small_disk.path / "results"
    results.mkdir()
    small_disk.fill()
    done = subprocess.run(sweep_command(tmp_path, fake, "--results", str(results)), capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if "error:" in line]
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert FULL in lines[0] and str(results) in lines[0], lines[0]
    assert list((tmp_path / "runs").glob("*/results.json")), "the runs finished before their result file was written"
    assert leftovers(results) == []


def test_tune_with_its_sqlite_storage_on_a_full_disk_names_the_database(small_disk, tmp_path, monkeypatch):
    pytest.importorskip("optuna")
    from drga.tune.study import tune
    from tests.integration.test_tune import tiny_settings

    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
    settings = tiny_settings(tmp_path, trials=1, folder=small_disk.path / "study")
    small_disk.fill()
    with pytest.raises(Exception) as stopped:
        tune(settings)
    failure = command_failure(stopped.value)
    assert failure is not None, repr(stopped.value)  # recognised as a fault of the machine, not a bug
    message, status = failure
    assert status == 1 and FULL in message and str(small_disk.path / "study") in message, message


def test_analyze_into_a_full_disk_is_one_message(trained, small_disk, capsys):
    run, good = trained
    small_disk.fill()
    out = small_disk.path / "analysis"
    argv = ["analyze", run / "cotrain_best.pt", "--dataset", "tsv", "--tsv", good, "--out", out, "--saliency-examples", "4",
            "--faithfulness-examples", "4", "--num-examples", "2"]
    message = one_message(*cli(argv, capsys)[::2], code=1)
    assert FULL in message and str(out) in message, message
    assert leftovers(small_disk.path) == []


def test_predict_into_a_full_disk_names_the_file_its_output_went_to(trained, small_disk, tmp_path):
    run, good = trained
    texts = tmp_path / "texts.txt"
    texts.write_text("".join(line.split("\t")[1] if "\t" in line else line for line in good.read_text().splitlines(True)[:200]))
    output = small_disk.path / "labels.txt"
    small_disk.fill()
    with open(output, "w") as handle:
        done = subprocess.run([str(Path(sys.executable).with_name("drga")), "predict", str(run / "cotrain_best.pt"), "--input", str(texts)],
                              stdout=handle, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    lines = [line for line in done.stderr.splitlines() if "error:" in line]
    assert done.returncode == 1 and "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert len(lines) == 1 and FULL in lines[0] and str(output) in lines[0], done.stderr



def test_a_file_size_limit_is_one_message_saying_so(trained, tmp_path):
    """``ulimit -f``: the kernel refuses the checkpoint's write past the limit (Python ignores SIGXFSZ); no mount needed."""
    import resource

    _, good = trained
    folder = tmp_path / "runs" / "limited"
    limit = 20_000  # bytes: config.toml (2 kB) fits, the first checkpoint (30 kB) does not

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    argv = [str(Path(sys.executable).with_name("drga")), "train", "--tsv", str(good), "--logdir", str(folder.parent),
            "--run-name", "limited", *TINY]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300, preexec_fn=limited)
    lines = [line for line in done.stderr.splitlines() if "error:" in line]
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert f"{folder / 'pretrain_best.pt'}: the file is larger than this process may write" in lines[0], lines[0]
    assert leftovers(folder) == []
