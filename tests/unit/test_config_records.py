"""The saved form of a configuration: what ``config.toml``, checkpoints and result files record, and the settings
fingerprint that ``drga sweep`` and ``drga tune`` resume by (``drga/config.py``: ``to_dict``, ``config_to_toml``,
``settings_fingerprint``). ``[network]`` and ``[reward]`` save their own fields and the chosen plug-in's settings, no
other's; the committed result files are in that form (``python experiments/migrate_saved_configs.py`` wrote it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from drga import registry
from drga.config import ConfigError, config_from_dict, config_to_toml, flatten, load_config, settings_fingerprint
from drga.tasks.translation.config import load_translation_config, translation_config_from_dict
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
CLASSIFIERS = ("lstm-sa", "atae-lstm", "cnn-sa", "disan", "han", "transformer", "hf-encoder", "ian")
TRANSLATORS = ("seq2seq-luong", "transformer-nmt")
#: Result files committed under experiments/results/, each with the settings fingerprint its run recorded.
RESULT_FILES = (
    "experiments/results/agent-size/1x200/subj-lstm-sa-seed0.json",
    "experiments/results/translation-regime/multi30k-en-de-seq2seq-luong-seed0.json",
)
#: A study's section: settings of other networks beside the chosen one's (each left out of its construction).
SHARED_SECTION = """
[data]
dataset = "mr"
[network]
name = "lstm-sa"
hidden_size = 64
feedforward_size = 800
layers = 3
kernel_sizes = [2, 3]
revise_layers = 1
[reward]
gamma = 0.1
closeness = 0.25
[reward.per_dataset.mr]
sqrt_l0 = 0.3
"""


class PinnedNet:
    """A network of one's own (only its constructor matters here)."""

    def __init__(self, vocab_size: int, num_classes: int, embedding_dim: int = 32, hidden_size: int = 300,
                 temperature: float = 1.0, widths: tuple[int, ...] = (2, 3), embeddings: Any = None):
        pass


def pinned_reward(weight: float = 0.2) -> Any:
    """A reward of one's own with none of eq. 5's settings (only its keywords matter here)."""


@contextmanager
def own_plugins() -> Iterator[None]:
    """The network and the reward of one's own registered (re-entrant: an outer one keeps them until it ends)."""
    if registry.find_network("pinned-net") is not None:
        yield
        return
    registry.register_network("pinned-net", replace=True)(PinnedNet)
    registry.register_reward("pinned-reward", replace=True)(pinned_reward)
    try:
        yield
    finally:
        registry.unregister_network("pinned-net")
        registry.unregister_reward("pinned-reward")


@pytest.mark.parametrize("name", CLASSIFIERS + TRANSLATORS)
def test_a_built_in_networks_section_saves_its_own_fields_and_that_networks_settings(name):
    load = load_translation_config if name in TRANSLATORS else load_config
    config = load(None, [f"network.name={name}"])
    saved = config.to_dict()["network"]
    assert list(saved) == ["name", "vectors", *registry.network_spec(name).setting_names]
    assert list(config.to_dict()["reward"]) == ["name", "closeness", "per_dataset", "gamma", "sqrt_l0", "delta"]
    again = (translation_config_from_dict if name in TRANSLATORS else config_from_dict)(config.to_dict())
    assert again.to_dict() == config.to_dict() and list(again.to_dict()["network"]) == list(saved)
    assert settings_fingerprint(flatten(again.to_dict())) == settings_fingerprint(config.flat())


def test_a_shared_section_saves_only_the_chosen_networks_settings(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(SHARED_SECTION, encoding="utf-8")
    lstm, cnn = load_config(study), load_config(study, ["network.name=cnn-sa"])
    assert lstm.network.hidden_size == 64 and lstm.network.given["layers"] == 3  # kept while the configuration lives
    assert lstm.to_dict()["network"] == {"name": "lstm-sa", "vectors": None, "embedding_dim": 300, "hidden_size": 64,
                                         "attention_size": 300, "classifier_hidden": 300, "dropout": 0.5, "freeze_embeddings": False}
    assert cnn.to_dict()["network"]["kernel_sizes"] == [2, 3] and "layers" not in cnn.to_dict()["network"]
    # the data set's tuned √L0 applies to the chosen reward's setting of that name; γ is the file's
    assert lstm.to_dict()["reward"] == {"name": "drga", "closeness": 0.25, "per_dataset": {"mr": {"sqrt_l0": 0.3}}, "gamma": 0.1,
                                        "sqrt_l0": 0.3, "delta": 0.85}
    toml = config_to_toml(lstm)
    assert "feedforward_size" not in toml and "kernel_sizes" not in toml
    saved = tmp_path / "config.toml"
    saved.write_text(toml, encoding="utf-8")
    assert load_config(saved).to_dict() == lstm.to_dict()


def test_a_reward_of_ones_own_saves_its_settings_not_eq_5s(tmp_path):
    with own_plugins():
        config = load_config(None, ["reward.name=pinned-reward", "reward.weight=0.3"])
        assert config.to_dict()["reward"] == {"name": "pinned-reward", "closeness": 0.0, "per_dataset": {}, "weight": 0.3}
        assert "gamma" not in config_to_toml(config) and "sqrt_l0" not in config_to_toml(config)
        with pytest.raises(AttributeError, match="reward 'pinned-reward' has no setting 'gamma' \\(it takes: weight\\)"):
            config.reward.gamma  # noqa: B018
        assert config.reward.setting("delta", 0.85) == 0.85  # what the highlighted tokens are counted with
        with pytest.raises(ConfigError, match="reward.per_dataset.mr: reward 'pinned-reward' has no setting 'sqrt_l0' "
                                              "\\(it takes: weight\\)"):
            tuned = tmp_path / "tuned.toml"
            tuned.write_text('[data]\ndataset = "mr"\n[reward]\nname = "pinned-reward"\n[reward.per_dataset.mr]\nsqrt_l0 = 0.3\n',
                             encoding="utf-8")
            load_config(tuned)
        own = load_config(None, ["network.name=pinned-net", "network.temperature=0.5"])
        assert own.to_dict()["network"] == {"name": "pinned-net", "vectors": None, "embedding_dim": 32, "hidden_size": 300,
                                            "temperature": 0.5, "widths": [2, 3]}


def test_a_saved_configuration_of_a_network_not_registered_here_keeps_every_setting_it_gives():
    saved = {"network": {"name": "gone-net", "embedding_dim": 40, "temperature": 0.5}}
    assert config_from_dict(saved).to_dict()["network"] == {"name": "gone-net", "vectors": None, "embedding_dim": 40,
                                                            "temperature": 0.5}


@pytest.mark.parametrize("path", RESULT_FILES)
def test_a_committed_result_files_config_reads_back_as_it_is_saved_and_to_its_fingerprint(path):
    payload = json.loads((ROOT / path).read_text(encoding="utf-8"))
    config = (translation_config_from_dict if "nmt" in payload["config"] else config_from_dict)(payload["config"])
    for section in ("network", "reward"):
        assert list(config.to_dict()[section].items()) == list(payload["config"][section].items()), section
    assert settings_fingerprint(flatten(config.to_dict())) == payload["fingerprint"]["settings"]


def test_every_committed_result_file_is_in_the_current_saved_form():
    migrate = load_script("experiments/migrate_saved_configs.py")
    stale = [str(path) for path in sorted((ROOT / "experiments" / "results").rglob("*.json"))
             if migrate.migrate(path)[0] not in ("current", "no config")]
    assert not stale, f"{len(stale)} result files, e.g. {stale[:3]}: python experiments/migrate_saved_configs.py"


def test_the_sections_hold_the_chosen_plug_ins_settings():
    config = load_config(None, ["network.name=cnn-sa", "network.kernel_sizes=2,3"])
    settings = config.network.own_settings()  # the registered dataclass, filled from [network]
    assert type(settings) is registry.network_spec("cnn-sa").settings and settings.kernel_sizes == [2, 3]
    assert config.network.given == {"kernel_sizes": [2, 3]} and config.network.hidden_size == 300
    config.network.name = "transformer"  # another network: its own defaults; the other's setting kept, not saved
    assert config.network.layers == 2 and "kernel_sizes" not in config.to_dict()["network"]
    config.network.name = "cnn-sa"
    assert config.to_dict()["network"]["kernel_sizes"] == [2, 3]
    assert not hasattr(load_config(None, ["network.name=hf-encoder"]).network, "temperature")


def test_a_rewards_own_default_of_a_recorded_key_is_what_it_is_built_with():
    # The one change to a saved form: before, [reward]'s field delta (0.85) overrode a reward's own default for it, so the
    # reward ran with 0.85 and the record said so; now the reward's own default applies and the record says that.
    from drga.core.reward import make_reward

    class Wide:
        def __init__(self, delta: float = 0.9):
            self.delta = delta

        def __call__(self, log_likelihood, original, revised, masks):
            raise NotImplementedError

    registry.register_reward("wide", replace=True)(Wide)
    try:
        config = load_config(None, ["reward.name=wide"])
        assert config.reward.delta == 0.9 and config.to_dict()["reward"]["delta"] == 0.9
        assert make_reward(config.reward).delta == 0.9
        assert load_config(None, ["reward.name=wide", "reward.delta=0.8"]).reward.delta == 0.8
    finally:
        registry.unregister_reward("wide")
