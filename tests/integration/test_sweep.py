"""`drga sweep` (and experiments/sweep.py, its caller): skipping finished runs, resuming interrupted ones, parallel runs, the table.

The sweep is driven against a stand-in for `drga train` (standard library only, so each run
takes milliseconds) that keeps the same contract: it writes last.pt after every epoch and
results.json at the end, continues from last.pt with --resume, and stops on SIGINT.
"""

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lock_holder import lock_held_elsewhere

SWEEP = Path(__file__).resolve().parents[2] / "experiments" / "sweep.py"

FAKE_TRAIN = r"""
import argparse, json, os, sys, time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("command")
for flag in ("--dataset", "--net", "--seed", "--logdir", "--run-name", "--config"):
    parser.add_argument(flag)
parser.add_argument("--set", action="append", default=[])
parser.add_argument("--resume", action="store_true")
parser.add_argument("--no-progress", action="store_true")
args = parser.parse_args()
folder = Path(args.logdir) / args.run_name
folder.mkdir(parents=True, exist_ok=True)
with open(Path(args.logdir) / "calls.txt", "a") as calls:
    start = "resume" if args.resume else "fresh"
    calls.write(f"{args.run_name} {start} {time.time()} {os.environ['OMP_NUM_THREADS']} {' '.join(args.set)}\n")
(folder / "pid").write_text(str(os.getpid()))
last = folder / "last.pt"
if args.resume != last.exists():
    sys.exit(f"--resume given: {args.resume}, last.pt exists: {last.exists()}")
done = int(last.read_text()) if args.resume else 0
try:
    for epoch in range(done + 1, 4):
        time.sleep(float(os.environ.get("FAKE_EPOCH_SECONDS", "0")))
        if os.environ.get("FAKE_CRASH") == args.run_name and not args.resume and epoch == 2:
            sys.exit(3)  # a crash in epoch 2: epoch 1 is saved
        last.write_text(str(epoch))
except KeyboardInterrupt:
    print("interrupted; the last completed epoch is saved", file=sys.stderr)
    sys.exit(130)
accuracy = 0.8 + 0.01 * int(args.seed)
rows = {"baseline (equal budget)": {"phase": "baseline", "epoch": 3, "checkpoint": "baseline_best.pt",
                                    "test_net-only": {"accuracy": accuracy}},
        "DRGA (co-trained)": {"phase": "cotrain", "epoch": 3, "checkpoint": "cotrain_best.pt",
                              "test_net-only": {"accuracy": accuracy + 0.01}, "test_with-agent": {"accuracy": accuracy + 0.02}}}
(folder / "results.json").write_text(json.dumps({"results": rows, "history": []}))
with open(Path(args.logdir) / "calls.txt", "a") as calls:
    calls.write(f"{args.run_name} end {time.time()}\n")
"""


@pytest.fixture
def fake_cli(tmp_path):
    path = tmp_path / "fake_train.py"
    path.write_text(FAKE_TRAIN)
    return path


def sweep_command(tmp_path, fake_cli, *extra):
    return [
        sys.executable,
        str(SWEEP),
        "--cli",
        str(fake_cli),
        "--logdir",
        str(tmp_path / "runs"),
        "--nets",
        "a",
        "b",
        "--datasets",
        "d",
        "--seeds",
        "0",
        "1",
        *extra,
    ]


def run_sweep(tmp_path, fake_cli, *extra, env=None):
    environment = dict(os.environ, **(env or {}))
    return subprocess.run(sweep_command(tmp_path, fake_cli, *extra), capture_output=True, text=True, env=environment, timeout=60)


def calls(tmp_path):
    path = tmp_path / "runs" / "calls.txt"
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def starts(tmp_path):
    return [(c[0], c[1]) for c in calls(tmp_path) if c[1] != "end"]


def test_runs_the_grid_and_writes_one_table(tmp_path, fake_cli):
    done = run_sweep(tmp_path, fake_cli, "--set", "train.patience=0", "--threads-per-run", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    names = ["d-a-seed0", "d-a-seed1", "d-b-seed0", "d-b-seed1"]
    assert sorted(starts(tmp_path)) == [(n, "fresh") for n in names]
    assert all(c[3] == "1" and c[4] == "train.patience=0" for c in calls(tmp_path) if c[1] == "fresh")
    table = (tmp_path / "runs" / "sweep_results.md").read_text()
    assert "| a | d | 1 | finished | - | 81.00 | - | 82.00 | 83.00 |" in table
    assert "| a | d | 2 | - | 80.50 ± 0.71 | - | 81.50 ± 0.71 | 82.50 ± 0.71 |" in table
    rows = list(csv.DictReader(open(tmp_path / "runs" / "sweep_results.csv")))
    assert len(rows) == 4 and {r["status"] for r in rows} == {"finished"}
    assert all((tmp_path / "runs" / n / "train.log").exists() for n in names)


def test_finished_runs_are_skipped_and_a_crashed_run_resumes(tmp_path, fake_cli):
    first = run_sweep(tmp_path, fake_cli, env={"FAKE_CRASH": "d-b-seed0"})
    assert first.returncode == 1  # one run failed; the others went on
    assert "[fail] d-b-seed0: exit 3" in first.stdout
    assert "| b | d | 0 | failed |" in (tmp_path / "runs" / "sweep_results.md").read_text()
    assert (tmp_path / "runs" / "d-b-seed0" / "last.pt").read_text() == "1"

    second = run_sweep(tmp_path, fake_cli)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("[skip]") == 3
    assert starts(tmp_path)[4:] == [("d-b-seed0", "resume")]  # only the crashed run ran again, from epoch 1
    assert "| b | d | 0 | finished | - | 80.00 |" in (tmp_path / "runs" / "sweep_results.md").read_text()

    third = run_sweep(tmp_path, fake_cli)
    assert third.returncode == 0 and third.stdout.count("[skip]") == 4 and len(starts(tmp_path)) == 5


def test_jobs_run_in_parallel(tmp_path, fake_cli):
    done = run_sweep(tmp_path, fake_cli, "--jobs", "2", env={"FAKE_EPOCH_SECONDS": "0.15"})
    assert done.returncode == 0, done.stdout + done.stderr
    events = sorted((float(c[2]), +1 if c[1] != "end" else -1) for c in calls(tmp_path))
    level, most = 0, 0
    for _, change in events:
        level += change
        most = max(most, level)
    assert most == 2


def test_an_interrupted_sweep_stops_its_runs_and_the_same_command_resumes(tmp_path, fake_cli):
    environment = dict(os.environ, FAKE_EPOCH_SECONDS="3.0")  # slack for a loaded machine: SIGINT must land mid-run
    # A test run in the background inherits SIGINT ignored (what a shell does to its background jobs);
    # the sweep's user presses Ctrl-C in a foreground terminal, so the sweep starts with the default.
    sweep = subprocess.Popen(
        sweep_command(tmp_path, fake_cli, "--jobs", "2"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    first = tmp_path / "runs" / "d-a-seed0" / "last.pt"
    deadline = time.time() + 30
    while not first.exists() and time.time() < deadline:
        time.sleep(0.05)
    sweep.send_signal(signal.SIGINT)
    out, err = sweep.communicate(timeout=30)
    assert sweep.returncode == 130, out + err
    assert "the same command resumes them" in err
    table = (tmp_path / "runs" / "sweep_results.md").read_text()
    assert "| a | d | 0 | interrupted |" in table and "| b | d | 1 | not run |" in table
    assert not (tmp_path / "runs" / "d-a-seed0" / "results.json").exists()

    resumed = run_sweep(tmp_path, fake_cli, "--jobs", "2")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    second = starts(tmp_path)[2:]
    assert ("d-a-seed0", "resume") in second and ("d-b-seed1", "fresh") in second
    results = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/results.json")]
    assert len(results) == 4


def test_a_sweep_killed_outright_keeps_the_wall_time_its_run_had_so_far(tmp_path, fake_cli):
    # A session's end kills the sweep and its runs with no chance to clean up; the resumed run's
    # wall time must still count the killed piece (it once lost it: a 2-hour run reported 1.5).
    command = [sys.executable, str(SWEEP), "--cli", str(fake_cli), "--logdir", str(tmp_path / "runs"),
               "--nets", "a", "--datasets", "d", "--seeds", "0"]
    environment = dict(os.environ, FAKE_EPOCH_SECONDS="1.5")
    sweep = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    folder = tmp_path / "runs" / "d-a-seed0"
    wall = folder / "wall_seconds.txt"
    recorded = lambda: float(wall.read_text() or 0) if wall.exists() else 0.0
    deadline = time.time() + 30
    while not ((folder / "last.pt").exists() and recorded() >= 2.0) and time.time() < deadline:
        time.sleep(0.05)  # until the sweep has written, while the run goes, that it has run past its first epoch
    assert not (folder / "results.json").exists()  # killed mid-run, before the sweep could see it end
    sweep.kill()
    sweep.communicate(timeout=30)
    os.killpg(int((folder / "pid").read_text()), signal.SIGKILL)
    killed_piece = recorded()
    assert killed_piece >= 2.0  # kept although the sweep never got to finish the run

    resumed = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert ("d-a-seed0", "resume") in starts(tmp_path)
    assert float((folder / "wall_seconds.txt").read_text()) >= killed_piece + 1.5  # at least one more epoch


def test_dry_run_prints_the_commands_of_unfinished_runs(tmp_path, fake_cli):
    (tmp_path / "runs" / "d-a-seed0").mkdir(parents=True)
    (tmp_path / "runs" / "d-a-seed0" / "results.json").write_text("{}")
    (tmp_path / "runs" / "d-a-seed1").mkdir(parents=True)
    (tmp_path / "runs" / "d-a-seed1" / "last.pt").write_text("2")
    done = run_sweep(tmp_path, fake_cli, "--dry-run", "--config", "c.toml")
    lines = [line for line in done.stdout.splitlines() if "fake_train.py" in line]
    assert len(lines) == 3 and not calls(tmp_path)
    assert lines[0].endswith("--run-name d-a-seed1 --no-progress --config c.toml --resume")


@pytest.mark.slow
def test_sweep_with_the_real_trainer(tmp_path):
    from tests.integration.test_trainer import write_keyword_tsv

    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    small = [
        "network.embedding_dim=8",
        "network.hidden_size=8",
        "network.attention_size=8",
        "network.classifier_hidden=8",
        "agent.hidden_sizes=8",
        "train.pretrain_epochs=1",
        "train.agent_epochs=1",
        "train.cotrain_epochs=1",
        "data.dataset=tsv",
        f"data.tsv_path={tsv}",
    ]
    command = [
        sys.executable,
        str(SWEEP),
        "--nets",
        "lstm-sa",
        "--datasets",
        "tsv",
        "--seeds",
        "0",
        "1",
        "--jobs",
        "2",
        "--threads-per-run",
        "1",
        "--logdir",
        str(tmp_path / "runs"),
    ] + [a for s in small for a in ("--set", s)]
    root = SWEEP.parents[1]
    first = subprocess.run(command, capture_output=True, text=True, cwd=root, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    rows = list(csv.DictReader(open(tmp_path / "runs" / "sweep_results.csv")))
    assert [r["status"] for r in rows] == ["finished", "finished"]
    assert all(0 <= float(r["DRGA with-agent"]) <= 1 for r in rows)
    again = subprocess.run(command, capture_output=True, text=True, cwd=root, timeout=600)
    assert again.returncode == 0 and again.stdout.count("[skip]") == 2


def test_result_files_are_kept_and_a_fresh_machine_skips_their_runs(tmp_path, fake_cli):
    results = tmp_path / "committed"
    first = run_sweep(tmp_path, fake_cli, "--results", str(results))
    assert first.returncode == 0, first.stderr
    files = sorted(p.name for p in results.glob("*.json"))
    assert files == ["d-a-seed0.json", "d-a-seed1.json", "d-b-seed0.json", "d-b-seed1.json"]
    kept = json.loads((results / "d-a-seed1.json").read_text())
    assert (kept["net"], kept["dataset"], kept["seed"]) == ("a", "d", 1)
    assert kept["rows"]["DRGA (co-trained)"]["with-agent"]["test"] == pytest.approx(0.83)
    assert kept["commit"] and kept["wall_seconds"] is not None
    # a fresh machine: no run folders, only the committed files; nothing runs again
    import shutil

    shutil.rmtree(tmp_path / "runs")
    again = run_sweep(tmp_path, fake_cli, "--results", str(results))
    assert again.returncode == 0 and calls(tmp_path) == []
    assert again.stdout.count("[skip]") == 4


def test_set_values_name_the_runs_seed_dataset_and_net(tmp_path, fake_cli):
    result = run_sweep(tmp_path, fake_cli, "--set", "train.init_from=runs/x/{dataset}-{net}-seed{seed}/pretrain_best.pt")
    assert result.returncode == 0, result.stderr
    sets = sorted(line[-1] for line in calls(tmp_path) if line[1] == "fresh")
    assert sets == [f"train.init_from=runs/x/d-{net}-seed{seed}/pretrain_best.pt" for net in "ab" for seed in (0, 1)]


def test_a_sweep_projects_its_compute_from_the_measured_runs_of_the_same_cells(tmp_path):
    from drga.sweep.grid import plan
    from drga.sweep.results import projected_compute

    results = tmp_path / "results"
    results.mkdir()
    runs = plan(["lstm-sa", "cnn-sa"], ["mr"], [0, 1, 2], tmp_path / "runs", results)
    for run, seconds in zip(runs[:2], (600.0, 900.0)):  # lstm-sa seeds 0 and 1 finished: 10 and 15 minutes
        phases = {"pretrain": {"seconds": seconds - 100, "epochs": 12}, "cotrain": {"seconds": 100.0, "epochs": 5}}
        run.result_file.write_text(json.dumps({"phases": phases}))
    todo = [run for run in runs if not run.finished]
    args = argparse.Namespace(jobs=2, threads_per_run=1)
    text = projected_compute(todo, runs, args)
    # lstm-sa seed 2 costs the mean of its cell (750 s, 17 epochs); cnn-sa has no measurement yet
    assert "[plan] 4 runs to do (0 resumed), 2 at a time, 1 thread(s) each" in text
    assert "projected for 1 of them (from 2 finished runs of the same cells): 17 epochs, 0.2 core-hours, 0.1 h wall" in text
    assert "not projected (no finished run of the cell yet): cnn-sa/mr ×3" in text
    # a sweep asked for other seeds of the same study also projects from the finished ones' result files
    later = plan(["lstm-sa"], ["mr"], [2, 3], tmp_path / "runs", results)
    text = projected_compute(later, later, args)
    assert "projected for 2 of them (from 2 finished runs of the same cells): 34 epochs" in text


@pytest.mark.skipif(sys.platform == "win32", reason="no advisory locks on Windows")
def test_a_run_another_process_is_training_is_skipped_not_started_twice(tmp_path, fake_cli):
    # a second sweep over the same grid, or `drga train --resume` in another terminal, holds d-a-seed0
    with lock_held_elsewhere(tmp_path / "runs" / "d-a-seed0") as pid:
        busy = run_sweep(tmp_path, fake_cli)
    assert busy.returncode == 0, busy.stdout + busy.stderr
    assert f"[busy] d-a-seed0: another process (pid {pid}) is training it" in busy.stdout
    assert sorted(starts(tmp_path)) == [("d-a-seed1", "fresh"), ("d-b-seed0", "fresh"), ("d-b-seed1", "fresh")]
    assert "| a | d | 0 | busy |" in (tmp_path / "runs" / "sweep_results.md").read_text()

    again = run_sweep(tmp_path, fake_cli)  # its holder gone, the run is the one left to do
    assert again.returncode == 0 and again.stdout.count("[skip]") == 3
    assert starts(tmp_path)[3:] == [("d-a-seed0", "fresh")]


def test_drga_sweep_is_the_same_command(tmp_path, fake_cli):
    command = [sys.executable, "-m", "drga.cli", "sweep", *sweep_command(tmp_path, fake_cli)[2:], "--threads-per-run", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(starts(tmp_path)) == [(n, "fresh") for n in ["d-a-seed0", "d-a-seed1", "d-b-seed0", "d-b-seed1"]]
    assert "| b | d | 1 | finished | - | 81.00 | - | 82.00 | 83.00 |" in (tmp_path / "runs" / "sweep_results.md").read_text()
    assert "(4 of 4 ended)" in done.stdout


def test_the_sweep_table_shows_each_tasks_metric_on_its_own_scale(tmp_path):
    # accuracy is a fraction shown in percent, BLEU is on its 0-100 scale already (it used to be multiplied by 100)
    from drga.names import Mode, ResultRow, Split, score_key
    from drga.sweep.grid import plan
    from drga.sweep.results import table

    runs = plan(["lstm-sa", "transformer-nmt"], ["data"], [0], tmp_path / "runs")
    for run, scores in zip(runs, ({"accuracy": 0.9125}, {"bleu": 37.4653})):
        run.folder.mkdir(parents=True)
        cell = {"phase": "pretrain", "epoch": 1, "checkpoint": "pretrain_best.pt", score_key(Split.TEST, Mode.NET_ONLY): scores}
        (run.folder / "results.json").write_text(json.dumps({"results": {ResultRow.PRETRAIN_ONLY: cell}, "history": []}))
    text = table(runs, tmp_path / "table.md")
    assert text.splitlines()[0].startswith("Test BLEU, greedy or accuracy (%) of ")
    assert "| lstm-sa | data | 0 | finished | 91.25 | - |" in text
    assert "| transformer-nmt | data | 0 | finished | 37.47 | - |" in text
    assert "| transformer-nmt | data | 1 | 37.47 |" in text  # the mean over its one seed, on the same scale
