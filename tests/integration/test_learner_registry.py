"""The agent phase's learner is chosen from a registry (drga/registry.py · register_learner), as a network or a reward is:
the built-ins register there, a learner of one's own trains the agent phase by ``agent.algorithm``, and a name no
learner has is refused in one line that lists the registered ones."""

from __future__ import annotations

import pytest

from drga import registry
from drga.config import ConfigError, load_config
from drga.learners import AgentPhaseLearner, CoTrainingLearner, NetworkLearner, make_learner
from drga.names import Part
from drga.trainer import Trainer
from tests.integration.test_trainer import register_tiny, tiny_config  # noqa: F401  (register_tiny: the autouse fixture)


class CountingLearner(AgentPhaseLearner):
    """REINFORCE's agent phase that counts its updates: which learner trained the phase is then visible."""

    updates = 0

    def training_step(self, context, batch):
        CountingLearner.updates += 1
        return super().training_step(context, batch)


@pytest.fixture
def counting():
    registry.register_learner("counting")(CountingLearner)
    CountingLearner.updates = 0
    yield
    registry.unregister_learner("counting")


def test_the_built_in_learners_are_registered_and_each_phase_gets_its_own():
    assert {"reinforce", "sb3-ppo", "sb3-a2c"} <= set(registry.learner_names())
    agent_only, network_only, both = (Part.AGENT,), (Part.NETWORK,), (Part.NETWORK, Part.AGENT)
    assert type(make_learner(agent_only, "reinforce")) is AgentPhaseLearner
    assert type(make_learner(network_only, "sb3-ppo")) is NetworkLearner  # the network's phases keep the network's learner
    assert type(make_learner(both, "sb3-ppo")) is CoTrainingLearner
    assert make_learner(agent_only, "reinforce") is not make_learner(agent_only, "reinforce")  # a fresh one per phase


def test_a_learner_of_ones_own_trains_the_agent_phase(counting, tmp_path):
    assert type(make_learner((Part.AGENT,), "counting")) is CountingLearner
    updates = []
    for epochs in (1, 2):
        CountingLearner.updates = 0
        config = tiny_config(tmp_path / f"epochs{epochs}", **{"agent.algorithm": "counting", "train.agent_epochs": epochs,
                                                              "train.cotrain_epochs": 0, "train.fair_baseline": "false"})
        results = Trainer(config, log=lambda _: None).run()
        assert "agent on frozen network" in results.rows
        updates.append(CountingLearner.updates)
    assert updates[0] > 0 and updates[1] == 2 * updates[0]  # one update per batch of each agent epoch, by this learner


def test_an_unknown_learner_is_refused_in_one_line_and_a_taken_name_needs_replace(counting):
    with pytest.raises(ConfigError, match="agent.algorithm: unknown learner 'nope'; choose one of: reinforce, sb3-ppo, sb3-a2c, counting"):
        load_config(None, ["agent.algorithm=nope"])
    with pytest.raises(registry.RegistryError, match="a learner named 'counting' is registered already"):
        registry.register_learner("counting")(NetworkLearner)
    registry.register_learner("counting", replace=True)(CountingLearner)
    with pytest.raises(registry.RegistryError, match="a learner name must be a non-empty word"):
        registry.register_learner("two words")
