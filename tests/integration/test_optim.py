"""train.fused_adam: PyTorch's fused Adam where this torch has it, the for-each Adam otherwise."""

import dataclasses

import pytest
import torch

import drga.baselines as baselines
from drga.records import EpochRecord
from drga.runner.optim import adam
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
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
    drga = results.rows["DRGA (co-trained)"]
    assert 0.5 < drga.scores("test", "net-only")["accuracy"] <= 1.0  # the keyword task is learnt either way


# ---------------------------------------------------------------------------- the parts a phase trains (issue 56)


def started(tmp_path, phase_name):
    """A tiny trainer with ``phase_name`` started afresh (its optimisers made from the phase's ``trains``)."""
    from drga.runner.phases import phase_named

    trainer = Trainer(tiny_config(tmp_path), log=lambda _: None)
    trainer.start_phase(phase_named(phase_name), fresh=True)
    return trainer


def test_the_optimiser_step_owns_each_parts_optimiser_and_parameters(tmp_path):
    from drga.names import Part

    cotrain = started(tmp_path / "cotrain", "cotrain").optimiser
    assert list(cotrain.parts) == [Part.NETWORK, Part.AGENT]
    network, strength = cotrain.parts[Part.NETWORK][1]  # β's learned factor trains, and is clipped, with the network
    assert [id(p) for p in cotrain.part_parameters(Part.NETWORK)] == [id(p) for p in [*network.parameters(), *strength.parameters()]]
    agent = started(tmp_path / "agent", "agent").optimiser
    assert list(agent.parts) == [Part.AGENT] and agent.network_optimizer is None
    with pytest.raises(RuntimeError, match="trains no network"):
        agent.step({Part.NETWORK: torch.zeros((), requires_grad=True)})


def test_betas_schedule_advances_with_each_network_update_of_co_training_only(tmp_path):
    from drga.learners import AgentPhaseLearner, CoTrainingLearner, NetworkLearner
    from drga.names import Part

    for phase_name, learner, advances in [("cotrain", CoTrainingLearner(), 1), ("agent", AgentPhaseLearner(), 0),
                                          ("pretrain", NetworkLearner(), 0)]:
        trainer = started(tmp_path / phase_name, phase_name)
        before = int(trainer.strength.step)
        losses, _ = learner.training_step(trainer.context, next(iter(trainer.train_batches)))
        assert set(losses) == set(learner.steps) and int(trainer.strength.step) == before  # a learner returns losses, never steps
        trainer.update(lambda batch, learner=learner, context=trainer.context: learner.training_step(context, batch),
                       next(iter(trainer.train_batches)))
        assert int(trainer.strength.step) - before == advances, phase_name
    trainer = started(tmp_path / "floor", "cotrain")  # the agent's loss alone does not advance it
    before = int(trainer.strength.step)
    trainer.optimiser.step({Part.AGENT: sum(p.sum() for p in trainer.policy.parameters())})
    assert int(trainer.strength.step) == before


def test_the_optimiser_table_holds_the_parts_the_learner_steps_and_sb3_gets_no_agent_adam(tmp_path):
    from drga.learners import make_learner
    from drga.names import Part
    from drga.runner.phases import phase_named

    trainer = Trainer(tiny_config(tmp_path, **{"agent.algorithm": "sb3-ppo"}), log=lambda _: None)
    assert make_learner(phase_named("agent").trains, "sb3-ppo").steps == ()
    trainer.start_phase(phase_named("agent"), fresh=True)
    assert trainer.optimiser.parts == {} and trainer.optimiser.agent_optimizer is None  # SB3 steps its own optimiser
    assert trainer.optimiser.state_dict()["agent_optimizer"] is None  # last.pt keeps its keys
    trainer.start_phase(phase_named("cotrain"), fresh=True)
    assert trainer.optimiser.network_optimizer is trainer.optimiser.parts[Part.NETWORK][0]  # derived from the one table
    assert trainer.optimiser.agent_optimizer is trainer.optimiser.parts[Part.AGENT][0]
    assert set(trainer.optimiser.state_dict()) == {"net_optimizer", "agent_optimizer", "lr_schedule"}


def test_a_context_offers_no_optimiser_and_a_read_only_history(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, **{"train.agent_epochs": 0, "train.cotrain_epochs": 0, "train.fair_baseline": False}),
                      log=lambda _: None)
    results = trainer.run()
    history = trainer.context.history
    assert isinstance(history, tuple) and list(history) == results.history
    assert all(isinstance(record, EpochRecord) for record in trainer.state.history)  # the loop writes typed records
    with pytest.raises(dataclasses.FrozenInstanceError):
        history[0].epoch = 99  # type: ignore[misc]
    history[0].train["task_loss"] = -1.0  # a copy: the run's record keeps its number
    assert trainer.state.history[0].train["task_loss"] != -1.0
    assert results.history is not trainer.state.history  # the report holds its own list, not the run's
    assert not hasattr(trainer.context, "optimiser")  # only the loop steps: a task or a learner returns losses
    assert trainer.context.reward is trainer.context.reward  # the chosen reward, built once per run
