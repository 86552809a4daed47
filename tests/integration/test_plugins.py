"""The plug points (drga/registry.py): a network and a reward of one's own, each one file and one
registration, from outside the package; the [network] section's rule; every committed config loads;
the chosen reward is what the evaluation, REINFORCE and the Gymnasium environment (PPO, A2C) use."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import math
import re
import sys
from pathlib import Path

import pytest
import torch

import drga.baselines as baselines
from drga import registry
from drga.baselines import NETWORK_INPUTS, NETWORKS, PRETRAINED_TOKENIZERS, build_network
from drga.config import NETWORK_DEFAULTS, ConfigError, config_from_dict, config_to_toml, load_config
from drga.core.reward import Closeness, DRGAReward, RewardTerms, attention_shift, drga_reward, make_reward
from drga.core.scoring import RewardConstants, score
from drga.data import collate
from drga.registry import RegistryError, network_spec, register_network, register_reward
from tests.integration.test_trainer import write_keyword_tsv
from tests.tiny_network import TinyAttentionNet, keyword_examples

ROOT = Path(__file__).resolve().parents[2]
EXTENDING = ROOT / "docs" / "extending.md"
CONFIGS = sorted((ROOT / "experiments" / "configs").glob("*.toml")) + sorted((ROOT / "drga" / "configs").glob("*.toml"))


def file_blocks(markdown: str) -> dict[str, str]:
    """The ```python blocks of a page that show a file of the user's (first line '# name.py'), by file name."""
    blocks = re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)
    return {match.group(1): block for block in blocks if (match := re.match(r"#\s*(\S+\.py)\s*\n", block))}


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """docs/extending.md's two files, written outside the package and named in $DRGA_PLUGINS, as a user would."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    files = file_blocks(EXTENDING.read_text(encoding="utf-8"))
    assert set(files) == {"my_network.py", "my_reward.py", "my_task.py"}  # the task's: tests/integration/test_task_plugin.py
    for name, text in files.items():
        if name == "my_task.py":
            continue
        (folder / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(folder)  # found in the working folder, as the drga command finds them (no sys.path edit)
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, "my_network,my_reward")
    yield folder
    if str(folder) in sys.path:  # where the registry put the working folder
        sys.path.remove(str(folder))
    registry.unregister_network("bag-attention")
    registry.unregister_reward("sparse")
    for module in ("my_network", "my_reward"):
        sys.modules.pop(module, None)
        registry._LOADED.discard(module)


def test_a_network_and_a_reward_from_outside_the_package_train_through_the_cli(plugins, tmp_path):
    from drga.cli import main

    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    settings = ["network.temperature=0.5", "reward.name=sparse", "reward.weight=0.3", "agent.hidden_sizes=16,16",
                "data.batch_size=16", "train.pretrain_epochs=2", "train.agent_epochs=1", "train.cotrain_epochs=1", "train.lr=0.01"]
    argv = ["train", "--dataset", "tsv", "--tsv", str(tsv), "--net", "bag-attention", "--logdir", str(tmp_path / "runs"),
            "--no-progress", *[a for s in settings for a in ("--set", s)]]
    assert main(argv) == 0
    run_dir = tmp_path / "runs" / "tsv-bag-attention-seed0"
    results = json.loads((run_dir / "results.json").read_text())
    saved = results["config"]
    assert saved["network"]["temperature"] == 0.5 and saved["network"]["embedding_dim"] == 32  # its own default, not 300
    assert saved["reward"]["name"] == "sparse" and saved["reward"]["weight"] == 0.3
    assert "temperature = 0.5" in (run_dir / "config.toml").read_text() and "weight = 0.3" in (run_dir / "config.toml").read_text()
    # every reward the run reports is SparseReward's: log P(y|X) − 0.3 · N/L, its penalty N/L
    scored = [(record, key[: -len("_reward")]) for record in results["history"] for key in record
              if key.startswith("dev_") and key.endswith("_reward")]
    assert len(scored) >= 5
    for record, prefix in scored:
        assert record[f"{prefix}_penalty"] == pytest.approx(record[f"{prefix}_highlighted_fraction"])
        expected = record[f"{prefix}_log_likelihood"] - 0.3 * record[f"{prefix}_penalty"]
        assert record[f"{prefix}_reward"] == pytest.approx(expected, abs=1e-6)
    agent = [r for r in results["history"] if r["phase"] == "agent"][0]  # REINFORCE's training batches
    assert agent["reward"] == pytest.approx(agent["reward_log_likelihood"] - 0.3 * agent["highlighted_fraction"], abs=1e-5)
    # the reported penalty is the reward's own (penalty_weight × penalty = 0.3 · N/L), not eq. 5's γ times it
    assert agent["reward_penalty"] == pytest.approx(0.3 * agent["highlighted_fraction"], rel=1e-5)
    # the checkpoint loads back with the network and the reward its config names
    from drga.prediction import load

    model = load(run_dir / "cotrain_best.pt")
    assert type(model.network).__name__ == "BagAttention" and model.network.temperature == 0.5


def test_the_cli_lists_a_registered_network_and_refuses_an_unknown_setting_of_it(plugins, tmp_path, capsys):
    from drga.cli import main

    assert main(["networks"]) == 0
    assert re.search(r"^bag-attention\s+text\s+Word vectors", capsys.readouterr().out, flags=re.MULTILINE)
    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    status = main(["train", "--dataset", "tsv", "--tsv", str(tsv), "--net", "bag-attention", "--set", "network.temprature=2",
                   "--logdir", str(tmp_path / "runs"), "--no-progress"])
    assert status == 2
    err = capsys.readouterr().err
    assert "unknown config key 'network.temprature'; did you mean 'network.temperature'?" in err
    assert "(network 'bag-attention' takes: embedding_dim, temperature)" in err


def test_the_python_api_trains_the_same_plug_ins(plugins, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(plugins))  # a script in the folder of the files: Python puts its folder first
    importlib.import_module("my_network"), importlib.import_module("my_reward")
    import drga  # docs/extending.md's route: drga.load_config, then drga.train

    config = drga.load_config(overrides=[
        "data.dataset=tsv", f"data.tsv_path={write_keyword_tsv(tmp_path / 'kw.tsv')}", "network.name=bag-attention", "reward.name=sparse",
        "agent.hidden_sizes=8,8", "train.pretrain_epochs=1", "train.agent_epochs=1", "train.cotrain_epochs=1",
        f"run.logdir={tmp_path / 'runs'}", "run.progress=false"])
    results = drga.train(config)
    row = results.rows["DRGA (co-trained)"].scores("test", "with-agent")
    assert row["reward"] == pytest.approx(row["log_likelihood"] - 0.2 * row["penalty"], abs=1e-6)


# ---------------------------------------------------------------------------------------------- the [network] section


def test_every_committed_config_loads_for_every_network_of_its_task():
    # A study applies one [network] section to several networks (the paper regime's feedforward_size is the
    # Transformer's, and the same file trains LSTM+SA): each committed config loads for every network of its task,
    # and what it gives a network binds to that network's constructor.
    from drga.tasks.run_config import experiment, load_run_config

    assert len(CONFIGS) >= 10
    checked = 0
    for path in CONFIGS:
        translation = "[nmt]" in path.read_text(encoding="utf-8")
        for name in NETWORKS:
            if (NETWORK_INPUTS[name] == "parallel") != translation:
                continue
            config = experiment(load_run_config(path, [f"network.name={name}"]))
            spec = network_spec(name)
            inspect.signature(spec.factory).bind(1, 2, **spec.arguments(config.network))
            checked += 1
    assert checked >= 60


def test_an_unknown_network_setting_is_an_error_naming_the_networks_settings(tmp_path):
    toml = tmp_path / "typo.toml"
    toml.write_text('[network]\nname = "cnn-sa"\nkernel_size = [3]\n')
    typo = r"'network.kernel_size'; did you mean 'network.kernel_sizes'\?.*network 'cnn-sa' takes: .*kernel_sizes"
    with pytest.raises(ConfigError, match=typo):
        load_config(toml)
    # the network an override names, even after the typo
    with pytest.raises(ConfigError, match=r"network 'transformer' takes: .*feedforward_size"):
        load_config(None, ["network.hiden_size=3", "network.name=transformer"])
    with pytest.raises(ConfigError, match=r"unknown config key 'reward.gama'; did you mean 'reward.gamma'\? \(reward 'drga' takes: gamma"):
        load_config(None, ["reward.gama=0.1"])
    with pytest.raises(ConfigError, match="reward.name: unknown reward 'eq5'; choose one of: drga"):
        load_config(None, ["reward.name=eq5"])


def test_a_setting_of_other_networks_is_left_out_and_the_run_says_so():
    said: list[str] = []
    config = load_config(None, ["network.name=lstm-sa", "network.heads=4", "network.hidden_size=8"], report=said.append)
    assert said == ["lstm-sa does not take network.heads (settings of other networks): not used by this run"]
    assert network_spec("lstm-sa").arguments(config.network)["hidden_size"] == 8
    assert "heads" not in network_spec("lstm-sa").arguments(config.network)


def test_build_network_passes_a_network_its_own_settings_only():
    network = build_network("lstm-sa", 20, 2, embedding_dim=8, hidden_size=6, attention_size=5, heads=3, kernel_sizes=[3])
    assert network.embedding.embedding_dim == 8
    with pytest.raises(RegistryError, match=r"'network.hiden_size'; did you mean 'network.hidden_size'\?.*network 'lstm-sa' takes"):
        build_network("lstm-sa", 20, 2, hiden_size=6)
    with pytest.raises(TypeError):  # the networks swallow nothing any more
        baselines.LSTMSelfAttention(20, 2, heads=3)
    with pytest.raises(RegistryError, match="unknown network 'lstm_sa' .did you mean 'lstm-sa'.."):
        build_network("lstm_sa", 20, 2)


def test_a_network_that_takes_no_vectors_refuses_network_vectors(tmp_path):
    from drga.tasks.classification.data import build_attention_network

    @register_network("strict-net")
    class Strict(TinyAttentionNet):
        def __init__(self, vocab_size: int, num_classes: int, embedding_dim: int = 16):
            super().__init__(vocab_size, num_classes, embedding_dim)

    try:
        config = load_config(None, ["network.name=strict-net", "network.vectors=glove-6b-50d", "network.embedding_dim=50"])
        with pytest.raises(ConfigError, match="network 'strict-net' does not take pretrained word vectors"):
            build_attention_network(config, ["<pad>", "<unk>", "a"], 2, log=lambda _: None)
    finally:
        registry.unregister_network("strict-net")


def test_settings_are_checked_against_the_constructor():
    class Net(TinyAttentionNet):
        def __init__(self, vocab_size: int, num_classes: int, width: int, depth: int = 2):
            super().__init__(vocab_size, num_classes, width)

    with pytest.raises(RegistryError, match="parameter 'width' has no default"):
        register_network("checked-net")(Net)

    @dataclasses.dataclass(frozen=True)
    class Typo:
        width: int = 8
        dept: int = 2

    with pytest.raises(RegistryError, match=r"settings dept of Typo are not parameters of its constructor \(it takes: width, depth\)"):
        register_network("checked-net", settings=Typo)(Net)

    @dataclasses.dataclass(frozen=True)
    class Partial:
        depth: int = 2

    with pytest.raises(RegistryError, match="its constructor needs width, which Partial does not have"):
        register_network("checked-net", settings=Partial)(Net)

    @dataclasses.dataclass(frozen=True)
    class Settings:
        width: int = 8
        depth: int = 2

        def __post_init__(self):
            if self.depth < 1:
                raise ValueError(f"depth must be at least 1, got {self.depth}")

    register_network("checked-net", settings=Settings)(Net)
    try:
        assert network_spec("checked-net").setting_names == ("width", "depth")
        with pytest.raises(ConfigError, match="network 'checked-net': depth must be at least 1"):
            from drga.tasks.classification.data import build_attention_network

            build_attention_network(load_config(None, ["network.name=checked-net", "network.depth=0"]), ["<pad>", "<unk>"], 2)
        with pytest.raises(RegistryError, match="a network named 'checked-net' is registered already"):
            register_network("checked-net")(TinyAttentionNet)
    finally:
        registry.unregister_network("checked-net")
    with pytest.raises(RegistryError, match="input must be one of"):
        register_network("x", input="image")


def test_the_tables_are_views_of_the_registry(monkeypatch):
    assert NETWORK_INPUTS["han"] == "document" and NETWORK_INPUTS["seq2seq-luong"] == "parallel"
    assert set(PRETRAINED_TOKENIZERS) == {"hf-encoder"}
    assert NETWORK_DEFAULTS["transformer"] == {"agent.samples": 2, "train.task_loss_samples": 1}
    assert "lstm-sa" not in NETWORK_DEFAULTS  # its registration names no run defaults
    # assigning registers (the tests' and older code's way), deleting removes
    monkeypatch.setitem(NETWORKS, "tiny", TinyAttentionNet)
    assert NETWORK_INPUTS["tiny"] == "text" and network_spec("tiny").setting_names == ("embedding_dim", "spread_attention")
    said: list[str] = []
    config = load_config(None, ["network.name=tiny", "network.spread_attention=true"], report=said.append)
    # [network] is the chosen network's settings: its own defaults, nothing applied over another section's to report
    assert config.network.embedding_dim == 16 and config.network.given == {"spread_attention": True} and said == []
    assert config.network.own_settings() == network_spec("tiny").settings(embedding_dim=16, spread_attention=True)
    assert config.to_dict()["network"]["spread_attention"] is True and "given" not in config.to_dict()["network"]


def test_a_saved_config_keeps_the_settings_of_a_plug_in_this_program_lacks(monkeypatch):
    monkeypatch.setitem(NETWORKS, "tiny", TinyAttentionNet)
    config = load_config(None, ["network.name=tiny", "network.spread_attention=true"])
    saved = config.to_dict()
    assert "spread_attention = true" in config_to_toml(config)
    del NETWORKS["tiny"]
    with pytest.raises(ConfigError, match="unknown config key 'network.spread_attention'"):
        load_config(None, ["network.spread_attention=true"])
    restored = config_from_dict(saved)  # a checkpoint's configuration: kept as it was
    assert restored.to_dict() == saved
    # a checkpoint written before rewards were chosen by name: the paper's
    older = load_config(None, []).to_dict()
    del older["reward"]["name"]
    assert config_from_dict(older).reward.name == "drga"


# ---------------------------------------------------------------------------------------------- the reward


def small_setting():
    torch.manual_seed(0)
    examples, vocab = keyword_examples(12, seed=1)
    network = TinyAttentionNet(vocab, 2, embedding_dim=8).eval()
    return network, examples


def test_score_uses_the_reward_it_is_given():
    network, examples = small_setting()
    batch = collate(examples[:4])
    encoding = network.encode(batch)
    masks = [site.mask for site in encoding.sites]
    paper = score(network, encoding, encoding.attention, batch.labels, masks, RewardConstants(0.2, 0.2, 0.85)).terms
    expected = drga_reward(paper.log_likelihood, encoding.attention, masks, 0.2, 0.2, 0.85)
    assert torch.equal(paper.reward, expected.reward) and torch.equal(paper.objective, paper.reward)

    @register_reward("likelihood-only")
    def likelihood_only():
        return lambda log_likelihood, original, revised, masks: RewardTerms(
            log_likelihood, log_likelihood, torch.zeros_like(log_likelihood), torch.zeros_like(log_likelihood))

    try:
        config = load_config(None, ["reward.name=likelihood-only"])
        terms = score(network, encoding, encoding.attention, batch.labels, masks, config.reward).terms
        assert torch.equal(terms.reward, paper.log_likelihood)
    finally:
        registry.unregister_reward("likelihood-only")


def test_closeness_composes_with_the_chosen_reward_and_leaves_the_reported_reward_alone():
    config = load_config(None, ["reward.closeness=0.5", "reward.gamma=0.1"])
    reward = make_reward(config.reward)
    assert isinstance(reward, Closeness) and isinstance(reward.reward, DRGAReward) and reward.reward.gamma == 0.1
    network, examples = small_setting()
    batch = collate(examples[:4])
    encoding = network.encode(batch)
    masks = [site.mask for site in encoding.sites]
    revised = [torch.softmax(torch.randn_like(a).masked_fill(~m, -1e9), dim=-1) * m for a, m in zip(encoding.attention, masks)]
    terms = score(network, encoding, revised, batch.labels, masks, config.reward).terms
    shift = attention_shift(encoding.attention, revised, masks)
    assert torch.all(shift > 0)
    assert torch.equal(terms.reward, drga_reward(terms.log_likelihood, revised, masks, 0.1, 0.2, 0.85).reward)
    assert torch.equal(terms.objective, terms.reward - 0.5 * shift)


def test_the_environment_and_the_sb3_learner_reward_the_chosen_reward():
    # PPO and A2C learn on the environment: its return is the chosen reward's objective (closeness's term included),
    # and its info["reward"] is the reward as runs report it.
    from drga.learners.sb3 import make_env_factory

    network, examples = small_setting()
    config = load_config(None, ["reward.closeness=0.5", "agent.sb3_action_limit=4"])
    env = make_env_factory(network, examples, collate, config, 0.4, "cpu")()
    env.reset(seed=0)
    done, rng = False, torch.Generator().manual_seed(0)
    while not done:
        _, step_reward, done, _, info = env.step(torch.rand(1, generator=rng).numpy() * 2 - 1)
    original = [torch.as_tensor(a).unsqueeze(0) for a in info["original_attention"]]
    revised = [torch.as_tensor(a).unsqueeze(0) for a in info["revised_attention"]]
    masks = [a > 0 for a in original]
    shift = float(attention_shift(original, revised, masks)[0])
    assert shift > 0
    assert step_reward == pytest.approx(info["reward"] - 0.5 * shift, rel=1e-5)
    assert info["reward"] == pytest.approx(info["log_likelihood"] - 0.2 * info["penalty"], rel=1e-5)
    assert info["penalty_weight"] == 0.2  # eq. 5's γ: the SB3 learner reports reward_penalty = penalty_weight × penalty


def test_reinforce_learns_from_the_chosen_reward():
    # REINFORCE's agent reward (drga/learners/reinforce.py · agent_objective) is the rollout's objective, closeness's term included
    from drga.core.policy import GaussianPolicy
    from drga.core.rollout import rollout
    from drga.core.state import agent_state_size

    network, examples = small_setting()
    batch = collate(examples[:4])
    policy = GaussianPolicy(agent_state_size(8, 8, 8), hidden_sizes=(8,), init_log_std=-1.0)
    config = load_config(None, ["reward.closeness=0.5"])
    r = rollout(network, policy, batch, torch.tensor(0.4), reward=config.reward, samples=3)
    assert torch.allclose(r.terms.objective, r.terms.reward - 0.5 * r.shift)
    plain = rollout(network, policy, batch, torch.tensor(0.4), reward=load_config(None, []).reward, samples=3)
    assert plain.terms.objective is plain.terms.reward
    assert math.isfinite(float(r.terms.objective.mean()))


def test_a_run_recorded_before_rewards_had_names_keeps_its_settings_fingerprint():
    # drga sweep skips a finished run only when its recorded fingerprint is what the settings give now; runs
    # fingerprinted before reward.name existed had the paper's reward, so that value is left out of the hash
    from drga.config import settings_fingerprint

    now = load_config(None, ["network.name=cnn-sa"]).flat()
    before = {key: value for key, value in now.items() if key != "reward.name"}
    assert now["reward.name"] == "drga" and settings_fingerprint(now) == settings_fingerprint(before)

    @register_reward("other")
    def other():
        return DRGAReward()

    try:
        assert settings_fingerprint(load_config(None, ["network.name=cnn-sa", "reward.name=other"]).flat()) != settings_fingerprint(before)
    finally:
        registry.unregister_reward("other")
