"""The GPU path on a GPU: skipped where torch sees no CUDA device (CI has none).

``tests/integration/test_device.py`` checks the device discipline without a GPU; these tests run the same steps
on CUDA for real (``bench/gpu_check.sh`` runs them on a lent GPU machine). The networks are built on
the CPU and then moved, so a CPU and a CUDA trainer of one seed start from the same weights: with
dropout off, their first loss on the same batch agrees up to float rounding.
"""

from __future__ import annotations

import math

import pytest
import torch

from drga.runner.phases import PHASE_NAMES
from drga.trainer import Trainer
from tests.integration.test_device import NETWORKS, small_trainer, stepping
from tests.nmt_helpers import tiny_translation_config

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def trainer_on(device: str, net: str, dataset: str, folder: str, tmp_path, *extra: str) -> Trainer:
    return small_trainer(net, dataset, folder, tmp_path / device, f"run.device={device}", "network.dropout=0.0", *extra)


def assert_finite(step: dict[str, torch.Tensor], phase: str) -> None:
    for name in ("task_loss", "agent_loss", "reward"):
        if name in step:
            assert math.isfinite(step[name].item()), f"{phase}: {name} is {step[name].item()}"


@pytest.mark.parametrize("net,dataset,folder", NETWORKS, ids=[n[0] for n in NETWORKS])
def test_the_first_loss_on_cuda_equals_the_cpu_loss_and_every_phase_steps(net, dataset, folder, tmp_path):
    first_loss = {}
    for device in ("cpu", "cuda"):
        trainer = trainer_on(device, net, dataset, folder, tmp_path)
        batch = next(iter(trainer.train_batches)).to(trainer.device)  # as the runner's epoch loop moves it
        first_loss[device] = stepping.train_step(trainer, stepping.begin_phase(trainer, "pretrain"), batch)["task_loss"].item()
    assert first_loss["cuda"] == pytest.approx(first_loss["cpu"], rel=1e-3)

    for name in PHASE_NAMES:  # the CUDA trainer, whose network pretrain has just updated once
        step = stepping.train_step(trainer, stepping.begin_phase(trainer, name), batch)
        assert all(value.device.type == "cuda" for value in step.values() if isinstance(value, torch.Tensor))
        assert_finite(step, name)
    assert all(p.device.type == "cuda" for p in [*trainer.network.parameters(), *trainer.policy.parameters()])


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_a_mixed_precision_cotraining_step_is_finite_and_updates_the_weights(precision, tmp_path):
    trainer = trainer_on("cuda", "lstm-sa", "subj", "subj", tmp_path, f"run.precision={precision}")
    assert trainer.optimiser.autocast_dtype == (torch.bfloat16 if precision == "bf16" else torch.float16)
    batch = next(iter(trainer.train_batches)).to(trainer.device)
    before = [p.detach().clone() for p in trainer.network.parameters()]
    phase = stepping.begin_phase(trainer, "cotrain")
    for _ in range(3):  # fp16's gradient scaler may skip a first step whose scaled gradients overflowed
        step = stepping.train_step(trainer, phase, batch)
        assert_finite(step, "cotrain")
    assert any(not torch.equal(b, p) for b, p in zip(before, trainer.network.parameters(), strict=True))
    assert all(p.dtype == torch.float32 for p in trainer.network.parameters()), "autocast keeps fp32 weights"


def test_a_translation_step_of_every_phase_runs_on_cuda(tmp_path):
    from drga.trainer import TranslationTrainer

    trainer = TranslationTrainer(tiny_translation_config(tmp_path, **{"run.device": "cuda"}), log=lambda _: None)
    batch = next(iter(trainer.train_batches)).to(trainer.device)
    for name in PHASE_NAMES:
        step = stepping.train_step(trainer, stepping.begin_phase(trainer, name), batch)
        assert_finite(step, name)
    assert all(p.device.type == "cuda" for p in trainer.network.parameters())
