"""`drga sweep --executor ray`: the same result files as the local executor, and a real two-node cluster
on the loopback address whose worker node is killed in the middle of a run.

Real `drga train` runs of a tiny LSTM+SA on a small keyword data set, one thread each. Skipped only
where Ray is not installed and CI is unset (CI installs it: the Makefile's test set-up has the ray extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.test_trainer import write_keyword_tsv

RAY_MISSING = importlib.util.find_spec("ray") is None
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(RAY_MISSING and not os.environ.get("CI"), reason="Ray is not installed (pip install 'drga[ray]'); CI runs these"),
]

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).parent / "ray") if (Path(sys.executable).parent / "ray").exists() else "ray"
TINY = [
    "network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
    "agent.hidden_sizes=8", "data.batch_size=16", "train.lr=0.01",
    "train.pretrain_epochs=2", "train.agent_epochs=1", "train.cotrain_epochs=2", "train.patience=0",
]
#: Seconds each epoch of the loopback test's runs pauses after writing last.pt, so that a kill lands mid-run.
EPOCH_PAUSE = "1.0"
#: Fields that measure wall time: the only ones two executors may differ in.
CLOCK = ("wall_seconds", "seconds")


def sweep(folder: Path, *extra: str, cli: str = "drga.cli", env: dict | None = None, **popen) -> list[str]:
    tsv = folder / "kw.tsv"
    if not tsv.exists():
        write_keyword_tsv(tsv)
    return [
        sys.executable, "-m", "drga.cli", "sweep", "--datasets", "tsv", "--threads-per-run", "1", "--cli", cli,
        "--logdir", str(folder / "runs"), "--results", str(folder / "results"),
        *[a for s in [*TINY, f"data.tsv_path={tsv}"] for a in ("--set", s)], *extra,
    ]


#: Ray's token authentication, one token for the test's nodes and drivers (a `ray start` of a worker node
#: does not pick up ~/.ray/auth_token the way the head does), and none written into the home folder.
RAY_AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def environment(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0", **RAY_AUTH, **extra)


def without_clock(value):
    """A result file's content without the fields that measure wall time."""
    if isinstance(value, dict):
        return {key: without_clock(item) for key, item in value.items() if key not in CLOCK}
    if isinstance(value, list):
        return [without_clock(item) for item in value]
    return value


def result_files(folder: Path) -> dict[str, dict]:
    return {path.name: without_clock(json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))}


@pytest.fixture(scope="module")
def local_grid(tmp_path_factory):
    """A 2 × 2 grid (LSTM+SA and CNN+SA, seeds 0 and 1) through the local executor, moved aside to
    ``local-runs`` and ``local-results`` so that another executor can fill the same paths."""
    folder = tmp_path_factory.mktemp("grid")
    done = subprocess.run(sweep(folder, "--nets", "lstm-sa", "cnn-sa", "--seeds", "0", "1", "--jobs", "2"),
                          capture_output=True, text=True, env=environment(), cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder / "runs").rename(folder / "local-runs")
    (folder / "results").rename(folder / "local-results")
    return folder


def test_the_same_grid_gives_the_same_result_files_through_an_embedded_ray(local_grid):
    done = subprocess.run(
        sweep(local_grid, "--nets", "lstm-sa", "cnn-sa", "--seeds", "0", "1", "--executor", "ray", "--num-cpus", "2", "--no-dashboard"),
        capture_output=True, text=True, env=environment(), cwd=ROOT, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "[ray] an embedded Ray: 1 node(s), 2 CPUs" in done.stdout
    assert done.stdout.count("[done]") == 4 and "(4 of 4 ended)" in done.stdout
    local, ray = result_files(local_grid / "local-results"), result_files(local_grid / "results")
    assert sorted(ray) == ["tsv-cnn-sa-seed0.json", "tsv-cnn-sa-seed1.json", "tsv-lstm-sa-seed0.json", "tsv-lstm-sa-seed1.json"]
    assert ray == local
    read = lambda runs, name: without_clock(json.loads((local_grid / runs / name / "results.json").read_text()))
    for name in ("tsv-lstm-sa-seed0", "tsv-cnn-sa-seed1"):  # the runs' own results.json too
        assert read("runs", name) == read("local-runs", name)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_node(arguments: list[str], log: Path) -> subprocess.Popen:
    """A Ray node as a `ray start --block` process in a session of its own; its Ray processes share its fate."""
    command = [RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *arguments]
    with open(log, "w") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environment(**FAST_NODE_DEATH),
                                start_new_session=True)


#: A killed node is declared dead within seconds (Ray's defaults wait tens of seconds).
FAST_NODE_DEATH = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
                   "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "1000"}


def started(node: subprocess.Popen, log: Path) -> bool:
    if node.poll() is not None:
        pytest.fail(f"a Ray node exited ({node.returncode}):\n{log.read_text()[-3000:]}")
    return "Ray runtime started" in log.read_text()


def stop_node(node: subprocess.Popen) -> None:
    """Stop a node by its process id: SIGTERM (Ray shuts its processes down), SIGKILL after 30 s."""
    if node.poll() is None:
        os.killpg(node.pid, signal.SIGTERM)
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()


def wait_for(condition, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def headers(folder: Path) -> list[str]:
    """The start lines the sweep wrote into a run's train.log, one per piece."""
    log = folder / "train.log"
    return [line for line in log.read_text().splitlines() if line.startswith("=== ")] if log.exists() else []


def test_a_two_node_loopback_cluster_retries_a_run_whose_node_died_and_resumes_it(local_grid):
    folder = Path(tempfile.mkdtemp(prefix="drga-ray-"))  # short: Ray's socket paths must fit 107 characters
    port = free_port()
    head = worker = sweeper = None
    try:
        head = start_node(["--head", "--port", str(port), "--num-cpus", "1", "--include-dashboard=false",
                           "--temp-dir", str(folder / "ray")], folder / "head.log")
        address = f"127.0.0.1:{port}"
        wait_for(lambda: started(head, folder / "head.log"), 180, "the head node to start")
        worker = start_node(["--address", address, "--num-cpus", "1", "--resources", '{"loopback_worker": 1}'], folder / "worker.log")
        wait_for(lambda: started(worker, folder / "worker.log"), 180, "the worker node to start")
        command = sweep(folder, "--nets", "lstm-sa", "--seeds", "0", "1", "--executor", "ray", "--address", address,
                        cli=str(ROOT / "tests" / "paced_train.py"))
        output = folder / "sweep.log"
        with open(output, "w") as log:
            sweeper = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment(DRGA_TEST_EPOCH_PAUSE=EPOCH_PAUSE),
                                       cwd=ROOT)
        nodes = wait_for(lambda: re.findall(r"\[ray\] node (\w+) at [\d.]+: (.*)", output.read_text()) if "[plan]" in output.read_text()
                         else None, 180, "the sweep to connect")
        assert len(nodes) == 2, output.read_text()
        worker_node = next(node for node, resources in nodes if "loopback_worker" in resources)

        runs = [folder / "runs" / f"tsv-lstm-sa-seed{seed}" for seed in (0, 1)]
        on_worker = lambda: next((run for run in runs if any(f"[node {worker_node}" in line for line in headers(run))), None)
        victim = wait_for(lambda: on_worker() if on_worker() and (on_worker() / "last.pt").exists() else None, 180,
                          "a run on the worker node to save its first epoch")
        assert not (victim / "results.json").exists()
        os.killpg(worker.pid, signal.SIGKILL)  # the worker node dies mid-run: its raylet, its Ray workers, the run
        worker.wait()

        assert sweeper.wait(timeout=300) == 0, output.read_text()[-4000:]
    finally:
        for process in (sweeper,):
            if process is not None and process.poll() is None:
                process.kill()
        for node in (worker, head):
            if node is not None:
                stop_node(node)
    text = output.read_text()
    assert "[ray] the cluster at" in text and "2 node(s)" in text
    pieces = headers(victim)
    assert len(pieces) == 2, pieces  # killed on the worker node, then retried on the head node
    assert f"[node {worker_node}" in pieces[0] and "--resume" not in pieces[0]
    assert f"[node {worker_node}" not in pieces[1] and pieces[1].split("  [node ")[0].endswith("--resume")
    other = next(run for run in runs if run != victim)
    assert f"[node {worker_node}" not in headers(other)[0]  # so the runs landed on both nodes
    # the retried run resumed from last.pt and ended with the numbers of an uninterrupted run
    resumed = json.loads((folder / "results" / f"{victim.name}.json").read_text())
    uninterrupted = json.loads((local_grid / "local-results" / f"{victim.name}.json").read_text())
    for key in ("rows", "history", "data_checksum", "pretrain_checksum"):
        assert without_clock(resumed[key]) == without_clock(uninterrupted[key]), key
    shutil.rmtree(folder, ignore_errors=True)
