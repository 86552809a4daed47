"""The batched trainer end to end on small data: custom network, resume, CLI, bad input."""

import json
import math
import os
import sys
from pathlib import Path

import pytest
import torch

import drga.baselines as baselines
from drga.checkpoint_format import CheckpointError, load_checkpoint
from drga.cli import main
from drga.config import ConfigError, config_to_toml, load_config
from drga.learners import AgentPhaseLearner, CoTrainingLearner, NetworkLearner
from drga.runner.run_folder import RunExistsError, RunInUseError
from drga.runtime.run_lock import LOCK_NAME, acquire_run_lock, run_lock_holder
from drga.trainer import Trainer
from tests.interrupts import ctrl_c_at_call
from tests.lock_holder import lock_held_elsewhere
from tests.scripts import load_script
from tests.tiny_network import TinyAttentionNet, keyword_examples


def write_keyword_tsv(path, count=240, seed=0):
    examples, _ = keyword_examples(count, seed=seed)
    top = max(max(e.ids) for e in examples)
    word = lambda i: "good" if i == top else "bad" if i == top - 1 else f"w{i}"
    lines = [f"{'pos' if e.label else 'neg'}\t{' '.join(word(i) for i in e.ids)}" for e in examples]
    # awkward sentences: one token, and words never seen in training (all <unk> unless in train)
    lines += ["pos\tgood", "neg\tbad", "pos\tzzqx yyqx good", "neg\tqqqq"]
    path.write_text("\n".join(lines) + "\n")
    return path


def tiny_config(tmp_path, **overrides):
    tmp_path.mkdir(parents=True, exist_ok=True)
    items = {
        "data.dataset": "tsv", "data.tsv_path": str(write_keyword_tsv(tmp_path / "kw.tsv")), "data.batch_size": 16,
        "network.name": "tiny", "network.embedding_dim": 12, "agent.hidden_sizes": "16,16",
        "train.pretrain_epochs": 2, "train.agent_epochs": 1, "train.cotrain_epochs": 2, "train.lr": 0.01,
        "run.logdir": str(tmp_path / "runs"), "run.progress": False, "run.seed": 3,
    }
    items.update(overrides)
    return load_config(None, [f"{k}={v}" for k, v in items.items()])


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def test_custom_network_runs_through_every_phase(tmp_path):
    results = Trainer(tiny_config(tmp_path), log=lambda _: None).run()
    rows = results.rows
    assert set(rows) == {"baseline (pretrain only)", "baseline (equal budget)", "agent on frozen network", "DRGA (co-trained)"}
    drga = rows["DRGA (co-trained)"]
    for mode in ("net-only", "with-agent"):
        assert 0.0 <= drga.scores("test", mode)["accuracy"] <= 1.0
        assert math.isfinite(drga.scores("test", mode)["reward"])
    for record in results.history:
        assert all(math.isfinite(v) for k, v in record.to_dict().items() if isinstance(v, float)), record
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    assert (run_dir / "config.toml").exists() and (run_dir / "results.json").exists()
    assert any((run_dir / "tb").iterdir())
    phases = [r.phase for r in results.history]
    assert phases == ["pretrain"] * 2 + ["baseline"] * 3 + ["agent"] + ["cotrain"] * 2


def test_equal_budget_baseline_gets_as_many_epochs_as_the_agent_and_cotraining_together(tmp_path):
    results = Trainer(tiny_config(tmp_path, **{"train.patience": 0}), log=lambda _: None).run()
    epochs = [r.phase for r in results.history]
    assert epochs.count("baseline") == epochs.count("agent") + epochs.count("cotrain") == 3
    assert results.phases["baseline"].to_dict() == {"epochs": 3, "max_epochs": 3, "seconds": results.phases["baseline"].seconds,
                                                    "stopped_early": False}
    explicit = Trainer(tiny_config(tmp_path / "b", **{"train.baseline_epochs": 1}), log=lambda _: None).run()
    assert [r.phase for r in explicit.history].count("baseline") == 1


def test_a_time_budget_stops_the_baseline_before_an_epoch_that_would_pass_it(tmp_path):
    from drga.runner.phases import phase_named

    baseline, train = phase_named("baseline"), load_config(overrides=["train.baseline_seconds=30"]).train
    # 20 s spent, the last epoch 9 s: another would end at 29 s, within 30; the last 11 s: at 31 s, past it
    assert not baseline.out_of_time(train, 20.0, 9.0) and baseline.out_of_time(train, 20.0, 11.0)
    assert not phase_named("cotrain").out_of_time(train, 1e9, 1.0)  # the other phases have no budget
    assert not baseline.out_of_time(load_config().train, 1e9, 1.0)  # unset: none
    base = {"train.patience": 0, "train.baseline_epochs": 3, "train.agent_epochs": 0, "train.cotrain_epochs": 0}
    unlimited = Trainer(tiny_config(tmp_path / "a", **base), log=lambda _: None).run()
    generous = Trainer(tiny_config(tmp_path / "b", **base, **{"train.baseline_seconds": 1e6}), log=lambda _: None).run()
    assert [r.phase for r in generous.history].count("baseline") == 3  # a budget it never reaches changes nothing
    for row in ("baseline (pretrain only)", "baseline (equal budget)"):
        accuracy = unlimited.rows[row].scores("test", "net-only")["accuracy"]
        assert generous.rows[row].scores("test", "net-only")["accuracy"] == pytest.approx(accuracy)
    lines = []
    tight = Trainer(tiny_config(tmp_path / "c", **base, **{"train.baseline_seconds": 1e-6}), log=lines.append).run()
    assert [r.phase for r in tight.history].count("baseline") == 1  # the first epoch runs, then the budget is spent
    assert tight.phases["baseline"].stopped_early and any(line.startswith("   time budget:") for line in lines)
    with pytest.raises(ConfigError, match="baseline_seconds must be > 0"):
        load_config(overrides=["train.baseline_seconds=0"])


def test_resume_reproduces_an_uninterrupted_run(tmp_path, monkeypatch):
    uninterrupted = Trainer(tiny_config(tmp_path / "a"), log=lambda _: None).run()

    with ctrl_c_at_call(Trainer, "train_epoch", 4):  # inside the baseline phase, after three completed epochs
        Trainer(tiny_config(tmp_path / "b"), log=lambda _: None).run()
    with pytest.raises(RunExistsError):
        Trainer(tiny_config(tmp_path / "b"), log=lambda _: None)
    # the run folder moves (another disk, a renamed study folder): it resumes from where it is now
    (tmp_path / "b" / "runs").rename(tmp_path / "moved")
    moved = tiny_config(tmp_path / "b", **{"run.logdir": str(tmp_path / "moved")})
    resumed = Trainer(moved, resume=True, log=lambda _: None).run()

    assert resumed.history == uninterrupted.history or _same_numbers(resumed.history, uninterrupted.history)
    for label, row in uninterrupted.rows.items():
        for mode, cell in row.modes.items():
            other = resumed.rows[label].modes[mode]
            assert (other.test, other.test_beam) == (cell.test, cell.test_beam), (label, mode)
    a = load_checkpoint(tmp_path / "a" / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt")
    b = load_checkpoint(tmp_path / "moved" / "tsv-tiny-seed3" / "cotrain_best.pt")
    for name, tensor in a["network"].items():
        assert torch.equal(tensor, b["network"][name]), name


def _same_numbers(first, second):
    strip = lambda records: [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in records]
    return strip(first) == strip(second)


@pytest.mark.skipif(sys.platform == "win32", reason="no advisory locks on Windows")
def test_a_run_folder_another_process_trains_in_is_refused_until_that_process_dies(tmp_path, capsys):
    config = tiny_config(tmp_path)
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    with lock_held_elsewhere(run_dir) as pid:
        assert run_lock_holder(run_dir) == pid
        with pytest.raises(RunInUseError, match=f"in use by another training process \\(pid {pid}\\)"):
            Trainer(config, log=lambda _: None)
        toml = tmp_path / "config.toml"
        toml.write_text(config_to_toml(config))
        assert main(["train", "--config", str(toml)]) == 2  # the command line: one message, exit status 2
        assert f"in use by another training process (pid {pid})" in capsys.readouterr().err
    assert run_lock_holder(run_dir) is None  # its holder was killed outright
    Trainer(config, log=lambda _: None).run()


def test_a_run_holds_its_folder_only_while_it_trains(tmp_path):
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    with pytest.raises(CheckpointError):  # refused in set-up: the lock goes with it
        Trainer(tiny_config(tmp_path), resume=True, log=lambda _: None)
    assert run_lock_holder(run_dir) is None
    trainer = Trainer(tiny_config(tmp_path), log=lambda _: None)
    assert run_lock_holder(run_dir) == os.getpid() and acquire_run_lock(run_dir) is None
    trainer.run()
    assert run_lock_holder(run_dir) is None
    (run_dir / "stale.txt").write_text("from the old run")
    Trainer(tiny_config(tmp_path), overwrite=True, log=lambda _: None).run()
    assert sorted(p.name for p in run_dir.iterdir() if p.name in (LOCK_NAME, "stale.txt")) == [LOCK_NAME]


def test_resume_refuses_a_changed_configuration(tmp_path):
    Trainer(tiny_config(tmp_path, **{"train.cotrain_epochs": 1}), log=lambda _: None).run()
    with pytest.raises(CheckpointError, match="differs in train.cotrain_epochs"):
        Trainer(tiny_config(tmp_path, **{"train.cotrain_epochs": 3}), resume=True, log=lambda _: None)


def test_evaluate_command_prints_both_modes(tmp_path, capsys):
    config = tiny_config(tmp_path)
    Trainer(config, log=lambda _: None).run()
    checkpoint = tmp_path / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt"
    assert main(["evaluate", str(checkpoint), "--dataset", "tsv", "--tsv", config.data.tsv_path]) == 0
    out = capsys.readouterr().out
    assert "net-only" in out and "with-agent" in out and "accuracy" in out


# --- clear errors -------------------------------------------------------------------------


def run_cli(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


def test_unknown_dataset_network_and_key_are_one_line_errors(tmp_path, capsys):
    code, err = run_cli(["train", "--dataset", "imdb", "--net", "lstm-sa", "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "unknown dataset 'imdb'" in err and "Traceback" not in err
    code, err = run_cli(["train", "--dataset", "subj", "--net", "gru-xx", "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "unknown network 'gru-xx'" in err
    code, err = run_cli(["train", "--set", "train.cotrain_epoch=3", "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "did you mean 'train.cotrain_epochs'" in err
    code, err = run_cli(["train", "--set", "reward.delta=1.5", "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "reward.delta must be in (0, 1]" in err


def test_config_file_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[agent]\nsamplez = 3\n")
    with pytest.raises(ConfigError, match=r"bad\.toml: unknown config key 'agent.samplez'; did you mean 'agent.samples'"):
        load_config(bad)
    bad.write_text("[agent]\nsamples = 'many'\n")
    with pytest.raises(ConfigError, match="expected int"):
        load_config(bad)
    good = tmp_path / "good.toml"
    good.write_text("[reward]\ngamma = 0.5\n[agent]\nhidden_sizes = [32, 32]\n")
    config = load_config(good, ["reward.delta=0.9"])
    assert (config.reward.gamma, config.reward.delta, config.agent.hidden_sizes) == (0.5, 0.9, [32, 32])


def test_network_defaults_fill_only_what_the_config_leaves_unset(tmp_path):
    reports = []
    config = load_config(None, ["network.name=transformer"], report=reports.append)
    assert (config.agent.samples, config.train.task_loss_samples) == (2, 1)
    assert reports == ["transformer defaults: agent.samples=2 train.task_loss_samples=1 (set them to override)"]
    config = load_config(None, ["network.name=transformer", "agent.samples=5"])  # an override wins
    assert (config.agent.samples, config.train.task_loss_samples) == (5, 1)
    pinned = tmp_path / "pinned.toml"
    pinned.write_text("[network]\nname = 'transformer'\n[train]\ntask_loss_samples = 0\n")  # so does the file
    assert (load_config(pinned).agent.samples, load_config(pinned).train.task_loss_samples) == (2, 0)
    reports.clear()
    config = load_config(None, ["network.name=lstm-sa"], report=reports.append)  # other networks: the general defaults
    assert (config.agent.samples, config.train.task_loss_samples, reports) == (5, 0, [])
    # the reproduction study ran every network at K = 5, eq. 12 through all samples
    study = load_config(Path(__file__).parents[2] / "experiments/configs/reproduction.toml", ["network.name=transformer"])
    assert (study.agent.samples, study.train.task_loss_samples) == (5, 0)


def test_checkpoint_from_another_network_is_refused(tmp_path, capsys):
    config = tiny_config(tmp_path, **{"train.agent_epochs": 0, "train.cotrain_epochs": 0})
    Trainer(config, log=lambda _: None).run()
    checkpoint = tmp_path / "runs" / "tsv-tiny-seed3" / "pretrain_best.pt"
    from drga.tasks.classification.trained import load_trained

    with pytest.raises(CheckpointError, match="holds the network 'tiny', not 'lstm-sa'"):
        load_trained(checkpoint, expected_net="lstm-sa")
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a checkpoint")
    code, err = run_cli(["evaluate", str(broken)], capsys)
    assert code == 2 and "is not a DRGA checkpoint: it cannot be read" in err


def test_malformed_tsv_line_is_reported_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("pos\tfine\nthis line has no tab\n")
    code, err = run_cli(["train", "--dataset", "tsv", "--tsv", str(bad), "--logdir", str(tmp_path)], capsys)
    assert code == 2 and "bad.tsv:2" in err


def test_results_json_is_valid(tmp_path):
    Trainer(tiny_config(tmp_path, **{"train.cotrain_epochs": 1, "train.fair_baseline": "false"}), log=lambda _: None).run()
    payload = json.loads((tmp_path / "runs" / "tsv-tiny-seed3" / "results.json").read_text())
    assert "baseline (equal budget)" not in payload["results"]


def test_beyond_the_paper_variants_train_and_report(tmp_path):
    config = tiny_config(tmp_path, **{"agent.reward_baseline": "self-critical", "reward.closeness": 1.0,
                                      "train.pretrain_epochs": 1, "train.cotrain_epochs": 1})
    results = Trainer(config, log=lambda _: None).run()
    for record in results.history:
        if record.phase in ("agent", "cotrain"):
            assert math.isfinite(record.train["reward"]) and 0.0 <= record.train["attention_shift"] <= 1.0
    assert 0.0 <= results.rows["DRGA (co-trained)"].scores("test", "with-agent")["accuracy"] <= 1.0
    with pytest.raises(ConfigError, match="reward_baseline"):
        tiny_config(tmp_path / "x", **{"agent.reward_baseline": "greedy"})


def test_tune_reward_scores_each_setting_on_dev_from_a_finished_pretraining(tmp_path):
    tune_reward = load_script("experiments/tune_reward.py")
    config = tiny_config(tmp_path, **{"train.pretrain_epochs": 1, "train.agent_epochs": 0, "train.cotrain_epochs": 0,
                                      "train.fair_baseline": "false"})
    Trainer(config, log=lambda _: None).run()
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    grid = {"sqrt_l0": [0.2, 0.5], "delta": [0.85]}
    report = tune_reward.tune_grid(run_dir, grid, agent_epochs=1, workdir=tmp_path / "tuning")
    assert [(s["sqrt_l0"], s["delta"]) for s in report["settings"]] == [(0.2, 0.85), (0.5, 0.85)]
    assert all(s["selection_key"] == [s["dev_accuracy"], s["dev_reward"]] for s in report["settings"])
    assert report["chosen"] in ({"sqrt_l0": 0.2, "delta": 0.85}, {"sqrt_l0": 0.5, "delta": 0.85})
    best = max(report["settings"], key=lambda s: (s["dev_accuracy"], s["dev_reward"]))
    assert report["chosen"]["sqrt_l0"] == best["sqrt_l0"]
    # every setting's agent started from the same frozen network: the pretrained one (a trial of the `drga tune` grid each)
    trials = sorted((tmp_path / "tuning").glob("trial-*"))
    assert [t.name for t in trials] == ["trial-0", "trial-1"]
    pretrained = load_checkpoint(run_dir / "pretrain_best.pt")
    for trial in trials:
        saved = load_checkpoint(trial / "agent_best.pt")
        assert all(torch.equal(saved["network"][k], pretrained["network"][k]) for k in pretrained["network"])
    again = tune_reward.tune_grid(run_dir, grid, agent_epochs=1, workdir=tmp_path / "tuning")  # read back, not retrained
    assert again["settings"] == report["settings"] and sorted((tmp_path / "tuning").glob("trial-*")) == trials


def test_each_drga_mode_is_reported_from_the_epoch_of_its_own_best_dev_accuracy(tmp_path):
    config = tiny_config(tmp_path, **{"train.cotrain_epochs": 3, "train.patience": 0, "train.select_mode": "with-agent"})
    results = Trainer(config, log=lambda _: None).run()
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    row = results.rows["DRGA (co-trained)"]
    cotrain = [h for h in results.history if h.phase == "cotrain"]
    for mode, checkpoint in (("with-agent", "cotrain_best.pt"), ("net-only", "cotrain_best_net-only.pt")):
        payload = load_checkpoint(run_dir / checkpoint)
        assert row.epoch_of(mode) == payload["epoch"]
        assert row.scores("dev", mode)["accuracy"] == payload["dev"][mode]["accuracy"]
        # no co-training epoch had a better dev accuracy in this mode than the one reported
        assert payload["dev"][mode]["accuracy"] >= max(h.dev_number(mode, "accuracy") for h in cotrain)


def test_checkpoints_are_verified_and_a_resume_on_changed_data_needs_force(tmp_path, monkeypatch):
    from drga.checkpoint_format import save_atomic

    config = tiny_config(tmp_path, **{"train.pretrain_epochs": 1, "train.agent_epochs": 0, "train.cotrain_epochs": 0,
                                      "train.fair_baseline": "false"})
    Trainer(config, log=lambda _: None).run()
    run_dir = tmp_path / "runs" / "tsv-tiny-seed3"
    best = run_dir / "pretrain_best.pt"
    payload = load_checkpoint(best)
    assert payload["task_entries"]["data_checksum"] and len(payload["tensor_checksum"]) == 64
    # one bit flipped after writing, in a tensor's bytes (the file's end) or in the entries beside them: refused at load
    written = best.read_bytes()
    for offset in (len(written) - 3, written.index(b"data_checksum")):
        altered = bytearray(written)
        altered[offset] ^= 1
        (run_dir / "altered.pt").write_bytes(bytes(altered))
        with pytest.raises(CheckpointError, match="corrupted"):
            load_checkpoint(run_dir / "altered.pt")
    # non-finite weights with a matching checksum (a diverged run): refused too
    name = next(iter(payload["network"]))
    payload["network"][name].view(-1)[0] = float("nan")
    save_atomic({k: v for k, v in payload.items() if k != "tensor_checksum"}, run_dir / "diverged.pt")
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        load_checkpoint(run_dir / "diverged.pt")
    assert main(["evaluate", str(run_dir / "diverged.pt")]) == 2
    # the same file name with different data: the resume is refused unless forced
    data = Path(config.data.tsv_path)
    label, text = data.read_text().split("\n", 1)[0].split("\t")  # same words, same split and vocabulary: another order
    data.write_text(data.read_text().replace(f"{label}\t{text}\n", f"{label}\t{' '.join(reversed(text.split()))}\n", 1))
    with pytest.raises(CheckpointError, match="the data differ"):
        Trainer(config, resume=True, log=lambda _: None)
    said = []
    Trainer(config, resume=True, force=True, log=said.append)
    assert any("resuming on changed data (--force)" in line for line in said)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_same_seed_at_the_same_thread_count_gives_identical_numbers(tmp_path, threads):
    """What run.threads promises: reproducible at a fixed thread count (not across thread counts)."""
    previous = torch.get_num_threads()
    try:
        overrides = {"run.threads": threads, "train.pretrain_epochs": 1, "train.cotrain_epochs": 1}
        first = Trainer(tiny_config(tmp_path / "a", **overrides), log=lambda _: None).run()
        second = Trainer(tiny_config(tmp_path / "b", **overrides), log=lambda _: None).run()
    finally:
        torch.set_num_threads(previous)
    strip = lambda records: [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in records]  # noqa: E731
    assert strip(first.history) == strip(second.history)
    for label, row in first.rows.items():
        for mode, cell in row.modes.items():
            other = second.rows[label].modes[mode]
            assert (other.test, other.test_beam) == (cell.test, cell.test_beam)


def test_tensorboard_overlays_the_arms_with_the_same_tags_on_one_step_axis(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tiny_config(tmp_path, **{"train.patience": 0})
    Trainer(config, log=lambda _: None).run()
    tb = tmp_path / "runs" / "tsv-tiny-seed3" / "tb"
    assert sorted(p.name for p in tb.iterdir()) == ["agent", "baseline", "drga", "pretrain"]
    events = {arm: EventAccumulator(str(tb / arm)).Reload() for arm in ("baseline", "drga", "agent")}
    tags = {arm: set(e.Tags()["scalars"]) for arm, e in events.items()}
    assert {"dev/accuracy_net_only", "train/task_loss", "train/sequences_per_second"} <= tags["baseline"] & tags["drga"]
    assert "dev/accuracy_with_agent" in tags["drga"] & tags["agent"]
    signals = ["agent/attention_shift", "agent/zeroed_fraction", "agent/highlighted_fraction", "agent/beta", "agent/policy_sigma",
               "agent/policy_entropy", "agent/reward", "agent/reward_log_likelihood", "agent/reward_penalty",
               "agent/advantage_std", "agent/grad_norm_agent", "train/grad_norm_network", "train/sequences_per_second"]
    for tag in signals:
        values = [event.value for event in events["drga"].Scalars(tag)]
        assert values and all(math.isfinite(v) for v in values), tag
    # one step axis: both arms count network updates from the same pretrained network, epoch 0 at step 0
    baseline_steps = [e.step for e in events["baseline"].Scalars("dev/accuracy_net_only")]
    drga_steps = [e.step for e in events["drga"].Scalars("dev/accuracy_net_only")]
    assert baseline_steps[0] == drga_steps[0] == 0 and drga_steps == baseline_steps[: len(drga_steps)]
    # the HParams tab: one entry per arm with its final numbers
    hparams = EventAccumulator(str(tb / "drga")).Reload()
    assert "hparam/test_accuracy_with_agent" in hparams.Tags()["scalars"]
    assert "hparam/test_accuracy_net_only" in EventAccumulator(str(tb / "baseline")).Reload().Tags()["scalars"]


def test_the_agent_can_learn_on_a_slice_the_network_never_trains_on(tmp_path, monkeypatch):
    """data.agent_holdout (beyond the paper): the network's phases never see the held-out slice;
    the agent phase passes over it alone, and co-training's REINFORCE reads batches from it."""
    config = tiny_config(tmp_path, **{"data.agent_holdout": 0.25, "train.pretrain_epochs": 1, "train.cotrain_epochs": 1})
    trainer = Trainer(config, log=lambda _: None)
    held_ids = [tuple(e.ids) for e in trainer.data.agent_train]
    assert held_ids and len(trainer.data.agent_train) == pytest.approx(0.25 * (len(trainer.data.train) + len(held_ids)), abs=2)
    from drga.tasks.classification.data import prepare_data

    whole = prepare_data(tiny_config(tmp_path / "whole", **{"train.pretrain_epochs": 1}))
    assert len(trainer.data.train) + len(held_ids) == len(whole.train)  # a partition of the training split
    assert sorted(map(tuple, (e.ids for e in whole.train))) == sorted([*map(tuple, (e.ids for e in trainer.data.train)), *held_ids])
    seen = {"network": [], "agent": []}
    for learner in (NetworkLearner, AgentPhaseLearner, CoTrainingLearner):  # every phase's training step
        def spy(self, context, batch, original=learner.training_step):
            seen["agent" if isinstance(self, AgentPhaseLearner) else "network"].append(batch.size)
            return original(self, context, batch)

        monkeypatch.setattr(learner, "training_step", spy)
    results = trainer.run()
    assert sum(seen["agent"]) == len(held_ids)  # one agent epoch = one pass over the held-out slice
    cotrain = [h for h in results.history if h.phase == "cotrain"]
    assert cotrain and math.isfinite(cotrain[0].train["reward"])
    # the held-out batch of a step is a pure function of the step (resume draws the same)
    assert torch.equal(trainer.agent_batches.batch_at(7).tokens, trainer.agent_batches.batch_at(7).tokens)
    with pytest.raises(ConfigError, match="agent_holdout"):
        tiny_config(tmp_path / "x", **{"data.agent_holdout": 0.6})


def test_a_pretrain_only_run_pretrains_the_network_a_full_run_of_its_seed_pretrains(tmp_path):
    # The study's pretrain-only runs (experiments/paper_regime.sh, the Transformer's SST-5) stand for
    # the pretraining of full runs of the same seed: the phases after pretraining must not change it.
    full = Trainer(tiny_config(tmp_path / "full"), log=lambda _: None).run()
    only = tiny_config(tmp_path / "only", **{"train.agent_epochs": 0, "train.cotrain_epochs": 0, "train.fair_baseline": "false"})
    pretrained = Trainer(only, log=lambda _: None).run()
    assert [h.phase for h in pretrained.history] == ["pretrain", "pretrain"]
    assert set(pretrained.rows) == {"baseline (pretrain only)"}
    assert pretrained.pretrain_checksum == full.pretrain_checksum is not None
    for split in ("dev", "test"):
        assert (pretrained.rows["baseline (pretrain only)"].scores(split, "net-only")
                == full.rows["baseline (pretrain only)"].scores(split, "net-only"))


def test_a_run_can_start_from_another_runs_pretrained_network(tmp_path):
    first = Trainer(tiny_config(tmp_path / "a", **{"train.cotrain_epochs": 1}), log=lambda _: None).run()
    source = tmp_path / "a" / "runs" / "tsv-tiny-seed3" / "pretrain_best.pt"
    config = tiny_config(tmp_path / "b", **{"train.init_from": str(source), "train.fair_baseline": "false", "train.cotrain_epochs": 1})
    said = []
    second = Trainer(config, log=said.append).run()
    assert [h.phase for h in second.history] == ["agent", "cotrain"]  # no pretraining
    assert any("pretraining skipped" in line for line in said)
    assert second.pretrain_checksum == first.pretrain_checksum is not None
    pretrain_only = "baseline (pretrain only)"
    assert second.rows[pretrain_only].scores("test", "net-only") == first.rows[pretrain_only].scores("test", "net-only")
    # the agent starts from the same frozen network: the same agent phase as the first run's
    first_agent_epoch = [h for h in first.history if h.phase == "agent"][0]
    assert second.history[0].dev_number("with-agent", "accuracy") == first_agent_epoch.dev_number("with-agent", "accuracy")
    # another agent (size) on the adopted network: the network's file holds the first run's agent, which no row reads
    resized = tiny_config(tmp_path / "e", **{"train.init_from": str(source), "train.fair_baseline": "false", "train.cotrain_epochs": 1,
                                             "agent.hidden_sizes": "8"})
    third = Trainer(resized, log=lambda _: None).run()
    assert third.rows[pretrain_only].scores("test", "net-only") == first.rows[pretrain_only].scores("test", "net-only")
    other = tiny_config(tmp_path / "c", **{"train.init_from": str(source), "network.embedding_dim": 6})
    with pytest.raises(CheckpointError, match="does not fit"):
        Trainer(other, log=lambda _: None)
    with pytest.raises(ConfigError, match="train.init_from"):
        Trainer(tiny_config(tmp_path / "d", **{"train.init_from": str(tmp_path / "nothing.pt")}), log=lambda _: None)
