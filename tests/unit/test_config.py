"""Configuration: per-data-set reward values, the equal-budget baseline's epochs, the saved TOML."""

from __future__ import annotations

import sys

import pytest

from drga.config import ConfigError, config_to_toml, load_config
from drga.runner.phases import phase_epochs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TUNED = """
[data]
dataset = "mr"
[reward.per_dataset.mr]
sqrt_l0 = 0.3
delta = 0.9
[reward.per_dataset.semeval14-laptop]
sqrt_l0 = 0.5
"""


def test_a_data_sets_tuned_reward_values_apply_unless_set_themselves(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(TUNED)
    config = load_config(path)
    assert (config.reward.sqrt_l0, config.reward.delta) == (0.3, 0.9)
    other = load_config(path, ["data.dataset=subj"])
    assert (other.reward.sqrt_l0, other.reward.delta) == (0.2, 0.85)  # not tuned for subj: the paper's values
    explicit = load_config(path, ["reward.sqrt_l0=0.25"])
    assert (explicit.reward.sqrt_l0, explicit.reward.delta) == (0.25, 0.9)
    path.write_text(TUNED + "gamma = 0.1\n")  # any setting of the chosen reward may be tuned per data set
    assert load_config(path, ["data.dataset=semeval14-laptop"]).reward.gamma == 0.1
    path.write_text(TUNED + "temperature = 0.1\n")
    with pytest.raises(ConfigError, match="reward.per_dataset.semeval14-laptop: reward 'drga' has no setting 'temperature' "
                                          "\\(it takes: gamma, sqrt_l0, delta\\)"):
        load_config(path, ["data.dataset=semeval14-laptop"])


def test_the_saved_configuration_is_valid_toml_with_its_tables(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(TUNED)
    saved = tomllib.loads(config_to_toml(load_config(path)))
    assert saved["reward"]["per_dataset"] == {"mr": {"sqrt_l0": 0.3, "delta": 0.9}, "semeval14-laptop": {"sqrt_l0": 0.5}}
    assert saved["agent"]["hidden_sizes"] == [300, 300]


def test_the_equal_budget_baseline_defaults_to_the_agent_and_cotraining_epochs():
    config = load_config(overrides=["train.agent_epochs=3", "train.cotrain_epochs=5"])
    assert phase_epochs(config.train, "baseline") == 8
    assert phase_epochs(load_config(overrides=["train.baseline_epochs=2"]).train, "baseline") == 2
    assert phase_epochs(load_config(overrides=["train.fair_baseline=false"]).train, "baseline") == 0
    with pytest.raises(ConfigError, match="baseline_epochs"):
        load_config(overrides=["train.baseline_epochs=-1"])


@pytest.mark.parametrize(
    "override",
    ["reward.gamma=nan", "reward.sqrt_l0=inf", "train.lr=nan", "train.lr=0", "agent.lr=-1e-3", "data.batch_size=0",
     "network.dropout=1.0", "network.dropout=-0.1", "agent.log_std_min=2", "train.grad_clip=-1", "adjust.beta0=nan",
     "reward.closeness=nan", "train.weight_decay=-0.1", "data.max_length=0", "agent.init_log_std=nan"],
)
def test_non_finite_and_out_of_range_values_are_refused_before_anything_runs(override):
    with pytest.raises(ConfigError, match=override.split("=")[0].replace(".", r"\.")):
        load_config(overrides=[override])


def test_a_non_finite_tuned_value_is_refused(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[reward.per_dataset.mr]\nsqrt_l0 = nan\n")
    with pytest.raises(ConfigError, match=r"reward\.per_dataset\.mr\.sqrt_l0"):
        load_config(path)


def test_bundled_configs_are_found_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anywhere: the name, not a path
    demo = load_config("demo")
    assert demo.run.run_name == "demo-subj-lstm-sa" and demo.network.vectors == "glove-6b-50d-subj"
    with pytest.raises(ConfigError, match="bundled configs, by name: demo"):
        load_config("nosuch")
