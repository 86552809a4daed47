"""Translation under torchrun: 2 processes, gloo on the CPU, loopback (docs/distributed.md).

The same runner trains both tasks, so translation gets DDP with no code of its own: each process
trains on its shard of every global batch of sentence pairs and DDP all-reduces the gradients of
whatever the phase trains. Dev and test are scored whole by every process (BLEU is a corpus
statistic, not a mean over shards), so both processes take the same selection decisions.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from tests.distributed_worker import MODULES
from tests.integration.test_distributed import WORLD, launch_on_two_processes
from tests.nmt_helpers import write_synthetic_corpus


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    root = tmp_path_factory.mktemp("distributed-translation")
    write_synthetic_corpus(root / "corpus", train=120, dev=20, test=20)
    out = root / "out"
    out.mkdir()
    records = launch_on_two_processes("tests.distributed_translation_worker", ["--root", str(root), "--out", str(out)], out, 300)
    return records, root / "runs"


def test_both_processes_trained_every_phase(launched):
    records, _ = launched
    assert [r["world"] for r in records] == [WORLD, WORLD]
    phases = [key.split("/")[0] for key in records[0]["snapshots"]]
    assert phases == ["pretrain", "pretrain", "baseline", "baseline", "baseline", "agent", "cotrain", "cotrain"]


def test_replicas_are_identical_after_every_epoch(launched):
    (first, second), _ = launched
    assert list(first["snapshots"]) == list(second["snapshots"])
    for key, modules in first["snapshots"].items():
        for name in MODULES:
            for tensor_name, value in modules[name].items():
                assert torch.equal(value, second["snapshots"][key][name][tensor_name]), (key, name, tensor_name)


def test_training_moved_the_network_and_the_agent(launched):
    (first, _), _ = launched
    snapshots = first["snapshots"]
    before, after = snapshots["pretrain/1"]["network"], snapshots["cotrain/2"]["network"]
    assert any(not torch.equal(before[k], after[k]) for k in before)
    agent_before, agent_after = snapshots["baseline/3"]["policy"], snapshots["agent/1"]["policy"]
    assert any(not torch.equal(agent_before[k], agent_after[k]) for k in agent_before)


def test_both_processes_report_the_same_scores_and_only_rank_zero_writes(launched):
    (first, second), logdir = launched
    assert first["results"].rows == second["results"].rows
    bleu = first["results"].rows["DRGA (co-trained)"].scores("test", "with-agent")["bleu"]
    assert math.isfinite(bleu)
    assert second["writes"] == []
    names = {p.name for p in (logdir / "ddp").iterdir()}
    assert {"last.pt", "pretrain_best.pt", "cotrain_best.pt", "results.json", "source.spm.model", "translations"} <= names
    assert (Path(logdir / "ddp" / "translations")).is_dir()
