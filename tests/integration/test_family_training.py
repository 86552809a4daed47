"""Short training runs of every family on a small slice of its real data set: the task loss falls.

Each run: load the real data (``require_data``), keep a small fixed slice of the training split,
measure the task loss (eq. 12) on it, train the network alone for a few epochs, measure again,
then co-train network and agent for one epoch through the DRGA rollout (eqs. 1–7) and check that
the loss under the agent's revised attention is finite and still below the starting loss.
Tiny dimensions and one thread keep each run to a few seconds.
"""

from __future__ import annotations

import pytest
import torch

from drga.baselines import build_network
from drga.config import load_config
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.core.reinforce import reinforce_loss
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.data import BatchIterator
from drga.tasks.classification.data import prepare_data
from tests.conftest import require_data

# network, data set, data folder, training examples kept, epochs of network training
RUNS = [
    ("cnn-sa", "mr", "mr", 160, 4),
    ("transformer", "ag-news", "ag_news", 160, 4),
    ("disan", "subj", "subj", 160, 4),
    ("atae-lstm", "semeval14-laptop", "semeval14", 160, 4),
    ("ian", "semeval14-restaurant", "semeval14", 160, 4),
    ("han", "movie-reviews", "movie_reviews", 48, 3),
]

SMALL = {"embedding_dim": 24, "hidden_size": 24, "attention_size": 12, "classifier_hidden": 16, "dropout": 0.1,
         "feedforward_size": 32, "layers": 2, "heads": 2, "kernel_sizes": [3, 5]}


def slice_loss(network, batches) -> float:
    network.eval()
    with torch.no_grad():
        total, count = 0.0, 0
        for batch in batches:
            total -= network.log_likelihood(network(batch), batch.labels).sum().item()
            count += batch.size
    network.train()
    return total / count


@pytest.mark.parametrize("net,dataset,folder,keep,epochs", RUNS, ids=[r[0] for r in RUNS])
def test_task_loss_falls_on_a_real_slice(net, dataset, folder, keep, epochs):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    overrides = [f"network.name={net}", f"data.dataset={dataset}", f"data.data_dir={require_data(folder)}",
                 "data.max_length=40", "data.max_sentences=12", "data.max_sentence_length=25"]
    data = prepare_data(load_config(None, overrides))
    train = data.train[:keep]
    network = build_network(net, len(data.vocab), data.splits.num_classes, **SMALL)
    batches = BatchIterator(train, 16, shuffle=True, seed=0)
    fixed = list(BatchIterator(train, 32, shuffle=False))
    before = slice_loss(network, fixed)
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    for epoch in range(epochs):
        batches.set_epoch(epoch)
        for batch in batches:
            loss = -network.log_likelihood(network(batch), batch.labels).mean()  # eq. 12
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    after = slice_loss(network, fixed)
    assert after < 0.9 * before, f"{net}: task loss {before:.3f} → {after:.3f}"

    # one epoch of co-training through the DRGA rollout, as the trainer does it
    state, action = state_and_action_size(network, fixed[0])
    policy = GaussianPolicy(state, action, hidden_sizes=[16])
    agent_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    revised_losses = []
    for batch in batches:
        r = rollout(network, policy, batch, torch.tensor(0.4), samples=3, reward=RewardConstants(0.2, 0.2, 0.85))
        task = -r.log_likelihood.mean()
        agent = reinforce_loss(r.log_prob.view(-1, 3), r.terms.reward.view(-1, 3), True)
        optimizer.zero_grad()
        agent_optimizer.zero_grad()
        (task + agent).backward()
        optimizer.step()
        agent_optimizer.step()
        revised_losses.append(task.item())
    assert all(torch.isfinite(torch.tensor(revised_losses)))
    assert sum(revised_losses) / len(revised_losses) < before


@pytest.mark.slow
@pytest.mark.parametrize("net,dataset,folder,keep,epochs", RUNS, ids=[r[0] for r in RUNS])
def test_drga_trainer_runs_every_family_end_to_end(net, dataset, folder, keep, epochs, tmp_path):
    from drga.trainer import Trainer

    overrides = [
        f"network.name={net}", f"data.dataset={dataset}", f"data.data_dir={require_data(folder)}",
        "data.train_fraction=0.05", "network.embedding_dim=24", "network.hidden_size=24", "network.attention_size=12",
        "network.classifier_hidden=16", "network.feedforward_size=32", "agent.hidden_sizes=16,16",
        "data.batch_size=16", "network.dropout=0.2", "train.pretrain_epochs=5", "train.patience=0", "train.agent_epochs=1",
        "train.cotrain_epochs=1", "train.lr=0.005",
        f"run.logdir={tmp_path}", "run.progress=false", "run.threads=1",
    ]
    results = Trainer(load_config(None, overrides), log=lambda _: None).run()
    pretrain = [r for r in results.history if r.phase == "pretrain"]
    assert pretrain[-1].train["task_loss"] < pretrain[0].train["task_loss"]
    drga = results.rows["DRGA (co-trained)"]
    assert 0 <= drga.scores("test", "with-agent")["accuracy"] <= 1
