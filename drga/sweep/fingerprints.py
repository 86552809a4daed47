"""Whether a run of a sweep that is already there was made with the settings and data the sweep would give it now.

A finished run's results.json, and its result file (``--results``), record ``fingerprint``: a hash of its
resolved settings (:func:`drga.config.settings_fingerprint`, without what says only where files are or how
progress shows, :data:`drga.config.UNFINGERPRINTED`) and one of its data as read
(``DatasetSplits.content_fingerprint``). The sweep resolves each run's configuration as its `drga train`
command would (:func:`drga.sweep.grid.train_overrides`) and skips a finished run only when both are the
same; where they differ it names the runs and the settings that differ, and refuses to go on (or, with
``--rerun-changed``, trains them again). A settings fingerprint made by another version of the toolkit
(another set of fingerprinted keys) does not match, and then the ``config`` block decides, as for a
result file written before fingerprints were recorded: it is compared key by key, over the keys it
has (a setting added to the toolkit since is not compared); such an older file's data are not
compared. A record with neither is skipped as before, and the sweep says that it was not compared.
An interrupted run's ``config.toml`` is compared the same way before it is resumed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drga.config import ConfigError, data_difference, fingerprinted, flatten, refuse_unread_settings, settings_fingerprint
from drga.errors import UserError
from drga.names import counted
from drga.registry import task_of_config
from drga.runner.task import data_fingerprint_of
from drga.sweep.grid import DEFAULT_CLI, OPTION_SETTINGS, Run, run_settings, train_overrides

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Differing settings named per run in the refusal (then "and N more").
SHOWN_KEYS = 6
#: Runs named in the refusal (then "and N more").
SHOWN_RUNS = 12


@dataclass
class Comparison:
    """What a run that is there was made with, against what the sweep would give it now."""

    run: Run
    source: Path | None = None  #: the record compared (a result file, results.json or config.toml)
    differences: list[str] = field(default_factory=list)  #: "section.key: old → new", or the data's
    note: str = ""  #: what was not compared, said beside the run's [skip] line

    @property
    def differs(self) -> bool:
        return bool(self.differences)


def _value(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def differing_keys(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The fingerprinted settings of two flat configurations that differ, as "key: recorded → now"; keys one of
    them lacks (a setting added to the toolkit since the record) are not compared."""
    old, new = fingerprinted(recorded), fingerprinted(now)
    return [f"{key}: {_value(old[key])} → {_value(new[key])}" for key in sorted(set(old) & set(new)) if old[key] != new[key]]


class SettingsCheck:
    """Each run's configuration as its `drga train` command resolves it, and its data's fingerprint (each data set read
    once), compared with what a run that is there records."""

    def __init__(self, args: argparse.Namespace, log: Callable[[str], None] = print):
        self.args, self.log = args, log
        self._data: dict[str, str | None] = {}
        self._data_notes: dict[str, str] = {}

    def config(self, run: Run) -> Any:
        """The run's resolved configuration (drga.tasks.run_config.load_run_config, as `drga train` resolves it)."""
        from drga.baselines import NETWORKS
        from drga.config import load_config
        from drga.tasks.run_config import load_run_config

        overrides = train_overrides(run, self.args)
        if run.net not in NETWORKS:  # a network that --cli registers: the classification defaults, as that command gives them
            return load_config(self.args.config, overrides)
        return load_run_config(self.args.config, overrides)

    def threads(self, run: Run) -> int:
        """The torch threads the run will use: its ``run.threads`` when set, else the sweep's ``--threads-per-run``
        (its OMP_NUM_THREADS, drga/sweep/child.py)."""
        try:
            config = self.config(run)
        except UserError:
            return max(1, self.args.threads_per_run or 1)
        return getattr(config, "experiment", config).run.threads or max(1, self.args.threads_per_run or 1)

    def data_fingerprint(self, config: Any) -> tuple[str | None, str]:
        """The fingerprint of the configured data as read (None where they cannot be read here), and a note saying why not."""
        key = json.dumps(config.to_dict().get("data"), sort_keys=True, default=str) + json.dumps(
            {k: v for k, v in config.to_dict().get("nmt", {}).items() if k in ("source_lang", "target_lang", "train_files",
                                                                             "dev_files", "test_files")}, sort_keys=True)
        if key not in self._data:
            try:
                self._data[key] = data_fingerprint_of(task_of_config(config).task, config, "drga sweep")
            except (UserError, OSError, ValueError) as error:
                self._data[key] = None
                self._data_notes[key] = f"its data not compared: they cannot be read here ({str(error).splitlines()[0]})"
        return self._data[key], self._data_notes.get(key, "")

    def compare_finished(self, run: Run) -> Comparison:
        """A finished run's records (its result file and its results.json) against the run the sweep would make now."""
        records = [path for path in (run.result_file, run.folder / "results.json") if path is not None and path.exists()]
        comparison = Comparison(run)
        notes = []
        for path in records:
            try:
                payload = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                notes.append(f"{path.name} unreadable: not compared")
                continue
            found = self.compare_record(run, path, payload if isinstance(payload, dict) else {})
            if found.differs:
                return found
            if found.note and found.note not in notes:
                notes.append(found.note)
        comparison.note = "; ".join(notes)
        return comparison

    def compare_record(self, run: Run, path: Path, payload: dict[str, Any]) -> Comparison:
        recorded_config = payload.get("config")
        fingerprint = payload.get("fingerprint") or {}
        comparison = Comparison(run, path)
        if not isinstance(recorded_config, dict) and not fingerprint:
            comparison.note = "recorded without its settings: not compared"
            return comparison
        try:
            config = self.config(run)
        except (UserError, OSError) as error:
            comparison.note = f"settings not compared: this sweep's cannot be resolved here ({str(error).splitlines()[0]})"
            return comparison
        now = config.flat()
        recorded = flatten(recorded_config) if isinstance(recorded_config, dict) else {}
        if fingerprint.get("settings") is not None:
            if fingerprint["settings"] != settings_fingerprint(now):
                # the config block decides: a hash made by another version (another set of fingerprinted keys) is no difference
                comparison.differences = differing_keys(recorded, now) if recorded else [
                    f"settings fingerprint: {fingerprint['settings']} → {settings_fingerprint(now)}"]
                if comparison.differences:
                    return comparison
                comparison.note = "its settings fingerprint is another version's: its settings compared key by key"
        else:
            comparison.differences = differing_keys(recorded, now)
            if comparison.differences:
                return comparison
            comparison.note = "recorded before fingerprints: its settings compared key by key, its data not"
            return comparison
        if fingerprint.get("data") is not None:
            data, note = self.data_fingerprint(config)
            if data is None:
                comparison.note = "; ".join(filter(None, (comparison.note, note)))
            elif data != fingerprint["data"]:
                comparison.differences = [data_difference(fingerprint["data"], data)]
        return comparison

    def compare_interrupted(self, run: Run) -> Comparison:
        """An interrupted run's config.toml against the run the sweep would resume (its data are checked by the resume itself)."""
        path = run.folder / "config.toml"
        comparison = Comparison(run, path)
        try:
            recorded = flatten(tomllib.loads(path.read_text(encoding="utf-8")))
            now = self.config(run).flat()
        except (OSError, tomllib.TOMLDecodeError, UserError):
            return comparison
        comparison.differences = differing_keys(recorded, now)
        return comparison


def check_settings(runs: list[Run], check: SettingsCheck) -> None:
    """Resolve every run's configuration before any run starts, as its `drga train` would (:meth:`SettingsCheck.config`),
    and refuse the sweep naming the runs whose settings `drga train` would refuse: a misspelt ``--set`` key, a setting
    none of a run's network or data set reads, the tsv data set without its file. Each would otherwise start, fail, and
    say why only in its train.log. Not with another ``--cli``, whose registrations this process does not see."""
    if check.args.cli != DEFAULT_CLI:  # another entry point (--cli) may register networks, data sets and settings unknown here
        return
    problems: dict[str, list[str]] = {}
    for item in check.args.set:
        key = item.split("=", 1)[0].strip()
        if key in OPTION_SETTINGS:
            raise UserError(f"--set {item}: the sweep sets {key} of each run itself ({OPTION_SETTINGS[key]}); drop the --set")
    for run in runs:
        try:
            config = check.config(run)
            shared = getattr(config, "experiment", config)  # a translation configuration holds the shared sections
            refuse_unread_settings(shared, run_settings(run, check.args))
        except UserError as error:
            problems.setdefault(str(error), []).append(run.name)
            continue
        data = shared.data
        if data.dataset == "tsv" and not (data.tsv_path or data.data_dir):
            problems.setdefault("the tsv data set needs its file: give --set data.tsv_path=PATH (a label<TAB>text file, "
                                "or a folder with train.tsv, dev.tsv and test.tsv)", []).append(run.name)
    if not problems:
        return
    lines = [f"{counted(sum(map(len, problems.values())), 'run')} of this sweep would be refused by `drga train`; none was started:"]
    for message, names in problems.items():
        shown = ", ".join(names[:SHOWN_RUNS]) + (f" and {len(names) - SHOWN_RUNS} more" if len(names) > SHOWN_RUNS else "")
        lines.append(f"  {shown}: {message}")
    raise UserError("\n".join(lines))


def refusal(changed: list[Comparison]) -> UserError:
    """The error that names the runs made with other settings, what differs, and what to do."""
    lines = [f"{len(changed)} run{'s' if len(changed) > 1 else ''} already in the sweep's folders {'were' if len(changed) > 1 else 'was'} "
             "made with other settings or data than this sweep gives them; a table of them would not be what its title says:"]
    for comparison in changed[:SHOWN_RUNS]:
        shown = comparison.differences[:SHOWN_KEYS]
        more = len(comparison.differences) - len(shown)
        lines.append(f"  {comparison.run.name} ({comparison.source}): " + "; ".join(shown) + (f"; and {more} more" if more > 0 else ""))
    if len(changed) > SHOWN_RUNS:
        lines.append(f"  and {len(changed) - SHOWN_RUNS} more runs")
    lines.append("Give the settings they were made with, or another --logdir (and --results), or train them again with "
                 "--rerun-changed (each one's old run is deleted only once its new run has saved its first epoch)")
    return UserError("\n".join(lines))


def settings_lines(runs: list[Run], check: SettingsCheck) -> list[str]:
    """What a results table says of the settings it was made from: the resolved settings every run shares that are not
    the defaults (network, data set and seed aside), and those that differ between its cells."""
    try:
        configs = {run.name: check.config(run) for run in runs}
    except (UserError, OSError, ConfigError) as error:
        return [f"Settings: not resolved here ({str(error).splitlines()[0]})."]
    if not configs:
        return []
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        cells.setdefault((run.net, run.dataset), fingerprinted(configs[run.name].flat()))
    own = {"data.dataset", "network.name", "run.seed"}
    defaults: dict[str, Any] = {}
    for config in configs.values():  # each task's own defaults (translation's [nmt] too)
        defaults = {**fingerprinted(_defaults(config).flat()), **defaults}
    keys = sorted({key for flat in cells.values() for key in flat if key not in own and flat[key] != defaults.get(key, object())})
    shared, varying = [], []
    for key in keys:
        values = {cell: flat.get(key) for cell, flat in cells.items()}
        if len({json.dumps(value, sort_keys=True) for value in values.values()}) == 1:
            shared.append(f"{key}={_value(next(iter(values.values())))}")
        else:
            varying.append(f"{key} = " + ", ".join(f"{_value(value)} ({net}/{dataset})" for (net, dataset), value in values.items()))
    lines = ["Settings of every run (resolved, where not the defaults; network, data set and seed aside): "
             + (", ".join(f"`{item}`" for item in shared) or "the defaults") + "."]
    if varying:
        lines.append("Per cell: " + "; ".join(varying) + ".")
    if any(run.status == "finished earlier" for run in runs):  # said only of a sweep that skipped some
        lines.append("A run finished earlier was checked against these settings before it was skipped (the fingerprint its "
                     "results.json records; docs/distributed.md, \"A sweep never mixes settings\").")
    return lines


def _defaults(config: Any) -> Any:
    """The default configuration of ``config``'s task."""
    return task_of_config(config).defaults()
