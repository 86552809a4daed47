"""The authors' code's procedure as settings (docs/controls.md): the two-way policy, the multiplicative adjustment, the
flipped sampling and the raised-token cost, each worked out by hand, and off by default."""

import math

import pytest
import torch

import drga
import drga.baselines as baselines
from drga.config import ConfigError, ExperimentConfig, apply_mapping, load_config
from drga.core.adjust import adjust_attention_multiplicatively
from drga.core.policy import BinaryPolicy, GaussianPolicy, TwoWayChoice
from drga.core.rollout import rollout
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.tiny_network import TinyAttentionNet


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def test_multiplicative_adjustment_lowers_to_one_minus_beta_and_raises_to_one_plus_beta_then_renormalises():
    alpha = torch.tensor([[[0.5, 0.3, 0.2, 0.0]]])
    mask = torch.tensor([[[True, True, True, False]]])
    action = torch.tensor([[[1.0, -1.0, 1.0, 1.0]]])
    # 0.5·1.8 = 0.9, 0.3·0.2 = 0.06, 0.2·1.8 = 0.36; their sum 1.32
    expected = torch.tensor([[[0.9 / 1.32, 0.06 / 1.32, 0.36 / 1.32, 0.0]]])
    assert torch.allclose(adjust_attention_multiplicatively(alpha, action, 0.8, mask), expected, atol=1e-6)
    # every token raised (or every one lowered): the renormalisation gives α back
    same = torch.ones_like(action)
    assert torch.allclose(adjust_attention_multiplicatively(alpha, same, 0.8, mask), alpha, atol=1e-6)
    assert torch.allclose(adjust_attention_multiplicatively(alpha, -same, 0.8, mask), alpha, atol=1e-6)


def test_two_way_choice_probabilities_entropy_and_mode_by_hand():
    logit = torch.tensor([[0.0], [math.log(3.0)], [-2.0]])  # p = 1/2, 3/4, sigmoid(−2)
    choice = TwoWayChoice(logit)
    p = torch.sigmoid(logit)
    raised, lowered = torch.ones_like(logit), -torch.ones_like(logit)
    assert torch.allclose(choice.log_prob(raised), p.log())
    assert torch.allclose(choice.log_prob(lowered), (1 - p).log())
    assert choice.entropy()[0, 0].item() == pytest.approx(math.log(2.0))
    assert choice.log_prob(raised)[1, 0].item() == pytest.approx(math.log(0.75))
    assert choice.mode().flatten().tolist() == [1.0, 1.0, -1.0]
    assert torch.allclose(choice.mean, 2 * p - 1)
    assert choice.stddev[0, 0].item() == pytest.approx(1.0)


def test_flipped_sampling_draws_from_the_flipped_probabilities_in_its_share():
    choice = TwoWayChoice(torch.full((2000, 1), math.log(3.0)))  # p(raise) = 3/4
    torch.manual_seed(0)
    as_given = (choice.sample(5) > 0).float().mean().item()
    flipped = (choice.sample(5, flipped=1.0) > 0).float().mean().item()
    authors = (choice.sample(5, flipped=0.8) > 0).float().mean().item()  # 0.2·3/4 + 0.8·1/4 = 0.35
    # 10,000 draws each: a standard error under 0.005
    assert as_given == pytest.approx(0.75, abs=0.02)
    assert flipped == pytest.approx(0.25, abs=0.02)
    assert authors == pytest.approx(0.35, abs=0.02)
    assert set(choice.sample(3, flipped=0.5).unique().tolist()) == {-1.0, 1.0}


def test_raised_penalty_takes_the_squared_raised_share_off_the_objective_not_the_reward(tmp_path):
    trainer = Trainer(tiny_config(tmp_path), log=lambda _: None)
    network = trainer.network.eval()
    batch = next(iter(trainer.train_batches))
    policy = BinaryPolicy(trainer.policy.state_size, hidden_sizes=[], normalize_state=False)
    with torch.no_grad():
        policy.logit_head.bias.fill_(20.0)  # raise every token: a share of 1, and α′ = α
    plain = rollout(network, policy, batch, torch.tensor(0.8), reward=trainer.config.reward, samples=3)
    cost = rollout(network, policy, batch, torch.tensor(0.8), reward=trainer.config.reward, samples=3, raised_penalty=0.15)
    assert torch.allclose(cost.terms.reward, plain.terms.reward, atol=1e-6)
    assert torch.allclose(cost.terms.objective, plain.terms.reward - 0.15, atol=1e-6)
    encoding = network.encode(batch)
    assert torch.allclose(cost.revised[0].unflatten(0, (-1, 3))[:, 0], encoding.attention[0], atol=1e-6)
    with torch.no_grad():
        policy.logit_head.bias.fill_(-20.0)  # lower every token: nothing raised, no cost
    lowered = rollout(network, policy, batch, torch.tensor(0.8), reward=trainer.config.reward, samples=3, raised_penalty=0.15)
    assert torch.allclose(lowered.terms.objective, lowered.terms.reward, atol=1e-6)


AUTHORS = {
    "agent.policy": "binary", "agent.hidden_sizes": "[]", "agent.normalize_state": "false", "agent.flipped_sampling": 0.8,
    "agent.raised_penalty": 0.15, "agent.normalize_advantage": "false", "adjust.multiplicative": "true", "adjust.beta0": 0.8,
    "adjust.beta_half_life_epochs": 0, "adjust.trainable_beta": "false", "reward.gamma": 0.0,
}


def test_the_settings_are_off_by_default_and_saved_only_where_set():
    default = ExperimentConfig().to_dict()
    assert "policy" not in default["agent"] and "multiplicative" not in default["adjust"]
    config = load_config(None, [f"{k}={v}" for k, v in AUTHORS.items()])
    saved = config.to_dict()
    assert saved["agent"]["policy"] == "binary" and saved["agent"]["flipped_sampling"] == 0.8
    assert saved["agent"]["raised_penalty"] == 0.15 and saved["adjust"]["multiplicative"] is True
    reloaded = ExperimentConfig()
    apply_mapping(reloaded, saved, "a saved config.toml")
    assert reloaded.to_dict() == saved


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["agent.flipped_sampling=0.5"], "needs agent.policy = binary"),
        (["agent.policy=binary", "agent.flipped_sampling=1.5"], "agent.flipped_sampling must be between 0 and 1"),
        (["agent.raised_penalty=-1"], "agent.raised_penalty must be ≥ 0"),
        (["agent.policy=binary", "agent.algorithm=sb3-ppo"], "reinforce only"),
        (["adjust.multiplicative=true", "agent.algorithm=sb3-a2c"], "reinforce only"),
    ],
)
def test_settings_that_cannot_work_are_refused_naming_them(settings, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, settings).validate()


def test_a_run_with_the_authors_procedure_trains_the_binary_policy_and_reloads_it(tmp_path):
    config = tiny_config(tmp_path, **AUTHORS)
    trainer = Trainer(config, log=lambda _: None)
    assert isinstance(trainer.policy, BinaryPolicy) and not isinstance(trainer.policy, GaussianPolicy)
    before = [p.detach().clone() for p in trainer.policy.parameters()]
    results = trainer.run()
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.policy.parameters()))
    agent_records = [r for r in results.history if r.phase == "agent"]
    assert agent_records and all(math.isfinite(r.to_dict()["dev_with-agent_accuracy"]) for r in agent_records)
    model = drga.load(tmp_path / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt")
    assert isinstance(model.policy, BinaryPolicy) and model.policy.multiplicative
    texts = ["good film", "bad film today"]
    assert len(model.predict(texts, "with-agent")) == 2
