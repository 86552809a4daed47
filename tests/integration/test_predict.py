"""Classifying new text with a trained checkpoint: ``drga predict`` and ``drga.load``, in both modes,
raw text through the tokenizer the training data went through."""

from __future__ import annotations

import io
import json
import random
import re

import pytest
import torch

import drga
import drga.baselines as baselines
from drga.analysis.attention import compute_records
from drga.checkpoint_format import FORMAT_VERSION, CheckpointError, save_atomic
from drga.cli import main
from drga.data import TextExample, encode_examples
from drga.errors import UserError
from tests.tiny_network import TinyAttentionNet

GOOD = ["Good", "GOOD", "good!", "good,"]
BAD = ["Bad", "BAD", "bad!", "bad,"]
FILLER = ["it's", "the", "film", "plot", "isn't", "a", "e-mail", "about", "the", "cast", "."]


def raw_texts(count: int, seed: int) -> list[tuple[str, str]]:
    """(label, raw text): a few filler words around one keyword, with capitals and punctuation attached."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.choice(["pos", "neg"])
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 7))]
        words.insert(rng.randrange(len(words) + 1), rng.choice(GOOD if label == "pos" else BAD))
        rows.append((label, " ".join(words)))
    return rows


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny network retrofitted on a raw-text TSV folder through ``drga train``: its folder and its test rows."""
    folder = tmp_path_factory.mktemp("predict")
    data = folder / "data"
    data.mkdir()
    # the test rows without a keyword leave the network to guess: an accuracy below 1, worth comparing
    guesses = [("pos" if i % 2 else "neg", " ".join(FILLER[i : i + 4])) for i in range(6)]
    splits = {"train": raw_texts(120, 0), "dev": raw_texts(24, 1), "test": raw_texts(24, 2) + guesses}
    for name, rows in splits.items():
        (data / f"{name}.tsv").write_text("".join(f"{label}\t{text}\n" for label, text in rows))
    settings = ["network.embedding_dim=12", "agent.hidden_sizes=16,16", "train.pretrain_epochs=2", "train.agent_epochs=1",
                "train.cotrain_epochs=2", "train.lr=0.01", "data.batch_size=16"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
        argv = ["--quiet", "train", "--dataset", "tsv", "--tsv", str(data), "--net", "tiny", "--logdir", str(folder / "runs"),
                "--no-progress", *(arg for setting in settings for arg in ("--set", setting))]
        assert main(argv) == 0
    return folder / "runs" / "tsv-tiny-seed0", splits["test"]


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def predict_cli(argv, text, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = main(["predict", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_predicting_the_test_file_gives_the_accuracy_evaluate_reports_in_both_modes(run, capsys):
    folder, test_rows = run
    checkpoint = folder / "cotrain_best.pt"
    assert main(["evaluate", str(checkpoint), "--split", "test"]) == 0
    reported = dict(re.findall(r"(net-only|with-agent)\s+accuracy ([0-9.]+)", capsys.readouterr().out))
    model = drga.load(checkpoint)
    texts, labels = [text for _, text in test_rows], [label for label, _ in test_rows]
    for mode in ("net-only", "with-agent"):
        predicted = model.predict(texts, mode)
        accuracy = sum(p == y for p, y in zip(predicted, labels)) / len(labels)
        assert accuracy == pytest.approx(float(reported[mode]), abs=1e-4), mode  # evaluate prints 4 decimals
    assert float(reported["net-only"]) < 1.0


def test_raw_text_is_split_lowercased_and_scored_as_the_network_computes_it_by_hand(run, monkeypatch, capsys):
    folder, _ = run
    checkpoint = folder / "cotrain_best.pt"
    code, out, err = predict_cli([str(checkpoint), "--json", "--mode", "net-only"], "It's a GOOD film, isn't it?\n", monkeypatch, capsys)
    assert code == 0, err
    row = json.loads(out)
    # the training texts' tokenizer: words with inner apostrophes, punctuation apart, lowercased
    assert row["tokens"] == ["it's", "a", "good", "film", ",", "isn't", "it", "?"]
    assert row["unknown"] == [6, 7]  # "it" and "?" never occur in training ("it's" does): <unk>, as in training
    model = drga.load(checkpoint)
    net = model.network
    ids = torch.tensor([model.vocab.stoi.get(token, 1) for token in row["tokens"]])
    with torch.no_grad():  # TinyAttentionNet by hand: α = softmax(tanh(W e + b)·q), P = softmax(C Σ α h)
        hidden = torch.tanh(net.transform(net.embedding(ids)))
        alpha = torch.softmax(hidden @ net.query, dim=0)
        probabilities = torch.softmax(net.classifier(alpha @ hidden), dim=0)
    assert len(row["attention"]) == 1 and row["attention"][0] == pytest.approx(alpha.tolist(), abs=1e-5)
    assert [row["probabilities"][name] for name in model.label_names] == pytest.approx(probabilities.tolist(), abs=1e-5)
    assert row["label"] == model.label_names[int(probabilities.argmax())]
    assert "net-only" in err and "2 of 8 tokens not in its vocabulary" in err


def test_with_agent_mode_is_the_agents_deterministic_revision_and_the_default(run, monkeypatch, capsys):
    folder, test_rows = run
    texts = [text for _, text in test_rows[:6]]
    model = drga.load(folder / "cotrain_best.pt")
    predictions = model.predictions(texts)  # the default: the checkpoint has a trained agent
    examples, _ = encode_examples([TextExample(model.tokenize(text), 0) for text in texts], model.vocab, model.data.max_length)
    records = compute_records(model.network, examples, model.vocab, model.policy, model.strength().detach())
    for prediction, record in zip(predictions, records):
        assert prediction.attention[0] == pytest.approx(record.revised.tolist(), abs=1e-5)
        assert list(prediction.probabilities.values()) == pytest.approx(record.probs_revised.tolist(), abs=1e-5)
        assert sum(prediction.attention[0]) == pytest.approx(1.0, abs=1e-5)
    net_only = model.attention(texts, mode="net-only")
    assert [weights for _, weights in net_only] != [prediction.attention for prediction in predictions]  # the agent moved α
    code, out, _ = predict_cli([str(folder / "cotrain_best.pt"), "--probabilities"], "\n".join(texts) + "\n", monkeypatch, capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 6
    for line, prediction in zip(lines, predictions):
        label, *cells = line.split("\t")
        assert label == prediction.label
        assert dict(cell.split("=") for cell in cells).keys() == {"neg", "pos"}
        assert float(dict(cell.split("=") for cell in cells)[label]) == pytest.approx(prediction.probabilities[label], abs=1e-4)


def test_one_label_per_line_and_empty_lines_are_refused_with_their_number(run, monkeypatch, capsys):
    folder, _ = run
    code, out, _ = predict_cli([str(folder / "cotrain_best.pt")], "good film\r\nBAD, bad plot\n", monkeypatch, capsys)
    assert code == 0 and out.splitlines() == ["pos", "neg"]
    code, out, err = predict_cli([str(folder / "cotrain_best.pt")], "good film\n\nbad plot\n", monkeypatch, capsys)
    assert code == 2 and out == "" and "line 2 of the input is empty" in err
    code, _, err = predict_cli([str(folder / "cotrain_best.pt")], "good film\n \t \nbad\n", monkeypatch, capsys)
    assert code == 2 and "line 2 of the input is empty" in err
    with pytest.raises(UserError, match="text 2 is empty"):
        drga.load(folder / "cotrain_best.pt").predict(["good", " "])


def test_a_checkpoint_without_an_agent_predicts_net_only(run, monkeypatch, capsys):
    folder, _ = run
    model = drga.load(folder / "pretrain_best.pt")
    assert model.default_mode == "net-only" and model.predict(["good film"]) == ["pos"]
    with pytest.raises(UserError, match="no trained agent"):
        model.predict(["good film"], mode="with-agent")
    code, _, err = predict_cli([str(folder / "pretrain_best.pt"), "--mode", "with-agent"], "good\n", monkeypatch, capsys)
    assert code == 2 and "no trained agent" in err


def test_a_translation_checkpoint_is_pointed_to_translate_by_the_classifier_loader(tmp_path):
    from drga.prediction import load as load_classifier

    path = tmp_path / "nmt.pt"
    save_atomic({"format": FORMAT_VERSION, "kind": "model", "task": "translation"}, path)
    with pytest.raises(CheckpointError, match="translation checkpoint: translate with it"):
        load_classifier(path)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_model_predicts_the_same_on_the_gpu(run):
    folder, test_rows = run
    texts = [text for _, text in test_rows]
    on_cpu = drga.load(folder / "cotrain_best.pt").predictions(texts)
    on_gpu = drga.load(folder / "cotrain_best.pt", device="cuda").predictions(texts)
    for cpu, gpu in zip(on_cpu, on_gpu):
        assert cpu.label == gpu.label
        assert list(cpu.probabilities.values()) == pytest.approx(list(gpu.probabilities.values()), abs=1e-4)
        assert cpu.attention[0] == pytest.approx(gpu.attention[0], abs=1e-4)


def test_a_batch_of_one_gives_what_the_whole_list_gives(run):
    folder, test_rows = run
    model = drga.load(folder / "cotrain_best.pt")
    texts = [text for _, text in test_rows[:5]]
    together = model.predictions(texts, batch_size=5)
    for text, expected in zip(texts, together):
        alone = model.predictions([text])[0]
        assert alone.label == expected.label and alone.attention[0] == pytest.approx(expected.attention[0], abs=1e-5)
