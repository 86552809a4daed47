"""The positive control's attention degradation and planted cues, against numbers worked out by hand."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from drga.baselines import NETWORK_INPUTS
from drga.baselines.lstm_sa import LSTMSelfAttention
from drga.baselines.protocol import Batch
from drga.core.degradation import AttentionDegradation, degraded_attention, position_noise
from drga.data.planted import CUE_WORDS, plant_cues
from drga.data.text import DatasetSplits, TextExample


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


def test_uniform_at_half_strength_mixes_evenly():
    # (1 − 0.5)·[0.7, 0.2, 0.1] + 0.5·[1/3, 1/3, 1/3] = [0.35 + 1/6, 0.1 + 1/6, 0.05 + 1/6]; the padded slot stays 0
    alpha = t([[[0.7, 0.2, 0.1, 0.0]]])
    mask = t([[[1, 1, 1, 0]]], torch.bool)
    degraded = degraded_attention(alpha, mask, "uniform", 0.5)
    torch.testing.assert_close(degraded, t([[[0.35 + 1 / 6, 0.1 + 1 / 6, 0.05 + 1 / 6, 0.0]]]))


def test_uniform_at_full_strength_ignores_the_network_and_passes_no_gradient():
    alpha = t([[[0.9, 0.1]]]).requires_grad_()
    degraded = degraded_attention(alpha, torch.ones(1, 1, 2, dtype=torch.bool), "uniform", 1.0)
    torch.testing.assert_close(degraded, t([[[0.5, 0.5]]]))
    assert not degraded.requires_grad


def test_a_frozen_scorer_gets_no_gradient_and_a_free_one_gets_its_share():
    mask = torch.ones(1, 1, 2, dtype=torch.bool)
    free = t([[[0.9, 0.1]]]).requires_grad_()
    degraded_attention(free, mask, "uniform", 0.25)[0, 0, 0].backward()
    torch.testing.assert_close(free.grad, t([[[0.75, 0.0]]]))  # ∂α̃_0/∂α_0 = 1 − s
    frozen = t([[[0.9, 0.1]]]).requires_grad_()
    assert not degraded_attention(frozen, mask, "uniform", 0.25, frozen=True).requires_grad


def test_learned_is_no_degradation():
    alpha = t([[[0.6, 0.4]]])
    assert degraded_attention(alpha, torch.ones(1, 1, 2, dtype=torch.bool), "learned", 1.0) is alpha


def test_random_target_depends_on_position_and_length_only():
    mask = t([[[1, 1, 1, 1, 0, 0]], [[1, 1, 1, 1, 0, 0]], [[1, 1, 1, 0, 0, 0]]], torch.bool)
    one = degraded_attention(t([[[0.25] * 4 + [0, 0]], [[0.97, 0.01, 0.01, 0.01, 0, 0]], [[1 / 3] * 3 + [0, 0, 0]]]), mask, "random", 1.0)
    torch.testing.assert_close(one[0], one[1])  # same length: the same target, whatever the network's attention
    assert not torch.allclose(one[0, 0, :3] / one[0, 0, :3].sum(), one[2, 0, :3])  # another length: another target
    torch.testing.assert_close(one.sum(-1), torch.ones(3, 1))
    assert (one[mask.logical_not()] == 0).all()
    # softmax(3·z) over the 4 real positions, z the hash's numbers
    z = position_noise(torch.tensor([4]), 6, 0)[0, :4]
    torch.testing.assert_close(one[0, 0, :4], torch.softmax(3 * z, dim=0))


def test_position_noise_is_in_unit_interval_and_seeded():
    noise = position_noise(torch.arange(1, 50), 64, 0)
    assert noise.min() >= 0 and noise.max() < 1
    assert 0.4 < float(noise.mean()) < 0.6
    assert not torch.equal(noise, position_noise(torch.arange(1, 50), 64, 1))
    assert torch.equal(noise, position_noise(torch.arange(1, 50), 64, 0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.floats(0, 1, allow_subnormal=False),
       st.sampled_from(["uniform", "random", "masked"]))
def test_degraded_attention_is_a_distribution_over_real_tokens(lengths, strength, kind):
    width = max(lengths) + 1
    mask = torch.tensor([[i < n for i in range(width)] for n in lengths]).unsqueeze(1)
    alpha = torch.softmax(torch.randn(len(lengths), 1, width), -1) * mask
    alpha = alpha / alpha.sum(-1, keepdim=True)
    degraded = degraded_attention(alpha, mask, kind, strength)
    torch.testing.assert_close(degraded.sum(-1), torch.ones(len(lengths), 1))
    assert (degraded[~mask] == 0).all() and (degraded >= 0).all()


def test_multi_dimensional_attention_is_degraded_per_dimension():
    alpha = t([[[[0.8, 0.1], [0.2, 0.9]]]])  # [B=1, K=1, T=2, H=2]
    degraded = degraded_attention(alpha, torch.ones(1, 1, 2, dtype=torch.bool), "uniform", 1.0)
    torch.testing.assert_close(degraded, torch.full((1, 1, 2, 2), 0.5))


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        AttentionDegradation("uniform", 1.5)
    with pytest.raises(ValueError, match="unknown attention degradation 'flat'"):
        AttentionDegradation("flat")  # type: ignore[arg-type]


def _batch():
    tokens = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])
    return Batch(tokens, tokens != 0, torch.tensor([0, 1]))


def test_an_attached_degradation_reaches_encode_forward_and_is_not_applied_twice():
    torch.manual_seed(0)
    network = LSTMSelfAttention(8, 2, embedding_dim=6, hidden_size=6, attention_size=4, classifier_hidden=4, dropout=0.0).eval()
    batch = _batch()
    own = network.encode(batch).attention[0]
    AttentionDegradation("uniform", 0.5).attach(network)
    degraded = network.encode(batch).attention[0]
    torch.testing.assert_close(degraded, 0.5 * own + 0.5 * batch.mask.unsqueeze(1) / batch.mask.sum(-1).view(2, 1, 1))

    class Subclass(LSTMSelfAttention):  # a nested encode (super().encode) is degraded once, not twice
        def encode(self, batch):
            return super().encode(batch)

    torch.manual_seed(0)
    nested = Subclass(8, 2, embedding_dim=6, hidden_size=6, attention_size=4, classifier_hidden=4, dropout=0.0).eval()
    AttentionDegradation("uniform", 0.5).attach(nested)
    torch.testing.assert_close(nested.encode(batch).attention[0], degraded)
    # forward predicts from the degraded attention: at full strength, uniform pooling of the hidden states
    AttentionDegradation("uniform", 1.0).attach(network)
    uniform = network.encode(batch)
    torch.testing.assert_close(network(batch), network.predict(uniform, [batch.mask.unsqueeze(1) / batch.mask.sum(-1).view(2, 1, 1)]))
    AttentionDegradation().attach(network)
    assert network.attention_degradation is None
    torch.testing.assert_close(network.encode(batch).attention[0], own)


def _splits():
    train = [TextExample(["a", "b", "c"], 1), TextExample(["d"], 0)] * 20
    return DatasetSplits("toy", train, train[:4], train[:4], ["x", "y"])


def test_planting_inserts_one_cue_of_the_new_label_and_is_seeded():
    planted = plant_cues(_splits())
    assert planted.label_names == ["cue-a", "cue-b"] and planted.name == "planted-toy"
    for before, after in zip(_splits().train, planted.train):
        inserted = [word for word in after.tokens if word not in before.tokens]
        assert len(after.tokens) == len(before.tokens) + 1 and len(inserted) == 1
        assert inserted[0] in CUE_WORDS[planted.label_names[after.label]]
    labels = [e.label for e in planted.train]
    assert 0 < sum(labels) < len(labels)  # both labels drawn
    assert [e.tokens for e in plant_cues(_splits()).train] == [e.tokens for e in planted.train]
    assert [e.tokens for e in plant_cues(_splits(), plant_seed=1).train] != [e.tokens for e in planted.train]
    with pytest.raises(ValueError, match="at least two labels"):
        plant_cues(_splits(), {"only": ("w",)})


@pytest.mark.parametrize("kind", ["uniform", "random", "masked"])
def test_every_classification_family_reads_its_degraded_attention_at_every_site(kind):
    from tests.unit.test_families import BATCHES, CLASSIFIERS, make

    for name in CLASSIFIERS:
        network = make(name).eval()
        batch = BATCHES[NETWORK_INPUTS[name]]()
        own = network.encode(batch)
        AttentionDegradation(kind, 1.0).attach(network)
        degraded = network.encode(batch)
        for before, after in zip(own.sites, degraded.sites):
            reached = network.degradable_sites is None or after.name in network.degradable_sites
            expected = degraded_attention(before.attention, before.mask, kind, 1.0) if reached else before.attention
            torch.testing.assert_close(after.attention, expected, msg=f"{name}, site {after.name}")
        torch.testing.assert_close(network(batch), network.predict(degraded, degraded.attention), msg=name)
    assert make("transformer").degradable_sites == ("pooling",)  # the heads are a view of its matrices


def test_masked_zeroes_a_fixed_share_of_positions_and_renormalises_the_rest():
    alpha = t([[[0.1, 0.2, 0.3, 0.4, 0.0]]])
    mask = t([[[1, 1, 1, 1, 0]]], torch.bool)
    z = position_noise(torch.tensor([[4]]), 5, 0)[0, 0, :4]
    keep = (z >= 0.5).float()
    degraded = degraded_attention(alpha, mask, "masked", 0.5)
    if keep.sum() > 0:
        expected = alpha[0, 0, :4] * keep / (alpha[0, 0, :4] * keep).sum()
    else:  # none kept: the token of the largest noise alone
        expected = torch.nn.functional.one_hot(z.argmax(), 4).float()
    torch.testing.assert_close(degraded[0, 0, :4], expected)
    assert degraded[0, 0, 4] == 0
    # at s = 1 only the token of the largest noise is left, whatever the network's attention
    torch.testing.assert_close(degraded_attention(alpha, mask, "masked", 1.0)[0, 0, :4], torch.nn.functional.one_hot(z.argmax(), 4).float())
    # at s = 0 nothing is masked
    torch.testing.assert_close(degraded_attention(alpha, mask, "masked", 0.0), alpha)


def test_masked_tokens_get_no_gradient_and_the_agent_can_give_them_weight_again():
    from drga.core.adjust import adjust_attention

    mask = torch.ones(1, 1, 8, dtype=torch.bool)
    alpha = torch.full((1, 1, 8), 1 / 8, requires_grad=True)
    degraded = degraded_attention(alpha, mask, "masked", 0.6)
    masked = degraded[0, 0] == 0
    assert masked.any() and not masked.all()
    degraded[0, 0].mul(torch.arange(8.0)).sum().backward()
    assert (alpha.grad[0, 0][masked] == 0).all()
    raise_one = torch.zeros(1, 1, 8)
    first = int(masked.nonzero()[0])
    raise_one[0, 0, first] = 1.0
    revised = adjust_attention(degraded.detach(), raise_one, 0.4, mask)  # eq. 3: α*_t = 0 + β·a_t
    assert revised[0, 0, first] > 0


def test_masked_attention_with_no_mass_left_is_uniform_over_the_kept_tokens():
    mask = torch.ones(1, 1, 6, dtype=torch.bool)
    z = position_noise(torch.tensor([[6]]), 6, 0)[0, 0]
    keep = z >= 0.3
    assert keep.any() and (~keep).any()  # the hash's numbers for this length: some tokens masked, some kept
    alpha = (~keep).float().unsqueeze(0).unsqueeze(0)  # all of α on the tokens masked
    alpha = alpha / alpha.sum()
    degraded = degraded_attention(alpha, mask, "masked", 0.3)
    torch.testing.assert_close(degraded[0, 0], keep.float() / keep.sum())
