"""Issue 54: a user's mistake never becomes a silent wrong result or lost work.

Each test does what a user did (the command line, a real file) and checks the message, the exit
status and what is on disk: a ``--tsv`` that was ignored, an ``--overwrite`` that deleted a
finished run, a label typo that became a class, a sweep that reused runs of other settings, and
the smaller problems found on the same paths. ``test_every_option_of_every_command_is_read_or_refused``
walks every option of every ``drga`` command.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from drga import baselines
from drga.cli import OPTION_SCOPES, build_parser, main
from drga.errors import UserError
from tests.integration.test_trainer import write_keyword_tsv
from tests.tiny_network import TinyAttentionNet

ROOT = Path(__file__).resolve().parents[2]
#: A short run of the tiny network: every phase, one epoch each.
QUICK = ["--net", "tiny", "--no-progress", "--report-to", "[]", "--set", "train.pretrain_epochs=1", "--set", "train.agent_epochs=1",
         "--set", "train.cotrain_epochs=1", "--set", "network.embedding_dim=12", "--set", "agent.hidden_sizes=16,16",
         "--set", "data.batch_size=16"]


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``drga ARGV`` as a user runs it: its exit status (argparse's usage errors too), stdout and stderr."""
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def snapshot(folder: Path) -> dict[str, str]:
    """Every file of a run folder (the lock file aside) and its SHA-256."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and path.name != ".lock"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished tiny run on the keyword TSV, trained by the command line: (its folder, the TSV)."""
    tmp = tmp_path_factory.mktemp("trained")
    good = write_keyword_tsv(tmp / "good.tsv")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
        assert main(["train", "--tsv", str(good), "--logdir", str(tmp / "runs"), *QUICK]) == 0
    return tmp / "runs" / "tsv-tiny-seed0", good


# --- 1. --tsv without --dataset tsv ----------------------------------------------------------------


def test_tsv_without_dataset_trains_on_that_file_not_on_subj(trained, capsys):
    run, good = trained
    results = json.loads((run / "results.json").read_text())
    assert results["config"]["data"]["dataset"] == "tsv" and results["config"]["data"]["tsv_path"] == str(good)
    assert not (run.parent / "subj-tiny-seed0").exists()
    status, _, err = cli(["train", "--dataset", "subj", "--tsv", str(good), "--logdir", str(run.parent), "--run-name", "x", *QUICK],
                         capsys)
    assert status == 2 and err.count("\n") == 1
    assert "--tsv applies to the tsv data set" in err and "drop --dataset subj" in err and "or drop --tsv" in err
    assert not (run.parent / "x").exists()


def test_tsv_implied_prints_the_files_data(tmp_path, capsys):
    good = write_keyword_tsv(tmp_path / "good.tsv")
    status, out, _ = cli(["train", "--tsv", str(good), "--logdir", str(tmp_path / "runs"), *QUICK], capsys)
    assert status == 0
    assert f"data  tsv: 244 rows from {good}" in out and "data  subj" not in out
    assert "== phase pretrain: 1 epoch (" in out  # a count takes its number


# --- 2. --overwrite loses nothing until the new run has something to keep ---------------------------


def test_overwrite_with_an_empty_tsv_keeps_the_finished_run(trained, tmp_path, capsys):
    run, good = trained
    keep = tmp_path / "runs" / "keep"
    assert main(["train", "--tsv", str(good), "--logdir", str(keep.parent), "--run-name", "keep", *QUICK]) == 0
    before = snapshot(keep)
    assert "cotrain_best.pt" in before and "results.json" in before
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    status, _, err = cli(["train", "--dataset", "tsv", "--tsv", str(empty), "--logdir", str(keep.parent), "--run-name", "keep",
                          "--overwrite", *QUICK], capsys)
    assert status == 2
    assert f"{empty}: no labelled line (each line must be label<TAB>text)" in err and "found []" not in err
    assert snapshot(keep) == before and not (keep / ".replaced").exists()


def test_a_run_that_fails_before_its_first_epoch_leaves_no_folder(trained, tmp_path, capsys):
    _, good = trained
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    status, _, _ = cli(["train", "--tsv", str(empty), "--logdir", str(tmp_path / "runs"), *QUICK], capsys)
    assert status == 2 and not (tmp_path / "runs" / "tsv-tiny-seed0").exists()
    # one that fails in its first epoch, too (a callback that raises)
    from drga.config import load_config
    from drga.runner.callbacks import Callback
    from drga.trainer import Trainer

    class Boom(Callback):
        def on_epoch_end(self, epoch):
            raise RuntimeError("boom")

    config = load_config(None, ["data.dataset=tsv", f"data.tsv_path={good}", "network.name=tiny", "network.embedding_dim=12",
                                "agent.hidden_sizes=16,16", "train.pretrain_epochs=1", "run.progress=false", "run.report_to=[]",
                                f"run.logdir={tmp_path / 'runs'}", "run.run_name=fresh"])
    with pytest.raises(RuntimeError, match="boom"):
        Trainer(config, callbacks=[Boom()]).run()
    assert not (tmp_path / "runs" / "fresh").exists()


def test_overwrite_moves_the_old_run_aside_until_the_first_epoch_is_saved(trained, tmp_path):
    from drga.config import load_config
    from drga.runner.callbacks import Callback
    from drga.trainer import Trainer

    _, good = trained
    settings = ["data.dataset=tsv", f"data.tsv_path={good}", "network.name=tiny", "network.embedding_dim=12", "agent.hidden_sizes=16,16",
                "train.pretrain_epochs=2", "train.agent_epochs=0", "train.cotrain_epochs=0", "train.fair_baseline=false",
                "train.patience=0", "run.progress=false", "run.report_to=[]", f"run.logdir={tmp_path}", "run.run_name=keep"]
    Trainer(load_config(None, settings)).run()
    folder = tmp_path / "keep"
    before = snapshot(folder)

    class FailFirst(Callback):
        def on_epoch_end(self, epoch):
            assert (folder / ".replaced" / "results.json").exists()  # aside, not deleted: nothing saved yet
            raise KeyboardInterrupt  # Ctrl-C in the first epoch

    with pytest.raises(KeyboardInterrupt):
        Trainer(load_config(None, [*settings, "run.seed=5"]), overwrite=True, callbacks=[FailFirst()]).run()
    assert snapshot(folder) == before and not (folder / ".replaced").exists()

    seen = []

    class Watch(Callback):
        def on_epoch_end(self, epoch):
            seen.append((epoch.epoch, (folder / ".replaced").exists()))

    Trainer(load_config(None, [*settings, "run.seed=5"]), overwrite=True, callbacks=[Watch()]).run()
    assert seen == [(1, True), (2, False)]  # deleted once the new run's first epoch was saved
    assert json.loads((folder / "results.json").read_text())["config"]["run"]["seed"] == 5


def test_a_run_moved_aside_by_a_killed_overwrite_is_put_back(tmp_path):
    from drga.runner.run_folder import RunFolder

    folder = tmp_path / "run"
    (folder / ".replaced" / "tb").mkdir(parents=True)
    for name, text in (("config.toml", "old"), ("last.pt", "old"), ("results.json", "{}"), ("tb/events", "old")):
        (folder / ".replaced" / name).write_text(text)
    (folder / "config.toml").write_text("new")  # the killed process had written this much
    (folder / "train.log").write_text("the sweep's log\n")
    with pytest.raises(UserError, match="already holds a run"):  # put back: a finished run, which a fresh one may not replace
        RunFolder(folder).check(resume=False, overwrite=False, log=lambda _: None)
    assert (folder / "config.toml").read_text() == "old" and (folder / "tb" / "events").read_text() == "old"
    assert (folder / "train.log").exists() and not (folder / ".replaced").exists()


# --- 3. a rare label is questioned ----------------------------------------------------------------


def typo_rows() -> list[str]:
    rows = [f"{'subjective' if i % 2 else 'objective'}\tsentence {i} {'feels great' if i % 2 else 'tells a plot'}" for i in range(60)]
    return rows[:40] + ["subjectiv\ta sentence whose label has a typo"] + rows[40:]


def test_a_label_typo_in_one_tsv_file_is_refused_with_its_line_and_the_closest_labels(tmp_path, capsys):
    path = tmp_path / "typo.tsv"
    path.write_text("\n".join(typo_rows()) + "\n")
    status, _, err = cli(["train", "--tsv", str(path), "--logdir", str(tmp_path / "runs"), *QUICK], capsys)
    assert status == 2 and err.count("\n") == 1
    assert f"{path}: label 'subjectiv' has 1 example (line 41) where " in err
    assert "the closest other labels: 'subjective', 'objective'" in err and "--set data.rare_labels=keep" in err
    assert not (tmp_path / "runs" / "tsv-tiny-seed0").exists()
    from drga.data.text import load_tsv

    assert load_tsv(tsv_path=path, rare_labels="keep").label_names == ["objective", "subjectiv", "subjective"]


def test_a_label_typo_in_train_tsv_is_refused_too(tmp_path):
    from drga.data.text import DataFormatError, load_tsv

    rows = typo_rows()
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    for name in ("dev", "test"):
        (tmp_path / f"{name}.tsv").write_text("\n".join(rows[:6]) + "\n")
    with pytest.raises(DataFormatError, match=r"train\.tsv: label 'subjectiv' has 1 example \(line 41\)"):
        load_tsv(tsv_path=tmp_path)
    # a minority class is no typo: 10 of 60 is kept without a word
    (tmp_path / "train.tsv").write_text("\n".join(rows[:40] + [f"neutral\tan even sentence {i}" for i in range(10)]) + "\n")
    assert load_tsv(tsv_path=tmp_path).label_names == ["neutral", "objective", "subjective"]


def test_a_label_typo_in_python_pairs_is_refused_too():
    from drga.api import TextData
    from drga.data.text import DataFormatError

    pairs = [(text, label) for label, text in (row.split("\t") for row in typo_rows())]
    with pytest.raises(DataFormatError, match=r"the training pairs: label 'subjectiv' has 1 example \(pair 40\).*rare_labels='keep'"):
        TextData.from_pairs(pairs)
    assert TextData.from_pairs(pairs, rare_labels="keep").label_names == ["objective", "subjectiv", "subjective"]


def test_evaluate_does_not_question_a_rare_label_of_the_data_it_scores(trained, tmp_path, capsys):
    """The check guards training: a checkpoint's labels are fixed, and a test file may hold few of one."""
    run, _ = trained
    lopsided = tmp_path / "lopsided.tsv"
    lopsided.write_text("".join(f"pos\tgood film number {i}\n" for i in range(100)) + "neg\tbad film\n")
    status, out, err = cli(["evaluate", str(run / "cotrain_best.pt"), "--tsv", str(lopsided)], capsys)  # scored whole (issue 62)
    assert status == 0, err
    assert "accuracy" in out


# --- 4. a sweep never mixes settings -------------------------------------------------------------


SMALL = ["network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
         "agent.hidden_sizes=8", "train.pretrain_epochs=1", "train.agent_epochs=1", "train.cotrain_epochs=1"]


def sweep(tmp_path, tsv, *extra):
    command = [sys.executable, "-m", "drga.cli", "sweep", "--nets", "lstm-sa", "--datasets", "tsv", "--seeds", "0",
               "--threads-per-run", "1", "--logdir", str(tmp_path / "runs"), "--results", str(tmp_path / "results"),
               "--set", f"data.tsv_path={tsv}", *[a for item in SMALL for a in ("--set", item)], *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_a_sweep_refuses_to_reuse_runs_of_other_settings_or_data_and_reruns_them_when_told(tmp_path):
    tsv = write_keyword_tsv(tmp_path / "kw.tsv")
    first = sweep(tmp_path, tsv)
    assert first.returncode == 0, first.stdout + first.stderr
    record = json.loads((tmp_path / "results" / "tsv-lstm-sa-seed0.json").read_text())
    assert set(record["fingerprint"]) == {"settings", "data"}
    log = tmp_path / "runs" / "tsv-lstm-sa-seed0" / "train.log"
    # the same sweep again: skipped, its fingerprint checked
    again = sweep(tmp_path, tsv)
    assert again.returncode == 0 and "[skip] tsv-lstm-sa-seed0 is finished" in again.stdout
    # other settings: refused, naming the run and the key; nothing trains
    changed = sweep(tmp_path, tsv, "--set", "train.cotrain_epochs=2")
    assert changed.returncode == 2, changed.stdout + changed.stderr
    assert "tsv-lstm-sa-seed0" in changed.stderr and "train.cotrain_epochs: 1 → 2" in changed.stderr
    assert "--rerun-changed" in changed.stderr and log.read_text().count("\n=== ") == 1
    # told to rerun: trained again, the result file replaced, the table says its settings
    rerun = sweep(tmp_path, tsv, "--set", "train.cotrain_epochs=2", "--rerun-changed")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "[rerun] tsv-lstm-sa-seed0" in rerun.stdout and "trained again" in rerun.stdout
    record = json.loads((tmp_path / "results" / "tsv-lstm-sa-seed0.json").read_text())
    assert record["config"]["train"]["cotrain_epochs"] == 2
    table = (tmp_path / "runs" / "sweep_results.md").read_text()
    assert "`train.cotrain_epochs=2`" in table and "| lstm-sa | tsv | 0 | finished |" in table
    assert not (tmp_path / "runs" / "tsv-lstm-sa-seed0" / ".replaced").exists()
    # the data changed under the same settings: refused too
    with open(tsv, "a") as handle:
        handle.write("pos\tgood good good\n")
    moved = sweep(tmp_path, tsv, "--set", "train.cotrain_epochs=2")
    assert moved.returncode == 2 and "data as read: fingerprint" in moved.stderr


def test_a_result_file_without_a_fingerprint_is_compared_by_its_config(tmp_path):
    """The committed result files of earlier studies have a config block and no fingerprint."""
    from drga.config import load_config
    from drga.sweep.fingerprints import SettingsCheck
    from drga.sweep.grid import plan

    args = argparse.Namespace(config=None, set=["train.cotrain_epochs=3", "network.vectors=glove-6b-50d"])
    run = plan(["lstm-sa"], ["subj"], [0], tmp_path / "runs", tmp_path / "results")[0]
    old = load_config(None, ["train.cotrain_epochs=3", "network.vectors=glove-6b-50d", "run.logdir=/elsewhere/runs"]).to_dict()
    del old["train"]["fused_adam"]  # a setting added since the run was made is not compared
    run.result_file.parent.mkdir(parents=True)
    run.result_file.write_text(json.dumps({"name": run.name, "config": old}))
    check = SettingsCheck(args)
    same = check.compare_finished(run)
    assert not same.differs and "recorded before fingerprints" in same.note
    args.set = ["train.cotrain_epochs=4", "network.vectors=glove-6b-50d"]
    assert check.compare_finished(run).differences == ["train.cotrain_epochs: 3 → 4"]
    run.result_file.write_text(json.dumps({"name": run.name}))  # neither: skipped as before, and said
    assert check.compare_finished(run).note == "recorded without its settings: not compared"
    # a fingerprint another version made (another set of fingerprinted keys): the config block decides
    run.result_file.write_text(json.dumps({"name": run.name, "config": old, "fingerprint": {"settings": "0" * 16, "data": None}}))
    assert check.compare_finished(run).differences == ["train.cotrain_epochs: 3 → 4"]
    args.set = ["train.cotrain_epochs=3", "network.vectors=glove-6b-50d"]
    other_version = check.compare_finished(run)
    assert not other_version.differs and "another version's" in other_version.note
    run.result_file.write_text(json.dumps({"name": run.name, "fingerprint": {"settings": "0" * 16, "data": None}}))
    assert check.compare_finished(run).differences[0].startswith("settings fingerprint: 0000000000000000 → ")


def test_tune_refuses_to_continue_a_study_of_another_search_or_fixed_settings(tmp_path):
    pytest.importorskip("optuna")
    from drga.tune.space import parse_search
    from drga.tune.study import TuneSettings, check_study, open_study

    def settings(search, base):
        return TuneSettings(config=None, base=base, dimensions=parse_search(search), trials=1, folder=tmp_path, study_name="s")

    first = settings(["reward.gamma=0.1:1"], ["train.cotrain_epochs=2"])
    check_study(first, open_study(first))  # a new study records what it is
    check_study(first, open_study(first))  # the same command continues it
    with pytest.raises(UserError, match=r"searched reward\.gamma: 0\.1:1 → 0\.2:1"):
        other = settings(["reward.gamma=0.2:1"], ["train.cotrain_epochs=2"])
        check_study(other, open_study(other))
    with pytest.raises(UserError, match=r"train\.cotrain_epochs: 2 → 3; continue it with the settings it was made with"):
        other = settings(["reward.gamma=0.1:1"], ["train.cotrain_epochs=3"])
        check_study(other, open_study(other))


# --- 1 (all commands): every option is read or refused -------------------------------------------


def refusals(tmp: Path, good: Path, checkpoint: Path) -> dict[tuple[str, str], list[str]]:
    """For each option read only in some uses of its command, a command line where nothing reads it."""
    missing = str(tmp / "missing.pt")
    analyze = ["analyze", missing, "--out", str(tmp / "out")]
    cases = {
        ("evaluate", "tsv"): ["evaluate", str(checkpoint), "--dataset", "subj", "--tsv", str(good)],
        ("evaluate", "beam"): ["evaluate", str(checkpoint), "--beam", "3"],
        ("evaluate", "split"): ["evaluate", str(checkpoint), "--tsv", str(good), "--split", "dev"],
        ("translate", "length_penalty"): ["translate", missing, "--beam", "1", "--length-penalty", "0.6"],
        ("download", "dir"): ["download", "--list", "--dir", str(tmp / "data")],
        ("download", "list"): ["download", "--list", "subj"],
        ("analyze", "tsv"): [*analyze, "--dataset", "subj", "--tsv", str(good)],
        ("analyze", "allow_other_dataset"): [*analyze, "--allow-other-dataset"],
        ("tune", "tsv"): ["tune", "--dataset", "subj", "--tsv", str(good)],
        ("sweep", "jobs"): ["sweep", "--executor", "ray", "--jobs", "2", "--dry-run"],
        ("evaluate", "data_dir"): ["evaluate", str(checkpoint), "--data-dir", str(tmp)],
        ("analyze", "data_dir"): [*analyze, "--tsv", str(good), "--data-dir", str(tmp)],
        ("tune", "data_dir"): ["tune", "--tsv", str(good), "--data-dir", str(tmp)],
    }
    for command in ("train", "demo"):
        base = [command, "--logdir", str(tmp / "runs")]
        cases |= {
            (command, "tsv"): [*base, "--dataset", "subj", "--tsv", str(good)],
            (command, "overwrite"): [*base, "--resume", "--overwrite"],
            (command, "force"): [*base, "--force"],
            (command, "track_examples"): [*base, "--net", "seq2seq-luong", "--track-examples", "3"],
            (command, "data_dir"): [*base, "--tsv", str(good), "--data-dir", str(tmp), "--set", "network.vectors=none"],
        }
    from drga.analysis.cli import ANALYSES, ANALYSIS_OPTIONS

    values = {"examples": "1,2"}
    for name, analyses in ANALYSIS_OPTIONS.items():
        other = next(analysis for analysis in ANALYSES if analysis not in analyses)
        cases[("analyze", name)] = [*analyze, "--only", other, "--" + name.replace("_", "-"), values.get(name, "3")]
    for name in ("address", "cpus_per_run", "gpus_per_run", "num_cpus", "retries", "no_dashboard"):
        flag = "--" + name.replace("_", "-")
        cases[("sweep", name)] = ["sweep", "--dry-run", flag] if name == "no_dashboard" else ["sweep", "--dry-run", flag, "2"]
    return cases


def test_every_option_of_every_command_is_read_or_refused(trained, tmp_path, capsys):
    run, good = trained
    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    parsers = {"": parser, **commands.choices}
    cases = refusals(tmp_path, good, run / "cotrain_best.pt")
    scoped = []
    for command, sub in parsers.items():
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                if isinstance(action, argparse._VersionAction):
                    assert "version" in OPTION_SCOPES[""]
                continue
            assert action.dest in OPTION_SCOPES[command], f"drga {command} {action.option_strings}: say where it is read"
            if OPTION_SCOPES[command][action.dest] is not None:
                scoped.append((command, action.dest))
        assert set(OPTION_SCOPES[command]) <= {a.dest for a in sub._actions}, f"drga {command}: a scope of no option"
        assert "``" not in sub.format_help(), f"drga {command} --help shows reStructuredText"
    assert sorted(scoped) == sorted(cases)
    for (_, dest), argv in sorted(cases.items()):
        status, out, err = cli(argv, capsys)
        flag = "--" + dest.replace("_", "-")
        assert status == 2, (argv, out, err)
        assert f"{flag} applies to" in err and "nothing here reads it" in err, (argv, err)
    assert not (tmp_path / "runs").exists()  # nothing trained


# --- 5. the smaller problems ---------------------------------------------------------------------


def test_predict_on_a_run_folder_names_the_checkpoints_in_it(trained, capsys):
    run, _ = trained
    status, _, err = cli(["predict", str(run)], capsys)
    assert status == 2 and f"{run} is a folder, not a checkpoint: the checkpoints in it: " in err
    assert "cotrain_best.pt" in err and f"e.g. {run / 'cotrain_best.pt'}" in err and "does not exist" not in err


def test_a_plain_torch_save_file_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "weights.pt"
    torch.save({"weight": torch.zeros(2)}, path)
    status, _, err = cli(["evaluate", str(path)], capsys)
    assert status == 2 and "is a torch.save file but not a DRGA checkpoint" in err and "format 2" not in err


def test_one_text_is_one_text_and_an_unregistered_network_is_named(trained, tmp_path, monkeypatch, capsys):
    run, _ = trained
    (tmp_path / "one.txt").write_text("good good film\n")
    status, _, err = cli(["predict", str(run / "cotrain_best.pt"), "--input", str(tmp_path / "one.txt")], capsys)
    assert status == 0 and "drga predict: 1 text, " in err and "1 texts" not in err
    monkeypatch.delitem(baselines.NETWORKS, "tiny")
    status, _, err = cli(["predict", str(run / "cotrain_best.pt"), "--input", str(tmp_path / "one.txt")], capsys)
    assert status == 2 and "holds the network 'tiny'" in err and "a 'tiny'" not in err


def test_the_help_says_what_config_takes_and_make_demo_runs_as_the_readme_says(capsys):
    status, out, _ = cli(["train", "--help"], capsys)
    assert status == 0 and "bundled with the package: demo" in " ".join(out.split())
    makefile, readme = (ROOT / "Makefile").read_text(), (ROOT / "README.md").read_text()
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert "\t$(BIN)/drga train --config demo --overwrite --no-progress\n" in makefile
    assert "$ drga train --config demo --overwrite --no-progress   # what `make demo` runs" in usage and "make demo" in readme
    # make docs: the docs extra only, not the test stamp's Ray, transformers and Optuna
    assert "docs: $(DOCS_STAMP)" in makefile and '-e ".[docs]"' in makefile
    assert "`make docs` into `site/`" in readme and "[CHANGELOG.md](CHANGELOG.md)" in readme


def test_a_script_beside_a_folder_named_drga_imports_that_folder_as_the_readme_warns(tmp_path):
    (tmp_path / "drga").mkdir()  # a clone named drga, seen from its parent folder
    (tmp_path / "script.py").write_text("import drga\ndrga.load\n")
    done = subprocess.run([sys.executable, "script.py"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    if done.returncode == 0:
        pytest.skip("this install finds the package before a namespace folder (a wheel, not the editable install)")
    assert "module 'drga' has no attribute 'load'" in done.stderr
    usage = " ".join((ROOT / "docs" / "usage.md").read_text().split())
    assert "do not save one beside a folder named `drga`" in usage and "`module 'drga' has no attribute 'load'`" in usage


