"""Issue 62: every mistake and every fault of the machine gets one message, and nothing is lost.

Each test does what a new user did (the command line, real files, tiny runs: hidden size 16, one
epoch a phase) and checks the message, the exit status and what is on disk. The faults of the
machine (a full disk, a folder that cannot be written, a path that is a file, a file that vanished)
are injected into real commands; ``test_every_option_refuses_an_ill_formed_value`` walks every
option of every command, so that a new option is covered without a new test.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import os
import signal
import sys
from pathlib import Path

import pytest

import drga.files
from drga.cli import build_parser, main
from drga.errors import UserError
from drga.runner.callbacks import Callback
from tests.integration.test_trainer import write_keyword_tsv

ROOT = Path(__file__).resolve().parents[2]
#: A tiny run of LSTM+SA: hidden size 16, one epoch a phase.
TINY = [
    "--net",
    "lstm-sa",
    "--no-progress",
    "--report-to",
    "[]",
    "--set",
    "train.pretrain_epochs=1",
    "--set",
    "train.agent_epochs=1",
    "--set",
    "train.cotrain_epochs=1",
    "--set",
    "network.embedding_dim=16",
    "--set",
    "network.hidden_size=16",
    "--set",
    "network.attention_size=16",
    "--set",
    "network.classifier_hidden=16",
    "--set",
    "agent.hidden_sizes=16",
    "--set",
    "data.batch_size=32",
]


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``drga ARGV`` as a user runs it: its exit status (argparse's usage errors too), stdout and stderr."""
    capsys.readouterr()
    try:
        status = main([str(item) for item in argv])
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def one_message(status: int, err: str, code: int = 2) -> str:
    """The command's one error message: the status, no traceback, one line saying ``error:``."""
    assert status == code, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


def leftovers(folder: Path) -> list[str]:
    """Temporary files of an atomic write (drga/files.py) left anywhere under ``folder``."""
    return [str(path) for path in folder.rglob(".*.tmp*")]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished tiny run on the keyword TSV: (its folder, the TSV)."""
    tmp = tmp_path_factory.mktemp("trained")
    good = write_keyword_tsv(tmp / "good.tsv")
    assert main(["train", "--tsv", str(good), "--logdir", str(tmp / "runs"), *TINY]) == 0
    return tmp / "runs" / "tsv-lstm-sa-seed0", good


class At(Callback):
    """Does ``act`` when the run reaches an event (``on_run_start``, or ``on_epoch_end`` of a phase)."""

    def __init__(self, act, phase: str | None = None):
        self.act, self.phase = act, phase

    def on_run_start(self, start):
        if self.phase is None:
            self.act()

    def on_epoch_end(self, epoch):
        if epoch.phase == self.phase:
            self.act()


def with_callback(monkeypatch, callback: Callback) -> None:
    """Every run the command line starts also reports to ``callback`` (as the loggers of run.report_to do)."""
    import drga.runner.loop as loop

    original = loop.report_loggers
    monkeypatch.setattr(loop, "report_loggers", lambda names: [*original(names), callback])


# --- 1. evaluate --tsv FILE scores the whole file --------------------------------------------------


def test_evaluate_scores_every_line_of_a_tsv_file_and_names_an_unknown_label(trained, tmp_path, capsys):
    run, good = trained
    thirty = tmp_path / "thirty.tsv"
    thirty.write_text("".join(good.read_text().splitlines(keepends=True)[:30]))
    status, out, err = cli(["evaluate", run / "cotrain_best.pt", "--tsv", thirty], capsys)
    assert status == 0, err
    assert f"{thirty}, every line (30 examples)" in out and "test (" not in out
    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("pos\tgood good\nneg\tbad bad\nneu\tfine\n")
    message = one_message(*cli(["evaluate", run / "cotrain_best.pt", "--tsv", unknown], capsys)[::2])
    assert "trained on the labels 'neg', 'pos' and these data are labelled 'neg', 'neu', 'pos'" in message
    assert f"label 'neu' first at {unknown}:3" in message and "empty dev split" not in message
    # a file has no splits: --split beside it is refused, not ignored
    message = one_message(*cli(["evaluate", run / "cotrain_best.pt", "--tsv", thirty, "--split", "dev"], capsys)[::2])
    assert "--split applies to a data set with dev and test splits" in message


# --- 2. an ill-formed --device ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "device,hint",
    [
        ("gpu", "did you mean 'cuda'?"),
        ("CPU", "did you mean 'cpu'?"),
        ("mps", "cpu, cuda, cuda:N or auto"),
    ],
)
def test_an_ill_formed_device_is_refused_by_train_predict_and_evaluate(trained, tmp_path, capsys, device, hint):
    run, good = trained
    for argv in (
        ["train", "--tsv", good, "--logdir", tmp_path / "runs", *TINY, "--device", device],
        ["evaluate", run / "cotrain_best.pt", "--device", device],
        ["predict", run / "cotrain_best.pt", "--device", device, "--input", good],
    ):
        status, _, err = cli(argv, capsys)
        assert status == 2 and "Traceback" not in err and "RuntimeError" not in err, (argv, err)
        assert f"'{device}' is not a device this toolkit runs on" in err and hint in err
    assert not (tmp_path / "runs").exists()


# --- 3. settings that nothing reads ----------------------------------------------------------------


@pytest.mark.parametrize(
    "dataset,setting,applies",
    [
        ("tsv", "data.max_sentences=10", "applies to documents (movie-reviews)"),
        ("tsv", "data.phrase_level=true", "applies to SST (sst, sst2)"),
        ("subj", "data.tsv_header=yes", "applies to the tsv data set (your own label<TAB>text file or folder)"),
        ("tsv", "network.kernel_sizes=3,4", "applies to the network cnn-sa"),
    ],
)
def test_a_set_that_nothing_reads_is_refused_naming_what_it_applies_to(trained, tmp_path, capsys, dataset, setting, applies):
    _, good = trained
    data = ["--tsv", good] if dataset == "tsv" else ["--dataset", dataset]
    message = one_message(*cli(["train", *data, "--logdir", tmp_path / "runs", *TINY, "--set", setting], capsys)[::2])
    assert f"--set {setting} {applies}, and nothing here reads it" in message
    assert not (tmp_path / "runs").exists()


def test_a_set_beside_the_option_that_sets_the_same_key_is_refused(trained, tmp_path, capsys):
    _, good = trained
    base = ["train", "--tsv", good, "--logdir", tmp_path / "runs", *TINY]
    message = one_message(*cli([*base, "--set", "data.dataset=mr"], capsys)[::2])
    assert "drop --set data.dataset=mr" in message and "--tsv implies --dataset tsv" in message
    message = one_message(*cli([*base, "--set", "data.tsv_path=other.tsv"], capsys)[::2])
    assert f"--tsv {good} and --set data.tsv_path=other.tsv both set data.tsv_path" in message
    message = one_message(*cli(["train", "--dataset", "subj", "--set", "data.dataset=mr", "--logdir", tmp_path / "runs"], capsys)[::2])
    assert "--dataset subj and --set data.dataset=mr both set data.dataset" in message
    assert not (tmp_path / "runs").exists()


def test_a_config_files_settings_of_other_networks_and_data_sets_are_only_noted(tmp_path):
    """One file serves a sweep over several networks and data sets (experiments/configs/reproduction.toml)."""
    from drga.config import load_config

    toml = tmp_path / "shared.toml"
    toml.write_text('[data]\nmax_sentences = 30\n[network]\nname = "lstm-sa"\nfeedforward_size = 200\n')
    said: list[str] = []
    load_config(toml, report=said.append)
    assert "lstm-sa does not take network.feedforward_size (settings of other networks): not used by this run" in said
    assert "subj does not read data.max_sentences (settings of other data sets): not used by this run" in said


# --- 4. tune refuses a study whose data changed --------------------------------------------------


def test_tune_refuses_to_add_trials_after_the_data_file_changed(tmp_path):
    pytest.importorskip("optuna")
    from drga.tune.space import parse_search
    from drga.tune.study import TuneSettings, check_study, open_study

    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    settings = TuneSettings(
        config=None,
        base=["data.dataset=tsv", f"data.tsv_path={tsv}", "network.name=lstm-sa"],
        dimensions=parse_search(["reward.gamma=0.1:1"]),
        trials=1,
        folder=tmp_path / "study",
        study_name="s",
    )
    check_study(settings, open_study(settings))  # a new study records its data's fingerprint
    check_study(settings, open_study(settings))  # the same data: continued
    with open(tsv, "a") as handle:
        handle.write("pos\tgood good good\n")
    with pytest.raises(UserError, match=r"data as read: fingerprint \w+ → \w+ \(the files changed\)"):
        check_study(settings, open_study(settings))


# --- 5. the sweep checks every run's settings before it starts one --------------------------------


def test_the_sweep_refuses_a_run_that_train_would_refuse_before_starting_any(trained, tmp_path, capsys):
    _, good = trained
    sweep = ["sweep", "--seeds", "0", "--logdir", tmp_path / "runs", "--threads-per-run", "1"]
    message = one_message(*cli([*sweep, "--nets", "lstm-sa", "--datasets", "tsv"], capsys)[::2])
    assert "tsv-lstm-sa-seed0" in message or "1 run" in message
    status, _, err = cli([*sweep, "--nets", "lstm-sa", "--datasets", "tsv"], capsys)
    assert "give --set data.tsv_path=PATH" in err and "--tsv PATH" not in err and "none was started" in err
    status, _, err = cli([*sweep, "--nets", "lstm-sa", "--datasets", "subj", "--set", "train.cotrain_epoch=1"], capsys)
    assert status == 2 and "did you mean 'train.cotrain_epochs'?" in err and "subj-lstm-sa-seed0" in err
    status, _, err = cli([*sweep, "--nets", "lstm-sa", "cnn-sa", "--datasets", "subj", "--set", "network.kernel_sizes=3,4"], capsys)
    assert status == 2 and "subj-lstm-sa-seed0: --set network.kernel_sizes=3,4 applies to the network cnn-sa" in err
    assert "subj-cnn-sa-seed0" not in err
    status, _, err = cli([*sweep, "--nets", "lstm-sa", "--datasets", "subj", "--set", "data.dataset=mr"], capsys)
    assert status == 2 and "the sweep sets data.dataset of each run itself (--datasets)" in err
    assert not (tmp_path / "runs").exists()  # no run started, no train.log


# --- 6. analyze on a translation checkpoint -------------------------------------------------------


def test_analyze_refuses_a_translation_checkpoint_saying_what_to_do_with_it(tmp_path, capsys):
    from drga.checkpoint_format import FORMAT_VERSION, save_atomic

    path = tmp_path / "nmt.pt"
    save_atomic({"format": FORMAT_VERSION, "kind": "model", "task": "translation"}, path)
    message = one_message(*cli(["analyze", path, "--out", tmp_path / "out"], capsys)[::2])
    assert "is a translation checkpoint: translate with it (drga translate" in message and "KeyError" not in message


# --- 7. --logdir naming a file, --run-name naming a checkpoint -------------------------------------


def test_a_logdir_that_is_a_file_and_a_run_name_that_is_a_file_are_named(trained, tmp_path, capsys):
    run, good = trained
    (tmp_path / "notes.txt").write_text("a file\n")
    message = one_message(*cli(["train", "--tsv", good, "--logdir", tmp_path / "notes.txt", *TINY], capsys)[::2])
    assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in message and "--logdir" in message
    message = one_message(*cli(["train", "--tsv", good, "--logdir", run.parent, "--run-name", f"{run.name}/last.pt", *TINY], capsys)[::2])
    assert f"the run folder {run / 'last.pt'} is a file, not a folder" in message and "Errno" not in message


# --- 8. --resume of a run that does not exist ----------------------------------------------------


def test_resume_of_a_run_that_never_was_leaves_no_folder(trained, tmp_path, capsys):
    _, good = trained
    message = one_message(
        *cli(["train", "--tsv", good, "--logdir", tmp_path / "runs", "--run-name", "never", "--resume", *TINY], capsys)[::2]
    )
    assert "nothing to resume" in message
    assert not (tmp_path / "runs" / "never").exists()


# --- 9. SIGTERM during an --overwrite ------------------------------------------------------------


def test_sigterm_before_the_first_epoch_of_an_overwrite_puts_the_old_run_back_at_once(trained, tmp_path, monkeypatch, capsys):
    run, good = trained
    folder = tmp_path / "runs" / "keep"
    assert main(["train", "--tsv", str(good), "--logdir", str(folder.parent), "--run-name", "keep", *TINY]) == 0
    before = snapshot(folder)
    seen = []

    def terminate():  # the old run is aside now; a scheduler's SIGTERM arrives
        seen.append((folder / ".replaced" / "results.json").exists())
        os.kill(os.getpid(), signal.SIGTERM)

    with_callback(monkeypatch, At(terminate))
    status, _, err = cli(["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "keep", "--overwrite", *TINY], capsys)
    assert seen == [True] and status == 130 and "Traceback" not in err
    assert snapshot(folder) == before and not (folder / ".replaced").exists()  # back at once, not at the next drga train
    status, _, err = cli(["predict", folder, "--input", good], capsys)
    assert "holds no .pt file" not in err


# --- 10. --resume from another working directory -------------------------------------------------


def test_resume_from_another_working_directory_finds_the_same_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_keyword_tsv(tmp_path / "a" / "kw.tsv")
    monkeypatch.chdir(tmp_path / "a")

    def stop():
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:  # Ctrl-C in the agent phase: pretraining saved
        with_callback(patch, At(stop, phase="agent"))
        status, _, _ = cli(["train", "--tsv", "kw.tsv", "--logdir", "../runs", *TINY], capsys)
    assert status == 130 and (tmp_path / "runs" / "tsv-lstm-sa-seed0" / "last.pt").exists()
    monkeypatch.chdir(tmp_path / "b")
    # another setting is named with both values
    message = one_message(
        *cli(["train", "--tsv", "../a/kw.tsv", "--logdir", "../runs", "--resume", *TINY, "--set", "train.cotrain_epochs=2"], capsys)[::2]
    )
    assert "train.cotrain_epochs (1 when it started, 2 now)" in message
    status, out, err = cli(["train", "--tsv", "../a/kw.tsv", "--logdir", "../runs", "--resume", *TINY], capsys)
    assert status == 0, err
    assert "resuming" in out and (tmp_path / "runs" / "tsv-lstm-sa-seed0" / "results.json").exists()


# --- 11. a third TSV column ----------------------------------------------------------------------


def test_a_third_tsv_column_is_refused_naming_its_line(tmp_path, capsys):
    path = write_keyword_tsv(tmp_path / "kw.tsv")
    lines = path.read_text().splitlines()
    lines[6] += "\t2019-05-01"
    path.write_text("\n".join(lines) + "\n")
    message = one_message(*cli(["train", "--tsv", path, "--logdir", tmp_path / "runs", *TINY], capsys)[::2])
    assert f"{path}:7: 3 tab-separated columns" in message and "merged into the text" in message


# --- 12. an explicit --data-dir without the data -------------------------------------------------


def test_a_named_data_dir_without_the_data_is_refused_not_replaced_by_another_copy(tmp_path, capsys):
    (tmp_path / "mydata").mkdir()
    message = one_message(
        *cli(["train", "--dataset", "subj", "--data-dir", tmp_path / "mydata", "--logdir", tmp_path / "runs", *TINY], capsys)[::2]
    )
    assert f"not found in {tmp_path / 'mydata'}, the folder --data-dir (data.data_dir) names" in message
    assert "plot.tok.gt9.5000" in message and "nothing else is searched" in message
    assert not (tmp_path / "runs" / "subj-lstm-sa-seed0").exists()


# --- 13. the small ones --------------------------------------------------------------------------


def test_the_sweep_table_says_a_run_was_skipped_only_when_one_was(tmp_path):
    from drga.sweep.fingerprints import SettingsCheck, settings_lines
    from drga.sweep.grid import plan

    runs = plan(["lstm-sa"], ["subj"], [0], tmp_path / "runs")
    check = SettingsCheck(argparse.Namespace(config=None, set=[], cli="drga.cli", threads_per_run=2))
    assert not any("before it was skipped" in line for line in settings_lines(runs, check))
    runs[0].status = "finished earlier"
    assert any("before it was skipped" in line for line in settings_lines(runs, check))


def test_the_sweeps_plan_says_the_threads_its_runs_use(tmp_path):
    from drga.sweep.fingerprints import SettingsCheck
    from drga.sweep.grid import plan
    from drga.sweep.results import projected_compute

    runs = plan(["lstm-sa"], ["subj"], [0, 1], tmp_path / "runs")
    args = argparse.Namespace(config=None, set=["run.threads=1"], cli="drga.cli", threads_per_run=2, jobs=1)
    check = SettingsCheck(args)
    assert [check.threads(run) for run in runs] == [1, 1]  # run.threads wins over --threads-per-run
    assert "1 thread(s) each" in projected_compute(runs, runs, args, [check.threads(run) for run in runs])
    args.set = []
    assert "2 thread(s) each" in projected_compute(runs, runs, args, [check.threads(run) for run in runs])


def test_the_dev_extra_is_the_test_extra():
    from drga.config import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["dev"] == ["drga[test]"] and "pytest>=7.4" in extras["test"]


# --- one rule for faults of the machine ----------------------------------------------------------


def fail_replace(monkeypatch, name: str, error: OSError) -> None:
    """``os.replace`` onto a file called ``name`` fails with ``error`` (a full disk when the file is renamed into place)."""
    real = os.replace

    def replace(source, target, *args, **kwargs):
        if Path(target).name == name:
            raise error
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(drga.files.os, "replace", replace)


def test_a_full_disk_while_writing_the_results_keeps_every_checkpoint(trained, tmp_path, monkeypatch, capsys):
    _, good = trained
    folder = tmp_path / "runs" / "full"
    fail_replace(monkeypatch, "results.json", OSError(errno.ENOSPC, "No space left on device", str(folder / "results.json")))
    message = one_message(*cli(["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "full", *TINY], capsys)[::2], code=1)
    assert f"{folder / 'results.json'}: no space left on the device" in message and "Nothing was left half-written" in message
    assert f"{folder / 'cotrain_best.pt'}" in message and f"{folder / 'last.pt'}" in message  # what was kept, named
    assert not (folder / "results.json").exists() and leftovers(folder) == []
    monkeypatch.undo()
    status, out, err = cli(["evaluate", folder / "cotrain_best.pt", "--tsv", good], capsys)
    assert status == 0, err  # the kept checkpoint is whole


def test_a_full_disk_while_saving_a_checkpoint_leaves_no_half_file_and_the_earlier_one(trained, tmp_path, monkeypatch, capsys):
    _, good = trained
    folder = tmp_path / "runs" / "full"
    fail_replace(monkeypatch, "agent_best.pt", OSError(errno.ENOSPC, "No space left on device", str(folder / "agent_best.pt")))
    message = one_message(*cli(["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "full", *TINY], capsys)[::2], code=1)
    assert "agent_best.pt: no space left on the device" in message and "pretrain_best.pt" in message
    assert not (folder / "agent_best.pt").exists() and (folder / "pretrain_best.pt").exists() and leftovers(folder) == []


def test_a_run_folder_that_cannot_be_written_is_one_message(trained, tmp_path, monkeypatch, capsys):
    _, good = trained
    logdir = tmp_path / "readonly"
    logdir.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: the file system's refusal is injected where a file is made
        import tempfile

        def denied(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied", str(kwargs.get("dir", logdir)))

        monkeypatch.setattr(tempfile, "mkstemp", denied)
    else:
        logdir.chmod(0o500)
    try:
        message = one_message(*cli(["train", "--tsv", good, "--logdir", logdir, *TINY], capsys)[::2])
    finally:
        logdir.chmod(0o700)
    assert "no permission" in message and str(logdir) in message
    assert not (logdir / "tsv-lstm-sa-seed0").exists()  # a run that fails before its first epoch leaves no folder


def test_a_path_that_is_a_folder_where_a_result_goes_is_one_message(trained, tmp_path, monkeypatch, capsys):
    _, good = trained
    folder = tmp_path / "runs" / "blocked"
    with_callback(monkeypatch, At(lambda: (folder / "results.json").mkdir(exist_ok=True), phase="cotrain"))
    message = one_message(*cli(["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "blocked", *TINY], capsys)[::2])
    assert f"{folder / 'results.json'}" in message and "it is a folder, not a file" in message
    assert (folder / "cotrain_best.pt").exists() and leftovers(folder) == []


def test_a_file_that_vanishes_mid_run_is_one_message(trained, tmp_path, monkeypatch, capsys):
    _, good = trained
    folder = tmp_path / "runs" / "vanish"
    with_callback(monkeypatch, At(lambda: (folder / "cotrain_best.pt").unlink(), phase="cotrain"))
    status, _, err = cli(["train", "--tsv", good, "--logdir", folder.parent, "--run-name", "vanish", *TINY], capsys)
    message = one_message(status, err)
    assert "cotrain_best.pt" in message and ("does not exist" in message or "vanished" in message)
    assert (folder / "pretrain_best.pt").exists()


def test_the_sweeps_table_written_into_a_file_is_one_message_and_the_results_stay(tmp_path, capsys):
    finished = tmp_path / "runs" / "subj-lstm-sa-seed0"
    finished.mkdir(parents=True)
    written = '{"results": {}, "history": []}'  # a finished run's results.json, as short as one can be
    (finished / "results.json").write_text(written)
    (tmp_path / "table").write_text("a file where a folder should be\n")
    status, _, err = cli(
        [
            "sweep",
            "--nets",
            "lstm-sa",
            "--datasets",
            "subj",
            "--seeds",
            "0",
            "--logdir",
            tmp_path / "runs",
            "--out",
            tmp_path / "table" / "sweep.md",
        ],
        capsys,
    )
    message = one_message(status, err)
    assert "a part of the path is a file, not a folder" in message
    assert (finished / "results.json").read_text() == written


# --- the guard: every option of every command refuses an ill-formed value ------------------------


def ill_formed(action: argparse.Action) -> list[str] | None:
    """An ill-formed value of an option as typed, by what kind of option it is; None for --help and --version."""
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
        return None
    flag = action.option_strings[0] if action.option_strings else None
    if action.nargs == 0:  # a flag: a value given to it
        return [f"{flag}=yes"]
    if action.choices is not None:
        value = "not-a-choice"
    elif action.type is not None and action.type is not str:  # int, float, a parser of its own
        value = "not-a-number"
    else:
        value = ""  # a string: empty
    return [flag, value] if flag else [value]


def command_with(name: str, sub: argparse.ArgumentParser, tmp: Path, tested: argparse.Action, value: list[str]) -> list[str]:
    """The command with ``tested`` given ``value`` and its other required arguments a placeholder each (a positional's
    value in its place)."""
    argv = [name] if name else []
    for action in sub._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action is tested:
            argv += value
        elif not action.option_strings and action.nargs not in ("*", "?"):
            argv.append(str(tmp / "placeholder"))
        elif action.option_strings and action.required:
            argv += [action.option_strings[0], str(tmp / "out")]
    return argv if name else [*argv, "networks"]


def test_every_option_refuses_an_ill_formed_value(tmp_path, capsys):
    """Every option and argument of every command (the table of drga/cli.py · OPTION_SCOPES walks the same parsers) given
    an ill-formed value: a value to a flag, a choice not offered, a word for a number, an empty string. Exit 2, one
    message naming it, no traceback, nothing trained. A new option is tried without a new test."""
    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    parsers = {"": parser, **commands.choices}
    tried = 0
    for name, sub in parsers.items():
        for action in sub._actions:
            value = ill_formed(action)
            if value is None:
                continue
            argv = command_with(name, sub, tmp_path, action, value)
            status, out, err = cli(argv, capsys)
            shown = "/".join(action.option_strings) or action.metavar or action.dest
            assert status == 2, (argv, status, err[-300:])
            assert "Traceback" not in err + out, argv
            lines = [line for line in err.splitlines() if "error:" in line]
            assert len(lines) == 1 and f"argument {shown}" in lines[0], (argv, err)
            tried += 1
    assert tried > 100  # every option of every command
    assert not (tmp_path / "runs").exists() and not (Path.cwd() / "placeholder").exists()


def test_the_usage_page_says_what_is_refused_and_what_is_only_noted():
    readme = " ".join((ROOT / "docs" / "usage.md").read_text().split())
    assert "never ignored" not in readme
    assert "Refused, with what it applies to:" in readme and "Only noted, in the run's log:" in readme
    assert "a `--set` setting that the run's network or data set does not read" in readme
    assert "exit status 1 for a full disk or an I/O error, 2 for a path to correct" in readme


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
