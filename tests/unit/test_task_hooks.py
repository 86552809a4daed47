"""A task from scratch implements nine hooks; every other member of :class:`drga.runner.task.Task` has a default."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pytest

from drga import registry
from drga.config import ExperimentConfig
from drga.registry import RegistryError
from drga.runner.task import Task

REQUIRED = {"prepare", "build_network", "probe_batch", "loss", "revised_loss", "evaluate", "selection_key", "checkpoint_content",
            "final_report"}


@dataclass
class Scores:
    accuracy: float
    examples: int

    def as_dict(self):
        return asdict(self)


class Minimal(Task):
    def prepare(self, log, resume_from): ...
    def build_network(self, log): ...
    def probe_batch(self): ...
    def loss(self, network, batch): ...
    def revised_loss(self, rollout, batch): ...
    def evaluate(self, context, split, mode): ...
    def selection_key(self, result): return (result.accuracy,)
    def checkpoint_content(self): return {}
    def final_report(self, context, cells): ...


def test_the_abstract_hooks_are_the_nine_a_task_must_write():
    assert Task.__abstractmethods__ == REQUIRED
    with pytest.raises(TypeError, match="abstract"):
        type("Partial", (Task,), {})(ExperimentConfig())


@pytest.fixture
def minimal():
    registry.register_task("minimal", config=ExperimentConfig)(Minimal)
    yield Minimal
    registry.unregister_task("minimal")


def test_a_task_of_nine_hooks_gets_the_rest_from_the_defaults(minimal):
    task = minimal(ExperimentConfig())
    assert task.name == "minimal" and registry.task_spec("minimal").task is Minimal
    scores = {"net-only": Scores(0.8125, 16)}
    assert task.numbers(scores["net-only"]) == {"accuracy": 0.8125, "examples": 16}
    assert task.epoch_summary(scores, {}) == ["dev net-only accuracy 0.8125"]  # floats only: the count is no score
    assert task.warmup_steps(None) == 0 and task.data_fingerprint() is None and task.read_content_fingerprint() is None
    assert task.saved_flat_config(ExperimentConfig().to_dict()) == ExperimentConfig().flat()
    with pytest.raises(RegistryError, match="task 'minimal' gives no agent_examples, which the stable-baselines3 learners read"):
        task.agent_examples()


def test_a_task_registered_from_scratch_gets_the_entry_points_defaults(minimal):
    from drga.config import config_to_toml

    spec = registry.task_spec("minimal")
    config = spec.load_config(None, ["train.pretrain_epochs=3"])  # drga.config.load_config into its config class
    assert type(config) is ExperimentConfig and config.train.pretrain_epochs == 3
    assert spec.shared(config) is config and spec.defaults() == ExperimentConfig() and spec.to_toml(config) == config_to_toml(config)
    assert spec.report == registry.TaskReport("accuracy", 100.0, "accuracy (%)")
    assert spec.commands(None) == {} and spec.option_scopes() == {}
    with pytest.raises(RegistryError, match="task 'minimal' cannot load a checkpoint for inference: its registration names no load"):
        spec.load("x.pt")
    with pytest.raises(RegistryError, match="task 'minimal' registered no `drga evaluate`"):
        spec.evaluate_checkpoint(None, {})
