"""``drga analyze`` on the other families: documents (HAN) and aspect networks (ATAE-LSTM, IAN).

Each family is trained once per module on a small synthetic data set written in the real
format (SemEval's three-line ``$T$`` files, the movie-review folders of one sentence per line):
a keyword ('good', 'okay', 'bad') decides the label. Known answers for the document view come
from hand-built records and an untrained HAN.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

import drga.baselines as baselines
from drga.analysis import highlighted
from drga.analysis.attention import (
    AttentionRecord,
    compute_records,
    remove_token,
    sentence_sites,
    squash_sentences,
    squash_words,
    token_sites,
    token_weights,
)
from drga.analysis.saliency import gradient_saliency, without_token
from drga.analysis.tracking import read_tracked
from drga.cli import main
from drga.config import load_config
from drga.data import EncodedExample, Vocabulary, collate
from drga.trainer import Trainer

PNG = b"\x89PNG\r\n\x1a\n"


def write_aspect_data(root, count=150, seed=0):
    """semeval14/Laptops_{Train,Test_Gold}.xml.seg: random words, an aspect term, a polarity keyword."""
    rng = random.Random(seed)
    folder = root / "semeval14"
    folder.mkdir(parents=True)
    cue = {-1: "bad", 0: "okay", 1: "good"}

    def lines(n):
        out = []
        for _ in range(n):
            words = [f"w{rng.randint(0, 25)}" for _ in range(rng.randint(4, 8))]
            polarity = rng.choice([-1, 0, 1])
            words.insert(rng.randrange(len(words) + 1), cue[polarity])
            words.insert(rng.randrange(len(words) + 1), "$T$")
            out += [" ".join(words), rng.choice(["battery", "screen", "battery life", "price"]), str(polarity)]
        return "\n".join(out) + "\n"

    (folder / "Laptops_Train.xml.seg").write_text(lines(count))
    (folder / "Laptops_Test_Gold.xml.seg").write_text(lines(count // 5))


def write_documents(root, count=100, seed=0):
    """movie_reviews/{neg,pos}/*.txt: 2–5 sentences of random words, one holding 'good' or 'bad'."""
    rng = random.Random(seed)
    for k in range(count):
        label = k % 2
        sentences = [[f"w{rng.randint(0, 25)}" for _ in range(rng.randint(3, 6))] for _ in range(rng.randint(2, 5))]
        where = rng.randrange(len(sentences))
        sentences[where].insert(rng.randrange(len(sentences[where]) + 1), "good" if label else "bad")
        folder = root / "movie_reviews" / ("pos" if label else "neg")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"cv{k:03d}.txt").write_text("\n".join(" ".join(s) for s in sentences) + "\n")


FAMILIES = {"atae-lstm": "semeval14-laptop", "ian": "semeval14-laptop", "han": "movie-reviews"}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    write_aspect_data(root)
    write_documents(root)
    return root


@pytest.fixture(scope="module")
def trained(data_root, tmp_path_factory):
    """net → finished tiny run folder (3 tracked dev examples each)."""
    logdir = tmp_path_factory.mktemp("runs")
    torch.set_num_threads(1)
    runs = {}
    for net, dataset in FAMILIES.items():
        items = {
            "network.name": net, "data.dataset": dataset, "data.data_dir": str(data_root), "data.batch_size": 16,
            "network.embedding_dim": 12, "network.hidden_size": 12, "network.attention_size": 8,
            "network.classifier_hidden": 8, "network.dropout": 0.0, "agent.hidden_sizes": "12,12",
            "train.pretrain_epochs": 2, "train.agent_epochs": 1, "train.cotrain_epochs": 1, "train.lr": 0.01,
            "train.track_examples": 3, "run.logdir": str(logdir), "run.progress": False, "run.threads": 1,
        }
        config = load_config(None, [f"{k}={v}" for k, v in items.items()])
        Trainer(config, log=lambda _: None).run()
        runs[net] = logdir / f"{dataset}-{net}-seed0"
    return runs


def analyze(run_dir, data_root, out, *extra):
    return main(["analyze", str(run_dir / "cotrain_best.pt"), "--data-dir", str(data_root), "--out", str(out),
                 "--saliency-examples", "6", "--faithfulness-examples", "6", "--num-examples", "3", "--min-count", "2",
                 "--no-progress", *extra])


# --- the document view: known answers ---------------------------------------------------------


def document_record(words, gamma, revised=None, revised_gamma=None, lengths=(2, 3)):
    tokens = [f"t{i}" for i in range(sum(lengths))]
    return AttentionRecord(
        0, list(range(2, 2 + len(tokens))), tokens, 0, np.array(words, float), None if revised is None else np.array(revised, float),
        np.array([0.5, 0.5]), np.array([0.5, 0.5]), sentence_lengths=list(lengths), sentence_original=np.array(gamma, float),
        sentence_revised=None if revised_gamma is None else np.array(revised_gamma, float),
    )


def test_document_record_spans_and_weights():
    r = document_record([0.5, 0.5, 0.2, 0.2, 0.6], [0.4, 0.6])
    assert r.is_document and r.sentence_spans() == [(0, 2), (2, 5)]
    assert np.allclose(r.document_weights(), [0.2, 0.2, 0.12, 0.12, 0.36])  # ω = γ_s·α_st
    assert r.document_weights().sum() == pytest.approx(1.0)


def test_highlighted_counts_documents_per_sentence_and_per_document():
    # sentence 1: α (0.9, 0.1) → N 1 of 2; sentence 2: (0.2, 0.2, 0.6) → N 3 of 3; γ (0.4, 0.6) → N 2 of 2
    r = document_record([0.9, 0.1, 0.2, 0.2, 0.6], [0.4, 0.6], [0.5, 0.5, 0.0, 0.1, 0.9], [0.1, 0.9])
    rows = highlighted.count_all([r], 0.85)
    assert [(x["sentence"], x["length"], x["n_original"], x["n_revised"]) for x in rows] == [(0, 2, 1, 2), (1, 3, 3, 1)]
    sentences = highlighted.count_sentence_level([r], 0.85)
    assert [(x["length"], x["n_original"], x["n_revised"]) for x in sentences] == [(2, 2, 1)]
    # the trainer's N/L: the mean over the two word arrays and the sentence array
    assert highlighted.trainer_fraction(rows, sentences, "n_original") == pytest.approx((1 / 2 + 3 / 3 + 2 / 2) / 3)
    assert highlighted.trainer_fraction(rows, sentences, "n_revised") == pytest.approx((2 / 2 + 1 / 3 + 1 / 2) / 3)


def test_removing_a_word_renormalises_only_its_sentence():
    words = torch.tensor([[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]])  # [B=1, S=2, T=3]
    removed = remove_token([words], [0], torch.tensor([1]), arrays=torch.tensor([1]))[0]
    assert torch.allclose(removed[0, 1], torch.tensor([0.2 / 0.7, 0.0, 0.5 / 0.7]))
    assert torch.equal(removed[0, 0], words[0, 0])  # the other sentence is untouched, not even renormalised


def test_without_token_drops_empty_sentences_and_moves_the_aspect_span():
    document = EncodedExample([5, 6, 7, 8], 1, {}, [[5], [6, 7, 8]])
    assert without_token(document, 0).sentences == [[6, 7, 8]]
    assert without_token(document, 2).sentences == [[5], [6, 8]] and without_token(document, 2).ids == [5, 6, 8]
    aspect = EncodedExample([3, 4, 5, 6], 0, {"aspect": [4, 5], "aspect_span": [1, 3]})
    assert without_token(aspect, 0).extras["aspect_span"] == [0, 2]
    assert without_token(aspect, 2).extras["aspect_span"] == [1, 2]  # a token of the aspect itself
    assert without_token(aspect, 3).extras["aspect_span"] == [1, 3]


def _tiny(net):
    torch.manual_seed(0)
    return baselines.build_network(net, vocab_size=30, num_classes=2, embedding_dim=8, hidden_size=8, attention_size=8,
                                   classifier_hidden=8, dropout=0.0).eval()


def test_document_token_view_of_a_han():
    network = _tiny("han")
    batch = collate([EncodedExample([2, 3, 4, 5, 6], 0, {}, [[2, 3], [4, 5, 6]]), EncodedExample([7, 8], 1, {}, [[7, 8]])])
    with torch.no_grad():
        encoding = network.encode(batch)
    words, upper = token_sites(encoding, batch), sentence_sites(encoding, batch)
    assert [encoding.sites[i].name for i in words] == ["words"] and [encoding.sites[i].name for i in upper] == ["sentences"]
    alpha = squash_words(encoding.attention, encoding, words)  # [B, S, T]
    assert torch.allclose(alpha.sum(dim=-1), torch.tensor([[1.0, 1.0], [1.0, 0.0]]), atol=1e-6)  # a padding sentence: 0
    gamma = squash_sentences(encoding.attention, encoding, upper)
    assert torch.allclose(gamma.sum(dim=-1), torch.ones(2), atol=1e-6) and gamma[1, 1] == 0
    omega = token_weights(encoding.attention, encoding, batch, words)
    assert torch.allclose(omega.sum(dim=(1, 2)), torch.ones(2), atol=1e-6)
    vocab = Vocabulary(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, 30)])
    records = compute_records(network, [EncodedExample([2, 3, 4, 5, 6], 0, {}, [[2, 3], [4, 5, 6]])], vocab)
    r = records[0]
    assert r.tokens == ["w2", "w3", "w4", "w5", "w6"] and r.sentence_lengths == [2, 3]
    assert r.original[:2].sum() == pytest.approx(1.0) and r.original[2:].sum() == pytest.approx(1.0)
    assert np.allclose(r.sentence_original, gamma[0].numpy(), atol=1e-6)
    saliency, attention = gradient_saliency(network, batch, "net-only")
    assert saliency.shape == batch.tokens.shape and torch.all(saliency[~batch.mask] == 0)
    assert torch.allclose(attention, omega, atol=1e-6)


def test_saliency_takes_the_sentence_vectors_not_the_aspect_vectors():
    network = _tiny("atae-lstm")
    # aspect term as long as the sentence: shape alone cannot tell the two lookups apart
    batch = collate([EncodedExample([2, 3, 4], 0, {"aspect": [5, 6, 7], "aspect_span": [0, 3]})])
    with torch.no_grad():
        network.embedding.weight[3] = 0.0  # the sentence's middle word has a zero vector
    saliency, _ = gradient_saliency(network, batch, "net-only")
    assert saliency[0, 1] == 0.0 and saliency[0, 0] > 0


# --- the trained runs: every output -----------------------------------------------------------


def test_analyze_han_writes_every_applicable_output(trained, data_root, tmp_path, capsys):
    run_dir = trained["han"]
    out = tmp_path / "han"
    assert analyze(run_dir, data_root, out, "--reference", str(run_dir / "baseline_best.pt")) == 0, capsys.readouterr().err
    for name in ("attention_maps.html", "transitions.md", "highlighted.md", "highlighted.csv", "modified_words.csv",
                 "explainability.csv", "saliency.csv", "faithfulness.md", "summary.md"):
        assert (out / name).stat().st_size > 0, name
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["attention_maps.png", "explainability.png", "highlighted.png", "modified_words.png", "saliency.png", "transitions.png"]
    assert all(p.read_bytes()[:8] == PNG and p.stat().st_size < 300_000 for p in out.glob("*.png"))
    summary = json.loads((out / "summary.json").read_text())
    assert "document_rule" in summary and any("token polarity skipped" in n for n in summary["notes"])
    assert not (out / "polarity_snapshot.csv").exists()
    assert "Not applicable" in (out / "summary.md").read_text()
    # explainability at both levels, both modes
    assert set(summary["explainability"]) == {"original", "revised", "sentences-original", "sentences-revised"}
    assert set(summary["saliency"]) == {"net-only", "with-agent"}
    # highlighted: word level per sentence, sentence level per document, and the trainer's N/L, which
    # must equal what the trainer's evaluation logged for this checkpoint (an end-to-end check)
    counts = summary["highlighted"]
    results = json.loads((run_dir / "results.json").read_text())["results"]["DRGA (co-trained)"]
    assert counts["trainer_fraction_original"] == pytest.approx(results["test_net-only"]["highlighted_fraction"], abs=1e-5)
    assert counts["trainer_fraction_revised"] == pytest.approx(results["test_with-agent"]["highlighted_fraction"], abs=1e-5)
    assert counts["sentence_level"]["sentences"] == summary["sentences"]  # one sentence-level row per document
    assert counts["sentences"] > summary["sentences"]  # one word-level row per sentence
    assert "mean_n_reference" in counts and "mean_n_reference" in counts["sentence_level"]
    page = (out / "attention_maps.html").read_text()
    assert "sentence 1" in page and "γ′" in page
    tracked = read_tracked(run_dir)
    assert all("sentence_lengths" in e for e in tracked["examples"]) and tracked["polarity_tokens"] == []
    assert "top sentences under γ" in (out / "transitions.md").read_text()
    rows = (out / "highlighted.csv").read_text().splitlines()
    assert rows[0].startswith("level,index,sentence,length") and rows[-1].startswith("sentences,")


def test_han_explainability_removes_the_top_word_and_sentence_of_the_records(trained, data_root):
    from drga.analysis.attention import load_inputs
    from drga.analysis.explainability import removal_rows

    inputs = load_inputs(trained["han"] / "cotrain_best.pt", data_dir=str(data_root))
    model = inputs.model
    records = compute_records(model.network, inputs.examples, model.vocab, model.policy, inputs.beta)
    rows = removal_rows(model.network, inputs.examples, model.vocab, model.policy, inputs.beta, seed=1)
    for row in rows:
        r = records[row["index"]]
        revised = row["mode"].endswith("revised")
        if row["mode"].startswith("sentences-"):
            gamma = r.sentence_revised if revised else r.sentence_original
            assert row["top"] == int(np.argmax(gamma)) and row["random"] != row["top"]
            assert row["delta_alpha"] == pytest.approx(gamma[row["top"]] - gamma[row["random"]], abs=1e-6)
        else:
            omega = r.document_weights(revised)
            assert row["top"] == int(np.argmax(omega)) and row["top_token"] == r.tokens[row["top"]]
            assert row["random"] != row["top"] and row["random_token"] == r.tokens[row["random"]]
            assert row["delta_alpha"] == pytest.approx(omega[row["top"]] - omega[row["random"]], abs=1e-6)
    assert {row["mode"] for row in rows} == {"original", "revised", "sentences-original", "sentences-revised"}


@pytest.mark.parametrize("net", ["atae-lstm", "ian"])
def test_analyze_aspect_networks_writes_every_output(net, trained, data_root, tmp_path, capsys):
    out = tmp_path / net
    assert analyze(trained[net], data_root, out) == 0, capsys.readouterr().err
    for name in ("attention_maps.html", "transitions.md", "highlighted.md", "modified_words.csv", "explainability.csv",
                 "saliency.csv", "polarity_snapshot.csv", "polarity_tracking.csv", "faithfulness.md", "summary.md"):
        assert (out / name).stat().st_size > 0, name
    assert len(list(out.glob("*.png"))) == 8
    assert all(p.read_bytes()[:8] == PNG and p.stat().st_size < 300_000 for p in out.glob("*.png"))
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["explainability"]) == {"original", "revised"} and set(summary["saliency"]) == {"net-only", "with-agent"}
    assert not summary["notes"]
    page = (out / "attention_maps.html").read_text()
    assert "aspect: " in page
    # IAN's second array (over the aspect term) is drawn in the maps; ATAE-LSTM has none
    assert ("attention over the aspect term" in page) == (net == "ian")
    # N/L as the trainer logs it (eq. 5 averages over every array): ATAE-LSTM has one array; for IAN
    # the context and aspect arrays are counted apart and averaged for the check
    counts = summary["highlighted"]
    results = json.loads((trained[net] / "results.json").read_text())["results"]["DRGA (co-trained)"]
    key = "trainer_fraction_{}" if net == "ian" else "mean_fraction_{}"
    assert counts[key.format("original")] == pytest.approx(results["test_net-only"]["highlighted_fraction"], abs=1e-5)
    assert counts[key.format("revised")] == pytest.approx(results["test_with-agent"]["highlighted_fraction"], abs=1e-5)
    rows = (out / "highlighted.csv").read_text().splitlines()
    assert len(rows) == (2 if net == "ian" else 1) * summary["sentences"] + 1
    assert ("aspect_level" in counts) == (net == "ian")


def test_ian_site_option_names_the_sites_that_span_the_sentence(trained, data_root, tmp_path, capsys):
    # only what the highlighted analysis reads: the options of the analyses --only leaves out are refused (issue 54)
    code = main(["analyze", str(trained["ian"] / "cotrain_best.pt"), "--data-dir", str(data_root), "--out", str(tmp_path / "x"),
                 "--no-progress", "--only", "highlighted", "--site", "aspect"])
    assert code == 2 and "no attention site named 'aspect' spans the sentence's tokens; choose one of: context" in capsys.readouterr().err
