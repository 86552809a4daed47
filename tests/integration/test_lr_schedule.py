"""The network's learning rates (drga/runner/lr_schedule.py): base × warm-up × decay × plateau cuts per group; none undoes another."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from drga.checkpoint_format import load_checkpoint, save_atomic
from drga.config import ConfigError, ExperimentConfig, load_config
from drga.runner.loop import PhaseRunner
from drga.runner.lr_schedule import LearningRateSchedule
from drga.runner.selection import Selection
from drga.tasks.translation.task import TranslationTask
from drga.trainer import TranslationTrainer
from tests.interrupts import ctrl_c_at_call
from tests.nmt_helpers import tiny_translation_config

LR, PRETRAINED_LR = 1e-3, 1e-4


def two_groups() -> torch.optim.Optimizer:
    """A network optimiser with a pretrained body at PRETRAINED_LR and new parts at LR (network_parameter_groups' form)."""
    body, new = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(3))
    return torch.optim.Adam([{"params": [body], "lr": PRETRAINED_LR}, {"params": [new]}], lr=LR)


def schedule(shape: str = "constant", warmup_fraction: float = 0.0, warmup_steps: int = 0, plateau: float = 1.0,
             total: int = 10) -> LearningRateSchedule:
    config = ExperimentConfig().train
    config.lr_schedule, config.warmup_fraction, config.plateau_lr_factor = shape, warmup_fraction, plateau
    made = LearningRateSchedule.for_phase(two_groups(), config, warmup_steps)
    made.start_epoch(0, total)
    return made


def rates_by_step(made: LearningRateSchedule, steps: int, cut_after: tuple[int, ...] = ()) -> dict[int, list[float]]:
    """Each optimiser step's rates (as the optimiser's groups hold them), with a plateau cut after the steps named."""
    seen = {}
    for step in range(1, steps + 1):
        made.advance()
        seen[step] = [group["lr"] for group in made.optimizer.param_groups]
        if step in cut_after:
            made.cut_on_plateau()
    return seen


def assert_rates(seen: list[float], factor: float) -> None:
    """Both groups at their own base rate times ``factor``."""
    assert seen == pytest.approx([PRETRAINED_LR * factor, LR * factor], rel=1e-12)


def test_constant_keeps_each_groups_base_rate():
    seen = rates_by_step(schedule(), 5)
    for step in range(1, 6):
        assert_rates(seen[step], 1.0)


def test_warm_up_alone_rises_over_its_steps_then_holds():
    seen = rates_by_step(schedule(warmup_steps=4), 6)
    for step, factor in {1: 0.25, 2: 0.5, 3: 0.75, 4: 1.0, 5: 1.0, 6: 1.0}.items():
        assert_rates(seen[step], factor)


def test_plateau_alone_halves_at_each_cut_and_holds():
    seen = rates_by_step(schedule(plateau=0.5), 8, cut_after=(3, 6))
    for step, factor in {1: 1.0, 3: 1.0, 4: 0.5, 6: 0.5, 7: 0.25, 8: 0.25}.items():
        assert_rates(seen[step], factor)


def test_a_plateau_cut_after_warm_up_persists():
    """The defect of issue 38: translation's warm-up wrote train.lr back on every step, undoing the cut."""
    seen = rates_by_step(schedule(warmup_steps=4, plateau=0.5), 10, cut_after=(6,))
    for step, factor in {2: 0.5, 4: 1.0, 6: 1.0, 7: 0.5, 10: 0.5}.items():
        assert_rates(seen[step], factor)


def test_a_plateau_cut_during_warm_up_scales_the_rest_of_it():
    seen = rates_by_step(schedule(warmup_steps=4, plateau=0.5), 5, cut_after=(2,))
    for step, factor in {2: 0.5, 3: 0.75 * 0.5, 4: 0.5, 5: 0.5}.items():
        assert_rates(seen[step], factor)


def test_warmup_linear_with_plateau_cuts():
    """10 steps, 2 of warm-up: 1/2, 1, then (10 - s + 1) / 8; a cut after step 5 halves what follows."""
    seen = rates_by_step(schedule("warmup-linear", warmup_fraction=0.2, plateau=0.5), 10, cut_after=(5,))
    for step, factor in {1: 0.5, 2: 1.0, 3: 1.0, 4: 7 / 8, 5: 6 / 8, 6: 5 / 16, 10: 1 / 16}.items():
        assert_rates(seen[step], factor)


def test_a_fixed_warm_up_with_a_pure_linear_decay():
    """nmt.warmup_steps = 4 with warmup-linear at warmup_fraction 0 over 8 steps: (s / 4) × (8 - s + 1) / 8, then the decay alone."""
    seen = rates_by_step(schedule("warmup-linear", warmup_fraction=0.0, warmup_steps=4, total=8), 8)
    for step, factor in {1: 0.25 * 1.0, 2: 0.5 * 7 / 8, 4: 1.0 * 5 / 8, 5: 4 / 8, 8: 1 / 8}.items():
        assert_rates(seen[step], factor)


def test_steps_outside_an_epoch_are_not_warmed_or_decayed():
    """Benchmarks step a phase without epochs: every group at its base rate (times plateau cuts, if any)."""
    made = schedule("warmup-linear", warmup_fraction=0.5, warmup_steps=4, total=0)
    seen = rates_by_step(made, 3)
    assert_rates(seen[1], 1.0)


def test_an_epoch_recounts_the_step_from_the_epochs_done():
    """The second of two 5-step epochs starts at step 5 of 10, whether the first ran in this process or before a resume."""
    made = schedule(warmup_steps=8)
    made.start_epoch(5, 10)
    made.advance()
    assert_rates([group["lr"] for group in made.optimizer.param_groups], 6 / 8)


@settings(max_examples=60)
@given(
    shape=st.sampled_from(["constant", "warmup-linear"]),
    warmup_fraction=st.sampled_from([0.0, 0.1, 0.3]),
    warmup_steps=st.integers(0, 12),
    total=st.integers(1, 30),
    cuts=st.sets(st.integers(1, 30), max_size=4),
    plateau=st.sampled_from([0.1, 0.5, 0.9]),
)
def test_no_mechanism_undoes_another(shape, warmup_fraction, warmup_steps, total, cuts, plateau):
    """At every step the rates with plateau cuts are those without, times factor ** (cuts so far); the body keeps its ratio."""
    plain = rates_by_step(schedule(shape, warmup_fraction, warmup_steps, plateau, total), total)
    cut = rates_by_step(schedule(shape, warmup_fraction, warmup_steps, plateau, total), total, cut_after=tuple(cuts))
    for step in range(1, total + 1):
        so_far = sum(1 for at in cuts if at < step)
        assert cut[step] == pytest.approx([rate * plateau**so_far for rate in plain[step]], rel=1e-9, abs=1e-300)
        body, new = cut[step]
        assert body == pytest.approx(new * PRETRAINED_LR / LR, rel=1e-9, abs=1e-300)


def test_the_saved_state_resumes_to_the_same_rates():
    """last.pt keeps the plateau cuts; the step is recounted from the epochs done."""
    before = schedule(warmup_steps=4, plateau=0.5)
    rates_by_step(before, 10, cut_after=(6, 9))
    resumed = schedule(warmup_steps=4, plateau=0.5)
    resumed.optimizer.load_state_dict(before.optimizer.state_dict())
    resumed.load_state_dict(before.state_dict())
    resumed.start_epoch(10, 20)
    resumed.advance()
    assert_rates([group["lr"] for group in resumed.optimizer.param_groups], 0.25)


def test_a_last_pt_from_before_the_schedule_reads_its_cuts_off_the_restored_rate():
    """Such a file holds no schedule state; its optimiser's rate is base × 0.5 ** 2 after two cuts (a constant schedule)."""
    before = schedule(plateau=0.5)
    rates_by_step(before, 4, cut_after=(2, 4))
    resumed = schedule(plateau=0.5)
    resumed.optimizer.load_state_dict(before.optimizer.state_dict())
    resumed.load_state_dict(None)
    assert resumed.plateau_cuts == 2
    resumed.advance()
    assert_rates([group["lr"] for group in resumed.optimizer.param_groups], 0.25)


def test_config_allows_every_combination_that_composes():
    config = load_config(None, ["train.lr_schedule=warmup-linear", "train.plateau_lr_factor=0.5", "train.pretrained_lr=1e-5"])
    assert config.train.plateau_lr_factor == 0.5 and config.train.lr_schedule == "warmup-linear"
    with pytest.raises(ConfigError, match="plateau_lr_factor"):
        load_config(overrides=["train.plateau_lr_factor=0"])


def test_translation_refuses_only_two_warm_ups(tmp_path):
    allowed = tiny_translation_config(tmp_path, **{"nmt.warmup_steps": 4, "train.plateau_lr_factor": 0.5, "train.lr_schedule":
                                                   "warmup-linear", "train.warmup_fraction": 0.0})
    allowed.validate()
    with pytest.raises(ConfigError, match="warm the learning rate up twice"):
        tiny_translation_config(tmp_path, **{"nmt.warmup_steps": 4, "train.lr_schedule": "warmup-linear"}).validate()


# ---------------------------------------------------------------------------- through the translation runner


@pytest.fixture
def plateau_every_epoch(monkeypatch):
    """Every dev score ties the first (no epoch after it improves), and the seq2seq encoder is a 'pretrained body'
    (train.pretrained_lr applies to it), so that a tiny run meets warm-up, plateau cuts and two parameter groups."""
    monkeypatch.setattr(TranslationTask, "selection_key", lambda self, result: (0.0,))
    build = TranslationTask.build_network

    def with_a_body(self, log):
        network = build(self, log)
        network.pretrained_parameters = network.encoder.parameters
        return network

    monkeypatch.setattr(TranslationTask, "build_network", with_a_body)
    seen: list[list[float]] = []  # the rates of every optimiser step of the network
    start = PhaseRunner.start_phase

    def recording(self, phase, fresh):
        start(self, phase, fresh)
        optimizer = self.optimiser.network_optimizer
        if optimizer is not None:
            optimizer.register_step_pre_hook(lambda optimizer, *_: seen.append([g["lr"] for g in optimizer.param_groups]))

    monkeypatch.setattr(PhaseRunner, "start_phase", recording)
    return seen


def plateau_run_config(folder):
    return tiny_translation_config(folder, **{
        "train.pretrain_epochs": 3, "train.agent_epochs": 0, "train.cotrain_epochs": 0, "train.fair_baseline": False,
        "train.lr": 0.01, "train.pretrained_lr": 0.001, "nmt.warmup_steps": 4, "train.plateau_lr_factor": 0.5,
        "train.plateau_patience": 1, "nmt.final_beam": False,
    })


def expected_rates(steps_per_epoch: int) -> list[float]:
    """Warm-up over 4 steps, epochs 1–2 at the base rates, a cut after epoch 2 (the first without a better score);
    per step the body's rate, then the new parts'."""
    factors = [min(1.0, step / 4) for step in range(1, 2 * steps_per_epoch + 1)] + [0.5] * steps_per_epoch
    return [rate for factor in factors for rate in (0.001 * factor, 0.01 * factor)]


def flat(rates: list[list[float]]) -> list[float]:
    return [rate for step in rates for rate in step]


def test_the_translation_runner_keeps_a_plateau_cut_past_warm_up_in_both_groups(tmp_path, plateau_every_epoch):
    trainer = TranslationTrainer(plateau_run_config(tmp_path), log=lambda _: None)
    trainer.run()
    steps_per_epoch = len(plateau_every_epoch) // 3
    assert steps_per_epoch > 4 and len(plateau_every_epoch) == 3 * steps_per_epoch
    assert flat(plateau_every_epoch) == pytest.approx(expected_rates(steps_per_epoch), rel=1e-12)
    # after epoch 3, the second cut: the optimiser's groups carry base × 0.25
    rates = [group["lr"] for group in trainer.optimiser.network_optimizer.param_groups]
    assert rates == pytest.approx([0.001 * 0.25, 0.01 * 0.25], rel=1e-12)


def test_a_resumed_translation_run_reaches_the_same_rates(tmp_path, plateau_every_epoch, monkeypatch):
    """Interrupted before epoch 3 (after the first cut), resumed from last.pt: epoch 3 trains at base × 0.5."""
    with ctrl_c_at_call(TranslationTrainer, "train_epoch", 3):
        TranslationTrainer(plateau_run_config(tmp_path), log=lambda _: None).run()
    steps_per_epoch = len(plateau_every_epoch) // 2
    TranslationTrainer(plateau_run_config(tmp_path), resume=True, log=lambda _: None).run()
    assert flat(plateau_every_epoch) == pytest.approx(expected_rates(steps_per_epoch), rel=1e-12)


@pytest.mark.parametrize("continue_lr", [False, True])
def test_continue_lr_starts_the_baseline_at_the_rate_of_the_selected_pretrained_network(tmp_path, plateau_every_epoch, monkeypatch,
                                                                                         continue_lr):
    """Pretraining's epoch 2 ties epoch 1 (a cut), its epoch 3 is the best, trained at base × 0.5: pretrain_best.pt records
    that one cut, and with train.continue_lr the equal-budget baseline trains from it at base × 0.5, not at base."""
    original = Selection.consider

    def third_pretraining_epoch_best(self, phase, scores, epoch, progress, plateau_cuts=None):
        if phase.name == "pretrain" and epoch == 3:
            progress.best = None
        return original(self, phase, scores, epoch, progress, plateau_cuts)

    monkeypatch.setattr(Selection, "consider", third_pretraining_epoch_best)
    config = plateau_run_config(tmp_path)
    config.experiment.train.fair_baseline, config.experiment.train.baseline_epochs = True, 1
    config.experiment.train.continue_lr = continue_lr
    trainer = TranslationTrainer(config, log=lambda _: None)
    trainer.run()
    assert load_checkpoint(trainer.run_dir / "pretrain_best.pt")["plateau_cuts"] == 1
    assert load_checkpoint(trainer.run_dir / "pretrain_best.pt")["epoch"] == 3
    steps_per_epoch = len(plateau_every_epoch) // 4
    assert len(plateau_every_epoch) == 4 * steps_per_epoch
    pretraining, baseline = plateau_every_epoch[:3 * steps_per_epoch], plateau_every_epoch[3 * steps_per_epoch:]
    assert flat(pretraining) == pytest.approx(expected_rates(steps_per_epoch), rel=1e-12)  # unchanged by the option
    factor = 0.5 if continue_lr else 1.0
    assert flat(baseline) == pytest.approx([0.001 * factor, 0.01 * factor] * steps_per_epoch, rel=1e-12)
    assert load_checkpoint(trainer.run_dir / "baseline_best.pt")["plateau_cuts"] == (1 if continue_lr else 0)
    # last.pt, written after the baseline's epoch and its plateau cut (it tied its start), records the cuts too
    assert load_checkpoint(trainer.run_dir / "last.pt")["plateau_cuts"] == (2 if continue_lr else 1)


def test_continue_lr_refuses_a_pretrained_network_that_does_not_record_its_rate(tmp_path):
    first = TranslationTrainer(plateau_run_config(tmp_path / "a"), log=lambda _: None)
    first.run()
    legacy = tmp_path / "legacy.pt"
    payload = load_checkpoint(first.run_dir / "pretrain_best.pt")
    del payload["plateau_cuts"]  # as drga wrote checkpoints before it recorded the rate
    save_atomic(payload, legacy)
    config = plateau_run_config(tmp_path / "b")
    config.experiment.train.init_from, config.experiment.train.continue_lr = str(legacy), True
    with pytest.raises(ConfigError, match="train.init_from: train.continue_lr: .*legacy.pt does not record the learning rate"):
        TranslationTrainer(config, log=lambda _: None)
