"""A task of one's own (one Task class and its registration, drga/registry.py · register_task): docs/extending.md's file,
written outside the package and named in $DRGA_PLUGINS, is chosen by its network, loaded, trained and evaluated through
the same doors as the built-in tasks (the command line, the configuration loader, the trainer,
``drga evaluate``); the built-in tasks dispatch through the same registry."""

from __future__ import annotations

import json
import sys

import pytest

from drga import registry
from tests.integration.test_plugins import EXTENDING, file_blocks
from tests.integration.test_trainer import write_keyword_tsv

TINY = ["network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
        "agent.hidden_sizes=8,8", "agent.samples=2", "data.batch_size=16", "train.pretrain_epochs=1", "train.agent_epochs=1",
        "train.cotrain_epochs=1", "train.fair_baseline=false", "run.report_to=[]"]


@pytest.fixture
def my_task(tmp_path, monkeypatch):
    """docs/extending.md's my_task.py, outside the package, named in $DRGA_PLUGINS as a user would."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "my_task.py").write_text(file_blocks(EXTENDING.read_text(encoding="utf-8"))["my_task.py"], encoding="utf-8")
    monkeypatch.chdir(folder)  # found in the working folder, as the drga command finds them (no sys.path edit)
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, "my_task")
    yield folder
    if str(folder) in sys.path:  # where the registry put the working folder
        sys.path.remove(str(folder))
    registry.unregister_network("lstm-sa-rf")
    registry.unregister_task("reward-first")
    sys.modules.pop("my_task", None)
    registry._LOADED.discard("my_task")


def test_a_task_from_outside_the_package_trains_and_evaluates_through_the_cli(my_task, tmp_path, capsys):
    from drga.cli import main
    from drga.tasks.run_config import experiment, load_run_config, run_config_toml
    from drga.trainer import trainer_for

    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    task = registry.task_for_network("lstm-sa-rf")
    assert task.name == "reward-first" and "reward-first" in registry.task_names()
    # the configuration loader and the trainer dispatch to it
    config = load_run_config(None, ["network.name=lstm-sa-rf", "data.dataset=tsv", f"data.tsv_path={tsv}", *TINY])
    # the configuration is classification's class; its network's registration names the task
    assert type(config).__name__ == "ExperimentConfig" and experiment(config) is config
    assert registry.task_of_config(config) is task
    assert "name = \"lstm-sa-rf\"" in run_config_toml(config)
    assert type(trainer_for(config).task).__name__ == "RewardFirstTask"
    # drga train: one tiny epoch of each phase, through the task's trainer
    argv = ["train", "--tsv", str(tsv), "--net", "lstm-sa-rf", "--logdir", str(tmp_path / "runs"), "--no-progress",
            *[a for s in TINY for a in ("--set", s)]]
    assert main(argv) == 0
    run_dir = tmp_path / "runs" / "tsv-lstm-sa-rf-seed0"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["config"]["network"]["name"] == "lstm-sa-rf" and "DRGA (co-trained)" in results["results"]
    from drga.checkpoint_format import load_checkpoint

    payload = load_checkpoint(run_dir / "cotrain_best.pt")
    assert payload.get("task") == "reward-first" and registry.task_of_checkpoint(payload) is task
    # drga evaluate finds the task by its checkpoint
    capsys.readouterr()
    assert main(["evaluate", str(run_dir / "cotrain_best.pt"), "--split", "dev"]) == 0
    assert "accuracy" in capsys.readouterr().out
    # its registration's load reads it: a classifier (docs/extending.md, "Predicting with its checkpoints"), as
    # classification's own loader does, the task being built on classification's
    import drga
    from drga.prediction import load

    model = drga.load(run_dir / "cotrain_best.pt")
    assert type(model).__name__ == "Classifier" and set(model.predict(["good", "bad"])) <= {"pos", "neg"}
    assert load(run_dir / "cotrain_best.pt").predict(["good", "bad"]) == model.predict(["good", "bad"])
    # drga predict reads it too: the task is classification's subclass, so its checkpoint holds a classifier
    texts = tmp_path / "texts.txt"
    texts.write_text("good\nbad\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", str(run_dir / "cotrain_best.pt"), "--input", str(texts)]) == 0
    labels = capsys.readouterr().out.split()
    assert len(labels) == 2 and set(labels) <= {"pos", "neg"}


def test_the_task_refuses_what_it_does_not_read_and_its_name_is_checked(my_task):
    from drga.extend import ClassificationTask, Task
    from drga.registry import RegistryError, register_task

    task = registry.task_spec("reward-first")
    assert task.task.__name__ == "RewardFirstTask" and task.inputs == ()  # a subclass reads nothing itself
    # all else it inherits from classification's registration
    classification = registry.task_spec("classification")
    assert (task.config_class, task.config_loader, task.trainer_class, task.model_loader, task.evaluator, task.commands_module) == \
        (classification.config_class, classification.config_loader, classification.trainer_class, classification.model_loader,
         classification.evaluator, classification.commands_module)
    assert registry.task_spec_of(task.task) is task
    with pytest.raises(RegistryError, match="task 'texts': task 'classification' reads text already; name the task"):
        register_task("texts", inputs=("text",))(type("Texts", (ClassificationTask,), {}))
    with pytest.raises(RegistryError, match="task 'scratch': name its configuration class"):
        register_task("scratch")(type("Scratch", (Task,), {}))
    with pytest.raises(RegistryError, match="unknown task 'reward-frist' \\(did you mean 'reward-first'\\?\\)"):
        registry.task_spec("reward-frist")
    with pytest.raises(RegistryError, match="Loose is not a registered task's class: decorate it with @register_task"):
        registry.task_spec_of(type("Loose", (ClassificationTask,), {}))
    assert registry.task_names()[-1] == "reward-first"  # the refused ones are not registered


def test_the_built_in_tasks_dispatch_through_the_registry():
    from drga.config import ExperimentConfig
    from drga.tasks.run_config import experiment, load_run_config
    from drga.tasks.translation.config import NMTConfig, TranslationConfig
    from drga.trainer import Trainer, TranslationTrainer

    assert registry.task_names()[:2] == ("classification", "translation")
    assert registry.task_for_network("lstm-sa").name == "classification" and registry.task_for_network("han").name == "classification"
    assert registry.task_for_network("seq2seq-luong").name == "translation"
    assert registry.task_for_network("no-such-net").name == "classification"  # whose loader names the networks
    translation = load_run_config(None, ["network.name=transformer-nmt"])
    assert type(translation) is TranslationConfig and experiment(translation) is translation.experiment
    assert registry.task_of_config(ExperimentConfig()) is registry.task_spec("classification")
    assert registry.task_of_config(TranslationConfig(ExperimentConfig(), NMTConfig())).task.__name__ == "TranslationTask"
    assert TranslationConfig() == TranslationConfig(ExperimentConfig(), NMTConfig())
    assert registry.task_spec("translation").report.metric == "bleu"
    assert registry.task_of_checkpoint({"task": "translation"}).name == "translation"
    assert registry.task_of_checkpoint({}) is None  # a checkpoint records its task: none is no task's
    assert registry.task_of_checkpoint({"task": "classification"}).name == "classification"
    assert Trainer.__module__ == "drga.tasks.classification.trainer" and TranslationTrainer.__module__ == "drga.tasks.translation.trainer"


def test_drga_networks_lists_each_networks_settings_with_their_defaults(capsys):
    from drga.cli import main

    assert main(["networks"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(out) if line.startswith("cnn-sa "))
    assert "settings: embedding_dim=300, hidden_size=300," in out[row + 1] and "kernel_sizes=(3, 4, 5)" in out[row + 1]
    transformer = next(i for i, line in enumerate(out) if line.startswith("transformer "))
    assert "heads=" in out[transformer + 1] and "feedforward_size=" in out[transformer + 1]


def test_drga_tune_and_sweep_ask_the_task_and_refuse_one_that_does_not_say(my_task):
    """The tuner's selection key and metric, and the sweep's data fingerprint and defaults, come from each task's
    class, the hooks the runner calls (no isinstance on the configuration); a task that gives none is refused by
    name, not guessed."""
    from drga import load_config
    from drga.config import ExperimentConfig
    from drga.extend import ClassificationTask, RunChecks
    from drga.registry import RegistryError
    from drga.runner.task import data_fingerprint_of
    from drga.sweep.fingerprints import _defaults
    from drga.tasks.translation.config import NMTConfig, TranslationConfig
    from drga.tune.study import metric_name, selection_key

    classification, translation = ExperimentConfig(), TranslationConfig(ExperimentConfig(), NMTConfig())
    assert metric_name(classification) == "dev accuracy" and metric_name(translation) == "dev BLEU"
    assert selection_key(classification, {"accuracy": 0.75, "reward": -0.5}) == (0.75, -0.5)
    assert type(_defaults(classification)) is ExperimentConfig and type(_defaults(translation)) is TranslationConfig
    task = registry.task_spec("reward-first")
    mine = load_config(None, ["network.name=lstm-sa-rf"])  # classification's class: the network names the task
    assert registry.task_of_config(mine) is task and registry.task_of_config(classification).name == "classification"
    # the task class's own selection_key and metric_name reach drga tune: the reward first, accuracy breaking ties
    assert selection_key(mine, {"accuracy": 0.75, "reward": -0.2}) == (-0.2, 0.75)
    assert metric_name(mine) == "dev reward" and type(_defaults(mine)) is task.config_class
    # the sweep's data fingerprint is the task class's own (read_content_fingerprint, the one the runner records)
    assert data_fingerprint_of(task.task, mine, "drga sweep") == \
        data_fingerprint_of(registry.task_spec("classification").task, classification, "drga sweep")

    @registry.register_task("bare")
    class Bare(ClassificationTask):  # a subclass that undoes them answers as a task without them does
        def read_content_fingerprint(self):
            return RunChecks.read_content_fingerprint(self)

    try:
        with pytest.raises(RegistryError, match="task 'bare' cannot be used by drga sweep: its class gives no read_content_fingerprint"):
            data_fingerprint_of(Bare, mine, "drga sweep")
    finally:
        registry.unregister_task("bare")


def test_the_python_block_trains_the_custom_task_exactly_as_printed(my_task, tmp_path, monkeypatch):
    """docs/extending.md's `drga.load_config` + `drga.train` block, run as printed in the folder of my_task.py and
    my_data.tsv: the run is the task's own (its checkpoint's task, its selection by the dev reward), and
    classification's own loader refuses the network, naming the loader to use."""
    from tests.doc_blocks import python_blocks
    from tests.integration.test_plugins import EXTENDING as page

    block = next(b for b in python_blocks(page.read_text(encoding="utf-8")) if "import my_task" in b and "drga.train" in b)
    write_keyword_tsv(my_task / "my_data.tsv")
    monkeypatch.syspath_prepend(str(my_task))  # a script in that folder has it on its path
    namespace: dict = {}
    exec(compile(block, "docs/extending.md", "exec"), namespace)
    results = namespace["results"]
    from drga.checkpoint_format import load_checkpoint

    run_dir = my_task / "runs" / "tsv-lstm-sa-rf-seed0"
    assert load_checkpoint(run_dir / "cotrain_best.pt").get("task") == "reward-first"
    assert registry.task_of_config(namespace["config"]).name == "reward-first"  # the network's registration names it
    pretraining = [r.to_dict() for r in results.history if r.phase == "pretrain"]
    best = max(pretraining, key=lambda r: (r["dev_net-only_reward"], r["dev_net-only_accuracy"]))
    assert results.rows["baseline (pretrain only)"].epoch == best["epoch"]
    import drga
    from drga.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="trained by the task 'reward-first': load its configuration with drga.load_config"):
        load_config(None, ["network.name=lstm-sa-rf"])
    with pytest.raises(ConfigError, match="network 'lstm-sa-rf' is trained by the task 'reward-first', not 'classification'"):
        drga.load_config(overrides=["network.name=lstm-sa-rf"], task="classification")


def test_a_subclass_of_a_registered_network_is_named_by_its_own_registration():
    from drga.baselines.lstm_sa import LSTMSelfAttention

    @registry.register_network("lstm-sa-child")
    class Child(LSTMSelfAttention):
        """LSTM+SA under a name of its own, without a net_name of its own."""

    try:
        assert Child.net_name == "lstm-sa-child" and LSTMSelfAttention.net_name == "lstm-sa"
    finally:
        registry.unregister_network("lstm-sa-child")
