"""A task from scratch implements nine hooks, and :class:`drga.runner.task.Task` has no other member a task author writes;
what a task may add is a class of its own (drga/runner/task_options.py), and a task without one gets the defaults."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pytest

from drga import registry
from drga.config import ExperimentConfig
from drga.registry import RegistryError
from drga.runner import task_options
from drga.runner.task import Task, data_fingerprint_of, selection_key_of_record

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


def test_task_has_the_nine_hooks_its_name_and_its_configuration_alone():
    members = {name for name in vars(Task) if not name.startswith("_")}
    assert members == REQUIRED | {"name"}
    task = Minimal(ExperimentConfig())
    assert {name for name in vars(task)} == {"config", "settings"}


def test_a_task_of_nine_hooks_gets_the_rest_from_the_defaults(minimal):
    task = minimal(ExperimentConfig())
    assert task.name == "minimal" and registry.task_spec("minimal").task is Minimal
    hooks, checks = task_options.epoch_hooks(task), task_options.run_checks(task)
    assert hooks is not task and checks is not task  # the defaults, not members of the task
    scores = {"net-only": Scores(0.8125, 16)}
    assert hooks.numbers(scores["net-only"]) == {"accuracy": 0.8125, "examples": 16}
    assert hooks.epoch_summary(scores, {}) == ["dev net-only accuracy 0.8125"]  # floats only: the count is no score
    assert hooks.warmup_steps(None) == 0 and checks.data_fingerprint() is None and checks.read_content_fingerprint() is None
    assert checks.saved_flat_config(ExperimentConfig().to_dict()) == ExperimentConfig().flat()
    with pytest.raises(RegistryError, match="task 'minimal' cannot be used by drga tune: its class is no drga.extend.Tunable"):
        task_options.tunable(task)
    with pytest.raises(RegistryError, match="task 'minimal' cannot be used by drga sweep: its class gives no read_content_fingerprint"):
        data_fingerprint_of(minimal, ExperimentConfig(), "drga sweep")


def test_a_capability_is_the_tasks_own_once_it_inherits_its_class(minimal):
    class Tuned(minimal, task_options.EpochHooks, task_options.Tunable):
        result_type = Scores

        def metric_name(self):
            return "dev accuracy"

        def numbers(self, result):
            return {"accuracy": result.accuracy}

    task = Tuned(ExperimentConfig())
    assert task_options.epoch_hooks(task) is task and task_options.tunable(task) is task
    assert task_options.run_checks(task) is not task
    assert task_options.epoch_hooks(task).epoch_summary({"net-only": Scores(0.5, 4)}, {}) == ["dev net-only accuracy 0.5000"]
    assert selection_key_of_record(task, {"accuracy": 0.75, "examples": 4}) == (0.75,)
    with pytest.raises(TypeError, match="abstract"):
        type("Untuned", (minimal, task_options.Tunable), {})(ExperimentConfig())  # Tunable without its metric_name


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


def test_the_stable_baselines3_learners_refuse_a_task_without_episodes(minimal):
    from types import SimpleNamespace

    from drga.learners.sb3 import SB3AgentPhase

    config = ExperimentConfig()
    config.agent.algorithm = "sb3-ppo"
    network = SimpleNamespace(eval=lambda: None)
    context = SimpleNamespace(config=config, device="cpu", network=network, task=minimal(config))
    with pytest.raises(RegistryError, match="task 'minimal' gives no agent_examples, which the stable-baselines3 learners read"):
        SB3AgentPhase(context, epochs=1)
