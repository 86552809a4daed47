"""Callbacks (drga/runner/callbacks.py): the events a run sends, the CSV logger, run.report_to, resume."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

import drga.baselines as baselines
from drga.cli import build_parser
from drga.config import ConfigError, flag_overrides, load_config
from drga.runner.callbacks import Callback, CallbackList
from drga.runner.loop import LOG_INTERVAL, PhaseRunner
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.interrupts import ctrl_c_at_call
from tests.tiny_network import TinyAttentionNet

#: The tiny run's phases and epochs (tests/integration/test_trainer.py's tiny_config, patience 0: no early stop):
#: pretrain 2, the equal-budget baseline agent + cotrain = 3, agent 1, cotrain 2.
EPOCHS = {"pretrain": 2, "baseline": 3, "agent": 1, "cotrain": 2}
#: The phases whose starting point competes as epoch 0 (drga/runner/phases.py).
STARTS = ("baseline", "cotrain")


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


class Recorder(Callback):
    """Every event as (name, phase, epoch), the records themselves; it then empties what it was given."""

    def __init__(self):
        self.events, self.records = [], []

    def _seen(self, name, record, phase="", epoch=None):
        self.events.append((name, phase, epoch))
        self.records.append((name, record))

    def on_run_start(self, run):
        self._seen("run_start", run)

    def on_train_log(self, log):
        self._seen("train_log", log, log.phase, log.step)
        log.values.clear()  # a callback's copy: the run's numbers stay as they are

    def on_evaluation(self, evaluation):
        self._seen("evaluation", evaluation, evaluation.phase, evaluation.epoch)
        self.scores = {mode: dict(numbers) for mode, numbers in evaluation.scores.items()}
        for numbers in evaluation.scores.values():
            numbers.clear()

    def on_epoch_end(self, epoch):
        self._seen("epoch_end", epoch, epoch.phase, epoch.epoch)
        assert {mode: dict(numbers) for mode, numbers in epoch.dev.items()} == self.scores  # the epoch's evaluation
        epoch.train.clear()

    def on_phase_end(self, phase):
        self._seen("phase_end", phase, phase.phase, phase.epochs)

    def on_run_end(self, run):
        self._seen("run_end", run)

    def close(self):
        self._seen("close", None)


def expected_events(epochs: dict[str, int]) -> list[tuple]:
    """The events of a run through ``epochs`` (train_log left out), as drga/runner/callbacks.py orders them."""
    events: list[tuple] = [("run_start", "", None)]
    for phase, count in epochs.items():
        if phase in STARTS:
            events.append(("evaluation", phase, 0))
        for epoch in range(1, count + 1):
            events += [("evaluation", phase, epoch), ("epoch_end", phase, epoch)]
        events.append(("phase_end", phase, count))
    return events + [("run_end", "", None), ("close", "", None)]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny run to the end, reporting to a CSV file and a recorder (TensorBoard off)."""
    baselines.NETWORKS["tiny"] = TinyAttentionNet
    try:
        recorder = Recorder()
        config = tiny_config(tmp_path_factory.mktemp("run"), **{"train.patience": 0, "run.report_to": "csv"})
        trainer = Trainer(config, log=lambda _: None, callbacks=[recorder])
        results = trainer.run()
    finally:
        del baselines.NETWORKS["tiny"]
    return trainer, results, recorder


def test_a_callback_is_told_every_evaluation_epoch_and_phase_in_order(tiny_run):
    trainer, results, recorder = tiny_run
    assert [event for event in recorder.events if event[0] != "train_log"] == expected_events(EPOCHS)
    start = recorder.records[0][1]
    assert start.phases == tuple(EPOCHS) and start.completed_epochs == () and start.resumed_at is None
    assert start.config["train.cotrain_epochs"] == 2 and start.run_dir == trainer.run_dir
    modes = {"pretrain": {"net-only"}, "baseline": {"net-only"}, "agent": {"with-agent"}, "cotrain": {"net-only", "with-agent"}}
    evaluations = [record for name, record in recorder.records if name == "evaluation"]
    assert all(set(e.scores) == modes[e.phase] for e in evaluations)
    # nothing earlier in the phase to beat: a starting point, or the first epoch of a phase without one
    assert all(e.improved for e in evaluations if e.epoch == 0 or e.epoch == 1 and e.phase not in STARTS)
    ends = [record for name, record in recorder.records if name == "phase_end"]
    assert [(e.epochs, e.max_epochs, e.stopped_early) for e in ends] == [(n, n, False) for n in EPOCHS.values()]
    # the callback emptied what it was given: the history and results.json keep every number
    assert all(math.isfinite(record.train["task_loss"]) and any(key.startswith("dev_") for key in record.to_dict())
               for record in results.history)


def test_training_statistics_are_reported_every_ten_updates_on_each_phases_step_axis(tiny_run):
    trainer, _, recorder = tiny_run
    batches = len(trainer.train_batches)  # updates per epoch in every phase (data.agent_holdout = 0)
    expected, begun = [], 0
    for phase, count in EPOCHS.items():  # global update g of the run is update g - begun of its phase
        expected += [(phase, g - begun) for g in range(begun + 1, begun + count * batches + 1) if g % LOG_INTERVAL == 0]
        begun += count * batches
    logs = [record for name, record in recorder.records if name == "train_log"]
    assert [(log.phase, log.step) for log in logs] == expected


def test_epoch_end_records_are_the_history_of_results_json(tiny_run):
    _, results, recorder = tiny_run
    ends = [record for name, record in recorder.records if name == "epoch_end"]
    assert [(e.phase, e.epoch, e.seconds) for e in ends] == [(r.phase, r.epoch, r.seconds) for r in results.history]
    assert [e.epochs for e in ends] == [EPOCHS[e.phase] for e in ends]
    run_end = recorder.records[-2][1]
    assert run_end.results.rows == results.rows
    drga = results.rows["DRGA (co-trained)"]
    assert run_end.final["cotrain"]["hparam/test_accuracy_with_agent"] == drga.scores("test", "with-agent")["accuracy"]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def same_row(row: dict[str, str], record: dict) -> bool:
    """A CSV row holds a history record's numbers (written with repr: read back exactly, compared with a tolerance)."""
    return all(math.isclose(float(row[key]), value, rel_tol=1e-12) if isinstance(value, float) else row[key] == str(value)
               for key, value in record.items())


def test_the_csv_file_has_a_row_per_dev_evaluation_matching_the_results(tiny_run):
    trainer, results, _ = tiny_run
    assert not (trainer.run_dir / "tb").exists()  # run.report_to = ["csv"]: no TensorBoard
    header, rows = read_csv(trainer.run_dir / "metrics.csv")
    assert header[:4] == ["phase", "epoch", "step", "seconds"] and len(set(header)) == len(header)
    starts = [row for row in rows if row["epoch"] == "0"]
    epochs = [row for row in rows if row["epoch"] != "0"]
    assert [row["phase"] for row in starts] == list(STARTS)
    assert all(row["step"] == "0" and row["seconds"] == "" and row["task_loss"] == "" for row in starts)
    assert float(starts[1]["dev_with-agent_accuracy"]) > 0  # co-training's starting point: scored in both modes
    assert len(epochs) == len(results.history) == sum(EPOCHS.values())
    assert all(same_row(row, record.to_dict()) for row, record in zip(epochs, results.history))
    # a phase's columns are empty in another phase's rows: the agent phase has no net-only score
    assert next(row for row in rows if row["phase"] == "agent")["dev_net-only_accuracy"] == ""


@pytest.mark.parametrize("interrupted_in", ["train_epoch", "save_last"])
def test_a_resumed_run_keeps_its_rows_and_appends_without_a_second_header(tmp_path, monkeypatch, tiny_run, interrupted_in):
    """Interrupted during the 4th epoch (the baseline's 2nd), or right after its row was written but before its
    last.pt: the resumed run's file is the uninterrupted run's, row for row."""
    _, uninterrupted, _ = tiny_run
    config = tiny_config(tmp_path, **{"train.patience": 0, "run.report_to": "csv"})
    with ctrl_c_at_call(PhaseRunner, interrupted_in, 4):
        Trainer(config, log=lambda _: None).run()
    path = tmp_path / "runs" / "tsv-tiny-seed3" / "metrics.csv"
    _, before = read_csv(path)
    written = {"train_epoch": 4, "save_last": 5}[interrupted_in]  # pretrain 1-2, baseline 0-1 (and 2: its last.pt not written)
    assert [(row["phase"], row["epoch"]) for row in before] == [("pretrain", "1"), ("pretrain", "2"), ("baseline", "0"),
                                                                ("baseline", "1"), ("baseline", "2")][:written]

    recorder = Recorder()
    resumed = Trainer(config, resume=True, log=lambda _: None, callbacks=[recorder]).run()
    assert recorder.records[0][1].completed_epochs == (("pretrain", 1), ("pretrain", 2), ("baseline", 1))
    assert recorder.records[0][1].resumed_at[0] == "baseline"
    text = path.read_text(encoding="utf-8")
    assert text.count("phase,epoch,step") == 1
    _, rows = read_csv(path)
    epochs = [row for row in rows if row["epoch"] != "0"]
    assert len(rows) == len(resumed.history) + len(STARTS)
    assert all(same_row(row, record.to_dict()) for row, record in zip(epochs, resumed.history))
    seconds = lambda record: {key: value for key, value in record.to_dict().items() if key != "seconds"}
    assert all(same_row(row, seconds(record)) for row, record in zip(epochs, uninterrupted.history))


def test_report_to_picks_the_loggers_and_refuses_an_unknown_one(tmp_path):
    assert load_config(None, []).run.report_to == ["tensorboard"]
    assert load_config(None, ["run.report_to=tensorboard,csv"]).run.report_to == ["tensorboard", "csv"]
    assert load_config(None, ["run.report_to=[]"]).run.report_to == []
    with pytest.raises(ConfigError, match="run.report_to: 'wandb' is not one of 'tensorboard', 'csv'"):
        load_config(None, ["run.report_to=wandb"])
    # drga train --report-to (classification and translation read the same flags)
    args = build_parser().parse_args(["train", "--report-to", "tensorboard,csv"])
    assert load_config(None, flag_overrides(args, interactive=False)).run.report_to == ["tensorboard", "csv"]


def test_closing_a_callback_list_closes_every_callback_even_when_one_fails():
    closed = []

    class Failing(Callback):
        def close(self):
            closed.append("failing")
            raise OSError("disk full")

    class Closing(Callback):
        def close(self):
            closed.append("closing")

    with pytest.raises(OSError, match="disk full"):
        CallbackList([Failing(), Closing()]).close()
    assert closed == ["failing", "closing"]


def test_a_translation_run_tells_its_callbacks_the_same_events(tmp_path):
    from drga.trainer import TranslationTrainer
    from tests.nmt_helpers import tiny_translation_config

    recorder = Recorder()
    trainer = TranslationTrainer(tiny_translation_config(tmp_path, **{"run.report_to": "csv"}), log=lambda _: None, callbacks=[recorder])
    results = trainer.run()
    # pretrain 2, agent 1, cotrain 1 epochs; the equal-budget baseline agent + cotrain = 2
    assert [event for event in recorder.events if event[0] != "train_log"] == \
        expected_events({"pretrain": 2, "baseline": 2, "agent": 1, "cotrain": 1})
    _, rows = read_csv(trainer.run_dir / "metrics.csv")
    epochs = [row for row in rows if row["epoch"] != "0"]
    assert len(epochs) == len(results.history) == 6
    assert all(same_row(row, record.to_dict()) for row, record in zip(epochs, results.history))
    assert "dev_with-agent_bleu" in rows[-1] and "dev_net-only_perplexity" in rows[-1]
