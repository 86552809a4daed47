"""The proof that the RL machinery learns: a synthetic keyword task with spread attention.

The label is decided by one keyword among random distractors. The network is pretrained with
its attention pinned to uniform, then frozen; pretraining the agent alone must move attention
mass onto the keyword and raise the reward.
"""

import torch

from drga.core.policy import GaussianPolicy
from drga.core.reinforce import reinforce_loss
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.core.state import build_agent_state
from drga.data import BatchIterator, collate
from tests.tiny_network import TinyAttentionNet, keyword_examples, keyword_positions

GAMMA, SQRT_L0, DELTA, BETA, K = 0.2, 0.2, 0.85, torch.tensor(0.4), 5


def _measure(network, policy, batch):
    with torch.no_grad():
        result = rollout(network, policy, batch, BETA, samples=1, reward=RewardConstants(GAMMA, SQRT_L0, DELTA), deterministic=True)
    keyword_mass = (result.revised[0][:, 0] * keyword_positions(batch)).sum(dim=1).mean().item()
    return keyword_mass, result.terms.reward.mean().item()


def test_agent_pretraining_moves_attention_to_the_keyword_and_raises_reward():
    torch.manual_seed(0)
    train, vocab_size = keyword_examples(800, seed=0)
    held_out = collate(keyword_examples(300, seed=1)[0])
    network = TinyAttentionNet(vocab_size, 2, spread_attention=True)
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)
    batches = BatchIterator(train, 32, shuffle=True, seed=0)
    for epoch in range(3):
        batches.set_epoch(epoch)
        for batch in batches:
            loss = -network.log_likelihood(network(batch), batch.labels).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    network.eval().requires_grad_(False)
    spread = network.encode(held_out).attention[0][:, 0]
    original_mass = (spread * keyword_positions(held_out)).sum(dim=1).mean().item()
    assert abs(original_mass - 1 / 9) < 0.02  # uniform over 6–12 tokens

    state_size = build_agent_state(network.encode(held_out).sites[0]).shape[-1]
    policy = GaussianPolicy(state_size, 1, hidden_sizes=(64, 64))
    mass_before, reward_before = _measure(network, policy, held_out)
    agent_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
    for epoch in range(3):
        batches.set_epoch(100 + epoch)
        for batch in batches:
            result = rollout(network, policy, batch, BETA, samples=K, reward=RewardConstants(GAMMA, SQRT_L0, DELTA))
            loss = reinforce_loss(result.log_prob.view(-1, K), result.terms.reward.view(-1, K))
            agent_optimizer.zero_grad()
            loss.backward()
            agent_optimizer.step()
    mass_after, reward_after = _measure(network, policy, held_out)

    assert abs(mass_before - original_mass) < 0.02  # an untrained agent barely changes α
    assert mass_after > mass_before + 0.3, (mass_before, mass_after)
    assert reward_after > reward_before + 0.1, (reward_before, reward_after)
