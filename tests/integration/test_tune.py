"""`drga tune`: the --search syntax, trials scored and pruned by each epoch's dev score, the best config
file, and a study that continues from its SQLite file after an interruption.

Skipped only where Optuna is not installed and CI is unset (CI installs the tune extra).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import drga.baselines as baselines
from drga.config import ConfigError, load_config
from drga.tune.space import REWARD_SEARCH, Dimension, grid, named_choice, overrides, parse_dimension, parse_search
from tests.integration.test_trainer import write_keyword_tsv
from tests.tiny_network import TinyAttentionNet

optuna = pytest.importorskip("optuna") if not os.environ.get("CI") else __import__("optuna")
from drga.tune.study import TuneSettings, best_trial, finished_trials, tune  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


# --- the search syntax ---------------------------------------------------------------------------


def test_ranges_choices_and_log_scales_are_read_as_written():
    assert parse_dimension("reward.sqrt_l0=0.1:0.5") == Dimension("reward.sqrt_l0", 0.1, 0.5, False)
    assert parse_dimension("network.hidden_size=64:256") == Dimension("network.hidden_size", 64, 256, False)
    assert parse_dimension("train.lr=1e-4:1e-2:log") == Dimension("train.lr", 1e-4, 1e-2, True)
    assert parse_dimension("reward.gamma=0:1") == Dimension("reward.gamma", 0, 1, False)  # whole bounds: an int range
    assert parse_dimension("reward.delta=0.8,0.85,0.9").choices == (0.8, 0.85, 0.9)
    assert parse_dimension("train.select_mode=with-agent,net-only").choices == ("with-agent", "net-only")
    assert [d.key for d in parse_search([])] == ["reward.sqrt_l0", "reward.delta", "reward.gamma", "adjust.beta0"]
    assert len(REWARD_SEARCH) == 4
    assert grid(parse_search(["reward.delta=0.8,0.9", "network.hidden_size=8,16"])) == {
        "reward.delta": [0.8, 0.9], "network.hidden_size": [8, 16]}


@pytest.mark.parametrize("item, said", [
    ("reward.sqrtl0=0.1:0.5", "did you mean 'reward.sqrt_l0'"),
    ("reward.delta=0.9:0.8", "LOW must be below HIGH"),
    ("train.lr=0:0.1:log", "above 0 on a log scale"),
    ("reward.delta=0.1:0.5:lin", "LOW:HIGH:log"),
    ("train.select_mode=with-agent,best", "'best' is not one of"),
    ("reward.delta", "must look like section.key=LOW:HIGH"),
    ("reward.delta=0.8,0.8", "distinct"),
])
def test_a_search_item_that_cannot_work_is_refused_before_any_trial(item, said):
    with pytest.raises(ConfigError, match=said):
        parse_dimension(item)


def test_a_grid_needs_choices_and_a_key_is_searched_once():
    with pytest.raises(ConfigError, match="needs choices .* reward.sqrt_l0"):
        grid(parse_search(["reward.sqrt_l0=0.1:0.5", "reward.delta=0.8,0.9"]))
    with pytest.raises(ConfigError, match="reward.delta more than once"):
        parse_search(["reward.delta=0.8,0.9", "reward.delta=0.7:0.9"])


def test_a_named_choice_stands_for_its_settings():
    size = named_choice("agent.size", {"1x100": ["agent.hidden_sizes=100"], "2x300": ["agent.hidden_sizes=300,300"]})
    variant = named_choice("variant", {"paper": [], "closeness": ["reward.closeness=0.5", "train.patience=2"]})
    params = {"agent.size": "2x300", "reward.delta": 0.8, "variant": "closeness"}
    assert overrides(params, [size, variant]) == ["agent.hidden_sizes=300,300", "reward.delta=0.8", "reward.closeness=0.5",
                                                  "train.patience=2"]
    assert overrides({"variant": "paper"}, [variant]) == []
    assert overrides(params) == ["agent.size=2x300", "reward.delta=0.8", "variant=closeness"]  # without the dimensions: as named
    with pytest.raises(ConfigError, match="did you mean 'reward.closeness'"):
        named_choice("variant", {"closeness": ["reward.closenes=0.5"]})


@given(st.floats(0.001, 0.5), st.floats(0.001, 0.49))
def test_any_float_range_keeps_its_bounds(low, width):
    dimension = parse_dimension(f"reward.sqrt_l0={low!r}:{low + width + 0.001!r}")
    assert (dimension.low, dimension.high, dimension.log) == (low, low + width + 0.001, False)


# --- a study of tiny runs, in this process -------------------------------------------------------


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def tiny_settings(tmp_path: Path, trials: int, **changes) -> TuneSettings:
    tsv = tmp_path / "kw.tsv"
    if not tsv.exists():
        write_keyword_tsv(tsv)
    base = ["data.dataset=tsv", f"data.tsv_path={tsv}", "data.batch_size=16", "network.name=tiny", "network.embedding_dim=12",
            "agent.hidden_sizes=16,16", "train.pretrain_epochs=2", "train.agent_epochs=1", "train.cotrain_epochs=2",
            "train.lr=0.01", "train.patience=0", "run.seed=3"]
    settings = TuneSettings(config=None, base=base, dimensions=parse_search(["reward.sqrt_l0=0.1:0.5", "reward.delta=0.8,0.85,0.9"]),
                            trials=trials, folder=tmp_path / "study", study_name="tiny", sampler_seed=0, log=lambda line: None)
    for key, value in changes.items():
        setattr(settings, key, value)
    return settings


def test_trials_are_scored_by_their_best_dev_accuracy_each_epoch_reported_and_the_best_config_loads(tmp_path):
    settings = tiny_settings(tmp_path, trials=2)
    study = tune(settings)
    trials = finished_trials(study)
    assert [t.number for t in trials] == [0, 1] and all(t.state.name == "COMPLETE" for t in trials)
    for trial in trials:
        results = json.loads((settings.folder / f"trial-{trial.number}" / "results.json").read_text())
        cotrain = [h for h in results["history"] if h["phase"] == "cotrain"]
        # every co-training epoch (the plan's last phase) reported its dev accuracy with the agent (train.select_mode)
        assert trial.intermediate_values == {h["epoch"]: pytest.approx(h["dev_with-agent_accuracy"]) for h in cotrain}
        row = results["results"]["DRGA (co-trained)"]
        assert trial.value == pytest.approx(row["dev_with-agent"]["accuracy"])
        assert trial.value >= max(trial.intermediate_values.values()) - 1e-12  # the best epoch (epoch 0 competes too)
        config = load_config(settings.folder / f"trial-{trial.number}" / "config.toml")
        assert config.reward.sqrt_l0 == pytest.approx(trial.params["reward.sqrt_l0"])
        assert config.reward.delta == trial.params["reward.delta"]
    best = best_trial(study)
    assert best.value == max(t.value for t in trials)
    saved = load_config(settings.best_file)  # ready for drga train --config
    assert (saved.reward.sqrt_l0, saved.reward.delta) == (pytest.approx(best.params["reward.sqrt_l0"]), best.params["reward.delta"])
    assert (saved.network.name, saved.train.cotrain_epochs, saved.run.seed, saved.run.logdir) == ("tiny", 2, 3, "runs")
    assert saved.run.run_name is None and saved.run.progress
    assert f"trial {best.number}" in settings.best_file.read_text().splitlines()[1]
    assert all(t.user_attrs["cpu_seconds"] > 0 and t.user_attrs["wall_seconds"] > 0 for t in trials)  # the search's cost

    again = tune(tiny_settings(tmp_path, trials=3))  # the same study, continued from its SQLite file
    assert [t.number for t in finished_trials(again)] == [0, 1, 2]
    assert (settings.folder / "study.db").exists()


class PruneEveryTrial:
    """An Optuna pruner that prunes at the first report."""

    def prune(self, study, trial) -> bool:
        return True


def test_a_pruned_trial_stops_after_the_epoch_it_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(optuna.pruners, "MedianPruner", PruneEveryTrial)
    settings = tiny_settings(tmp_path, trials=1)
    study = tune(settings)
    trial = study.trials[0]
    assert trial.state.name == "PRUNED" and list(trial.intermediate_values) == [1]
    folder = settings.folder / "trial-0"
    assert not (folder / "results.json").exists()
    log = (folder / "train.log").read_text()
    assert "cotrain 1/2" not in log  # pruned as soon as its dev score was reported, before the epoch's line
    assert f"pruned after cotrain epoch 1: dev accuracy with-agent {trial.intermediate_values[1]:.4f}" in log
    assert not settings.best_file.exists()  # no trial completed
    assert trial.user_attrs["cpu_seconds"] > 0  # a pruned trial's cost counts


def test_a_named_choice_sets_each_trials_keys_and_the_best_config_has_them(tmp_path):
    size = named_choice("agent.size", {"small": ["agent.hidden_sizes=8"], "large": ["agent.hidden_sizes=16,16", "agent.samples=3"]})
    settings = tiny_settings(tmp_path, trials=2, dimensions=[size], sampler="grid")
    study = tune(settings)
    for trial in finished_trials(study):
        config = load_config(settings.folder / f"trial-{trial.number}" / "config.toml")
        expected = {"small": ([8], 5), "large": ([16, 16], 3)}[trial.params["agent.size"]]
        assert (config.agent.hidden_sizes, config.agent.samples) == expected
    best = best_trial(study)
    saved = load_config(settings.best_file)
    assert saved.agent.hidden_sizes == {"small": [8], "large": [16, 16]}[best.params["agent.size"]]


def test_a_grid_interrupted_in_a_trial_ends_with_every_point_trained_once(tmp_path, monkeypatch):
    from drga.runner.loop import PhaseRunner

    save_last, interrupted = PhaseRunner.save_last, []

    def interrupt_trial_1_once(runner):  # Ctrl-C in trial 1's first co-training epoch, after its last.pt
        save_last(runner)
        if runner.run_dir.name == "trial-1" and runner.plan[runner.state.progress.index].name == "cotrain" and not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt

    monkeypatch.setattr(PhaseRunner, "save_last", interrupt_trial_1_once)
    settings = tiny_settings(tmp_path, trials=3, dimensions=parse_search(["reward.delta=0.8,0.85,0.9"]), sampler="grid")
    with pytest.raises(KeyboardInterrupt):
        tune(settings)
    study = tune(settings)  # the same study: trial 1 queued again (as trial 2), then the grid's last point
    states = [(t.number, t.state.name, t.user_attrs.get("run_folder")) for t in study.trials]
    assert states == [(0, "COMPLETE", "trial-0"), (1, "FAIL", "trial-1"), (2, "COMPLETE", "trial-1"), (3, "COMPLETE", "trial-3")]
    assert sorted(t.params["reward.delta"] for t in finished_trials(study)) == [0.8, 0.85, 0.9]
    assert "resuming" in (settings.folder / "trial-1" / "train.log").read_text()


# --- an interrupted study, continued by the same command ----------------------------------------


def test_an_interrupted_study_continues_from_its_sqlite_file_and_the_interrupted_trial_resumes(tmp_path):
    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    study = tmp_path / "study"
    command = [
        sys.executable, str(ROOT / "tests" / "paced_train.py"), "tune", "--dataset", "tsv", "--tsv", str(tsv), "--net", "lstm-sa",
        "--dir", str(study), "--trials", "2", "--sampler-seed", "0", "--no-prune",
        "--search", "reward.sqrt_l0=0.1:0.5", "--search", "reward.delta=0.8,0.9",
        *[a for s in ["network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
                      "agent.hidden_sizes=8", "data.batch_size=16", "train.lr=0.01", "train.pretrain_epochs=2",
                      "train.agent_epochs=1", "train.cotrain_epochs=2", "train.patience=0"] for a in ("--set", s)],
    ]
    environment = dict(os.environ, OMP_NUM_THREADS="1", DRGA_TEST_EPOCH_PAUSE="0.5",
                       PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while not ((study / "trial-0" / "results.json").exists() and (study / "trial-1" / "last.pt").exists()) and time.time() < deadline:
        time.sleep(0.1)
    first.send_signal(signal.SIGINT)  # after one trial, in the middle of the second
    out, err = first.communicate(timeout=120)
    assert first.returncode == 130, out + err
    assert "the same command continues the study" in err
    stored = optuna.load_study(study_name="tsv-lstm-sa", storage=f"sqlite:///{study / 'study.db'}")
    assert [t.state.name for t in stored.trials] == ["COMPLETE", "FAIL", "WAITING"]  # trial 1 queued again
    interrupted_at = (study / "trial-1" / "train.log").read_text().count("\n")

    second = subprocess.run(command, capture_output=True, text=True, env=dict(environment, DRGA_TEST_EPOCH_PAUSE="0"), timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "1 trial finished, 1 to go" in second.stdout
    stored = optuna.load_study(study_name="tsv-lstm-sa", storage=f"sqlite:///{study / 'study.db'}")
    finished = [t for t in stored.trials if t.state.name == "COMPLETE"]
    assert len(finished) == 2  # the count grew from 1 to 2
    assert [t.user_attrs["run_folder"] for t in finished] == ["trial-0", "trial-1"]
    resumed = (study / "trial-1" / "train.log").read_text().splitlines()[interrupted_at:]
    assert any(line.startswith(f"resuming {study / 'trial-1'}: phase ") for line in resumed)  # from its last.pt
    assert stored.trials[2].params == stored.trials[1].params
    best = load_config(study / "best.toml")
    assert best.network.name == "lstm-sa" and best.data.tsv_path == str(tsv)
    assert f"best: trial {best_trial(stored).number}" in second.stdout


def test_a_translation_network_is_tuned_by_its_dev_bleu_from_a_pretrained_network(tmp_path):
    from drga.tasks.translation.config import load_translation_config
    from drga.trainer import TranslationTrainer
    from tests.nmt_helpers import tiny_translation_config

    pretrained = TranslationTrainer(tiny_translation_config(tmp_path, **{"train.agent_epochs": 0, "train.cotrain_epochs": 0,
                                                                         "train.fair_baseline": "false"}), log=lambda _: None)
    pretrained.run()
    source = pretrained.run_dir / "pretrain_best.pt"
    base = [f"{key}={value}" for key, value in {
        "network.name": "seq2seq-luong", "data.dataset": "parallel", "data.data_dir": str(tmp_path / "corpus"), "data.batch_size": 32,
        "nmt.vocab_size": 80, "network.embedding_dim": 24, "network.hidden_size": 24, "network.layers": 1,
        "agent.hidden_sizes": "16,16", "agent.samples": 2, "train.init_from": str(source), "train.agent_epochs": 1,
        "train.cotrain_epochs": 0, "train.fair_baseline": "false", "nmt.beam_size": 1, "nmt.warmup_steps": 0,
    }.items()]
    settings = TuneSettings(config=None, base=base, dimensions=parse_search(["reward.sqrt_l0=0.1,0.4", "nmt.label_smoothing=0.0"]),
                            trials=2, folder=tmp_path / "study", study_name="nmt", sampler="grid", prune=False, log=lambda line: None)
    study = tune(settings)
    trials = finished_trials(study)
    assert sorted(t.params["reward.sqrt_l0"] for t in trials) == [0.1, 0.4]
    for trial in trials:
        results = json.loads((settings.folder / f"trial-{trial.number}" / "results.json").read_text())
        assert [h["phase"] for h in results["history"]] == ["agent"]  # started from the pretrained network
        dev = results["results"]["agent on frozen network"]["dev_with-agent"]
        assert trial.value == pytest.approx(dev["bleu"]) and trial.user_attrs["metric"] == "dev BLEU"
        assert trial.user_attrs["selection_key"] == pytest.approx([dev["bleu"], -dev["perplexity"]])
    saved = load_translation_config(settings.best_file)  # a translation config, [nmt] included, ready for drga train
    assert saved.experiment.reward.sqrt_l0 == pytest.approx(best_trial(study).params["reward.sqrt_l0"])
    assert saved.nmt.vocab_size == 80 and saved.experiment.train.init_from == str(source)
    with pytest.raises(ConfigError, match="nmt.bogus"):
        parse_search(["nmt.bogus=1,2"])
