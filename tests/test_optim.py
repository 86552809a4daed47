"""train.fused_adam: PyTorch's fused Adam where this torch has it, the for-each Adam otherwise."""

import pytest
import torch

import drga.baselines as baselines
from drga.runner.optim import adam
from drga.trainer import Trainer
from tests.test_trainer import tiny_config
from tests.tiny_network import TinyAttentionNet


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def test_fused_adam_on_the_cpu_takes_the_same_step_up_to_rounding():
    torch.manual_seed(0)
    start, grads = torch.randn(50, 20), [torch.randn(50, 20) for _ in range(5)]
    steps = {}
    for fused in (False, True):
        weight = torch.nn.Parameter(start.clone())
        optimizer = adam([weight], 1e-2, fused, weight_decay=0.01)
        assert bool(optimizer.defaults.get("fused")) is fused
        for grad in grads:
            weight.grad = grad.clone()
            optimizer.step()
        steps[fused] = weight.detach()
    assert not torch.equal(steps[False], start)
    torch.testing.assert_close(steps[True], steps[False], rtol=1e-5, atol=1e-6)


def test_a_torch_without_the_fused_kernel_falls_back_and_says_so(monkeypatch):
    plain = torch.optim.Adam

    def without_fused(params, **options):
        if options.get("fused"):
            raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices")
        return plain(params, **options)

    monkeypatch.setattr(torch.optim, "Adam", without_fused)
    said = []
    optimizer = adam([torch.nn.Parameter(torch.zeros(3))], 1e-3, True, said.append)
    assert not optimizer.defaults.get("fused") and len(said) == 1 and "for-each" in said[0]


@pytest.mark.parametrize("fused", [False, True])
def test_every_phase_trains_with_either_adam(tmp_path, fused):
    trainer = Trainer(tiny_config(tmp_path, **{"train.fused_adam": fused}), log=lambda _: None)
    results = trainer.run()
    assert bool(trainer.optimiser.network_optimizer.defaults.get("fused")) is fused
    assert bool(trainer.optimiser.agent_optimizer.defaults.get("fused")) is fused
    drga = results["results"]["DRGA (co-trained)"]
    assert 0.5 < drga["test_net-only"]["accuracy"] <= 1.0  # the keyword task is learnt either way
