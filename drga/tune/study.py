"""A ``drga tune`` study: Optuna searches settings of `drga train`, its trials kept in a database.

Each trial is one run (classification or translation) in ``<study folder>/trial-<n>/`` with the
trial's values on top of the base configuration. Its score is the best dev score of the plan's last
phase (co-training, or the agent phase when co-training gets no epochs), in the mode that selects
that phase's best epoch: the first part of the task's selection key (dev accuracy for classification,
dev BLEU or minus the perplexity for translation, as ``nmt.select_metric`` says). Test data is
never read for the choice. Every epoch of that phase reports its dev score to Optuna, whose median
pruner stops a trial that does worse than the median of the earlier trials at the same epoch.

The study lives in a database: by default an SQLite file in the study folder, or any SQLAlchemy URL
(``postgresql://…``) that several machines, or several `drga tune` processes, share. The same
command continues a study: trials that ended are kept, an interrupted trial (Ctrl-C) is queued
again and resumes from its ``last.pt``, and one whose process was killed outright is retried the
same way once its heartbeat is :data:`GRACE_SECONDS` old. The best trial's settings are written
as a config file for `drga train --config` after every trial that improved on the best.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drga.config import data_difference, fingerprinted
from drga.errors import UserError
from drga.files import write_text_atomic, writing
from drga.names import Split, counted
from drga.records import RunResults
from drga.registry import task_of_config
from drga.runner.phases import Phase, phase_plan
from drga.runner.task import data_fingerprint_of, dev_selection_key
from drga.runner.task_options import tunable
from drga.tasks.run_config import experiment, load_run_config, run_config_toml
from drga.tune.pruning import ReportAndPrune
from drga.tune.space import Dimension, grid, overrides

#: A running trial writes its heartbeat this often; a trial whose heartbeat is GRACE_SECONDS old was
#: killed outright, and is retried from its last.pt.
HEARTBEAT_SECONDS = 15
GRACE_SECONDS = 60
#: Times a killed trial is retried.
RETRIES = 3
#: Trials listed in the closing summary.
SHOWN_TRIALS = 10


@dataclass
class TuneSettings:
    """A study as the command line describes it."""

    config: str | None  #: the base TOML file
    base: list[str]  #: its ``section.key=value`` overrides (``--set`` and the options)
    dimensions: list[Dimension]
    trials: int  #: trials to finish (completed or pruned), counting the study's earlier ones
    folder: Path  #: the trials' run folders, the default SQLite file and best.toml
    study_name: str
    storage: str | None = None  #: an SQLAlchemy URL; None: sqlite in ``folder``
    sampler: str = "tpe"  #: tpe or grid
    sampler_seed: int | None = None
    prune: bool = True
    best_path: Path | None = None  #: default ``folder / "best.toml"``
    log: Callable[[str], None] = field(default=print, repr=False)

    @property
    def storage_url(self) -> str:
        return self.storage or f"sqlite:///{(self.folder / 'study.db').resolve()}"

    @property
    def storage_file(self) -> str:
        """The file a SQLite storage writes (what a full disk under it is said about), else the storage's URL."""
        url = self.storage_url
        return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url

    @property
    def best_file(self) -> Path:
        return self.best_path or self.folder / "best.toml"


def optuna_module() -> Any:
    try:
        import optuna
    except ImportError:
        raise UserError("drga tune needs Optuna: pip install 'drga[tune]'") from None
    return optuna


def open_study(settings: TuneSettings) -> Any:
    """The study in its database, created or continued (the same name, the same storage)."""
    optuna = optuna_module()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # The heartbeat and the retry of killed trials are marked experimental (since Optuna 2.8); said once in the docs.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    settings.folder.mkdir(parents=True, exist_ok=True)
    # SQLite: several local processes may share the file; wait for its lock instead of failing.
    engine = {"connect_args": {"timeout": 60}} if settings.storage_url.startswith("sqlite") else {}
    storage = optuna.storages.RDBStorage(
        settings.storage_url, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_SECONDS, grace_period=GRACE_SECONDS,
        heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=RETRIES),
    )
    if settings.sampler == "grid":
        sampler = optuna.samplers.GridSampler(grid(settings.dimensions), seed=settings.sampler_seed)
    else:  # constant_liar: workers sharing the study do not all pick what one of them is trying now
        sampler = optuna.samplers.TPESampler(seed=settings.sampler_seed, constant_liar=True)
    pruner = optuna.pruners.MedianPruner() if settings.prune else optuna.pruners.NopPruner()
    return optuna.create_study(study_name=settings.study_name, storage=storage, sampler=sampler, pruner=pruner,
                               direction="maximize", load_if_exists=True)


def trial_config(settings: TuneSettings, params: Mapping[str, Any], run_name: str | None = None) -> Any:
    """The configuration of a trial with ``params``: in its run folder, or (no ``run_name``) as `drga train` would run it."""
    where = [f"run.logdir={settings.folder}", f"run.run_name={run_name}", "run.progress=false"] if run_name else []
    return load_run_config(settings.config, [*settings.base, *overrides(dict(params), settings.dimensions), *where])


def objective_phase(config: Any) -> Phase:
    """The phase whose best dev score a trial is scored by: the last of the plan."""
    plan = phase_plan(experiment(config).train)
    if not plan:
        raise UserError("the configuration trains no phase: give some phase epochs")
    return plan[-1]


def objective(settings: TuneSettings) -> Callable[[Any], float]:

    def train_trial(trial: Any) -> float:
        params = {dimension.key: dimension.suggest(trial) for dimension in settings.dimensions}
        inherited = trial.user_attrs.get("run_folder")  # a trial queued again, or retried, keeps its folder
        run_name = inherited or f"trial-{trial.number}"
        trial.set_user_attr("run_folder", run_name)
        config = trial_config(settings, params, run_name)
        phase = objective_phase(config)
        mode = phase.selection_mode(experiment(config).train.select_mode)
        folder = settings.folder / run_name
        resume = (folder / "last.pt").exists() and not (folder / "results.json").exists()

        def log(line: str) -> None:  # the trial's lines into its train.log (reopened: a fresh run empties its folder first)
            folder.mkdir(parents=True, exist_ok=True)
            with writing(folder / "train.log"), open(folder / "train.log", "a", encoding="utf-8") as handle:
                handle.write(line + "\n")

        wall, cpu = time.perf_counter(), time.process_time()
        try:
            try:
                if inherited and (folder / "results.json").exists():  # it had trained to the end before it was stopped
                    results = RunResults.read(folder / "results.json")
                else:
                    pruning = ReportAndPrune(trial, phase.name, mode, lambda record: selection_key(config, record)[0], metric_name(config),
                                             log)
                    from drga.trainer import trainer_for  # the whole toolkit: only when a trial trains

                    # the trial's log first: a run pruned or stopped before its first saved epoch leaves its folder as it
                    # found it (drga/runner/run_folder.py), this log in it
                    log(f"== trial {trial.number} {'resumed' if resume else 'started'}: "
                        + " ".join(f"{key}={value}" for key, value in params.items()))
                    results = trainer_for(config, resume=resume, overwrite=not resume, log=log, callbacks=[pruning]).run()
            finally:  # a pruned trial's cost counts too, and an interrupted one's before it is queued again
                record_cost(trial, wall, cpu)
        except KeyboardInterrupt:  # queued again: the next `drga tune` resumes it from its last.pt
            queue_again(trial.study, trial.number)
            raise
        row = results.row(phase.report_label)
        dev = row.scores(Split.DEV, mode)
        if dev is None:
            raise UserError(f"{folder}: its {phase.report_label} row has no {mode} cell, which the objective reads")
        key = list(selection_key(config, dev))  # the runner's selection key
        trial.set_user_attr("dev", dev)
        trial.set_user_attr("metric", metric_name(config))
        trial.set_user_attr("selection_key", key)
        trial.set_user_attr("epoch", row.epoch_of(mode))
        return float(key[0])

    return train_trial


def selection_key(config: Any, dev: Mapping[str, Any]) -> tuple[float, ...]:
    """The task's selection key (bigger is better) of a dev record: as results.json keeps it, or an epoch's numbers."""
    return dev_selection_key(task_of_config(config).task, config, dev)


def metric_name(config: Any) -> str:
    """What a trial's value is."""
    return tunable(task_of_config(config).task(config)).metric_name()


def record_cost(trial: Any, wall: float, cpu: float) -> None:
    """Add the seconds since ``wall`` (``time.perf_counter``) and ``cpu`` (``time.process_time``, every thread) to the
    trial's ``wall_seconds`` and ``cpu_seconds``: the search's cost, which a trial queued again inherits (a piece killed
    outright, retried after its heartbeat went stale, is not counted)."""
    for key, spent in (("wall_seconds", time.perf_counter() - wall), ("cpu_seconds", time.process_time() - cpu)):
        trial.set_user_attr(key, round(trial.user_attrs.get(key, 0.0) + spent, 2))


def queue_again(study: Any, number: int) -> None:
    """Queue trial ``number`` again, as Optuna's retry of a killed trial does: its values, its run folder and its
    place in a grid (``grid_id``, without which the grid sampler fails to end a grid that a queued trial closes)."""
    optuna = optuna_module()
    trial = next(t for t in study.get_trials(deepcopy=False) if t.number == number)
    study.add_trial(optuna.trial.create_trial(
        state=optuna.trial.TrialState.WAITING, params=trial.params, distributions=trial.distributions,
        user_attrs=trial.user_attrs, system_attrs=trial.system_attrs,
    ))


def finished_trials(study: Any) -> list[Any]:
    optuna = optuna_module()
    return study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED))


def best_trial(study: Any) -> Any | None:
    """The completed trial with the best selection key (the task's: dev accuracy then dev reward, or dev BLEU then
    minus the perplexity); the earliest of equals."""
    optuna = optuna_module()
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if not complete:
        return None
    return max(complete, key=lambda t: (tuple(t.user_attrs.get("selection_key", [t.value])), -t.number))


def describe(trial: Any) -> str:
    values = " ".join(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}" for key, value in trial.params.items())
    state = trial.state.name.lower()
    if state == "complete":
        dev = trial.user_attrs.get("dev", {})
        return f"[trial {trial.number}] {values}: {trial.user_attrs.get('metric', 'dev accuracy')} {trial.value:.4f}, " \
               f"reward {dev.get('reward', float('nan')):.3f} " \
               f"(epoch {trial.user_attrs.get('epoch')})"
    if state == "pruned":
        last = max(trial.intermediate_values) if trial.intermediate_values else 0
        return f"[trial {trial.number}] {values}: pruned after epoch {last} (dev score {trial.intermediate_values.get(last, 0.0):.4f})"
    return f"[trial {trial.number}] {values}: {state}"


def write_best_config(settings: TuneSettings, study: Any, trial: Any) -> Path:
    """The best trial's settings as a TOML file ready for `drga train --config`."""
    config = trial_config(settings, trial.params)
    header = [
        f"# drga tune, study '{settings.study_name}' ({settings.storage_url}): the best of {len(finished_trials(study))} finished trials,",
        f"# trial {trial.number} (run folder {settings.folder / trial.user_attrs.get('run_folder', '?')}), "
        f"{trial.user_attrs.get('metric', 'dev accuracy')} {trial.value:.4f}; its searched values:",
        *[f"#   {key} = {value}" for key, value in trial.params.items()],
        f"# Train with it: drga train --config {settings.best_file}",
        "",
    ]
    write_text_atomic(settings.best_file, "\n".join(header) + run_config_toml(config))
    return settings.best_file


#: The study's user attribute that records what it searches and what it keeps fixed.
DEFINITION = "drga_definition"


def study_definition(settings: TuneSettings) -> dict[str, Any]:
    """What a study is: its search space (each dimension) and its fixed settings (the base configuration's settings that
    shape a run, :func:`drga.config.fingerprinted`, without those a dimension sets)."""
    searched = {dimension.key for dimension in settings.dimensions}
    for dimension in settings.dimensions:
        for _, items in dimension.settings or ():
            searched |= {item.partition("=")[0].strip() for item in items}
    config = load_run_config(settings.config, settings.base)
    base = fingerprinted(config.flat())
    space = [json.loads(json.dumps(dataclasses.asdict(dimension))) for dimension in settings.dimensions]
    data = data_fingerprint_of(task_of_config(config).task, config, "drga tune")  # the files as read, as drga sweep compares them
    return {"search_space": space, "fixed_settings": {key: value for key, value in base.items() if key not in searched}, "data": data}


def distribution(dimension: Dimension) -> Any:
    """The Optuna distribution a dimension's values are drawn from (as :meth:`Dimension.suggest` asks for them)."""
    optuna = optuna_module()
    if dimension.choices is not None:
        return optuna.distributions.CategoricalDistribution(list(dimension.choices))
    low, high = dimension.bounds()
    if isinstance(low, int) and isinstance(high, int):
        return optuna.distributions.IntDistribution(low, high, log=dimension.log)
    return optuna.distributions.FloatDistribution(float(low), float(high), log=dimension.log)


def check_study(settings: TuneSettings, study: Any) -> None:
    """Refuse to continue a stored study whose search space or fixed settings differ from this command's (its trials
    would not be comparable); a new study records them. A study stored by an earlier version, without the record, has
    its search space checked against its trials' distributions, and this command's definition recorded."""
    definition = study_definition(settings)
    stored = study.user_attrs.get(DEFINITION)
    where = f"study '{settings.study_name}' in {settings.storage_url}"
    fix = "continue it with the settings it was made with, or start another study (--study NAME, or another --dir)"
    if stored is None:
        wanted = {dimension.key: distribution(dimension) for dimension in settings.dimensions}
        for trial in study.get_trials(deepcopy=False):
            if trial.distributions and trial.distributions != wanted:
                names = sorted(set(trial.distributions) ^ set(wanted)) or sorted(
                    key for key in wanted if trial.distributions.get(key) != wanted[key])
                raise UserError(f"{where} searched another space than this command (trial {trial.number}: {', '.join(names)}); {fix}")
        study.set_user_attr(DEFINITION, definition)
        return
    differences = []
    old_space = {item["key"]: item for item in stored.get("search_space", [])}
    new_space = {item["key"]: item for item in definition["search_space"]}
    for key in sorted(set(old_space) | set(new_space)):
        if old_space.get(key) != new_space.get(key):
            differences.append(f"searched {key}: {_dimension_text(old_space.get(key))} → {_dimension_text(new_space.get(key))}")
    old_fixed, new_fixed = stored.get("fixed_settings", {}), definition["fixed_settings"]
    for key in sorted(set(old_fixed) & set(new_fixed)):
        if old_fixed[key] != new_fixed[key]:
            differences.append(f"{key}: {json.dumps(old_fixed[key])} → {json.dumps(new_fixed[key])}")
    if stored.get("data") is not None and definition["data"] is not None and stored["data"] != definition["data"]:
        differences.append(data_difference(stored["data"], definition["data"]))
    if differences:
        raise UserError(f"{where} was made with another search space, other fixed settings or other data than this command "
                        "gives: " + "; ".join(differences) + f"; {fix}")
    if stored.get("data") is None and definition["data"] is not None:  # a study recorded before its data were: from now on
        study.set_user_attr(DEFINITION, {**stored, "data": definition["data"]})


def _dimension_text(item: dict[str, Any] | None) -> str:
    if item is None:
        return "not searched"
    if item.get("choices") is not None:
        return ",".join(map(str, item["choices"]))
    return f"{item['low']:g}:{item['high']:g}" + (":log" if item.get("log") else "")


def tune(settings: TuneSettings) -> Any:
    """Run the study until it has ``settings.trials`` finished trials (the grid may end it sooner); return it."""
    optuna = optuna_module()
    with writing(settings.storage_file):  # the storage's own failure to write (sqlite's "disk is full"), said of its file
        study = open_study(settings)
    check_study(settings, study)
    done = len(finished_trials(study))
    left = settings.trials - done
    settings.log(f"[study] '{settings.study_name}' in {settings.storage_url}: {counted(done, 'trial')} finished, {max(left, 0)} to go; "
                 f"run folders in {settings.folder}")
    best = best_trial(study)

    def after_trial(study: Any, trial: Any) -> None:
        nonlocal best
        settings.log(describe(trial))
        leader = best_trial(study) if trial.state == optuna.trial.TrialState.COMPLETE else None  # this trial at least
        if leader is not None and leader.number == trial.number:
            best = trial
            write_best_config(settings, study, trial)

    if left > 0:
        stop_at = optuna.study.MaxTrialsCallback(settings.trials, states=(optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED))
        with writing(settings.storage_file):  # a trial's own files name themselves (drga.files · atomic_path)
            study.optimize(objective(settings), n_trials=left, callbacks=[stop_at, after_trial])
    if best is not None:
        write_best_config(settings, study, best)
    return study


def summary(settings: TuneSettings, study: Any) -> str:
    """The best trials, and where the best settings are."""
    finished = finished_trials(study)
    ranked = sorted(finished, key=lambda t: (t.value if t.state.name == "COMPLETE" else float("-inf")), reverse=True)
    lines = [f"\n{len(finished)} finished trials; the best {min(len(ranked), SHOWN_TRIALS)}:"]
    lines += [describe(trial) for trial in ranked[:SHOWN_TRIALS]]
    best = best_trial(study)
    if best is None:
        lines.append("no trial completed yet")
    else:
        metric = best.user_attrs.get("metric", "dev accuracy")
        lines.append(f"\nbest: trial {best.number}, {metric} {best.value:.4f}; its config: {settings.best_file}")
        lines.append(f"train with it: drga train --config {settings.best_file}")
    return "\n".join(lines)
