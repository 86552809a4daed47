"""The Python API's data and settings handling (the training path is run by tests/test_docs.py)."""

from __future__ import annotations

import pytest

from drga.api import TextData, _qualified, retrofit
from drga.config import ConfigError
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
    with pytest.raises(ConfigError, match="not a setting"):
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
