"""bench/throughput.py --floor: its two parts compute what co-training's network and agent must."""


import pytest
import torch

import drga.baselines as baselines
from drga.core.rollout import rollout, sample_and_adjust
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.scripts import load_script
from tests.tiny_network import TinyAttentionNet


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


@pytest.fixture(scope="module")
def bench():
    return load_script("bench/throughput.py", "throughput_bench")


def parameters(module):
    return [p.detach().clone() for p in module.parameters()]


def changed(before, module):
    return any(not torch.equal(a, b) for a, b in zip(before, module.parameters()))


def test_floor_network_part_is_eq_12_on_the_k_unrevised_samples(bench, tmp_path):
    trainer = Trainer(tiny_config(tmp_path, **{"agent.samples": 3}), log=lambda _: None)
    bench.begin_phase(trainer, "cotrain")
    trainer.network.eval()  # no dropout: the rollout and the floor see the same network
    batch = next(iter(trainer.train_batches))
    # β = 0: eqs. 3–4 leave α as it is, so co-training's eq. 12 over the B·K rows is the floor's loss
    r = rollout(trainer.network, trainer.policy, batch, torch.zeros(()), reward=trainer.config.reward, samples=3)
    expected = -r.log_likelihood.mean().item()
    network, policy = parameters(trainer.network), parameters(trainer.policy)
    rows = []
    predict = trainer.network.predict
    trainer.network.predict = lambda encoding, revised: rows.append(revised[0].shape[0]) or predict(encoding, revised)
    encoding, loss = bench.floor_network_step(trainer, batch)
    assert rows == [3 * batch.size]  # the network pays for all K predictions
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    assert changed(network, trainer.network) and not changed(policy, trainer.policy)

    network, policy = parameters(trainer.network), parameters(trainer.policy)
    bench.floor_agent_step(trainer, encoding)
    assert changed(policy, trainer.policy) and not changed(network, trainer.network)


def test_sample_work_is_the_rollouts_eqs_2_to_4_over_every_real_token_and_trains_nothing(bench, tmp_path, monkeypatch):
    trainer = Trainer(tiny_config(tmp_path, **{"agent.samples": 3}), log=lambda _: None)
    bench.begin_phase(trainer, "cotrain")
    batch = next(iter(trainer.train_batches))
    encoding = trainer.network.encode(batch)
    calls = []

    def recorded(site, rows, dist, beta, k):
        log_prob, revised = sample_and_adjust(site, rows, dist, beta, k)
        calls.append((len(rows), k, tuple(revised.shape), site.attention.requires_grad, dist.mean.requires_grad))
        return log_prob, revised

    monkeypatch.setattr(bench, "sample_and_adjust", recorded)
    network, policy = parameters(trainer.network), parameters(trainer.policy)
    bench.sample_work_step(trainer, encoding)
    attention = encoding.sites[0].attention
    # as the rollout: K = 3 draws for each real token, B·K revised arrays, the gradient into α and into π
    assert calls == [(int(batch.mask.sum()), 3, (3 * batch.size, *attention.shape[1:]), True, True)]
    assert not changed(network, trainer.network) and not changed(policy, trainer.policy)
