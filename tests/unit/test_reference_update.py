"""drga/core/reference.py, the one-screen co-training update, computes what the run's fast path computes: the same
losses, rewards and gradients on the same batch and seed, within float tolerance (dense against blockwise eq. 1)."""

import pytest
import torch

import drga.baselines as baselines
from drga.core.reference import co_training_update
from drga.names import Part
from drga.runner.phases import phase_named
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.tiny_network import TinyAttentionNet


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def gradients(*modules):
    return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for m in modules for p in m.parameters()]


@pytest.mark.parametrize("training", [False, True], ids=["eval mode", "train mode (dropout)"])
def test_the_reference_update_equals_the_runs_co_training_step(tmp_path, training):
    trainer = Trainer(tiny_config(tmp_path, **{"agent.samples": 3}), log=lambda _: None)
    trainer.start_phase(phase_named("cotrain"), fresh=True)
    trainer.network.train(training), trainer.policy.train(training)
    batch = next(iter(trainer.train_batches))
    learner, context = trainer.learners["cotrain"], trainer.context
    modules = (trainer.network, trainer.policy, trainer.strength)
    reward = trainer.config.reward

    torch.manual_seed(11)
    losses, statistics = learner.training_step(context, batch)
    (losses[Part.AGENT] + losses[Part.NETWORK]).backward()
    fast = gradients(*modules)
    for module in modules:
        module.zero_grad()

    torch.manual_seed(11)
    reference = co_training_update(trainer.network, trainer.policy, batch, context.strength(), samples=3,
                                   gamma=reward.gamma, sqrt_l0=reward.sqrt_l0, delta=reward.delta,
                                   normalize_advantage=trainer.config.agent.normalize_advantage)
    (reference.agent + reference.network).backward()
    slow = gradients(*modules)

    assert reference.agent.item() == pytest.approx(losses[Part.AGENT].item(), rel=1e-4, abs=1e-6)
    assert reference.network.item() == pytest.approx(losses[Part.NETWORK].item(), rel=1e-5)
    assert reference.reward.mean().item() == pytest.approx(statistics["reward"].item(), rel=1e-5)
    assert len(fast) == len(slow) and any(g.abs().sum() > 0 for g in slow)
    for a, b in zip(fast, slow):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def test_the_reference_update_steps_its_optimizers(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, **{"agent.samples": 3}), log=lambda _: None)
    batch = next(iter(trainer.train_batches))
    optimizers = (torch.optim.Adam([*trainer.network.parameters(), *trainer.strength.parameters()], lr=0.01),
                  torch.optim.Adam(trainer.policy.parameters(), lr=0.01))
    before = [p.detach().clone() for p in trainer.policy.parameters()]
    co_training_update(trainer.network, trainer.policy, batch, trainer.strength(), samples=3, optimizers=optimizers)
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.policy.parameters()))
