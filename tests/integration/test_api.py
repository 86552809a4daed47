"""The Python API: data and settings handling, the run folder, progress bars, the table's flags and new texts
(the documented training path is run by tests/integration/test_docs.py)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
import torch

import drga
from drga.api import RetrofitResult, TextData, retrofit
from drga.checkpoint_format import CheckpointError
from drga.config import ConfigError
from drga.errors import UserError
from drga.prediction import Classifier
from drga.records import ReportRow
from drga.tasks.classification.api import _qualified
from tests.conftest import drga_messages
from tests.tiny_network import TinyAttentionNet

PAIRS = [("a good film", "pos"), ("a bad film", "neg"), ("good acting", "pos"), ("dull and bad", "neg")] * 10


def test_pairs_are_split_by_label_and_tokenized():
    data = TextData.from_pairs(PAIRS)
    assert data.label_names == ["neg", "pos"] and data.num_classes == 2
    prepared = data.prepared
    assert (len(prepared.train), len(prepared.dev), len(prepared.test)) == (32, 4, 4)
    assert "good" in data.vocab.stoi and "film" in data.vocab.stoi
    tokens = TextData.from_pairs([(["Already", "Split"], 1), (["Other"], 0)] * 10)
    assert "Already" in tokens.vocab.stoi  # token lists are kept as given


def test_explicit_splits_and_their_errors():
    data = TextData.from_pairs(PAIRS, PAIRS[:4], PAIRS[:4], tokenizer=str.split)
    assert len(data.prepared.dev) == 4
    with pytest.raises(ConfigError, match="label 'meh' never occurs"):
        TextData.from_pairs(PAIRS, [("so so", "meh")], PAIRS[:2])
    with pytest.raises(ConfigError, match="both dev and test"):
        TextData.from_pairs(PAIRS, PAIRS[:2])
    with pytest.raises(ConfigError, match="not a \\(text, label\\) pair"):
        TextData.from_pairs(["just text", "more"])
    with pytest.raises(ConfigError, match="two distinct labels"):
        TextData.from_pairs([("a", 1)] * 5)


def test_keywords_name_a_field_of_one_section():
    assert _qualified("pretrain_epochs") == "train.pretrain_epochs"
    assert _qualified("samples") == "agent.samples"
    with pytest.raises(ConfigError, match="ambiguous: agent.lr and train.lr"):
        _qualified("lr")
    with pytest.raises(ConfigError, match="'learning_rate' is not a setting; did you mean 'lr'\\?"):
        _qualified("learning_rate")


def test_settings_are_validated_before_training(tmp_path):
    data = TextData.from_pairs(PAIRS)
    network = TinyAttentionNet(len(data.vocab), 2)
    with pytest.raises(ConfigError, match="reward.gamma must be a finite number"):
        retrofit(network, data, gamma=float("nan"), run_dir=tmp_path / "run")
    with pytest.raises(ConfigError, match="ambiguous"):
        retrofit(network, data, lr=0.1, run_dir=tmp_path / "run")


def test_a_torch_dataset_of_pairs_is_accepted():
    from torch.utils.data import Dataset

    class Reviews(Dataset):
        def __len__(self):
            return len(PAIRS)

        def __getitem__(self, index):
            return PAIRS[index]

    data = TextData.from_pairs(Reviews())
    assert data.num_classes == 2 and len(data.prepared.train) + len(data.prepared.dev) + len(data.prepared.test) == len(PAIRS)


# --- the notebook's rough edges (issue 43) and new texts ----------------------------------------------


class StopBeforeTraining(Exception):
    pass


@pytest.fixture
def stopped_trainer(monkeypatch):
    """retrofit up to the trainer, which records the configuration it is given and stops."""
    seen = {}

    def trainer(config, **_):
        seen["config"] = config
        raise StopBeforeTraining

    monkeypatch.setattr("drga.tasks.classification.trainer.Trainer", trainer)  # what retrofit trains with (drga.trainer re-exports it)
    return seen


@pytest.fixture
def info_lines():
    with drga_messages(logging.INFO) as messages:
        yield messages


def test_progress_bars_only_on_a_terminal_unless_asked_for(stopped_trainer, tmp_path, monkeypatch):
    data = TextData.from_pairs(PAIRS)
    for progress, terminal, shown in [(None, False, False), (None, True, True), (True, False, True), (False, True, False)]:
        monkeypatch.setattr("sys.stderr.isatty", lambda terminal=terminal: terminal)
        with pytest.raises(StopBeforeTraining):
            retrofit(TinyAttentionNet(len(data.vocab), 2), data, run_dir=tmp_path / "run", progress=progress)
        assert stopped_trainer["config"].run.progress is shown, (progress, terminal)


def test_the_default_run_folder_is_named_under_runs_and_reported(stopped_trainer, tmp_path, monkeypatch, info_lines):
    monkeypatch.chdir(tmp_path)
    data = TextData.from_pairs(PAIRS, max_length=7)
    for _ in range(2):
        with pytest.raises(StopBeforeTraining):
            retrofit(TinyAttentionNet(len(data.vocab), 2), data)
    config = stopped_trainer["config"]
    folders = sorted(path.name for path in (tmp_path / "runs").iterdir())
    assert len(folders) == 2 and re.fullmatch(r"python-tiny-seed0-\d{8}-\d{6}(-2)?", folders[0]) and config.run.run_name in folders
    assert config.run.logdir == "runs"
    assert any(f"logs in {Path('runs') / config.run.run_name} (result.run_dir)" in line for line in info_lines)
    assert config.data.max_length == 7 and config.data.lowercase  # what the data were made with, for predict


def test_a_cell_selected_at_cotraining_epoch_0_is_flagged():
    written = {
        "baseline (pretrain only)": {"phase": "pretrain", "epoch": 3, "checkpoint": "pretrain_best.pt", "test_net-only": {"accuracy": 0.7},
                                     "epoch_net-only": 3},
        "DRGA (co-trained)": {"phase": "cotrain", "epoch": 0, "checkpoint": "cotrain_best.pt", "test_net-only": {"accuracy": 0.75},
                              "test_with-agent": {"accuracy": 0.8}, "epoch_net-only": 2, "epoch_with-agent": 0},
    }
    rows = {label: ReportRow.from_dict(row) for label, row in written.items()}
    result = RetrofitResult(None, None, None, rows, [])
    assert result.starting_point("DRGA (co-trained)", "with-agent").startswith("co-training epoch 0")
    assert result.starting_point("DRGA (co-trained)", "net-only") is None
    lines = result.table().splitlines()
    assert lines[2].split()[-2:] == ["0.7500", "0.8000†"]
    assert lines[3].startswith("† DRGA (co-trained): selected at co-training epoch 0, the pretrained network and agent before")
    records = result.records()
    assert records[0]["selected at"] == "" and records[1]["selected at"].startswith("with-agent: co-training epoch 0")
    assert records[1]["with-agent"] == pytest.approx(0.8)


def test_swapped_columns_are_named_as_such():
    swapped = [(label, f"review number {i} of the film") for i, label in enumerate(["pos", "neg"] * 20)]  # (label, text)
    with pytest.raises(UserError, match=r"the training pairs: 40 distinct labels in 40 rows.*"
                                        r"text column holds only 2 distinct values \('neg', 'pos'\): are the columns swapped\?"):
        TextData.from_pairs(swapped)


@pytest.fixture(scope="module")
def retrofitted(tmp_path_factory):
    """The tiny network retrofitted on PAIRS (module-wide: one short training)."""
    data = TextData.from_pairs(PAIRS)
    torch.manual_seed(0)
    network = TinyAttentionNet(len(data.vocab), data.num_classes)
    folder = tmp_path_factory.mktemp("retrofit") / "run"
    result = retrofit(network, data, run_dir=folder, pretrain_epochs=3, agent_epochs=1, cotrain_epochs=1, hidden_sizes=[8, 8],
                      settings={"train.lr": 0.05})
    return result, data


def test_the_result_classifies_new_texts_as_the_loaded_checkpoint_does(retrofitted):
    result, _ = retrofitted
    texts = ["A good film!", "Dull and BAD.", ["good", "acting"]]
    assert result.predict(texts) == ["pos", "neg", "pos"]
    loaded = drga.load(result.run_dir / "cotrain_best.pt", network=TinyAttentionNet)
    for mode in ("net-only", "with-agent"):
        mine, theirs = result.predictions(texts, mode), loaded.predictions(texts, mode)
        assert [p.tokens for p in mine] == [["a", "good", "film", "!"], ["dull", "and", "bad", "."], ["good", "acting"]]
        for a, b in zip(mine, theirs):
            assert a.label == b.label and list(a.probabilities.values()) == pytest.approx(list(b.probabilities.values()), abs=1e-6)
            assert a.attention[0] == pytest.approx(b.attention[0], abs=1e-6)
    tokens, weights = result.attention(["a good film"], mode="net-only")[0]
    assert tokens == ["a", "good", "film"] and sum(weights[0]) == pytest.approx(1.0, abs=1e-6)
    assert sum(result.probabilities(["a good film"])[0].values()) == pytest.approx(1.0, abs=1e-6)


def test_a_network_of_ones_own_is_given_to_load_and_a_tokenizer_of_ones_own_too(retrofitted):
    result, data = retrofitted
    with pytest.raises(CheckpointError, match="the network 'tiny', which is not among this program's networks.*network=YourNetworkClass"):
        drga.load(result.run_dir / "cotrain_best.pt")
    assert data.prepared.splits.tokenizer == "raw-text"
    assert TextData.from_pairs(PAIRS, tokenizer=str.split).prepared.splits.tokenizer == "custom"
    own = Classifier(result.network, result.policy, result.strength, data.vocab, data.label_names, None, result.config.data, True)
    with pytest.raises(UserError, match="a tokenizer of your own: give it"):
        own.predict(["a good film"])
    assert own.predict([["a", "good", "film"]]) == result.predict(["a good film"])


@pytest.mark.parametrize("module", ["drga.api", "drga.prediction", "drga.baselines.common", "drga.baselines.protocol", "drga.errors"])
def test_a_public_module_exports_its_own_names_not_its_imports(module):
    namespace: dict = {}
    exec(f"from {module} import *", namespace)  # fails on a name __all__ lists that the module lacks
    exported = set(namespace) - {"__builtins__"}
    assert exported and not exported & {"copy", "dataclasses", "sys", "torch", "nn", "Path", "Any", "ConfigError", "log_info"}
