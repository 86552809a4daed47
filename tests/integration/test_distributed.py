"""``drga train`` under torchrun: 2 processes, gloo on the CPU, loopback (docs/distributed.md).

One torchrun launch (``python -m torch.distributed.run --nproc_per_node 2``, a free port on
127.0.0.1) runs :mod:`tests.distributed_worker` in two processes; each trains the tiny keyword
network through all four phases (pretrain 2 epochs, equal-budget baseline 2, agent 1, cotrain
2; 33 training sentences in global batches of 16, i.e. shards of 8+8, 8+8 and 1+stand-in), and
the same configuration once more interrupted and resumed. The test process trains it once in a
single process. What is compared, and why:

1. Replicas: after every epoch of every phase both processes hold bitwise-equal network, agent
   and β. The processes see different shards (and sample different actions), so this holds only
   if every trained parameter's gradient is all-reduced: the network in pretrain/baseline, the
   agent alone in the agent phase, network + agent + β's learned factor in co-training.
2. Against one process on the same global batch: the cross-entropy phases (pretrain, baseline)
   are deterministic, so the network after every epoch matches single-process training to 1e-5
   (only float summation order differs), and so do the dev scores that pick the best epochs.
   The REINFORCE phases (agent, cotrain) draw random actions, and each process has its own random
   stream, so the sampled actions cannot match one process's; there the test compares what is
   deterministic: the network is unchanged through the agent phase (it is frozen) and equals
   the single-process one, β is untouched until co-training, β's schedule counts the same number
   of global steps, and the same phases and epochs ran. That the REINFORCE gradients are
   averaged (not just computed) is what 1. checks.
3. Only rank 0 wrote anything under the log folder (config, TensorBoard, checkpoints, results);
   recorded by an audit hook in each process.
4. Resume: the run interrupted at the start of co-training's 2nd epoch, resumed by the same 2
   processes, ends bitwise equal to the uninterrupted one on each process, with the same history
   (each process reseeds its random stream from seed, epoch and rank at every epoch).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import drga.baselines as baselines
from drga.config import load_config
from tests.distributed_worker import MODULES, SnapshotTrainer
from tests.tiny_network import TinyAttentionNet, keyword_examples

ROOT = Path(__file__).resolve().parents[2]
WORLD = 2


def write_split(path: Path, count: int, seed: int) -> None:
    examples, _ = keyword_examples(count, seed=seed)
    top = max(max(e.ids) for e in examples)
    word = lambda i: "good" if i == top else "bad" if i == top - 1 else f"w{i}"  # noqa: E731
    path.write_text("".join(f"{'pos' if e.label else 'neg'}\t{' '.join(word(i) for i in e.ids)}\n" for e in examples))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """Launch the 2-process run once; (config path, [rank 0 record, rank 1 record], log folder)."""
    root = tmp_path_factory.mktemp("distributed")
    data = root / "data"
    data.mkdir()
    for name, count, seed in (("train", 33, 0), ("dev", 20, 1), ("test", 20, 2)):
        write_split(data / f"{name}.tsv", count, seed)
    config = root / "config.toml"
    config.write_text(
        f'[data]\ndataset = "tsv"\ntsv_path = "{data}"\nbatch_size = 16\n'
        '[network]\nname = "tiny"\nembedding_dim = 12\n[agent]\nhidden_sizes = [16, 16]\n'
        "[train]\npretrain_epochs = 2\nagent_epochs = 1\ncotrain_epochs = 2\nbaseline_epochs = 2\nlr = 0.01\n"
        f'[run]\nlogdir = "{root / "runs"}"\nprogress = false\nseed = 3\nthreads = 1\n'
    )
    out = root / "out"
    out.mkdir()
    records = launch_on_two_processes("tests.distributed_worker", ["--config", str(config), "--out", str(out)], out, 240)
    return config, records, root / "runs"


def launch_on_two_processes(module: str, arguments: list[str], out: Path, timeout: float) -> list[dict]:
    """``torchrun --nproc_per_node 2 -m module arguments`` on the loopback; each rank's record from ``out``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if sys.platform.startswith("linux"):
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", f"--nproc_per_node={WORLD}",
        "--master_addr", "127.0.0.1", "--master_port", str(free_port()), "-m", module, *arguments,
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # torchrun and both workers
        output, _ = process.communicate()
        pytest.fail(f"the 2-process run of {module} hung:\n{output[-4000:]}")
    assert process.returncode == 0, output[-4000:]
    return [torch.load(out / f"rank{r}.pt", weights_only=False) for r in range(WORLD)]


@pytest.fixture()
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def max_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max((a[k].double() - b[k].double()).abs().max().item() for k in a)


def test_every_process_took_part(launched):
    _, records, _ = launched
    assert [(r["rank"], r["world"], r["device"]) for r in records] == [(0, 2, "cpu"), (1, 2, "cpu")]
    assert list(records[0]["a"]) == ["pretrain/1", "pretrain/2", "baseline/1", "baseline/2", "agent/1", "cotrain/1", "cotrain/2"]


def test_replicas_are_identical_after_every_epoch_of_every_phase(launched):
    _, (first, second), _ = launched
    for run in ("a", "b"):
        assert first[run].keys() == second[run].keys()
        for epoch, modules in first[run].items():
            for name in MODULES:
                for key, value in modules[name].items():
                    assert torch.equal(value, second[run][epoch][name][key]), (run, epoch, name, key)
    # ... and the REINFORCE phases did train what they should (so 1. is not about frozen weights)
    snapshots = first["a"]
    assert max_difference(snapshots["agent/1"]["policy"], snapshots["baseline/2"]["policy"]) > 0
    assert max_difference(snapshots["cotrain/2"]["policy"], snapshots["agent/1"]["policy"]) > 0
    assert not torch.equal(snapshots["cotrain/2"]["strength"]["log_factor"], snapshots["agent/1"]["strength"]["log_factor"])  # β learned


def test_matches_one_process_on_the_same_global_batch(launched, register_tiny, tmp_path):
    config, (first, _), _ = launched
    single = SnapshotTrainer(load_config(config, [f"run.logdir={tmp_path}"]), log=lambda _: None)
    results = single.run()
    distributed, reference = first["a"], single.snapshots
    assert distributed.keys() == reference.keys()
    for epoch in ("pretrain/1", "pretrain/2", "baseline/1", "baseline/2"):  # cross-entropy: deterministic
        assert max_difference(distributed[epoch]["network"], reference[epoch]["network"]) < 1e-5, epoch
    # agent phase: the frozen network (pretrain's best, selected by the same dev scores) and β are untouched
    assert max_difference(distributed["agent/1"]["network"], reference["agent/1"]["network"]) < 1e-5
    frozen = distributed["agent/1"]["network"]  # pretraining's best epoch, unchanged
    assert min(max_difference(frozen, distributed[epoch]["network"]) for epoch in ("pretrain/1", "pretrain/2")) == 0
    assert max_difference(distributed["agent/1"]["strength"], reference["agent/1"]["strength"]) == 0
    # co-training: as many global steps for β's schedule as one process takes
    assert torch.equal(distributed["cotrain/2"]["strength"]["step"], reference["cotrain/2"]["strength"]["step"])
    history, one = first["results_a"].history, results.history
    assert [(h.phase, h.epoch) for h in history] == [(h.phase, h.epoch) for h in one]
    for mine, theirs in zip(history, one):
        examples = [v for k, v in mine.to_dict().items() if k.endswith("_examples")]
        assert examples and all(n == 20 for n in examples)  # dev evaluated in shards, summed over the processes
        if mine.phase in ("pretrain", "baseline"):
            assert mine.dev_number("net-only", "accuracy") == pytest.approx(theirs.dev_number("net-only", "accuracy"), abs=1e-9)
            assert mine.dev_number("net-only", "log_likelihood") == pytest.approx(theirs.dev_number("net-only", "log_likelihood"),
                                                                                  abs=1e-5)
            assert mine.train["task_loss"] == pytest.approx(theirs.train["task_loss"], abs=1e-5)


def test_only_rank_zero_writes(launched):
    _, (first, second), logdir = launched
    assert second["writes"] == []
    written = {Path(line.split(" ", 1)[1]).name for line in first["writes"]}
    assert {"config.toml", "results.json", "tb"} <= written
    # an atomic write's temporary file (drga/files.py), renamed to last.pt
    assert any(name.startswith(".last.") and ".tmp" in name for name in written) and "last.pt" in written
    for run in ("a", "b"):
        folder = logdir / run
        assert {"last.pt", "pretrain_best.pt", "baseline_best.pt", "agent_best.pt", "cotrain_best.pt", "results.json"} <= {
            p.name for p in folder.iterdir()
        }
        assert any((folder / "tb").rglob("events.out.tfevents.*"))


def test_resume_by_the_same_processes_reproduces_the_uninterrupted_run(launched):
    _, records, _ = launched
    for record in records:
        assert list(record["b"]) == ["cotrain/2"]  # interrupted at the start of co-training's 2nd epoch
        for name in MODULES:
            for key, value in record["b"]["cotrain/2"][name].items():
                assert torch.equal(value, record["a"]["cotrain/2"][name][key]), (record["rank"], name, key)
        strip = lambda records: [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in records]  # noqa: E731
        assert strip(record["results_b"].history) == strip(record["results_a"].history)
