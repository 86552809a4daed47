"""`drga sweep --executor ray`: a real two-node cluster on the loopback address, whose worker node is
killed in the middle of a run, gives the same result files as the local executor; so does an embedded Ray.

Real `drga train` runs of tiny networks on a small keyword data set, one thread each, as few as the
checks need: a 2 × 2 grid through the local executor (the reference), the same grid through the cluster
(one run killed and resumed), one run through an embedded Ray. The cluster starts once per module, in the
background while the reference grid trains, and its nodes are killed outright at the end (its files are
thrown away: a graceful `ray stop` took 35 s here). Skipped only where Ray is not installed and CI is
unset (CI installs it: the Makefile's test set-up has the ray extra).
"""

from __future__ import annotations

import functools
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
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from drga.sweep.results import without_clock
from tests.integration.test_trainer import write_keyword_tsv

RAY_MISSING = importlib.util.find_spec("ray") is None
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(RAY_MISSING and os.environ.get("CI", "").lower() != "true",
                       reason="Ray is not installed (pip install 'drga[ray]'); CI runs these"),
]

ROOT = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).parent / "ray") if (Path(sys.executable).parent / "ray").exists() else "ray"
#: One epoch of each phase, no equal-budget baseline: three epochs, so that a run killed after its first
#: resumes into a later phase.
TINY = [
    "network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
    "agent.hidden_sizes=8", "data.batch_size=16", "train.lr=0.01", "train.fair_baseline=false",
    "train.pretrain_epochs=1", "train.agent_epochs=1", "train.cotrain_epochs=1", "train.patience=0",
]
GRID = ["--nets", "lstm-sa", "cnn-sa", "--seeds", "0", "1"]
#: The worker node's environment, which its Ray workers and their runs inherit (the driver's does not reach
#: them): its run holds after its first epoch (tests/paced_train.py), so that the kill lands mid-run however
#: fast or slow the machine is. A pause set in the sweep's environment raced: it never reached the runs.
HOLD_ON_WORKER = {"DRGA_TEST_HOLD_AFTER_FIRST_EPOCH": "1"}


def sweep(folder: Path, tsv: Path, *extra: str, cli: str = "drga.cli") -> list[str]:
    """The `drga sweep` command of a grid of tiny runs on ``tsv`` into ``folder``."""
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



def result_files(folder: Path) -> dict[str, dict]:
    return {path.name: without_clock(json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: A killed node is declared dead within seconds (Ray's defaults wait tens of seconds).
FAST_NODE_DEATH = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
                   "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "1000"}
#: What a test node leaves out to start faster: all but 100 MiB of object store (the sweep moves each
#: run's results.json, tens of kB, through it); the head, also the autoscaler's monitor and the dashboard.
LEAN_NODE = ["--object-store-memory", str(100 * 1024**2)]
LEAN_HEAD = [*LEAN_NODE, "--no-monitor", "--include-dashboard=false"]


def start_node(arguments: list[str], log: Path, **extra: str) -> subprocess.Popen:
    """A Ray node as a `ray start --block` process in a session of its own; its Ray processes share its fate
    and inherit its environment, with ``extra`` in it."""
    command = [RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *arguments]
    with open(log, "w") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environment(**FAST_NODE_DEATH, **extra),
                                start_new_session=True)


def node_state(node: subprocess.Popen, log: Path) -> str:
    """``started``, ``starting`` or ``exited``."""
    if node.poll() is not None:
        return "exited"
    return "started" if "Ray runtime started" in log.read_text() else "starting"


def kill_node(node: subprocess.Popen) -> None:
    """A node stopped by its process id: SIGKILL to its `ray start` process group, its Ray processes included."""
    if node.poll() is None:
        try:
            os.killpg(node.pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended just now
            pass
    node.wait()


@dataclass
class LoopbackCluster:
    """A head node (2 CPUs) and a worker node (1 CPU and a ``loopback_worker`` resource) on 127.0.0.1,
    the worker started by a thread once the head is up, so that :meth:`ready` waits only for what is left."""

    folder: Path
    port: int
    nodes: dict[str, subprocess.Popen] = field(default_factory=dict)
    starter: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def start(self) -> None:
        # the Ray Client server and the dashboard's API server on free ports, not on their fixed defaults
        # (10001, 8265) that another Ray on this machine may hold
        self.nodes["head"] = start_node(["--head", "--port", str(self.port), "--num-cpus", "2", *LEAN_HEAD,
                                         "--ray-client-server-port", str(free_port()), "--dashboard-port", str(free_port()),
                                         "--temp-dir", str(self.folder / "ray")], self.log("head"))
        self.starter = threading.Thread(target=self.start_worker_after_head, daemon=True)
        self.starter.start()

    def start_worker_after_head(self) -> None:
        deadline = time.time() + NODE_START_SECONDS
        while node_state(self.nodes["head"], self.log("head")) == "starting" and time.time() < deadline:
            time.sleep(0.2)
        if node_state(self.nodes["head"], self.log("head")) == "started":
            # one log monitor per machine (Ray's advice): the head's
            self.nodes["worker"] = start_node(["--address", self.address, "--num-cpus", "1", "--resources", '{"loopback_worker": 1}',
                                               *LEAN_NODE, "--include-log-monitor=false"], self.log("worker"), **HOLD_ON_WORKER)

    def state(self, name: str) -> str:
        return node_state(self.nodes[name], self.log(name))

    def ready(self) -> None:
        """Both nodes started, or the test fails with the log of the one that did not."""
        self.starter.join(timeout=NODE_START_SECONDS)
        if "worker" not in self.nodes:
            pytest.fail(f"the worker node was not started: the head did not start\n{self.log('head').read_text()[-3000:]}")
        for name in ("head", "worker"):
            wait_for(functools.partial(lambda name: self.state(name) != "starting", name), NODE_START_SECONDS, f"the {name} node to start")
            if self.state(name) == "exited":
                pytest.fail(f"the {name} node exited ({self.nodes[name].returncode}):\n{self.log(name).read_text()[-3000:]}")

    def stop(self) -> None:
        if self.starter is not None:
            self.starter.join(timeout=NODE_START_SECONDS)
        for node in self.nodes.values():
            kill_node(node)


#: Seconds a node may take to start (tens on a loaded machine).
NODE_START_SECONDS = 180


@pytest.fixture(scope="module")
def keyword_tsv(tmp_path_factory) -> Path:
    """The module's data file: one path, so that the result files' configurations are the same."""
    return write_keyword_tsv(tmp_path_factory.mktemp("data") / "kw.tsv")


@pytest.fixture(scope="module")
def loopback_cluster():
    """The module's two-node cluster, starting in the background (ask for it before ``local_grid``)."""
    folder = Path(tempfile.mkdtemp(prefix="drga-ray-"))  # short: Ray's socket paths must fit 107 characters
    cluster = LoopbackCluster(folder, free_port())
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def local_grid(tmp_path_factory, keyword_tsv):
    """The 2 × 2 grid (LSTM+SA and CNN+SA, seeds 0 and 1) through the local executor, moved aside to
    ``local-runs`` and ``local-results`` so that another executor can fill the same paths."""
    folder = tmp_path_factory.mktemp("grid")
    done = subprocess.run(sweep(folder, keyword_tsv, *GRID, "--jobs", "2"), capture_output=True, text=True, env=environment(), cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder / "runs").rename(folder / "local-runs")
    (folder / "results").rename(folder / "local-results")
    return folder


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


def test_a_grid_on_a_two_node_loopback_cluster_survives_a_dead_node_with_the_local_executors_result_files(
        loopback_cluster, local_grid, keyword_tsv):
    cluster, grid = loopback_cluster, local_grid  # the runs go where the local ones went: the same configurations
    cluster.ready()
    command = sweep(grid, keyword_tsv, *GRID, "--executor", "ray", "--address", cluster.address, cli=str(ROOT / "tests" / "paced_train.py"))
    output = cluster.folder / "sweep.log"
    with open(output, "w") as log:
        sweeper = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=environment())
    names = [f"tsv-{net}-seed{seed}" for net in ("lstm-sa", "cnn-sa") for seed in (0, 1)]
    try:
        nodes = wait_for(lambda: re.findall(r"\[ray\] node (\w+) at [\d.]+: (.*)", output.read_text()) if "[plan]" in output.read_text()
                         else None, 180, "the sweep to connect")
        assert len(nodes) == 2, output.read_text()
        worker_node = next(node for node, resources in nodes if "loopback_worker" in resources)

        on_worker = lambda: next((name for name in names if any(f"[node {worker_node}" in line for line in headers(grid / "runs" / name))),
                                 None)
        victim = wait_for(lambda: on_worker() if on_worker() and (grid / "runs" / on_worker() / "last.pt").exists() else None, 180,
                          "a run on the worker node to save its first epoch")
        assert not (grid / "runs" / victim / "results.json").exists()  # held after its first epoch: certainly mid-run
        os.killpg(cluster.nodes["worker"].pid, signal.SIGKILL)  # the worker node dies mid-run: its raylet, its Ray workers, the run
        cluster.nodes["worker"].wait()

        assert sweeper.wait(timeout=300) == 0, output.read_text()[-4000:]
    finally:
        if sweeper.poll() is None:
            sweeper.kill()
            sweeper.wait()
        for kind in ("runs", "results"):  # moved aside, out of the next test's way
            if (grid / kind).exists():
                (grid / kind).rename(grid / f"cluster-{kind}")
    text = output.read_text()
    assert "[ray] the cluster at" in text and "2 node(s), 3 CPUs" in text
    assert text.count("[done]") == 4 and "(4 of 4 ended)" in text, text
    pieces = headers(grid / "cluster-runs" / victim)
    assert len(pieces) == 2, pieces  # killed on the worker node, then retried on the head node
    assert f"[node {worker_node}" in pieces[0] and "--resume" not in pieces[0]
    assert f"[node {worker_node}" not in pieces[1] and pieces[1].split("  [node ")[0].endswith("--resume")
    assert any(f"[node {worker_node}" not in headers(grid / "cluster-runs" / name)[0] for name in names)  # so runs landed on both nodes
    # every run ended with the numbers the local executor's runs gave, the resumed one too
    local, ray = result_files(grid / "local-results"), result_files(grid / "cluster-results")
    assert sorted(ray) == sorted(f"{name}.json" for name in names)
    for name in ray:
        keys = ("rows", "history", "data_checksum", "pretrain_checksum") if name == f"{victim}.json" else ray[name]
        assert {key: ray[name][key] for key in keys} == {key: local[name][key] for key in keys}, name


def test_an_embedded_ray_gives_the_local_executors_result_file(local_grid, keyword_tsv):
    folder = local_grid
    done = subprocess.run(
        sweep(folder, keyword_tsv, "--nets", "lstm-sa", "--seeds", "1", "--executor", "ray", "--num-cpus", "1", "--no-dashboard"),
        capture_output=True, text=True, env=environment(), cwd=ROOT, timeout=600,
    )
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, output
    assert "[ray] an embedded Ray: 1 node(s), 1 CPUs" in done.stdout, output
    assert done.stdout.count("[done]") == 1 and "(1 of 1 ended)" in done.stdout, output
    assert result_files(folder / "results") == {"tsv-lstm-sa-seed1.json": result_files(folder / "local-results")["tsv-lstm-sa-seed1.json"]}
    read = lambda runs: without_clock(json.loads((folder / runs / "tsv-lstm-sa-seed1" / "results.json").read_text()))
    assert read("runs") == read("local-runs")  # the run's own results.json too
