"""stable-baselines3 on the environment: check_env, learn(), the policy mappings, the trainer's SB3 phase 2."""

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.env_util import make_vec_env

import drga.baselines as baselines
from drga.agents.sb3_policy import SB3PolicyAdapter, gaussian_policy_from_sb3, pre_squash
from drga.checkpoint_format import load_checkpoint
from drga.cli import main
from drga.config import AgentConfig, RewardConfig, load_config
from drga.core.policy import GaussianPolicy, squash
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.data import BatchIterator, collate
from drga.envs import AttentionRetrofitEnv
from drga.learners.sb3 import PreSquashActions, build_sb3_model, count_env_steps
from drga.tasks.classification.data import prepare_data
from drga.tasks.classification.evaluation import evaluate
from drga.tasks.classification.trained import load_trained
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.interrupts import ctrl_c_at_call
from tests.tiny_network import TinyAttentionNet, keyword_examples

LIMIT = 8.0


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


@pytest.fixture
def tiny():
    torch.manual_seed(0)
    examples, vocab_size = keyword_examples(20, seed=0)
    return TinyAttentionNet(vocab_size, 2), examples


def quiet_check_env(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning is a failure
        check_env(env, warn=True)


def test_sb3_check_env_passes_on_the_env_and_on_the_pre_squash_wrapper(tiny):
    network, examples = tiny
    quiet_check_env(AttentionRetrofitEnv(network, examples, collate))
    quiet_check_env(PreSquashActions(AttentionRetrofitEnv(network, examples, collate), LIMIT))


def test_pre_squash_wrapper_sends_squash_of_limit_times_u(tiny):
    network, examples = tiny
    env = PreSquashActions(AttentionRetrofitEnv(network, examples, collate), LIMIT)
    u = np.array([0.3], dtype=np.float32)
    assert env.action(u) == pytest.approx(squash(torch.tensor(LIMIT * 0.3)).item(), abs=1e-7)
    assert env.action(np.array([5.0], dtype=np.float32)) == pytest.approx(squash(torch.tensor(LIMIT)).item())


def test_short_ppo_learn_and_its_policy_plugs_into_rollout_and_evaluation(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # SB3's default logger makes a folder; not one in the user's /tmp
    network, examples = tiny
    vec_env = make_vec_env(lambda: AttentionRetrofitEnv(network, examples, collate), n_envs=2, seed=0)
    model = PPO("MlpPolicy", vec_env, n_steps=32, batch_size=32, n_epochs=2, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps >= 128
    adapter = SB3PolicyAdapter(model.policy)

    # The adapter's deterministic action is SB3's, through the toolkit's squash.
    states = torch.randn(7, vec_env.observation_space.shape[0])
    sb3_action, _ = model.predict(states.numpy(), deterministic=True)
    with torch.no_grad():
        assert torch.allclose(adapter(states), torch.as_tensor(sb3_action), atol=1e-5)

    # Acting with SB3 in the env gives the reward the batched rollout gives with the adapter.
    env = AttentionRetrofitEnv(network, examples, collate)
    observation, _ = env.reset(options={"index": 4})
    done = False
    while not done:
        action, _ = model.predict(observation, deterministic=True)
        observation, reward, done, _, _ = env.step(action)
    with torch.no_grad():
        result = rollout(
            network, adapter, collate([examples[4]]), torch.tensor(0.4), reward=RewardConstants(0.2, 0.2, 0.85), deterministic=True
        )
    assert reward == pytest.approx(result.terms.reward.item(), abs=1e-5)
    scores = evaluate(network, BatchIterator(examples, 8, shuffle=False), RewardConfig(), "with-agent", adapter, 0.4)
    assert scores.examples == len(examples) and 0.0 <= scores.accuracy <= 1.0


@pytest.mark.parametrize("normalize_state", [True, False])
def test_sb3_actor_critic_converts_exactly_into_a_gaussian_policy(tiny, normalize_state):
    network, examples = tiny
    agent = AgentConfig(hidden_sizes=[16, 8], sb3_action_limit=LIMIT, normalize_state=normalize_state)
    vec_env = make_vec_env(lambda: PreSquashActions(AttentionRetrofitEnv(network, examples, collate), LIMIT), n_envs=1)
    model = build_sb3_model("sb3-ppo", vec_env, agent)
    with torch.no_grad():  # a non-trivial actor, means mostly inside SB3's clip range
        for p in model.policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
        model.policy.action_net.weight.mul_(0.5)
    policy = gaussian_policy_from_sb3(model.policy, LIMIT)
    assert isinstance(policy, GaussianPolicy) and isinstance(policy.body[0], torch.nn.LayerNorm) == normalize_state
    states = torch.randn(50, vec_env.observation_space.shape[0])
    with torch.no_grad():
        ours = policy.distribution(states)
        theirs = model.policy.get_distribution(states).distribution
    assert torch.allclose(ours.mean, LIMIT * theirs.mean, atol=1e-5)
    assert torch.allclose(ours.stddev, LIMIT * theirs.stddev.expand_as(theirs.mean), atol=1e-5)
    # What the env receives from SB3's deterministic action is the toolkit's with-agent action.
    u, _ = model.predict(states.numpy(), deterministic=True)
    inside = theirs.mean.abs().squeeze(-1) <= 1
    assert inside.sum() > 10
    wrapper = PreSquashActions(AttentionRetrofitEnv(network, examples, collate), LIMIT)
    sent = torch.as_tensor(np.stack([wrapper.action(a) for a in u]))
    assert torch.allclose(sent[inside], policy(states)[inside], atol=1e-5)
    # log N(x; μ_x, σ_x) = log N(u; μ_u, σ_u) − log limit per action dimension
    x = ours.sample()
    assert torch.allclose(ours.log_prob(x), theirs.log_prob(x / LIMIT) - math.log(LIMIT), atol=1e-4)


def test_adapter_is_exact_for_sac_and_uses_the_deterministic_action_of_td3(tiny):
    network, examples = tiny
    env = AttentionRetrofitEnv(network, examples, collate)
    states = torch.randn(9, env.observation_space.shape[0])
    for algorithm in (SAC, TD3):
        model = algorithm("MlpPolicy", env, learning_starts=0, seed=0, device="cpu")
        with torch.no_grad():
            for p in model.policy.actor.parameters():
                p.add_(0.2 * torch.randn_like(p))
        adapter = SB3PolicyAdapter(model.policy)
        expected, _ = model.predict(states.numpy(), deterministic=True)
        with torch.no_grad():
            assert torch.allclose(adapter(states), torch.as_tensor(expected), atol=1e-5), algorithm.__name__
    with torch.no_grad():  # SAC's tanh(u) is squash(2u): σ over x is exactly 2σ
        mean, log_std, _ = SAC("MlpPolicy", env, device="cpu").policy.actor.get_action_dist_params(states)
    assert pre_squash(torch.tanh(mean)).allclose(2 * mean, atol=1e-3)


def test_adapter_refuses_a_policy_trained_on_other_actions(tiny):
    network, examples = tiny
    env = PreSquashActions(AttentionRetrofitEnv(network, examples, collate), LIMIT)
    env.action_space = type(env.action_space)(-2.0, 2.0, shape=(1,), dtype=np.float32)
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu")
    with pytest.raises(ValueError, match="Box\\(-1, 1\\)"):
        SB3PolicyAdapter(model.policy)
    with pytest.raises(TypeError, match="SB3PolicyAdapter instead"):
        gaussian_policy_from_sb3(SAC("MlpPolicy", AttentionRetrofitEnv(network, examples, collate), device="cpu").policy, LIMIT)


def sb3_config(tmp_path, algorithm="sb3-ppo", **overrides):
    items = {
        "agent.algorithm": algorithm,
        "agent.sb3_n_envs": 2,
        "agent.sb3_n_steps": 32,
        "agent.sb3_total_steps": 512,
        "train.agent_epochs": 2,
        "train.baseline_epochs": 2,
    }
    items.update(overrides)
    return tiny_config(tmp_path, **items)


@pytest.mark.parametrize("algorithm", ["sb3-ppo", "sb3-a2c"])
def test_trainer_learns_phase_2_with_sb3_and_everything_downstream_works(tmp_path, capsys, algorithm):
    config = sb3_config(tmp_path, algorithm)
    results = Trainer(config, log=lambda _: None).run()
    assert [r.phase for r in results.history] == ["pretrain"] * 2 + ["baseline"] * 2 + ["agent"] * 2 + ["cotrain"] * 2
    agent_epochs = [r for r in results.history if r.phase == "agent"]
    assert [r.train["env_steps"] for r in agent_epochs] == [256, 512]  # 512 steps in 2 chunks of 4 rollouts of 2 × 32
    assert all(r.train["episodes"] > 0 and math.isfinite(r.train["reward"]) for r in agent_epochs)
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    assert (run_dir / "sb3" / f"{algorithm}-epoch2.zip").exists() and any((run_dir / "tb" / algorithm).iterdir())
    # The checkpoint holds an ordinary GaussianPolicy: load_trained, evaluation and the CLI take it as is.
    model = load_trained(run_dir / "agent_best.pt")
    assert isinstance(model.policy, GaussianPolicy) and model.has_agent
    assert main(["evaluate", str(run_dir / "agent_best.pt"), "--dataset", "tsv", "--tsv", config.data.tsv_path]) == 0
    assert "with-agent  accuracy" in capsys.readouterr().out
    test = BatchIterator(prepare_data(config).test, config.data.batch_size * 2, shuffle=False)
    reloaded = evaluate(model.network, test, config.reward, "with-agent", model.policy, model.strength().detach())
    assert results.rows["agent on frozen network"].scores("test", "with-agent")["accuracy"] == pytest.approx(reloaded.accuracy)


def test_default_budget_is_reinforces_env_steps(tmp_path):
    config = sb3_config(
        tmp_path,
        **{
            "agent.sb3_total_steps": 0,
            "agent.samples": 2,
            "agent.sb3_n_steps": 256,
            "train.agent_epochs": 1,
            "train.cotrain_epochs": 0,
            "train.pretrain_epochs": 1,
        },
    )
    trainer = Trainer(config, log=lambda _: None)
    tokens = count_env_steps(trainer.network, trainer.data.train, collate)
    assert tokens == sum(len(e.ids) for e in trainer.data.train)  # one site, one array: every token is one step
    results = trainer.run()
    steps = [r.train["env_steps"] for r in results.history if r.phase == "agent"][0]
    rollout_size = 2 * 256
    assert steps == math.ceil(2 * tokens / rollout_size) * rollout_size


def test_resume_in_the_sb3_agent_phase_reproduces_an_uninterrupted_run(tmp_path, monkeypatch):
    uninterrupted = Trainer(sb3_config(tmp_path / "a"), log=lambda _: None).run()

    with ctrl_c_at_call(Trainer, "train_epoch", 6):  # in the second agent epoch: pretrain 2, baseline 2, agent 1 done
        Trainer(sb3_config(tmp_path / "b"), log=lambda _: None).run()
    resumed = Trainer(sb3_config(tmp_path / "b"), resume=True, log=lambda _: None).run()

    strip = lambda records: [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in records]
    assert strip(resumed.history) == strip(uninterrupted.history)
    a = load_checkpoint(tmp_path / "a" / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt")
    b = load_checkpoint(tmp_path / "b" / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt")
    for name, tensor in a["policy"].items():
        assert torch.equal(tensor, b["policy"][name]), name


def test_agent_flag_sets_the_algorithm_and_an_unknown_one_lists_the_choices(tmp_path, capsys):
    code = main(["train", "--agent", "sb3-sac", "--dataset", "subj", "--logdir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "unknown learner 'sb3-sac'; choose one of: reinforce, sb3-ppo, sb3-a2c" in err and "Traceback" not in err
    assert load_config(None, ["agent.algorithm=sb3-a2c"]).agent.algorithm == "sb3-a2c"


@pytest.mark.slow
def test_own_sb3_example_runs_as_written(tmp_path):
    from tests.conftest import require_data

    require_data("subj")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "experiments/own_sb3_example.py"],
        cwd=root,
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(root), SB3_LOGDIR=str(tmp_path)),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert "net-only EvalResult(accuracy=" in done.stdout and "with-agent EvalResult(accuracy=" in done.stdout
    assert len((root / "experiments" / "own_sb3_example.py").read_text().splitlines()) < 40
