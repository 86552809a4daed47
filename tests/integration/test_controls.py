"""docs/controls.md as printed: a planted TSV written by hand trains with an attention degradation and is analysed
for the mass on its cue words; a degraded checkpoint is read back degraded; planted SUBJ loads from the real files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from drga.data import load_dataset
from drga.data.planted import CUE_WORDS
from tests.conftest import require_data

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "controls.md"


def _block(language: str, index: int = 0) -> str:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)[index]


def test_the_pages_planted_tsv_trains_degraded_and_is_analysed_for_its_cue_words(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", _block("bash")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "model attention degraded: random at strength 1 (control.*)" in done.stdout
    saved = (tmp_path / "runs" / "planted" / "config.toml").read_text(encoding="utf-8")
    assert '[control]\nattention = "random"\nstrength = 1.0\nfreeze_scorer = false' in saved
    table = (tmp_path / "planted-analysis" / "cue_mass.md").read_text(encoding="utf-8")
    printed = _block("text")
    number = re.compile(r"\d+\.\d+")
    assert number.sub("#", table).strip() == number.sub("#", printed).strip()  # the table as printed, its numbers this machine's
    summary = json.loads((tmp_path / "planted-analysis" / "summary.json").read_text(encoding="utf-8"))["cue_mass"]
    dev_lines = 4  # 40 lines, split 80/10/10
    assert summary["sentences"] == summary["sentences_with_cues"] == dev_lines and summary["unknown_words"] == []
    # uniform attention's share of one cue in a sentence of L tokens is 1/L, averaged over the dev sentences
    assert 1 / 12 <= summary["mean_uniform_mass"] <= 1 / 5
    assert 0.0 <= summary["mean_mass_original"] <= 1.0 and 0.0 <= summary["mean_mass_revised"] <= 1.0


def test_cue_mass_needs_its_words_and_names_words_outside_the_vocabulary(tmp_path):
    drga = [sys.executable, "-m", "drga.cli", "analyze", str(tmp_path / "none.pt"), "--out", str(tmp_path / "out")]
    refused = subprocess.run([*drga, "--only", "cue-mass"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--only cue-mass needs --cue-words" in refused.stderr
    empty = subprocess.run([*drga, "--cue-words", " , "], capture_output=True, text=True, timeout=120)
    assert empty.returncode == 2 and "names no word" in empty.stderr
    missing = subprocess.run([*drga, "--cue-words", f"@{tmp_path / 'absent.txt'}"], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_planted_subj_is_subj_relabelled_by_one_cue_word_per_sentence():
    folder = require_data("subj")
    subj, planted = load_dataset("subj", data_dir=folder.parent), load_dataset("planted-subj", data_dir=folder.parent)
    assert planted.label_names == ["cue-a", "cue-b"]
    for split in ("train", "dev", "test"):
        before, after = getattr(subj, split), getattr(planted, split)
        assert len(before) == len(after)
        for original, example in zip(before, after):
            assert len(example.tokens) == len(original.tokens) + 1
            cues = [word for word in CUE_WORDS[planted.label_names[example.label]] if word in example.tokens]
            assert cues, example.tokens
    labels = [example.label for example in planted.train]
    assert 0.45 < sum(labels) / len(labels) < 0.55  # drawn at random, about half each
    # the planted label is independent of the sentence's own: about half of each original class is cue-a
    own = [original.label for original in subj.train]
    share = sum(1 for o, p in zip(own, labels) if o == 0 and p == 0) / own.count(0)
    assert 0.45 < share < 0.55
    assert planted.content_fingerprint == load_dataset("planted-subj", data_dir=folder.parent).content_fingerprint


def test_a_degraded_checkpoint_is_read_back_degraded(tmp_path):
    from drga.tasks.classification.trained import load_trained

    tsv = tmp_path / "planted.tsv"
    tsv.write_text("\n".join(line for line in _block("bash").splitlines() if re.match(r"^[ab]\t", line)) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "drga.cli", "train", "--tsv", str(tsv), "--net", "lstm-sa", "--logdir", str(tmp_path / "runs"),
               "--run-name", "uniform", "--no-progress", "--set", "control.attention=uniform", "--set", "control.strength=0.5",
               "--set", "network.embedding_dim=8", "--set", "network.hidden_size=8", "--set", "network.attention_size=4",
               "--set", "network.classifier_hidden=4", "--set", "train.pretrain_epochs=1", "--set", "train.agent_epochs=1",
               "--set", "train.cotrain_epochs=0", "--set", "train.fair_baseline=false"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    model = load_trained(tmp_path / "runs" / "uniform" / "agent_best.pt")
    degradation = model.network.attention_degradation
    assert degradation is not None and (degradation.kind, degradation.strength) == ("uniform", 0.5)


def test_a_translation_network_refuses_a_degradation_and_bad_settings_are_named():
    from drga.config import ConfigError, load_config
    from drga.tasks.translation.config import load_translation_config

    with pytest.raises(ConfigError, match="a translation network takes neither"):
        load_translation_config(overrides=["network.name=seq2seq-luong", "data.dataset=multi30k-en-de", "control.attention=uniform"])
    with pytest.raises(ConfigError, match="control.strength must be between 0 and 1, got 1.5"):
        load_config(overrides=["control.strength=1.5"])
    with pytest.raises(ConfigError, match="control.attention"):
        load_config(overrides=["control.attention=flat"])
