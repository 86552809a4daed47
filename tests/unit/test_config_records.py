"""The saved form of a configuration is pinned: what ``config.toml``, checkpoints and result files record, and the
settings fingerprint that ``drga sweep`` and ``drga tune`` resume by (``drga/config.py``: ``to_dict``,
``config_to_toml``, ``settings_fingerprint``), for the built-in networks' defaults, a ``[network]`` section that
serves several networks, networks and rewards of one's own, and result files committed under experiments/results/.

The expected values (tests/fixtures/config_records.json) were written by the code before ``[network]`` and
``[reward]`` held only the chosen network's and reward's settings (issue 63), with ``python -m
tests.unit.test_config_records --write``: a configuration written before that change loads to the same record and
the same fingerprint after it. Never rewrite the file to make this test pass.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from drga import registry
from drga.config import ADDED_SETTINGS, ExperimentConfig, config_from_dict, config_to_toml, flatten, load_config, settings_fingerprint
from drga.tasks.translation.config import load_translation_config, translation_config_from_dict

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "config_records.json"
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
#: A checkpoint's configuration from an older release: no pretrained or revise_layers, a network nobody registered.
OLD_RECORD: dict[str, Any] = {
    "network": {"name": "gone-net", "embedding_dim": 40, "hidden_size": 30, "attention_size": 300, "classifier_hidden": 300,
                "dropout": 0.5, "vectors": None, "freeze_embeddings": False, "kernel_sizes": [3, 4, 5], "layers": 2, "heads": 2,
                "feedforward_size": 600, "temperature": 0.5},
    "reward": {"name": "gone-reward", "gamma": 0.2, "sqrt_l0": 0.2, "delta": 0.85, "closeness": 0.0, "per_dataset": {},
               "weight": 0.7},
}


class PinnedNet:
    """A network of one's own (only its constructor matters here)."""

    def __init__(self, vocab_size: int, num_classes: int, embedding_dim: int = 32, hidden_size: int = 300,
                 temperature: float = 1.0, widths: tuple[int, ...] = (2, 3), embeddings: Any = None):
        pass


def pinned_reward(weight: float = 0.2, delta: float = 0.85) -> Any:
    """A reward of one's own (only its keywords matter here); its delta's default is eq. 5's (before the change, the
    ``[reward]`` section's 0.85 overrode a reward's own default: test_config.py)."""


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


def cases(folder: Path) -> dict[str, Any]:
    """Each case's configuration (an ExperimentConfig, or translation's)."""
    found: dict[str, Any] = {"python-defaults": ExperimentConfig()}
    for name in CLASSIFIERS:
        found[name] = load_config(None, [f"network.name={name}"])
    for name in TRANSLATORS:
        found[name] = load_translation_config(None, [f"network.name={name}"])
    study = folder / "study.toml"
    study.write_text(SHARED_SECTION, encoding="utf-8")
    found["shared-section"] = load_config(study)
    found["shared-section-cnn-sa"] = load_config(study, ["network.name=cnn-sa"])
    with own_plugins():
        found["own-network"] = load_config(None, ["network.name=pinned-net", "network.temperature=0.5"])
        found["own-reward"] = load_config(None, ["reward.name=pinned-reward", "reward.weight=0.3"])
        found["own-both-in-a-file"] = load_config(None, ["network.name=pinned-net", "network.widths=4,5", "network.layers=3",
                                                         "reward.name=pinned-reward", "reward.gamma=0.3"])
    found["old-record"] = config_from_dict(json.loads(json.dumps(OLD_RECORD)))
    for path in RESULT_FILES:
        found[path] = saved_config(json.loads((ROOT / path).read_text(encoding="utf-8"))["config"])
    return found


def saved_config(mapping: dict[str, Any]) -> Any:
    """A result file's configuration, read as its task reads it (translation's has an [nmt] section)."""
    return translation_config_from_dict(mapping) if "nmt" in mapping else config_from_dict(mapping)


def records(folder: Path) -> dict[str, dict[str, Any]]:
    """What each case saves: its mapping (as JSON keeps it, in order), its config.toml and its settings fingerprint."""
    out = {}
    with own_plugins():  # a saved configuration of a registered network: its settings' annotations apply
        for name, config in cases(folder).items():
            mapping = config.to_dict()
            toml = config_to_toml(config) if isinstance(config, ExperimentConfig) else None
            out[name] = {"record": json.loads(json.dumps(mapping)), "keys": {s: list(v) for s, v in mapping.items()},
                         "toml": toml, "fingerprint": settings_fingerprint(flatten(mapping))}
    return out


def test_saved_configurations_and_their_fingerprints_are_as_before(tmp_path):
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))
    now = records(tmp_path)
    assert sorted(now) == sorted(pinned)
    for name, expected in pinned.items():
        assert now[name]["record"] == expected["record"], name
        assert now[name]["fingerprint"] == expected["fingerprint"], name
        assert now[name]["toml"] == expected["toml"], name
        for section in ("network", "reward"):  # the keys in the order they were saved
            assert now[name]["keys"][section] == expected["keys"][section], (name, section)


def test_committed_result_files_keep_their_recorded_fingerprint():
    for path in RESULT_FILES:
        payload = json.loads((ROOT / path).read_text(encoding="utf-8"))
        config, saved = saved_config(payload["config"]), flatten(payload["config"])
        now = flatten(config.to_dict())
        added = {key for key in now if key not in saved and key in ADDED_SETTINGS}  # reward.name: recorded since rewards had names
        assert {key: value for key, value in now.items() if key not in added} == saved, path
        assert settings_fingerprint(flatten(config.to_dict())) == payload["fingerprint"]["settings"], path


def test_the_sections_hold_the_chosen_plug_ins_settings():
    config = load_config(None, ["network.name=cnn-sa", "network.kernel_sizes=2,3"])
    settings = config.network.own_settings()  # the registered dataclass, filled from [network]
    assert type(settings) is registry.network_spec("cnn-sa").settings and settings.kernel_sizes == [2, 3]
    assert config.network.given == {"kernel_sizes": [2, 3]} and config.network.hidden_size == 300
    config.network.name = "transformer"  # another network: its own defaults, the other's setting kept for the record
    assert config.network.layers == 2 and config.to_dict()["network"]["kernel_sizes"] == [2, 3]
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


if __name__ == "__main__" and "--write" in sys.argv:  # only with the code from before the change (see above)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        FIXTURE.write_text(json.dumps(records(Path(folder)), indent=1) + "\n", encoding="utf-8")
