"""Every user error of the command line is one message and exit status 2, never a traceback."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from drga.cli import main
from drga.config import TrainConfig
from tests.integration.test_trainer import write_keyword_tsv


@pytest.fixture
def files(tmp_path):
    good = write_keyword_tsv(tmp_path / "good.tsv")
    (tmp_path / "bad.toml").write_text("[train\nlr = ")
    (tmp_path / "header.tsv").write_text("0\tgood words here\n1\tbad words here\n1.0\tmore words\n" * 4)
    (tmp_path / "garbage.tsv").write_bytes(b"\x00\xff\xfe\x80garbage\tbytes\n" * 3)
    (tmp_path / "one_label.tsv").write_text("pos\tsome words\n" * 12)
    (tmp_path / "no_tab.tsv").write_text("pos some words without a tab\n")
    (tmp_path / "vectors.txt").write_text("good 1 2 3\n")
    (tmp_path / "not_a_checkpoint.pt").write_bytes(b"definitely not a torch file")
    torch.save({"format": 1, "kind": "model"}, tmp_path / "old_format.pt")
    (tmp_path / "runs" / "tsv-lstm-sa-seed0").mkdir(parents=True)
    (tmp_path / "runs" / "tsv-lstm-sa-seed0" / "last.pt").write_bytes(b"x")
    return tmp_path, good


def bad_inputs(tmp: str, good: str) -> list[list[str]]:
    tsv = ["--dataset", "tsv", "--tsv", good, "--logdir", f"{tmp}/runs"]
    return [
        ["train", *tsv, "--set", "reward.gamma=nan"],
        ["train", *tsv, "--set", "train.lr=0"],
        ["train", *tsv, "--set", "data.batch_size=0"],
        ["train", *tsv, "--set", "network.dropout=1.5"],
        ["train", *tsv, "--set", "agent.samples=1"],
        ["train", *tsv, "--set", "agent.log_std_min=3"],
        ["train", *tsv, "--set", "nosection.key=1"],
        ["train", *tsv, "--set", "train.lrr=0.1"],
        ["train", *tsv, "--set", "train.lr"],
        ["train", *tsv, "--set", "train.pretrain_epochs=many"],
        ["train", *tsv, "--config", f"{tmp}/missing.toml"],
        ["train", *tsv, "--config", f"{tmp}/bad.toml"],
        ["train", "--dataset", "nosuch"],
        ["train", "--dataset", "tsv"],
        ["train", "--dataset", "tsv", "--tsv", f"{tmp}/missing.tsv"],
        ["train", "--dataset", "tsv", "--tsv", f"{tmp}/header.tsv"],
        ["train", "--dataset", "tsv", "--tsv", f"{tmp}/garbage.tsv"],
        ["train", "--dataset", "tsv", "--tsv", f"{tmp}/one_label.tsv"],
        ["train", "--dataset", "tsv", "--tsv", f"{tmp}/no_tab.tsv"],
        ["train", *tsv, "--net", "nosuch"],
        ["train", *tsv, "--net", "ian", "--run-name", "ian"],
        ["train", *tsv, "--net", "seq2seq-luong", "--run-name", "nmt"],
        ["train", *tsv, "--set", f"network.vectors={tmp}/missing_vectors.txt", "--run-name", "v1"],
        ["train", *tsv, "--set", f"network.vectors={tmp}/vectors.txt", "--run-name", "v2"],
        ["train", *tsv, "--set", "network.vectors=glove-typo", "--run-name", "v3"],
        ["train", *tsv, "--device", "cuda:7"],
        ["train", *tsv, "--resume", "--run-name", "never-ran"],
        ["train", *tsv],  # the run folder already holds a run
        ["train", *tsv, "--net", "transformer", "--set", "network.heads=7", "--run-name", "heads"],
        ["train", *tsv, "--agent", "sb3-sac"],
        ["evaluate", f"{tmp}/missing.pt"],
        ["evaluate", f"{tmp}/not_a_checkpoint.pt"],
        ["evaluate", f"{tmp}/old_format.pt"],
        ["analyze", f"{tmp}/missing.pt", "--dataset", "subj"],
        ["compare", f"{tmp}/no_runs_here", f"{tmp}/nor_here"],
        ["translate", f"{tmp}/missing.pt"],
    ]


def test_thirty_odd_bad_inputs_each_give_one_message_and_status_2(files, capsys):
    tmp, good = files
    cases = bad_inputs(str(tmp), str(good))
    assert len(cases) >= 30
    for argv in cases:
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            status = exit_.code
        out, err = capsys.readouterr()
        assert status == 2, (argv, status, err[-400:])
        assert "Traceback" not in err and "Traceback" not in out, argv
        message = [line for line in err.splitlines() if "error:" in line]
        assert message, (argv, err[-400:])


def test_debug_shows_the_traceback(files):
    tmp, good = files
    with pytest.raises(Exception, match="reward.gamma"):
        main(["--debug", "train", "--dataset", "tsv", "--tsv", str(good), "--set", "reward.gamma=nan"])


def test_the_drga_logger_carries_training_output_and_quiet_silences_it(tmp_path, capsys):
    import logging

    from drga.config import load_config
    from drga.trainer import Trainer

    good = write_keyword_tsv(tmp_path / "good.tsv")
    settings = ["network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
                "agent.hidden_sizes=8", "train.pretrain_epochs=1", "train.agent_epochs=0", "train.cotrain_epochs=0",
                "train.fair_baseline=false"]
    common = ["train", "--dataset", "tsv", "--tsv", str(good), "--logdir", str(tmp_path / "runs"), "--no-progress"]
    common += [arg for setting in settings for arg in ("--set", setting)]
    assert main([*common, "--run-name", "loud"]) == 0
    loud = capsys.readouterr().out
    assert "== phase pretrain" in loud and "== test accuracy ==" in loud
    assert main(["--quiet", *common, "--run-name", "quiet"]) == 0
    assert capsys.readouterr().out == ""
    # a library user's own handler receives the same lines through the standard logging calls
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("drga")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        config = load_config(overrides=["data.dataset=tsv", f"data.tsv_path={good}", f"run.logdir={tmp_path / 'runs'}",
                                        "run.run_name=library", "run.progress=false", *settings])
        Trainer(config).run()
    finally:
        logger.removeHandler(handler)
    assert any("== test accuracy ==" in record.getMessage() for record in records)


def test_help_and_version_answer_without_importing_torch():
    import subprocess
    import sys

    code = ("import sys; from drga.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip().endswith("False"), result.stderr[-800:]
    version = subprocess.run([sys.executable, "-m", "drga.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("drga ")


# --- messages as a new user met them (issue 43) ----------------------------------------------------


def test_a_file_that_is_no_checkpoint_is_named_without_pytorchs_advice(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("my experiment notes\n")
    whole_model = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), whole_model)
    said = {notes: "is not a DRGA checkpoint: it cannot be read (a truncated copy, or a file of another kind)",
            whole_model: "is a torch.save file but not a DRGA checkpoint (those are safetensors files written by drga train)"}
    for path in (notes, whole_model):
        assert main(["evaluate", str(path)]) == 2
        out, err = capsys.readouterr()
        assert err == f"drga evaluate: error: {path} {said[path]}; DRGA checkpoints are the .pt files " \
                      "of a run folder, such as runs/<run>/cotrain_best.pt\n"


def test_a_far_off_key_is_pointed_to_the_nearest_not_to_every_key(tmp_path, capsys):
    good = write_keyword_tsv(tmp_path / "good.tsv")
    argv = ["train", "--dataset", "tsv", "--tsv", str(good), "--logdir", str(tmp_path), "--set", "train.lerning_rate=0.01"]
    assert main(argv) == 2
    assert capsys.readouterr().err == "drga train: error: unknown config key 'train.lerning_rate'; did you mean 'train.lr'?\n"
    assert main([*argv[:-1], "train.warmpu=3"]) == 2
    err = capsys.readouterr().err
    known = len(dataclasses.fields(TrainConfig))
    assert err.startswith(f"drga train: error: unknown config key 'train.warmpu'; the nearest of the {known} known: train.")
    assert err.count(",") == 2  # three keys, not all of them


def test_a_tsv_with_its_columns_swapped_says_so(tmp_path, capsys):
    swapped = tmp_path / "swapped.tsv"
    swapped.write_text("".join(f"the review number {i}\t{'pos' if i % 2 else 'neg'}\n" for i in range(60)))
    assert main(["train", "--dataset", "tsv", "--tsv", str(swapped), "--logdir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "60 distinct labels in 60 rows" in err and "are the columns swapped? Each line must be label<TAB>text" in err
