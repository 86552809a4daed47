"""The translation trainer end to end: every phase, resume, the CLI, and a Multi30k slice where perplexity falls."""

from __future__ import annotations

import io
import json
import math

import pytest
import torch

from drga.checkpoint_format import CheckpointError, load_checkpoint
from drga.cli import main
from drga.config import ConfigError
from drga.tasks.translation.config import load_translation_config
from drga.tasks.translation.task import token_cross_entropy
from drga.tasks.translation.trained import load_translation_model
from drga.trainer import TranslationTrainer
from tests.conftest import require_data
from tests.interrupts import ctrl_c_at_call
from tests.nmt_helpers import tiny_translation_config, write_synthetic_corpus


@pytest.mark.parametrize("net", ["seq2seq-luong", "transformer-nmt"])
def test_every_phase_runs_and_reports_perplexity_and_bleu(tmp_path, net):
    results = TranslationTrainer(tiny_translation_config(tmp_path, net), log=lambda _: None).run()
    rows = results.rows
    assert list(rows) == ["baseline (pretrain only)", "baseline (equal budget)", "agent on frozen network", "DRGA (co-trained)"]
    drga = rows["DRGA (co-trained)"]
    for mode, beam in (("net-only", False), ("with-agent", False), ("net-only", True), ("with-agent", True)):
        scores = drga.scores("test", mode, beam=beam)
        assert scores["perplexity"] > 1.0 and 0.0 <= scores["bleu"] <= 100.0 and scores["sentences"] == 40
        assert 0.0 <= scores["brevity_penalty"] <= 1.0 and scores["reference_length"] > 0
        assert (scores["attention_shift"] is None) == (mode == "net-only")
        assert 0.0 <= scores["early_stop_probability"] <= 1.0
    assert "tok:13a" in results.task_entries["bleu_signature"]
    run_dir = tmp_path / "runs" / f"parallel-{net}-seed0"
    for name in ("pretrain_best.pt", "baseline_best.pt", "agent_best.pt", "cotrain_best.pt", "last.pt", "config.toml",
                 "results.json", "source.spm.model", "translations/test.cotrain.with-agent.beam2.de"):
        assert (run_dir / name).exists(), name
    assert len((run_dir / "translations/test.cotrain.with-agent.greedy.de").read_text().splitlines()) == 40
    assert any((run_dir / "tb").iterdir())
    phases = [(h.phase, h.epoch) for h in results.history]
    assert phases == [("pretrain", 1), ("pretrain", 2), ("baseline", 1), ("baseline", 2), ("agent", 1), ("cotrain", 1)]
    cotrain = results.history[-1]
    assert {"reward", "reward_log_likelihood", "reward_penalty", "beta", "dev_with-agent_bleu", "dev_net-only_perplexity"} <= set(
        cotrain.to_dict())
    assert cotrain.train["reward_log_likelihood"] < 0 and cotrain.train["reward"] < cotrain.train["reward_log_likelihood"]
    payload = load_checkpoint(run_dir / "cotrain_best.pt")  # weights_only loading
    assert payload["task"] == "translation" and isinstance(payload["task_entries"]["source_tokenizer"], bytes)


def test_resume_reproduces_an_uninterrupted_run(tmp_path, monkeypatch):
    uninterrupted = TranslationTrainer(tiny_translation_config(tmp_path / "a"), log=lambda _: None).run()
    with ctrl_c_at_call(TranslationTrainer, "train_epoch", 4):  # during the agent phase
        TranslationTrainer(tiny_translation_config(tmp_path / "b"), log=lambda _: None).run()
    resumed = TranslationTrainer(tiny_translation_config(tmp_path / "b"), resume=True, log=lambda _: None).run()
    strip = lambda history: [{k: v for k, v in h.to_dict().items() if k != "seconds"} for h in history]  # noqa: E731
    assert strip(resumed.history) == strip(uninterrupted.history)
    for label, row in uninterrupted.rows.items():
        for mode, cell in row.modes.items():
            other = resumed.rows[label].modes[mode]
            assert (other.test, other.test_beam) == (cell.test, cell.test_beam), (label, mode)
    with pytest.raises(CheckpointError, match="nmt.beam_size"):
        TranslationTrainer(tiny_translation_config(tmp_path / "b", **{"nmt.beam_size": 3}), resume=True, log=lambda _: None)


def test_train_and_translate_from_the_command_line(tmp_path, monkeypatch, capsys):
    corpus = write_synthetic_corpus(tmp_path / "corpus")
    code = main([
        "train", "--net", "seq2seq-luong", "--dataset", "parallel", "--data-dir", str(corpus), "--logdir", str(tmp_path / "runs"),
        "--no-progress", "--set", "nmt.vocab_size=80", "--set", "network.embedding_dim=16", "--set", "network.hidden_size=16",
        "--set", "agent.hidden_sizes=8,8", "--set", "agent.samples=2", "--set", "train.pretrain_epochs=1",
        "--set", "train.agent_epochs=1", "--set", "train.cotrain_epochs=1", "--set", "nmt.final_beam=false",
    ])
    assert code == 0
    printed = capsys.readouterr().out
    assert "== test (parallel-en-de test, 40 sentences) ==" in printed and "sacrebleu: BLEU nrefs:1" in printed
    checkpoint = tmp_path / "runs" / "parallel-seq2seq-luong-seed0" / "cotrain_best.pt"
    monkeypatch.setattr("sys.stdin", io.StringIO("wort1 wort2 wort3.\n\nwort4 wort5.\n"))
    assert main(["translate", str(checkpoint), "--beam", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""  # an empty line stays empty
    assert "with-agent, beam 2" in captured.err
    assert main(["translate", str(checkpoint), "--input", str(corpus / "test.en"), "--reference", str(corpus / "test.de"),
                 "--mode", "net-only", "--beam", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 40 and "BLEU" in captured.err and "tok:13a" in captured.err
    model = load_translation_model(checkpoint)
    assert model.has_agent and model.network.net_name == "seq2seq-luong"


def test_bad_requests_are_one_line_errors(tmp_path, capsys):
    corpus = write_synthetic_corpus(tmp_path / "corpus", train=20, dev=4, test=4)
    assert main(["train", "--net", "seq2seq-luong", "--dataset", "subj", "--logdir", str(tmp_path)]) == 2
    assert "data set 'subj' is not one; choose one of: multi30k-en-de, parallel" in capsys.readouterr().err
    assert main(["train", "--net", "transformer-nmt", "--dataset", "parallel", "--data-dir", str(corpus), "--set", "nmt.beam=3"]) == 2
    assert "unknown config key 'nmt.beam'; did you mean 'nmt.beam_size'?" in capsys.readouterr().err
    (tmp_path / "broken.de").write_text("nur eine Zeile\n", encoding="utf-8")
    assert main(["train", "--net", "seq2seq-luong", "--dataset", "parallel", "--logdir", str(tmp_path),
                 "--set", f"nmt.train_files={corpus / 'val.en'},{tmp_path / 'broken.de'}", "--data-dir", str(corpus)]) == 2
    assert "val.en:2: misaligned" in capsys.readouterr().err  # the longer file and its first unpaired line
    assert main(["translate", str(tmp_path / "missing.pt")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_label_smoothing_changes_the_loss_not_the_reward():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 7)
    labels = torch.tensor([[4, 5, 3], [6, 3, 0]])
    plain = token_cross_entropy(logits, labels)
    log_probs = torch.log_softmax(logits, -1)
    expected = -(log_probs[0, 0, 4] + log_probs[0, 1, 5] + log_probs[0, 2, 3] + log_probs[1, 0, 6] + log_probs[1, 1, 3]) / 5
    assert plain.item() == pytest.approx(expected.item(), abs=1e-6)
    smoothed = token_cross_entropy(logits, labels, 0.1)
    uniform = -(log_probs.mean(-1) * (labels != 0)).sum() / 5
    assert smoothed.item() == pytest.approx(0.9 * plain.item() + 0.1 * uniform.item(), abs=1e-6)


def test_translation_defaults_per_network_and_config_files(tmp_path):
    luong = load_translation_config(None, ["network.name=seq2seq-luong"])
    transformer = load_translation_config(None, ["network.name=transformer-nmt"])
    assert luong.experiment.network.dropout == 0.3 and luong.nmt.label_smoothing == 0.0
    assert transformer.nmt.label_smoothing == 0.1 and transformer.experiment.network.layers == 3
    for name in ("nmt_luong.toml", "nmt_transformer.toml"):
        config = load_translation_config(f"experiments/configs/{name}")
        assert config.experiment.data.dataset == "multi30k-en-de"


def test_a_data_setting_only_classification_reads_is_refused_with_set_and_noted_from_a_file(tmp_path):
    # [data] is shared with classification; data.lowercase or data.min_freq would go unread by a translation run.
    # As for a setting of another data set: refused with --set, only noted from a file (one may serve a sweep of both tasks)
    from drga.tasks.translation.config import load_checked_translation_config

    with pytest.raises(ConfigError) as refused:
        load_translation_config(None, ["network.name=seq2seq-luong", "data.lowercase=false", "data.min_freq=2"])
    message = str(refused.value)
    assert message.startswith("--set data.lowercase, data.min_freq: read by classification runs only")
    assert "a translation run reads data.dataset, data.data_dir, data.split_seed, data.train_fraction" in message
    config = tmp_path / "both.toml"
    config.write_text("[data]\nlowercase = false\nmax_length = 50\n", encoding="utf-8")
    notes: list[str] = []
    read = load_checked_translation_config(config, ["network.name=seq2seq-luong"], notes.append)
    assert read.experiment.data.max_length == 50  # what translation reads is applied
    assert notes == ["not read by this run: data.lowercase: read by classification runs only; a translation run reads "
                     "data.dataset, data.data_dir, data.split_seed, data.train_fraction, data.batch_size, data.max_length of [data]"]


def test_perplexity_falls_on_a_multi30k_slice(tmp_path):
    require_data("multi30k")
    config = load_translation_config(None, [
        "network.name=seq2seq-luong", "data.dataset=multi30k-en-de", "data.train_fraction=0.03", "data.batch_size=32",
        "nmt.vocab_size=1000", "network.embedding_dim=64", "network.hidden_size=64", "train.pretrain_epochs=3",
        "train.agent_epochs=0", "train.cotrain_epochs=0", "train.patience=0", "train.lr=0.003", "nmt.dev_bleu_sentences=20",
        "nmt.select_metric=perplexity", "nmt.final_beam=false", "run.progress=false", f"run.logdir={tmp_path}",
    ])
    trainer = TranslationTrainer(config, log=lambda _: None)
    start = trainer.evaluate("dev", "net-only", bleu=False)[0].perplexity
    results = trainer.run()
    dev = [h.dev_number("net-only", "perplexity") for h in results.history]
    loss = [h.train["task_loss"] for h in results.history]
    assert start > dev[0] > dev[1] > dev[2], (start, dev)
    assert dev[-1] < 0.5 * start and loss[-1] < loss[0]
    test = results.rows["baseline (pretrain only)"].scores("test", "net-only")
    assert math.isfinite(test["perplexity"]) and test["perplexity"] < 0.5 * start
    assert json.loads((tmp_path / "multi30k-en-de-seq2seq-luong-seed0" / "results.json").read_text())["results"]


def test_evaluate_command_reports_perplexity_bleu_and_chrf_of_a_translation_checkpoint(tmp_path, capsys):
    config = tiny_translation_config(tmp_path, "transformer-nmt", **{"train.cotrain_epochs": 1})
    results = TranslationTrainer(config, log=lambda _: None).run()
    run_dir = tmp_path / "runs" / "parallel-transformer-nmt-seed0"
    capsys.readouterr()
    assert main(["evaluate", str(run_dir / "cotrain_best.pt"), "--split", "test"]) == 0
    printed = capsys.readouterr().out
    assert "transformer-nmt from phase 'cotrain', parallel-en-de test: 40 pairs" in printed
    assert "BLEU greedy" in printed and "BLEU beam2" in printed and "sacrebleu: BLEU nrefs:1" in printed
    rows = {
        line.split()[0]: [float(x) for x in line.split()[1:]]
        for line in printed.splitlines()
        if line.startswith("  net-only") or line.startswith("  with-agent")
    }
    drga = results.rows["DRGA (co-trained)"]
    for mode in ("net-only", "with-agent"):  # the numbers of the training run's final report, both searches
        ppl, bleu, chrf, bleu_beam, chrf_beam = rows[mode][:5]
        greedy, beam = drga.scores("test", mode), drga.scores("test", mode, beam=True)
        assert ppl == pytest.approx(greedy["perplexity"], abs=0.006)
        assert (bleu, chrf) == (pytest.approx(greedy["bleu"], abs=0.006), pytest.approx(greedy["chrf"], abs=0.006))
        assert (bleu_beam, chrf_beam) == (pytest.approx(beam["bleu"], abs=0.006), pytest.approx(beam["chrf"], abs=0.006))
    # A checkpoint without an agent: net-only only; --beam 1 decodes greedily only; dev split.
    assert main(["evaluate", str(run_dir / "pretrain_best.pt"), "--split", "dev", "--beam", "1"]) == 0
    printed = capsys.readouterr().out
    assert "parallel-en-de dev: 40 pairs" in printed and "this checkpoint has no trained agent" in printed
    assert "BLEU greedy" in printed and "beam" not in printed
    pretrain = results.rows["baseline (pretrain only)"].scores("dev", "net-only")
    net_only = next(line for line in printed.splitlines() if line.startswith("  net-only")).split()
    assert float(net_only[1]) == pytest.approx(pretrain["perplexity"], abs=0.006)
    assert main(["evaluate", str(run_dir / "cotrain_best.pt"), "--tsv", "x.tsv"]) == 2
    assert "--tsv applies to the tsv data set of a classification checkpoint" in capsys.readouterr().err


def test_sb3_learns_the_agent_phase_of_a_translation_run(tmp_path):
    """``agent.algorithm = "sb3-ppo"``: the runner's agent phase goes to the SB3 learner, whose
    environment walks the decoder's cross-attention token by token (envs/translation.py); the
    learned policy converts into the toolkit's and co-training continues from it."""
    config = tiny_translation_config(tmp_path, **{
        "agent.algorithm": "sb3-ppo", "agent.sb3_total_steps": 256, "agent.sb3_n_envs": 2, "agent.sb3_n_steps": 64,
        "agent.sb3_batch_size": 32,
    })
    results = TranslationTrainer(config, log=lambda _: None).run()
    agent_epochs = [r for r in results.history if r.phase == "agent"]
    assert len(agent_epochs) == 1 and agent_epochs[0].train["env_steps"] >= 256 and agent_epochs[0].train["episodes"] > 0
    assert math.isfinite(agent_epochs[0].train["reward"])
    run_dir = tmp_path / "runs" / "parallel-seq2seq-luong-seed0"
    assert (run_dir / "sb3" / "sb3-ppo-epoch1.zip").exists()
    agent_row = results.rows["agent on frozen network"]
    assert math.isfinite(agent_row.scores("test", "with-agent")["perplexity"])
    assert "DRGA (co-trained)" in results.rows


def test_revised_loss_with_one_gradient_sample_has_the_gradient_of_the_loss_over_all_samples(tmp_path):
    # train.task_loss_samples = n < K: the translation task's eq. 12 reads only the n samples that carry
    # the gradient; the gradient equals that of the label-smoothed loss over all B·K rows.
    from drga.core.rollout import rollout
    from drga.core.scoring import RewardConstants
    from drga.tasks.translation.task import TranslationTask, token_cross_entropy

    k, n = 3, 1
    config = tiny_translation_config(tmp_path, "transformer-nmt", **{"agent.samples": k, "train.task_loss_samples": n,
                                                                   "nmt.label_smoothing": 0.1, "network.dropout": 0.2})
    trainer = TranslationTrainer(config, log=lambda _: None)
    task, network, policy = trainer.task, trainer.network, trainer.policy
    assert isinstance(task, TranslationTask)
    network.train()
    batch = next(iter(trainer.train_batches))
    gradients, losses = [], []
    for shortcut in (False, True):
        torch.manual_seed(3)  # the same dropout masks and actions
        r = rollout(network, policy, batch, torch.tensor(0.4), samples=k, reward=RewardConstants(0.2, 0.2, 0.85), task_samples=n)
        labels = batch.labels.repeat_interleave(k, dim=0)
        loss = task.revised_loss(r, batch) if shortcut else token_cross_entropy(r.output, labels, 0.1)
        network.zero_grad()
        loss.backward()
        losses.append(float(loss.detach()))
        gradients.append([p.grad.clone() for p in network.parameters() if p.grad is not None])
    assert len(gradients[0]) == len(gradients[1]) > 0
    for full, kept in zip(*gradients):
        assert torch.allclose(full, kept, rtol=1e-4, atol=1e-7)
    assert losses[1] == pytest.approx(losses[0], rel=0.2)  # the kept samples' mean, close to all samples'


def test_a_translation_run_can_start_from_another_runs_pretrained_network(tmp_path):
    first = TranslationTrainer(tiny_translation_config(tmp_path / "a", **{"train.fair_baseline": "false"}), log=lambda _: None).run()
    source = tmp_path / "a" / "runs" / "parallel-seq2seq-luong-seed0" / "pretrain_best.pt"
    config = tiny_translation_config(tmp_path / "a", **{"train.init_from": str(source), "train.fair_baseline": "false",
                                                        "run.logdir": str(tmp_path / "b")})
    said: list[str] = []
    second = TranslationTrainer(config, log=said.append).run()
    assert [h.phase for h in second.history] == ["agent", "cotrain"]  # no pretraining
    assert any("pretraining skipped" in line for line in said)
    pretrain_only = "baseline (pretrain only)"  # the adopted network's row: the same network, the same scores
    assert second.rows[pretrain_only].scores("test", "net-only") == first.rows[pretrain_only].scores("test", "net-only")
    with pytest.raises(CheckpointError, match="does not fit"):  # another size
        TranslationTrainer(tiny_translation_config(tmp_path / "a", **{"train.init_from": str(source), "network.hidden_size": 20,
                                                                      "run.logdir": str(tmp_path / "c")}), log=lambda _: None)
    with pytest.raises(ConfigError, match="other subword models"):  # another vocabulary
        TranslationTrainer(tiny_translation_config(tmp_path / "a", **{"train.init_from": str(source), "nmt.vocab_size": 70,
                                                                      "run.logdir": str(tmp_path / "d")}), log=lambda _: None)
    classifier = tmp_path / "classifier.pt"
    torch.save({"net_name": "seq2seq-luong"}, classifier)
    with pytest.raises(ConfigError, match="train.init_from"):
        TranslationTrainer(tiny_translation_config(tmp_path / "a", **{"train.init_from": str(classifier),
                                                                      "run.logdir": str(tmp_path / "e")}), log=lambda _: None)
