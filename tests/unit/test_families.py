"""Every attention family as a plug-in: protocol, masks, multi-head and multi-dimensional
adjustment by hand, loaders on the real files, and clear errors on mismatched data."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from drga.baselines import NETWORK_INPUTS, NETWORKS, PRETRAINED_TOKENIZERS, build_network
from drga.baselines.protocol import AttentionSite, Batch
from drga.baselines.transformer import column_mean, revise_matrices
from drga.config import ConfigError, load_config
from drga.core.adjust import adjust_attention
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.core.state import build_agent_state
from drga.data import DATASETS, EncodedExample, TextExample, Vocabulary, collate, encode_examples, load_dataset
from drga.tasks.classification.data import prepare_data
from tests.conftest import require_data

SMALL = dict(embedding_dim=8, hidden_size=12, attention_size=6, classifier_hidden=6, feedforward_size=10, kernel_sizes=[2, 3])


def text_batch() -> Batch:
    lengths = [5, 3, 1, 4]
    examples = [EncodedExample([2 + (i + j) % 15 for j in range(n)], i % 2) for i, n in enumerate(lengths)]
    return collate(examples)


def aspect_batch() -> Batch:
    examples = []
    for i, n in enumerate([6, 3, 1, 5]):
        ids = [2 + (3 * i + j) % 15 for j in range(n)]
        start = min(1, n - 1)
        span = [start, min(n, start + 1 + i % 2)]
        examples.append(EncodedExample(ids, i % 3, {"aspect": ids[span[0] : span[1]], "aspect_span": span}))
    return collate(examples)


def document_batch() -> Batch:
    docs = [[[2, 3, 4], [5, 6], [7, 8, 9, 10]], [[11]], [[3, 5, 7, 9, 11], [4, 6]]]
    examples = [EncodedExample([i for s in d for i in s], k % 2, sentences=d) for k, d in enumerate(docs)]
    return collate(examples)


BATCHES = {"text": text_batch, "aspect": aspect_batch, "document": document_batch}


def make(name: str, classes: int = 3):
    torch.manual_seed(0)
    return build_network(name, vocab_size=20, num_classes=classes, dropout=0.0, **SMALL)


#: The classification families trained from scratch; translation networks ("parallel" input) have
#: tests/test_nmt*.py, networks wrapping a pretrained checkpoint (hf-encoder) tests/unit/test_hf_encoder.py
#: (they need a checkpoint directory, which a tiny random BERT provides there).
CLASSIFIERS = sorted(n for n in NETWORKS if NETWORK_INPUTS[n] != "parallel" and n not in PRETRAINED_TOKENIZERS)


def test_every_family_is_registered_with_its_input_kind():
    assert set(CLASSIFIERS) == {"lstm-sa", "cnn-sa", "transformer", "disan", "atae-lstm", "ian", "han"}
    assert set(PRETRAINED_TOKENIZERS) == {"hf-encoder"} and NETWORK_INPUTS["hf-encoder"] == "text"
    assert {NETWORK_INPUTS[n] for n in CLASSIFIERS} == {"text", "aspect", "document"}
    for name in ("ag-news", "semeval14-laptop", "semeval14-restaurant", "semeval15-restaurant",
                 "semeval16-restaurant", "movie-reviews"):
        assert name in DATASETS


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_network_follows_the_protocol_and_padding_stays_zero(name):
    network = make(name).eval()
    batch = BATCHES[NETWORK_INPUTS[name]]()
    encoding = network.encode(batch)
    sizes = set()
    for site in encoding.sites:
        site.validate()
        b, k, t = site.mask.shape
        assert b == batch.size
        sizes.add((site.word_vectors.shape[-1], site.hidden_states.shape[-1], site.query.shape[-1]))
        alpha = site.attention
        assert alpha.dim() == (4 if network.multi_dimensional else 3)
        real = site.mask if alpha.dim() == 3 else site.mask.unsqueeze(-1).expand_as(alpha)
        assert torch.all(alpha[~real] == 0), "padding must get exactly zero attention"
        assert torch.all(alpha[real] > 0)
        present = site.mask.any(dim=-1)  # arrays with at least one real token
        sums = alpha.sum(dim=2)
        expected = present.to(sums.dtype) if alpha.dim() == 3 else present.unsqueeze(-1).expand_as(sums).to(sums.dtype)
        assert torch.allclose(sums, expected, atol=1e-5)
        # eqs. 3–4 with random actions: padding stays exactly 0, real tokens renormalised.
        action = torch.rand_like(alpha) * 2 - 1
        revised = adjust_attention(alpha, action, 0.4, site.mask)
        assert torch.all(revised[~real] == 0)
        assert torch.allclose(revised.sum(dim=2), expected, atol=1e-5)
        assert torch.isfinite(build_agent_state(site)).all()
    assert len(sizes) == 1, "all sites must share Dw, Dh, Du"
    state, action = state_and_action_size(network, batch)
    assert action == (SMALL["hidden_size"] if network.multi_dimensional else 1)
    # predict from the network's own attention is the plain forward pass
    output = network.predict(encoding, encoding.attention)
    assert output.shape == (batch.size, 3)
    assert torch.allclose(output, network(batch), atol=1e-5)
    # the trainer's path: K sampled revisions of every site, reward, gradients into the network
    network.train()
    policy = GaussianPolicy(state, action, hidden_sizes=[8])
    r = rollout(network, policy, batch, torch.tensor(0.4), samples=3, reward=RewardConstants(0.2, 0.2, 0.85))
    assert r.output.shape == (batch.size * 3, 3)
    assert torch.isfinite(r.terms.reward).all() and torch.isfinite(r.log_prob).all()
    for revised, site in zip(r.revised, encoding.sites):
        real = site.mask.repeat_interleave(3, dim=0)
        if revised.dim() == 4:
            real = real.unsqueeze(-1).expand_as(revised)
        assert torch.all(revised[~real] == 0)
    (-r.log_likelihood.mean()).backward()
    grads = [p.grad for p in network.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)
    assert all(g is None or torch.isfinite(g).all() for g in grads)


def test_transformer_forward_is_predict_from_its_own_attention_in_training_too():
    # Plain training skips building the agent's sites; with dropout on, the same seed must give
    # the same logits and the same gradients as the protocol's path.
    torch.manual_seed(0)
    network = build_network("transformer", vocab_size=20, num_classes=2, dropout=0.3, **SMALL).train()
    batch = text_batch()
    results = []
    for path in (lambda: network(batch), lambda: (lambda e: network.predict(e, e.attention))(network.encode(batch))):
        network.zero_grad()
        torch.manual_seed(1)
        output = path()
        output.square().sum().backward()
        results.append((output.detach(), [p.grad.clone() for p in network.parameters() if p.grad is not None]))
    (plain, plain_grads), (protocol, protocol_grads) = results
    assert torch.equal(plain, protocol)
    assert len(plain_grads) == len(protocol_grads) > 0
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(plain_grads, protocol_grads))


def test_transformer_has_one_array_per_head_and_layer_each_adjusted_separately():
    torch.manual_seed(0)
    network = build_network("transformer", vocab_size=20, num_classes=2, dropout=0.0, layers=2, heads=2,
                            embedding_dim=8, hidden_size=8, attention_size=4, feedforward_size=8).eval()
    batch = text_batch()
    encoding = network.encode(batch)
    heads, pooling = encoding.sites
    assert (heads.name, pooling.name) == ("heads", "pooling")
    assert heads.attention.shape == (4, 4, 5) and pooling.attention.shape == (4, 1, 5)  # K = 2 layers × 2 heads
    matrices = encoding.cache["matrices"]  # [B, L, H, T, T]
    assert torch.allclose(heads.attention, column_mean(matrices.flatten(1, 2), batch.mask))
    # arrays of different heads differ (they are not copies of one another)
    assert not torch.allclose(heads.attention[:, 0], heads.attention[:, 1])
    for k in range(4):
        action = torch.zeros_like(heads.attention)
        action[:, k] = torch.rand(4, 5) * 2 - 1
        revised = adjust_attention(heads.attention, action, 0.4, heads.mask)
        others = [j for j in range(4) if j != k]
        assert torch.allclose(revised[:, others], heads.attention[:, others], atol=1e-6)  # only array k moves
        assert torch.allclose(revised.sum(-1), torch.ones(4, 4), atol=1e-6)  # each renormalised on its own
        assert not torch.allclose(revised[:, k], heads.attention[:, k])
        new = revise_matrices(matrices.flatten(1, 2), heads.attention, revised).view_as(matrices)
        layer, head = divmod(k, 2)
        for j in others:
            assert torch.allclose(new[:, j // 2, j % 2], matrices[:, j // 2, j % 2], atol=1e-6)
        changed = new[:, layer, head]
        assert not torch.allclose(changed, matrices[:, layer, head])
        assert torch.allclose(changed.sum(-1)[batch.mask], torch.ones(int(batch.mask.sum())), atol=1e-5)
        assert torch.all(changed.masked_select(~batch.mask.unsqueeze(1).expand_as(changed)) == 0)
    # the revised weights are what the encoder mixes with: zeroing token 0 in head (1, 0) changes the output
    # (example 2 is one token long, so it is left out: eq. 4 never empties an array)
    revised = heads.attention.clone()
    longer = [0, 1, 3]
    revised[longer, 2, 0] = 0
    revised[:, 2] = revised[:, 2] / revised[:, 2].sum(-1, keepdim=True)
    new = revise_matrices(matrices.flatten(1, 2), heads.attention, revised).view_as(matrices)
    assert torch.all(new[longer, 1, 0, :, 0] <= matrices[longer, 1, 0, :, 0])  # token 0 loses weight at every query
    assert torch.allclose(new[:, 1, 1], matrices[:, 1, 1]) and torch.allclose(new[:, 0], matrices[:, 0])
    assert not torch.allclose(network.predict(encoding, [revised, pooling.attention]), network(batch))


def test_transformer_head_revision_by_hand():
    # one head, two tokens: A = [[0.5, 0.5], [0.2, 0.8]] → ᾱ = [0.35, 0.65]
    a = torch.tensor([[[[0.5, 0.5], [0.2, 0.8]]]])
    original = torch.tensor([[[0.35, 0.65]]])
    assert torch.allclose(column_mean(a, torch.tensor([[True, True]])), original)
    # a small change, ᾱ′ = [0.40, 0.60]: every row shifts by [+0.05, −0.05], the column mean is ᾱ′
    new = revise_matrices(a, original, torch.tensor([[[0.40, 0.60]]]))
    assert torch.allclose(new[0, 0], torch.tensor([[0.55, 0.45], [0.25, 0.75]]), atol=1e-6)
    assert (new - a).abs().max() <= 0.05 + 1e-6  # moved by no more than the array did
    # a large one, ᾱ′ = [0.7, 0.3]: shift [+0.35, −0.35]; row 0 → [0.85, 0.15]; row 1 → [0.55, 0.45]
    new = revise_matrices(a, original, torch.tensor([[[0.7, 0.3]]]))
    assert torch.allclose(new[0, 0], torch.tensor([[0.85, 0.15], [0.55, 0.45]]), atol=1e-6)
    # ᾱ′ = [1, 0]: row 0 → [1.15, −0.15] clips to [1.15, 0], renormalised to [1, 0]; row 1 → [0.85, 0.15]
    new = revise_matrices(a, original, torch.tensor([[[1.0, 0.0]]]))
    assert torch.allclose(new[0, 0], torch.tensor([[1.0, 0.0], [0.85, 0.15]]), atol=1e-6)
    assert torch.equal(revise_matrices(a, original, original), a)  # no revision, no change, to the bit


def test_transformer_revision_is_bounded_by_the_action():
    """A zero action leaves the output unchanged; a small action on a tiny column changes it a little
    (the earlier column-ratio form turned ᾱ′/ᾱ on a tiny column into a factor of thousands)."""
    torch.manual_seed(0)
    network = build_network("transformer", 30, 2, embedding_dim=8, hidden_size=8, attention_size=8,
                            classifier_hidden=8, feedforward_size=16, layers=2, heads=2, dropout=0.0)
    network.eval()
    batch = Batch(tokens=torch.randint(2, 30, (3, 6)), mask=torch.ones(3, 6, dtype=torch.bool), labels=torch.zeros(3, dtype=torch.long))
    encoding = network.encode(batch)
    heads, pooling = encoding.sites
    same = adjust_attention(heads.attention, torch.zeros_like(heads.attention), 0.4, heads.mask)
    assert torch.allclose(network.predict(encoding, [same, pooling.attention]), network(batch), atol=1e-6)
    tiny = heads.attention.clone()
    tiny[:, :, 0] = 1e-6  # a column that holds almost no attention
    tiny = tiny / tiny.sum(-1, keepdim=True)
    matrices = encoding.cache["matrices"].flatten(1, 2)
    nudged = adjust_attention(tiny, torch.zeros_like(tiny).index_fill_(2, torch.tensor([0]), 0.01), 0.4, heads.mask)
    change = revise_matrices(matrices, tiny, nudged) - revise_matrices(matrices, tiny, tiny)
    assert change.abs().max() <= 2 * (nudged - tiny).abs().max() + 1e-6  # β·a = 0.004 moves a weight by < 0.01
    assert (nudged - tiny).abs().max() < 0.01


def test_multi_dimensional_adjustment_by_hand():
    # α [B=1, K=1, T=4, H=2]; token 3 is padding. β = 0.4.
    alpha = torch.tensor([[[[0.5, 0.1], [0.3, 0.6], [0.2, 0.3], [0.0, 0.0]]]])
    action = torch.tensor([[[[0.5, -1.0], [-1.0, 0.5], [0.0, 0.0], [1.0, 1.0]]]])
    mask = torch.tensor([[[True, True, True, False]]])
    revised = adjust_attention(alpha, action, 0.4, mask)
    # dim 0: α* = [0.7, -0.1, 0.2] → [0.7, 0, 0.2] / 0.9;  dim 1: α* = [-0.3, 0.8, 0.3] → [0, 0.8, 0.3] / 1.1
    expected = torch.tensor([[[[7 / 9, 0.0], [0.0, 8 / 11], [2 / 9, 3 / 11], [0.0, 0.0]]]])
    assert torch.allclose(revised, expected, atol=1e-6)
    # a dimension whose every entry would be non-positive keeps its original weights
    all_down = torch.tensor([[[[0.0, -1.0], [0.0, -1.0], [0.0, -1.0], [0.0, 0.0]]]])
    kept = adjust_attention(alpha, all_down, 1.0, mask)
    assert torch.allclose(kept[..., 1], alpha[..., 1]) and torch.allclose(kept[..., 0], alpha[..., 0])


def test_disan_context_is_per_dimension_weighted_sum():
    network = make("disan").eval()
    batch = text_batch()
    encoding = network.encode(batch)
    (site,) = encoding.sites
    assert site.attention.shape == (4, 1, 5, SMALL["hidden_size"])  # H == Dh
    assert torch.allclose(site.attention.sum(dim=2), torch.ones(4, 1, SMALL["hidden_size"]), atol=1e-5)
    # weights differ across dimensions (it is not one weight per token broadcast)
    assert not torch.allclose(site.attention[0, 0, :, 0], site.attention[0, 0, :, 1])
    revised = adjust_attention(site.attention, torch.rand_like(site.attention) * 2 - 1, 0.4, site.mask)
    hidden = encoding.cache["hidden"]
    manual = network.classifier((revised[:, 0] * hidden).sum(dim=1))  # c_k = Σ_t α′_{t,k} h_{t,k}
    assert torch.allclose(network.predict(encoding, [revised]), manual, atol=1e-6)


def test_han_padding_sentences_give_zero_rows_and_no_nan():
    network = make("han").eval()
    batch = document_batch()
    assert batch.tokens.shape == (3, 3, 5)
    words, sentences = network.encode(batch).sites
    assert words.attention.shape == (3, 3, 5) and sentences.attention.shape == (3, 1, 3)
    assert torch.all(words.attention[1, 1:] == 0)  # document 1 has one sentence
    assert sentences.mask[1, 0].tolist() == [True, False, False]
    revised = adjust_attention(words.attention, torch.ones_like(words.attention), 0.4, words.mask)
    assert torch.all(revised[1, 1:] == 0) and torch.isfinite(revised).all()


def test_single_site_adds_the_array_axis_to_every_tensor():
    mask = torch.tensor([[True, True, False]])
    alpha = torch.tensor([[0.25, 0.75, 0.0]])
    words, hidden, query = torch.randn(1, 3, 4), torch.randn(1, 3, 5), torch.randn(1, 6)
    site = AttentionSite.single(words, hidden, query, mask, alpha, name="one")
    site.validate()
    assert (site.word_vectors.shape, site.hidden_states.shape, site.query.shape) == ((1, 1, 3, 4), (1, 1, 3, 5), (1, 1, 6))
    assert site.mask.tolist() == [[[True, True, False]]] and site.attention.tolist() == [[[0.25, 0.75, 0.0]]]
    assert (site.arrays, site.name, site.multi_dimensional) == (1, "one", False)
    per_dimension = AttentionSite.single(words, hidden, query, mask, torch.full((1, 3, 5), 0.5))
    assert per_dimension.attention.shape == (1, 1, 3, 5) and per_dimension.multi_dimensional


def test_ian_exposes_context_and_aspect_sites_with_their_own_queries():
    network = make("ian").eval()
    batch = aspect_batch()
    context, aspect = network.encode(batch).sites
    assert (context.name, aspect.name) == ("context", "aspect")
    assert context.mask.shape[-1] == batch.tokens.shape[1] and aspect.mask.shape[-1] == batch.extras["aspect"].shape[1]
    assert not torch.allclose(context.query, aspect.query)


def test_networks_reject_the_wrong_kind_of_batch():
    with pytest.raises(ValueError, match="aspect"):
        make("atae-lstm").encode(text_batch())
    with pytest.raises(ValueError, match="documents"):
        make("han").encode(text_batch())
    with pytest.raises(ValueError, match="flat text"):
        make("transformer").encode(document_batch())
    with pytest.raises(ValueError, match="divisible"):
        build_network("transformer", vocab_size=20, num_classes=2, hidden_size=10, heads=3)


# --- data ---------------------------------------------------------------------------------


def test_collate_pads_aspects_and_documents():
    batch = aspect_batch()
    assert set(batch.extras) == {"aspect", "aspect_mask", "aspect_span"}
    assert batch.extras["aspect_span"].shape == (4, 2)
    assert batch.extras["aspect_mask"].sum(1).tolist() == [1, 2, 1, 2]
    doc = document_batch()
    assert doc.mask.sum(dim=(1, 2)).tolist() == [9, 1, 7]
    with pytest.raises(ValueError, match="mixes"):
        collate([EncodedExample([2], 0), EncodedExample([2], 0, sentences=[[2]])])


def test_document_truncation_is_counted():
    vocab = Vocabulary.build([["a", "b", "c"]])
    doc = TextExample(["a"] * 9, 0, {"sentences": [["a", "b", "c", "a"], ["b"], ["c", "c"], ["a", "a", "a"]]})
    encoded, report = encode_examples([doc], vocab, max_length=100, max_sentences=3, max_sentence_length=2)
    assert len(encoded[0].sentences) == 3 and [len(s) for s in encoded[0].sentences] == [2, 1, 2]
    assert (report.documents_truncated, report.sentences_truncated) == (1, 1)
    assert "1 cut to the max sentences" in report.describe("train")


SEMEVAL_COUNTS = {
    "semeval14-laptop": ("semeval14", 2328, 638),
    "semeval14-restaurant": ("semeval14", 3608, 1120),
    "semeval15-restaurant": ("semeval15", 1204, 542),
    "semeval16-restaurant": ("semeval16", 1748, 616),
}


@pytest.mark.parametrize("name", sorted(SEMEVAL_COUNTS))
def test_semeval_loaders_exact_counts_and_aspect_positions(name):
    subdir, n_train, n_test = SEMEVAL_COUNTS[name]
    data = load_dataset(name, data_dir=require_data(subdir))
    assert data.provides == "aspect" and data.num_classes == 3
    assert len(data.train) + len(data.dev) == n_train and len(data.test) == n_test
    assert abs(len(data.dev) - n_train / 10) <= 2
    for ex in data.train + data.dev + data.test:
        start, end = ex.extras["aspect_span"]
        assert ex.tokens[start:end] == ex.extras["aspect"]
        assert ex.label in (0, 1, 2)
    assert set(Counter(ex.label for ex in data.test)) == {0, 1, 2}


def test_semeval14_laptop_first_example_by_hand():
    folder = require_data("semeval14")
    from drga.data.aspects import read_aspect_file

    first = read_aspect_file(folder / "Laptops_Train.xml.seg")[0]
    assert first.tokens[:10] == "i charge it at night and skip taking the cord".split()
    assert first.extras["aspect"] == ["cord"] and first.extras["aspect_span"] == [9, 10] and first.label == 1


def test_ag_news_seeded_split_of_the_test_file():
    data = load_dataset("ag-news", data_dir=require_data("ag_news"), split_seed=1234)
    rows = data.train + data.dev + data.test
    assert len(rows) == 7600 and Counter(ex.label for ex in rows) == {0: 1900, 1: 1900, 2: 1900, 3: 1900}
    assert (len(data.train), len(data.dev), len(data.test)) == (6080, 760, 760)
    assert "TEST file" in data.notes[0] and "split seed 1234" in data.notes[0]
    again = load_dataset("ag-news", data_dir=require_data("ag_news"), split_seed=1234)
    assert [e.tokens for e in again.test] == [e.tokens for e in data.test]


def test_ag_news_uses_the_official_pair_when_present(tmp_path):
    rows = [f'"{c}","Title {i}","Some words here \\\\ about #36;5 things {i}"' for i in range(10) for c in (1, 2, 3, 4)]
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "test.csv").write_text("\n".join(rows[:8]) + "\n")
    data = load_dataset("ag-news", data_dir=tmp_path)
    assert len(data.test) == 8 and len(data.train) + len(data.dev) == 40
    assert "official train.csv" in data.notes[0]
    assert "$" in data.test[0].tokens and "\\" not in data.test[0].tokens


def test_movie_reviews_documents():
    data = load_dataset("movie-reviews", data_dir=require_data("movie_reviews"))
    docs = data.train + data.dev + data.test
    assert data.provides == "document" and len(docs) == 2000
    assert Counter(d.label for d in docs) == {0: 1000, 1: 1000}
    assert (len(data.train), len(data.dev), len(data.test)) == (1600, 200, 200)
    d = docs[0]
    assert sum(len(s) for s in d.extras["sentences"]) == len(d.tokens)


@pytest.mark.parametrize(
    "net,dataset,folder",
    [("atae-lstm", "subj", "subj"), ("ian", "mr", "mr"), ("han", "subj", "subj"), ("lstm-sa", "movie-reviews", "movie_reviews"),
     ("transformer", "movie-reviews", "movie_reviews")],
)
def test_mismatched_network_and_data_is_a_clear_error(net, dataset, folder):
    config = load_config(None, [f"network.name={net}", f"data.dataset={dataset}", f"data.data_dir={require_data(folder)}"])
    with pytest.raises(ConfigError, match="needs (aspect|document|text) data"):
        prepare_data(config)


def test_text_network_may_read_aspect_data():
    config = load_config(None, ["network.name=lstm-sa", "data.dataset=semeval15-restaurant",
                                f"data.data_dir={require_data('semeval15')}"])
    data = prepare_data(config)
    assert len(data.test) == 542


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_the_k_samples_of_a_sequence_share_one_dropout_mask(name):
    """In train mode, K identical actions give identical log P(y|X): the samples differ by their
    actions alone, so the mean-of-K REINFORCE baseline cancels the network's dropout noise."""
    torch.manual_seed(0)
    network = build_network(name, vocab_size=20, num_classes=3, dropout=0.5, **SMALL).train()
    batch = BATCHES[NETWORK_INPUTS[name]]()
    encoding = network.encode(batch)
    k = 4
    revised = []
    for site in encoding.sites:
        action = torch.full((batch.size, k, *site.attention.shape[1:]), 0.3)  # the same action for every sample
        revised.append(adjust_attention(site.attention.unsqueeze(1), action, 0.4, site.mask.unsqueeze(1)).flatten(0, 1))
    output = network.predict(encoding.repeat_interleave(k), revised)
    log_likelihood = network.log_likelihood(output, batch.labels.repeat_interleave(k, dim=0)).view(batch.size, k)
    assert torch.allclose(log_likelihood, log_likelihood[:, :1].expand_as(log_likelihood), atol=1e-5)
    # the same through the rollout's two-group prediction (eq. 12 through fewer samples)
    from drga.core.rollout import predict_fewer_gradients

    grouped = predict_fewer_gradients(network, encoding, revised, k, 1)
    assert torch.allclose(grouped, output, atol=1e-5)
    # while a fresh encoding draws fresh masks: dropout is on
    assert not torch.allclose(network.predict(network.encode(batch).repeat_interleave(k), revised), output)


@pytest.mark.parametrize("name", sorted(n for n in NETWORKS if n not in PRETRAINED_TOKENIZERS))
def test_nn_module_apply_works_on_every_network(name):
    """Weight-initialisation code every PyTorch user writes: ``model.apply(init)`` (the Transformer's
    layer once defined an ``apply`` of its own, which broke it)."""
    network = build_network(name, vocab_size=20, num_classes=3, **SMALL)
    seen = []

    def init(module):
        seen.append(type(module).__name__)
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.zeros_(module.bias) if module.bias is not None else None

    assert network.apply(init) is network
    assert "Linear" in seen or "Conv1d" in seen


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_the_unknown_word_starts_at_zero(name):
    """No training token maps to <unk> (id 1) with a vocabulary of every training word: a random
    start would be a fixed random vector read by every unknown test word (docs/results/unk-effect.md)."""
    pretrained = torch.randn(20, SMALL["embedding_dim"])
    for embeddings in (None, pretrained):
        network = build_network(name, vocab_size=20, num_classes=3, embeddings=embeddings, **SMALL)
        assert torch.equal(network.embedding.weight[1], torch.zeros(SMALL["embedding_dim"]))
        assert torch.equal(network.embedding.weight[0], torch.zeros(SMALL["embedding_dim"]))
    assert torch.equal(build_network(name, vocab_size=20, num_classes=3, embeddings=pretrained, **SMALL).embedding.weight[2], pretrained[2])


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_what_the_toolkit_asks_of_a_network_are_its_members(name):
    # issue 63: no getattr(network, "embedding" | "pretrained_parameters" | "pad_id") outside the network: members with defaults
    network = make(name)
    assert network.word_embedding() is network.embedding and isinstance(network.embedding, torch.nn.Embedding)
    assert list(network.pretrained_parameters()) == [] and network.pad_id == 0
    from drga.tasks.classification.data import subword_tokenizer

    assert subword_tokenizer(name) is None and subword_tokenizer("hf-encoder") is not None  # the registration's tokenizer
