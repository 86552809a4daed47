"""The phase runner: Algorithm 1's phases (``drga/runner/phases.py``) for any task, written once.

For every phase of the plan: load its starting weights, make its optimisers, then epoch by epoch
train, evaluate on dev, keep the best checkpoint, stop early after ``train.patience`` epochs
without a better dev score, and write ``last.pt`` (atomic) so that ``--resume`` continues exactly
where an interrupted run stopped. Then the final report and ``results.json``. What happens is told
to the run's callbacks (:mod:`drga.runner.callbacks`): the loggers ``run.report_to`` names
(TensorBoard, one sibling run per arm on a shared step axis; a CSV file) and the caller's own.

Started by ``torchrun`` it trains as N data-parallel processes (``drga/runtime/distributed.py``,
docs/distributed.md): DDP over what each phase trains, ``data.batch_size`` the global batch, and
only rank 0 logging and writing files.

A task (``drga/runner/task.py``) supplies what differs; each phase's learner (``drga/learners/``:
the network's, REINFORCE, stable-baselines3's) learns its epochs, batch by batch through the loop's
:meth:`PhaseRunner.train_by_updates` or on its own. The loop holds its collaborators, each with one
job: the optimiser step (``drga/runner/optim.py`` · ``OptimiserStep``: what each phase part trains and
its optimiser), best-epoch selection and the checkpoints kept (``drga/runner/selection.py`` ·
``Selection``) and the callbacks; it hands the task's hooks and the learners a
:class:`~drga.runner.context.RunContext`, never itself.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from tqdm.auto import tqdm

from drga.baselines.protocol import AttentionNetwork
from drga.checkpoint_format import CheckpointError, CheckpointPayload
from drga.config import ConfigError, settings_fingerprint
from drga.core.beta import AdjustmentStrength
from drga.core.building import build_policy, build_strength, state_and_action_size
from drga.core.policy import StatePolicy
from drga.files import write_text_atomic
from drga.learners import Learner, make_learner
from drga.learners.context import TrainingStep
from drga.names import Mode, Part, PhaseName, best_checkpoint, counted
from drga.records import EpochRecord, RunResults
from drga.registry import task_spec_of
from drga.runner import checkpoints
from drga.runner.callbacks import Callback, CallbackList, EpochEnd, Evaluation, PhaseEnd, RunEnd, RunStart
from drga.runner.checkpoints import PhaseProgress, RetrofitModules, inherited_plateau_cuts
from drga.runner.context import RunContext, RunState, TaskBatches
from drga.runner.loggers import CSVLogger, report_loggers
from drga.runner.optim import OptimiserStep
from drga.runner.phases import PHASES, Phase, epoch_key, phase_plan, phase_summary
from drga.runner.run_folder import RunFolder, default_run_name, lock_run_dir, log_info
from drga.runner.selection import Selection
from drga.runner.sharding import ShardedEvaluation
from drga.runner.task import Task
from drga.runner.task_options import epoch_hooks, run_checks
from drga.runtime import distributed
from drga.runtime.device import seed_everything

#: The training statistics are reported (:meth:`Callback.on_train_log`) every this many steps.
LOG_INTERVAL = 10


def numbers(values: Mapping[str, Any]) -> dict[str, float]:
    """Python numbers of a statistics dict whose values may be 0-dim tensors (reading them waits for the device)."""
    return {key: float(value) for key, value in values.items()}


class PhaseRunner:
    """Runs a task through Algorithm 1's phases. ``force``: resume although the data changed. ``callbacks``:
    told what the run does (:mod:`drga.runner.callbacks`), after the loggers of ``run.report_to``."""

    def __init__(self, task: Task, resume: bool = False, overwrite: bool = False, log: Callable[[str], None] = log_info,
                 force: bool = False, callbacks: Sequence[Callback] = ()):
        task.settings.validate()
        self.task, self.config, self.force = task, task.config, force
        #: what the entry points read of the task (its config.toml's form, the number its tables report)
        self.registration = task_spec_of(type(task))
        config = self.config
        self.run_dir = Path(config.run.logdir) / default_run_name(config)
        self.device = distributed.setup(config.run.device)  # under torchrun: join the process group
        self.main = distributed.is_main()
        self.log = log if self.main else (lambda _: None)
        self.show_progress = config.run.progress and self.main
        # under torchrun the main process alone reports
        self.callbacks = CallbackList([*report_loggers(config.run.report_to), *callbacks] if self.main else [])
        #: each phase's learner (``drga/learners/``): the agent phase's is the one ``agent.algorithm`` names
        self.learners: dict[str, Learner] = {phase.name: make_learner(phase.trains, config.agent.algorithm) for phase in PHASES}
        one_process = not self.learners[PhaseName.AGENT].supports_ddp
        if distributed.active() and one_process and config.train.agent_epochs > 0:
            raise ConfigError(f"agent.algorithm={config.agent.algorithm} trains in one process only; run it without torchrun")
        #: the folder as it was before this run, put back if the run fails before its first saved epoch
        self.folder = RunFolder(self.run_dir) if self.main else None
        # Held from here to the end of run(): a second process in the folder would overwrite last.pt.
        self.run_lock = lock_run_dir(self.run_dir) if self.main else None
        try:
            self.set_up(resume, overwrite)
        except BaseException:
            self.abandon()
            raise

    def set_up(self, resume: bool, overwrite: bool) -> None:
        """The run folder checked, the data, modules and phase plan ready; a resumed run's state loaded; the callbacks told."""
        config, task = self.config, self.task
        last = self.folder.check(resume, overwrite, self.log) if self.folder is not None else self.run_dir / "last.pt"
        if config.run.threads > 0:
            torch.set_num_threads(config.run.threads)
        self.optimiser = OptimiserStep(config, self.device, self.log)

        seed_everything(config.run.seed)
        batches = task.prepare(self.log, last if resume else None)
        if batches.agent is not None and distributed.active():
            raise ConfigError("data.agent_holdout trains in one process only; run it without torchrun")
        local = TaskBatches(  # this process's: its shard of every global batch, and of dev and test where the task shards them
            distributed.shard(batches.train, pad_empty=True),
            distributed.shard(batches.dev, pad_empty=False) if isinstance(task, ShardedEvaluation) else batches.dev,
            distributed.shard(batches.test, pad_empty=False) if isinstance(task, ShardedEvaluation) else batches.test,
            batches.agent,
        )
        self.train_batches = local.train
        self.agent_batches = local.agent  #: data.agent_holdout (beyond the paper): the agent's own batches
        network = task.build_network(self.log).to(self.device)
        state_size, action_size = state_and_action_size(network, task.probe_batch().to(self.device))
        policy = build_policy(config, state_size, action_size).to(self.device)
        strength = build_strength(config, len(self.train_batches)).to(self.device)
        self.modules = RetrofitModules(network, policy, strength, state_size, action_size)
        self.plan = phase_plan(config.train)
        self.phase_started: Phase | None = None  #: the phase :meth:`start_phase` started last, which :meth:`train_by_updates` trains
        self.state = RunState()
        #: what the task's hooks and the learners receive: a narrow view of the run, not this loop
        self.context = RunContext(task, self.modules, self.state, self.optimiser, self.callbacks, local, self.device, self.run_dir,
                                  self.main, self.log, self.show_progress, self.train_by_updates)
        self.selection = Selection(task, self.modules, self.run_dir, self.main)
        self.pending_resume = self.load_resume(last) if resume else None

        if self.folder is not None:  # only now, the data and the network ready: what a fresh run replaces moves aside
            self.folder.open(self.registration.to_toml(task.settings), replace=not resume)
        state = self.state
        at = (self.plan[state.progress.index].name, state.phase_step) if resume and state.progress.index < len(self.plan) else None
        completed = tuple((record.phase, record.epoch) for record in state.history)
        self.callbacks.on_run_start(RunStart(self.run_dir, task.settings.flat(), tuple(phase.name for phase in self.plan), completed, at))
        epoch_hooks(task).start(self.context, resumed=resume)
        if config.train.init_from and self.main and not resume:
            self.adopt_pretrained(Path(config.train.init_from))

    def abandon(self) -> None:
        """The run failed before its first saved epoch: its folder as it was before it (``RunFolder.abandon``), then unlocked."""
        try:
            if self.folder is not None and self.run_lock is not None:
                self.folder.abandon()
        finally:
            self.release_run_lock()

    def release_run_lock(self) -> None:
        """Let another process train in the run folder (``drga/runtime/run_lock.py``)."""
        if self.run_lock is not None:
            self.run_lock.release()
            self.run_lock = None

    # ------------------------------------------------------------------ the modules, by name

    @property
    def network(self) -> AttentionNetwork:
        return self.modules.network

    @property
    def policy(self) -> StatePolicy:
        return self.modules.policy

    @property
    def strength(self) -> AdjustmentStrength:
        return self.modules.strength

    # ------------------------------------------------------------------ phases and epochs

    def run(self) -> RunResults:
        """Every phase of the plan from where the progress stands, then the final report (what results.json holds)."""
        failed = True
        try:
            while self.state.progress.index < len(self.plan):
                self.run_phase(self.plan[self.state.progress.index])
                self.state.progress = PhaseProgress(index=self.state.progress.index + 1)
            results = self.final_report()
            if self.folder is not None:
                self.folder.keep()
            failed = False
            return results
        finally:
            self.callbacks.close()
            if failed:  # before its first saved epoch: the folder as it was (RunFolder.abandon); after, nothing to undo
                self.abandon()
            else:
                self.release_run_lock()

    def run_phase(self, phase: Phase) -> None:
        """The epochs of one phase (continuing a resumed one): train, evaluate on dev, select, stop early, save."""
        train, progress, history = self.config.train, self.state.progress, self.state.history
        pending = self.pending_resume
        if pending is None:
            progress.start_step = self.state.global_step  # TensorBoard's step axis of this arm starts here
        self.start_phase(phase, fresh=pending is None)
        if pending is not None:
            self.optimiser.load_state_dict(pending)
            self.pending_resume = None
        elif phase.start_is_candidate:  # both network-training arms compete over the same network epochs
            scores = self.evaluate_dev(phase, epoch=0)
            improved = self.selection.consider(phase, scores, 0, progress, self.optimiser.plateau_cuts)
            self.callbacks.on_evaluation(Evaluation(phase.name, 0, self.state.phase_step, self.dev_numbers(scores), improved,
                                                    self.run_dir))
        epochs = phase.epochs(train)
        self.log(f"\n== phase {phase.name}: {counted(epochs, 'epoch')} (loss: {phase.legend}; *: best dev score so far) ==")
        while not progress.done and progress.epoch < epochs:
            epoch = progress.epoch + 1
            self.epoch_batches(phase).set_epoch(epoch_key(phase, epoch))
            started = time.time()
            train_stats = self.train_epoch(phase, epoch, epochs)
            scores = self.evaluate_dev(phase, epoch)
            improved = self.selection.consider(phase, scores, epoch, progress, self.optimiser.plateau_cuts)
            elapsed = time.time() - started  # up to its selection, before the callbacks hear of it
            self.callbacks.on_evaluation(Evaluation(phase.name, epoch, self.state.phase_step, self.dev_numbers(scores), improved,
                                                    self.run_dir))
            if not improved and progress.stale % train.plateau_patience == 0:
                self.optimiser.cut_on_plateau()
            progress.epoch = epoch
            seconds = round(elapsed, 2)
            spent = sum(r.seconds or 0.0 for r in history if r.phase == phase.name) + seconds
            out_of_time = phase.out_of_time(train, spent, seconds)
            progress.done = (bool(train.patience) and progress.stale >= train.patience) or out_of_time
            dev = {Mode(mode): numbers for mode, numbers in self.dev_numbers(scores).items()}
            history.append(EpochRecord(phase.name, epoch, seconds, dict(train_stats), dev))
            self.callbacks.on_epoch_end(EpochEnd(phase.name, epoch, epochs, self.state.phase_step, seconds, dict(train_stats),
                                                 self.dev_numbers(scores), improved, self.run_dir))
            self.log_epoch(phase, epoch, epochs, scores, train_stats, improved, elapsed)
            self.save_last()
        if epochs and progress.epoch < epochs:
            spent = sum(r.seconds or 0.0 for r in history if r.phase == phase.name)
            if phase.seconds_budget(train) is not None and not (train.patience and progress.stale >= train.patience):
                self.log(f"   time budget: {spent:.0f} s of {phase.seconds_budget(train):.0f} s spent; another epoch would pass it")
            else:
                self.log(f"   early stop: no better dev score for {counted(train.patience, 'epoch')}")
        self.callbacks.on_phase_end(PhaseEnd(phase.name, progress.epoch, epochs, progress.epoch < epochs, self.run_dir))

    def dev_numbers(self, scores: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Each mode's dev scores as the task's numbers, a new dict each call: a callback that changes its copy changes no record."""
        return {mode: epoch_hooks(self.task).numbers(result) for mode, result in scores.items()}

    def start_phase(self, phase: Phase, fresh: bool) -> None:
        """Load the phase's starting weights (fresh start only), set what trains, and make its optimisers."""
        distributed.barrier()  # under torchrun: rank 0's checkpoints are written before any process reads them
        start_cuts = 0  # train.continue_lr: the plateau cuts of the rate the starting network was selected at
        for source, part in phase.starts_from if fresh else ():
            path = best_checkpoint(self.run_dir, source)
            if not path.exists() and any(r.phase == source for r in self.state.history):  # it ran, and its best file is gone
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
            if path.exists():
                payload = self.context.load_model(path, network=part == Part.NETWORK, policy=part == Part.AGENT)
                if part == Part.NETWORK and self.config.train.continue_lr:
                    start_cuts = inherited_plateau_cuts(payload, path)
        self.phase_started = phase
        self.optimiser.start_phase(phase.trains, self.network, self.policy, self.strength, epoch_hooks(self.task).warmup_steps(phase),
                                   self.train_batches, start_cuts, stepped=self.learners[phase.name].steps)

    def epoch_batches(self, phase: Phase) -> Any:
        """What an epoch of ``phase`` passes over: the training batches, or for the agent phase the
        agent's held-out batches when ``data.agent_holdout`` keeps some (beyond the paper)."""
        return self.agent_batches if phase.agent_only and self.agent_batches is not None else self.train_batches

    def train_epoch(self, phase: Phase, epoch: int, epochs: int) -> dict[str, float]:
        """One epoch of ``phase`` by its learner (``drga/learners/``), which learns it batch by batch through
        :meth:`train_by_updates` or on its own; the loop applies what it returns (the agent's new weights, its
        steps) and returns its statistics."""
        learned = self.learners[phase.name].train_epoch(self.context, epoch, epochs)
        if learned.policy_state is not None:
            self.policy.load_state_dict(learned.policy_state)
        self.state.global_step += learned.steps
        return learned.stats

    def update(self, training_step: Callable[[Any], TrainingStep], batch: Any) -> dict[str, Any]:
        """One update on ``batch``: the learner's ``training_step`` (its losses keyed by part, its statistics), then the
        optimiser step of those losses (the loop alone steps, ``drga/runner/optim.py``); the statistics with each
        part's gradient norm before clipping (``grad_norm_<part>``)."""
        losses, stats = training_step(batch)
        norms = self.optimiser.step(losses)
        return {**stats, **{f"grad_norm_{part.value}": norm for part, norm in norms.items()}}

    def train_by_updates(self, training_step: Callable[[Any], TrainingStep], epoch: int, epochs: int) -> dict[str, float]:
        """One pass over the epoch's batches of the phase started last, each an :meth:`update` of a learner's
        ``training_step``; the mean of each statistic (under torchrun: over the processes too). Learners ask for
        it through ``context.train_by_updates``."""
        phase = self.phase_started
        if phase is None:
            raise RuntimeError("an epoch of updates before any phase started")
        distributed.seed_epoch(self.config.run.seed, epoch_key(phase, epoch))
        self.network.train(not phase.network_frozen)
        self.policy.train()
        # The step's statistics stay on the device, summed in float64 (the very sums Python floats
        # would give); reading them waits for the device, so they are read every LOG_INTERVAL steps.
        sums: dict[str, Any] = {}
        interval_started, interval_sequences = time.perf_counter(), 0
        batches = self.epoch_batches(phase)
        self.optimiser.start_epoch(epoch, epochs, len(batches))
        bar = tqdm(batches, desc=f"{phase.name} {epoch}/{epochs}", leave=False, disable=not self.show_progress)
        for step, batch in enumerate(bar, start=1):
            batch = batch.to(self.device)
            self.optimiser.start_batch(closes_window=step == len(batches))
            with self.optimiser.autocast():
                stats = self.update(training_step, batch)
            for key, value in stats.items():
                value = value.double() if isinstance(value, Tensor) else value
                sums[key] = sums[key] + value if key in sums else value
            self.state.global_step += 1
            interval_sequences += batch.size
            if self.state.global_step % LOG_INTERVAL == 0:
                now = time.perf_counter()
                speed = {"sequences_per_second": interval_sequences / max(now - interval_started, 1e-9)}
                self.context.report_scalars(phase.name, {**numbers(stats), **speed}, self.state.phase_step)
                interval_started, interval_sequences = now, 0
                if self.show_progress:
                    bar.set_postfix({k: f"{float(v) / step:.3f}" for k, v in sums.items() if k in ("task_loss", "reward")})
        return distributed.mean_over_processes({key: value / max(len(batches), 1) for key, value in numbers(sums).items()})

    # ------------------------------------------------------------------ evaluation, selection, resume

    def evaluate_dev(self, phase: Phase, epoch: int) -> dict[str, Any]:
        scores: dict[str, Any] = {mode: self.context.evaluate_split("dev", mode) for mode in phase.dev_modes}
        epoch_hooks(self.task).after_dev_evaluation(self.context, phase, epoch)
        return scores

    def save_last(self) -> None:
        """``last.pt`` after every epoch: everything :meth:`load_resume` needs to continue exactly."""
        self.selection.save_last(self.plan[self.state.progress.index], self.state, self.optimiser.state_dict())
        if self.folder is not None:
            self.folder.keep()  # the new run has an epoch to keep: what it replaced goes

    def load_resume(self, path: Path) -> CheckpointPayload:
        """Continue from ``last.pt``: the same configuration and data (both checked before any weight is
        loaded, so that changed data are named as such), the model, progress, history and random state."""
        payload = checkpoints.read_model(path, self.config.network.name)
        saved = run_checks(self.task).saved_flat_config(payload.config)
        checkpoints.check_same_config(path, saved, self.task.settings.flat(), run_checks(self.task).resumable_changes)
        self.check_same_data(payload)
        checkpoints.load_weights(self.modules, payload, path)
        self.state.progress = PhaseProgress.from_dict(payload.progress)
        self.state.history = payload.history
        self.state.global_step = payload.global_step
        checkpoints.restore_random_state(payload)
        done = counted(self.state.progress.epoch, "epoch")
        self.log(f"resuming {self.run_dir}: phase {self.plan[self.state.progress.index].name}, {done} done")
        return payload

    def adopt_pretrained(self, source: Path) -> None:
        """``train.init_from``: the given network checkpoint becomes this run's ``pretrain_best.pt``, so that runs differing
        only in what DRGA does start from one network (pretraining is skipped)."""
        try:
            payload = CheckpointPayload.read(source)
        except CheckpointError as error:
            raise ConfigError(f"train.init_from: {error}") from None
        if payload.net_name != self.config.network.name:
            raise ConfigError(f"train.init_from: {source} holds the network '{payload.net_name}', not '{self.config.network.name}'")
        run_checks(self.task).check_adoptable(source, payload)
        if self.config.train.continue_lr:
            try:
                inherited_plateau_cuts(payload, source)  # refused now, not when the first phase after it starts
            except CheckpointError as error:
                raise ConfigError(f"train.init_from: {error}") from None
        self.context.load_model(source, policy=False)  # its network must fit this configuration (sizes)
        shutil.copyfile(source, best_checkpoint(self.run_dir, PhaseName.PRETRAIN))
        self.log(f"start  from {source} (pretraining skipped)")

    def check_same_data(self, payload: CheckpointPayload) -> None:
        """Refuse to resume ``payload`` (``last.pt``, before any weight is loaded) on data that changed since the run
        started, unless ``--force``; even then, refuse what the task's ``check_continuable`` refuses."""
        recorded, now = payload.data_checksum, run_checks(self.task).data_fingerprint()
        if recorded is None or now is None or recorded == now:
            return
        last = self.run_dir / "last.pt"
        if not self.force:
            raise CheckpointError(
                f"cannot resume {last}: the data differ from those the run was trained on (fingerprint {recorded}, now {now}); "
                "restore the data, start a new run, or resume anyway with --force"
            )
        run_checks(self.task).check_continuable(last, payload)
        self.log(f"resuming on changed data (--force): fingerprint {recorded} → {now}")

    def fingerprint(self) -> dict[str, str | None]:
        """What results.json records so that another configuration can be told from this run's: the fingerprint of its
        settings (:func:`drga.config.settings_fingerprint`) and of its data as read; ``drga sweep`` skips a finished run
        only when both equal the new run's."""
        return {"settings": settings_fingerprint(self.task.settings.flat()), "data": run_checks(self.task).content_fingerprint()}

    # ------------------------------------------------------------------ reporting

    def log_epoch(self, phase: Phase, epoch: int, epochs: int, scores: Mapping[str, Any], train_stats: Mapping[str, float],
                  improved: bool, elapsed: float) -> None:
        """The epoch's console line (``*``: the best epoch so far)."""
        parts = [*epoch_hooks(self.task).epoch_summary(scores, train_stats), f"loss {train_stats['task_loss']:.4f}"]
        self.log(f"   {phase.name} {epoch}/{epochs}: " + ", ".join(parts) + (" *" if improved else "") + f" [{elapsed:.1f}s]")

    def final_report(self) -> RunResults:
        """The task's test report of every selected checkpoint; ``results.json`` and each arm's HParams entry."""
        distributed.barrier()  # under torchrun: every process reads rank 0's best checkpoints
        results, note = self.task.final_report(self.context, self.selection.best_checkpoints(self.plan))
        results = dataclasses.replace(
            results,
            phases=phase_summary(self.state.history, self.config.train),  # each phase's epochs and wall seconds
            fingerprint=self.fingerprint(),  # its settings and data, which drga sweep compares before skipping it
        )
        if self.main:
            metric = self.registration.report.metric  # the task's registration says which number its tables report
            self.publish(results, checkpoints.arm_metrics(results.rows, metric), note)
        return results

    def publish(self, results: RunResults, metrics: Mapping[str, Mapping[str, float]], note: str) -> None:
        """Write ``results.json``, tell the callbacks (each arm's final ``metrics``: TensorBoard's HParams tab), and say where they are."""
        import json

        write_text_atomic(self.run_dir / "results.json", json.dumps(results.to_dict(), indent=2))
        self.callbacks.on_run_end(RunEnd(copy.deepcopy(results), metrics, self.run_dir))
        self.log(f"\nresults: {self.run_dir / 'results.json'}{note}")
        if "tensorboard" in self.config.run.report_to:
            self.log(f"TensorBoard: tensorboard --logdir {self.run_dir / 'tb'}")
        if "csv" in self.config.run.report_to:
            self.log(f"metrics: {self.run_dir / CSVLogger.FILE_NAME}")

