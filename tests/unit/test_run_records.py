"""drga/records.py: a run's results, rows, epochs and phase costs are typed both ways (to_dict writes what from_dict reads)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drga.errors import UserError
from drga.names import Mode, Split
from drga.records import EpochRecord, ModeScores, PhaseCost, ReportRow, RunResults

#: A classification results.json as the trainer writes it (drga/tasks/classification/task.py · final_report, the loop's
#: phases and fingerprint), one row per kind of cell: one mode, both modes, a translation-style beam cell.
WRITTEN = {
    "run_dir": "runs/mr-lstm-sa-seed0",
    "config": {"run": {"seed": 0}, "data": {"dataset": "mr"}},
    "data_checksum": "abc123",
    "results": {
        "baseline (pretrain only)": {"phase": "pretrain", "epoch": 4, "checkpoint": "runs/x/pretrain_best.pt", "epoch_net-only": 4,
                                     "test_net-only": {"accuracy": 0.75, "reward": -0.5}, "dev_net-only": {"accuracy": 0.76}},
        "DRGA (co-trained)": {"phase": "cotrain", "epoch": 0, "checkpoint": "runs/x/cotrain_best.pt",
                              "epoch_net-only": 2, "test_net-only": {"accuracy": 0.77}, "dev_net-only": {"accuracy": 0.78},
                              "epoch_with-agent": 0, "test_with-agent": {"accuracy": 0.74},
                              "test_with-agent_beam": {"bleu": 30.0}, "dev_with-agent": {"accuracy": 0.79}},
    },
    "pretrain_checksum": "def456",
    "history": [{"phase": "pretrain", "epoch": 1, "seconds": 2.5, "task_loss": 0.6, "dev_net-only_accuracy": 0.7},
                {"phase": "cotrain", "epoch": 1, "task_loss": 0.5, "dev_with-agent_accuracy": 0.71, "dev_net-only_accuracy": 0.72}],
    "majority_class": {"test": 0.5},
    "phases": {"pretrain": {"epochs": 4, "max_epochs": 10, "seconds": 12.25, "stopped_early": True}},
    "fingerprint": {"settings": "s1", "data": "d1"},
}


def test_results_json_reads_by_attribute_and_writes_back_the_same_json():
    results = RunResults.from_dict(WRITTEN)
    drga = results.row("DRGA (co-trained)")
    assert drga.phase == "cotrain" and drga.checkpoint == "runs/x/cotrain_best.pt"
    assert drga.scores(Split.TEST, Mode.NET_ONLY) == {"accuracy": 0.77}
    assert drga.scores("dev", "with-agent") == {"accuracy": 0.79}
    assert drga.scores(Split.TEST, Mode.WITH_AGENT, beam=True) == {"bleu": 30.0}
    assert (drga.epoch_of(Mode.NET_ONLY), drga.epoch_of(Mode.WITH_AGENT)) == (2, 0)  # each mode's own selected epoch
    assert results.test_score("baseline (pretrain only)", Mode.NET_ONLY, "accuracy") == pytest.approx(0.75)
    assert results.test_score("baseline (pretrain only)", Mode.WITH_AGENT, "accuracy") is None  # no agent in pretraining
    assert results.test_score("agent on frozen network", Mode.WITH_AGENT, "accuracy") is None  # a phase that did not run
    assert results.history[1].dev_number(Mode.WITH_AGENT, "accuracy") == 0.71 and results.history[1].seconds is None
    assert results.phases["pretrain"] == PhaseCost(epochs=4, max_epochs=10, seconds=12.25, stopped_early=True)
    assert results.task_entries == {"majority_class": {"test": 0.5}}  # the task's own entry, beside the others
    assert (results.fingerprint, results.data_checksum, results.pretrain_checksum) == ({"settings": "s1", "data": "d1"}, "abc123", "def456")
    assert results.to_dict() == WRITTEN
    assert json.loads(json.dumps(results.to_dict())) == WRITTEN  # plain JSON values


def test_a_row_written_before_each_mode_had_its_epoch_reads_the_rows():
    row = ReportRow.from_dict({"phase": "agent", "epoch": 3, "checkpoint": "agent_best.pt", "test_with-agent": {"accuracy": 0.6}})
    assert row.epoch_of(Mode.WITH_AGENT) == 3 and row.scores(Split.DEV, Mode.WITH_AGENT) is None
    assert row.epoch_of(Mode.NET_ONLY) is None and row.scores(Split.TEST, Mode.NET_ONLY) is None


@pytest.mark.parametrize("row, message", [
    ({"epoch": 1, "checkpoint": "x.pt", "test_net-only": {}}, "a report row without phase"),
    ({"phase": "cotrain", "epoch": 1, "checkpoint": "x.pt", "test_agent-only": {}}, "keys this version does not know: test_agent-only"),
    (["cotrain", 1, "x.pt"], r"a report row that is not a JSON object \(list\)"),
])
def test_a_row_that_is_not_one_is_refused_in_words(row, message):
    with pytest.raises(UserError, match=message):
        ReportRow.from_dict(row, "runs/x/results.json")


def test_a_file_that_is_not_results_json_is_refused_in_one_line(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match="not JSON"):
        RunResults.read(path)
    path.write_text(json.dumps({"rows": {}}), encoding="utf-8")
    with pytest.raises(UserError, match="not a run's results.json"):
        RunResults.read(path)
    for content in ({**WRITTEN, "results": []}, {**WRITTEN, "history": {}}, {**WRITTEN, "history": [3]}):
        with pytest.raises(UserError, match="its results must be an object, its history a list of objects"):
            RunResults.from_dict(content)
    with pytest.raises(UserError, match=r"no row 'DRGA \(co-trained\)' in its results \(it has: baseline \(pretrain only\)\)"):
        RunResults.from_dict({**WRITTEN, "results": {"baseline (pretrain only)": WRITTEN["results"]["baseline (pretrain only)"]}}).row(
            "DRGA (co-trained)")


def test_a_phase_entry_without_its_seconds_is_refused_in_words():
    with pytest.raises(UserError, match=r"runs/x/results.json, phase baseline: a phase's entry without seconds"):
        RunResults.from_dict({**WRITTEN, "phases": {"baseline": {"epochs": 8}}}, "runs/x/results.json")


def test_to_dict_hands_out_copies():
    results = RunResults.from_dict(WRITTEN)
    written = results.to_dict()
    written["results"]["DRGA (co-trained)"]["test_net-only"]["accuracy"] = 0.0
    written["config"]["run"]["seed"] = 9
    assert results.test_score("DRGA (co-trained)", Mode.NET_ONLY, "accuracy") == pytest.approx(0.77)
    assert results.config["run"]["seed"] == 0


def test_the_phase_summary_sums_each_phases_epochs():
    from drga.config import TrainConfig
    from drga.runner.phases import phase_summary

    history = [EpochRecord("pretrain", 1, 1.25), EpochRecord("pretrain", 2, 1.5), EpochRecord("cotrain", 1, None)]
    summary = phase_summary(history, TrainConfig(pretrain_epochs=5, cotrain_epochs=1))
    assert summary == {"pretrain": PhaseCost(2, 5, 2.75, stopped_early=True), "cotrain": PhaseCost(1, 1, 0.0, stopped_early=False)}


numbers = st.floats(-10, 100, allow_subnormal=False)  # hypothesis refuses subnormals where the process flushes them to zero
scores = st.dictionaries(st.sampled_from(["accuracy", "bleu", "reward", "perplexity"]), numbers, min_size=1)


@given(
    phase=st.sampled_from(["pretrain", "baseline", "agent", "cotrain"]),
    epoch=st.integers(0, 50),
    cells=st.dictionaries(st.sampled_from(list(Mode)), st.tuples(st.integers(0, 50), scores, st.none() | scores, st.none() | scores)),
)
def test_any_row_is_the_same_row_after_a_round_trip(phase, epoch, cells):
    row = ReportRow(phase, epoch, f"{phase}_best.pt", {mode: ModeScores(*cell) for mode, cell in cells.items()})
    assert ReportRow.from_dict(json.loads(json.dumps(row.to_dict()))) == row
