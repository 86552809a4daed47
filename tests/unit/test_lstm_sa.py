"""The shipped LSTM+SA network: protocol, masks, and a short real run."""

import torch

from drga.baselines import build_network
from drga.baselines.protocol import Batch
from drga.config import load_config
from drga.core.adjust import adjust_attention
from drga.trainer import Trainer
from tests.conftest import require_data


def small_batch():
    tokens = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [13, 0, 0, 0, 0]])
    return Batch(tokens=tokens, mask=tokens != 0, labels=torch.tensor([0, 1, 1]))


def test_lstm_sa_follows_the_protocol_and_respects_padding():
    torch.manual_seed(0)
    network = build_network("lstm-sa", vocab_size=20, num_classes=2, embedding_dim=8, hidden_size=6, attention_size=5)
    network.eval()
    batch = small_batch()
    encoding = network.encode(batch)
    (site,) = encoding.sites
    site.validate()
    assert site.word_vectors.shape == (3, 1, 5, 8) and site.hidden_states.shape == (3, 1, 5, 6)
    assert site.query.shape == (3, 1, 6) and site.attention.shape == (3, 1, 5)
    assert torch.equal(site.attention[:, 0] == 0, ~batch.mask)  # exactly zero on padding only
    assert torch.allclose(site.attention.sum(-1), torch.ones(3, 1))
    revised = adjust_attention(site.attention, torch.rand(3, 1, 5) * 2 - 1, 0.4, site.mask)
    assert torch.all(revised[:, 0][~batch.mask] == 0)
    assert torch.allclose(revised.sum(-1), torch.ones(3, 1))
    # predict from the network's own attention is the plain forward pass
    assert torch.allclose(network.predict(encoding, encoding.attention), network(batch))
    # one-token sentence: all mass on that token
    assert site.attention[2, 0, 0].item() == 1.0


def test_lstm_sa_runs_all_phases_on_a_slice_of_subj(tmp_path):
    folder = require_data("subj")
    overrides = [
        f"data.data_dir={folder}", "data.train_fraction=0.1", "network.embedding_dim=32", "network.hidden_size=32",
        "network.attention_size=16", "network.classifier_hidden=16", "agent.hidden_sizes=32,32",
        "train.pretrain_epochs=3", "train.agent_epochs=1", "train.cotrain_epochs=1", "train.lr=0.005",
        f"run.logdir={tmp_path}", "run.progress=false",
    ]
    results = Trainer(load_config(None, overrides), log=lambda _: None).run()
    pretrain = [r for r in results.history if r.phase == "pretrain"]
    assert pretrain[-1].train["task_loss"] < pretrain[0].train["task_loss"]
    drga = results.rows["DRGA (co-trained)"]
    assert drga.scores("test", "net-only")["accuracy"] > 0.55 and drga.scores("test", "with-agent")["accuracy"] > 0.55
