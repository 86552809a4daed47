"""The typed records read everything the toolkit has written: every committed result file through
:class:`~drga.sweep.results.ResultFile` (row labels :class:`~drga.names.ResultRow`, epoch records
:class:`~drga.names.EpochRecord`), and every checkpoint kind and container it reads (a phase's best and
``last.pt``; classification and translation) through
:class:`~drga.checkpoint_format.CheckpointPayload`, each entry by name."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pytest
import torch

import drga.baselines as baselines
from drga.checkpoint_format import CheckpointPayload, load_checkpoint, save_atomic
from drga.errors import UserError
from drga.names import MODES, Mode, PhaseName, ResultRow, best_checkpoint, best_checkpoint_name, history_key
from drga.records import EpochRecord
from drga.runner.phases import BY_NAME, PHASES
from drga.sweep.results import ResultFile, read_result_file
from drga.trainer import Trainer, TranslationTrainer
from tests.integration.test_trainer import tiny_config
from tests.nmt_helpers import tiny_translation_config
from tests.studies.test_result_files import FILES, OTHER_KINDS, REDRAW_ANALYSES, RESULTS, TRANSLATION
from tests.tiny_network import TinyAttentionNet

# ------------------------------------------------------------------ the names


def test_the_result_rows_are_the_phases_report_labels_and_their_strings():
    assert [phase.report_label for phase in PHASES] == list(ResultRow)
    assert ResultRow.DRGA == "DRGA (co-trained)" and f"{ResultRow.EQUAL_BUDGET}" == "baseline (equal budget)"
    assert json.dumps({ResultRow.PRETRAIN_ONLY: ResultRow.AGENT_ON_FROZEN}) == '{"baseline (pretrain only)": "agent on frozen network"}'
    assert repr({ResultRow.DRGA: 1}) == "{'DRGA (co-trained)': 1}"


def test_a_best_checkpoint_is_named_by_its_phase_and_the_mode_that_chose_it(tmp_path):
    assert best_checkpoint(tmp_path, PhaseName.COTRAIN) == tmp_path / "cotrain_best.pt"
    assert best_checkpoint(str(tmp_path), "cotrain", Mode.NET_ONLY) == tmp_path / "cotrain_best_net-only.pt"
    assert best_checkpoint_name(PhaseName.PRETRAIN) == "pretrain_best.pt"


def test_an_epoch_record_writes_back_the_keys_it_read_in_their_order():
    record = {"phase": "cotrain", "epoch": 2, "seconds": 1.5, "task_loss": 0.4, "beta": 0.2,
              history_key(Mode.NET_ONLY, "accuracy"): 0.7, history_key(Mode.WITH_AGENT, "accuracy"): 0.75,
              history_key(Mode.WITH_AGENT, "highlighted_fraction"): 0.3}
    typed = EpochRecord.from_dict(record)
    assert typed.train == {"task_loss": 0.4, "beta": 0.2} and typed.dev_number("with-agent", "highlighted_fraction") == 0.3
    assert typed.dev_number(Mode.NET_ONLY, "reward") is None
    assert json.dumps(typed.to_dict()) == json.dumps(record)


# ------------------------------------------------------------------ every committed result file

def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_history(history: list[Mapping], where: str) -> None:
    for entry in history:
        record = EpochRecord.from_dict(entry)
        assert record.phase in BY_NAME and record.epoch >= 1, where
        assert record.seconds is None or finite(record.seconds), where
        assert set(record.dev) <= set(MODES) and record.dev, where  # every epoch is scored on dev
        for numbers in record.dev.values():
            assert all(value is None or finite(value) for value in numbers.values()), where
        assert json.dumps(record.to_dict()) == json.dumps(entry), where  # read and written again: the same JSON


RESULT_FILES = [path for path in FILES if path.relative_to(RESULTS).parts[0] not in OTHER_KINDS
                and path.parent.name not in ("manifests", "probes", "units", "cue-mass") and path.name != "parameters.json"
                and (path.relative_to(RESULTS).parts[0], path.parent.name) != REDRAW_ANALYSES]


def test_the_committed_result_files_are_found():
    assert len(RESULT_FILES) > 400


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda path: str(path.relative_to(RESULTS)))
def test_a_committed_result_file_reads_through_the_typed_records(path):
    result = read_result_file(path)
    translation = path.relative_to(RESULTS).parts[0] in TRANSLATION
    for label, cells in result.rows.items():
        row = ResultRow(label)  # every row a file holds is one of the report's rows
        phase = next(phase for phase in PHASES if phase.report_label == row)
        assert set(cells) <= set(phase.dev_modes), (label, set(cells))
        for mode, cell in cells.items():
            score = result.test_score(row, mode)
            assert finite(score) and (translation or 0.0 <= score <= 1.0)
            assert cell.epoch is None or (isinstance(cell.epoch, int) and cell.epoch >= 0)
    written = json.loads(path.read_text(encoding="utf-8"))  # the file as it is on disk
    check_history(written.get("history") or [], str(path))
    assert [record.to_dict() for record in result.history] == (written.get("history") or [])
    for phase, summary in (written.get("phases") or {}).items():
        assert phase in BY_NAME and summary["epochs"] <= summary["max_epochs"] and finite(summary["seconds"])


def test_a_committed_run_result_reads_through_the_typed_records():
    """The brevity probe's results.json of a whole run: its rows and its history."""
    runs = [path for path in RESULTS.glob("brevity/*.json") if "history" in json.loads(path.read_text(encoding="utf-8"))]
    assert runs
    for path in runs:
        content = json.loads(path.read_text(encoding="utf-8"))
        assert all(ResultRow(label) for label in content["results"])
        check_history(content["history"], str(path))


# ------------------------------------------------------------------ every checkpoint the toolkit reads

@pytest.fixture(scope="module")
def run_folders(tmp_path_factory):
    """The run folders of a tiny classification run and a tiny translation run, every phase trained."""
    folder = tmp_path_factory.mktemp("records")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
        Trainer(tiny_config(folder / "classification"), log=lambda _: None).run()
    TranslationTrainer(tiny_translation_config(folder / "translation"), log=lambda _: None).run()
    return {"classification": folder / "classification" / "runs" / "tsv-tiny-seed3",
            "translation": folder / "translation" / "runs" / "parallel-seq2seq-luong-seed0"}


def check_model(payload: CheckpointPayload, phase: str, task: str) -> None:
    assert payload.format == 2 and payload.kind in ("model", "resume") and len(payload.tensor_checksum or "") == 64
    assert payload.phase == phase and payload.epoch >= 0
    assert payload.has_agent == (phase in (PhaseName.AGENT, PhaseName.COTRAIN))
    assert payload.state_size > 0 and payload.action_size > 0 and payload.half_life_steps >= 0.0
    for weights in (payload.network_state, payload.policy_state, payload.strength_state):
        assert weights and all(bool(torch.isfinite(tensor).all()) for tensor in weights.values() if tensor.is_floating_point())
    assert payload.config and payload.data_checksum
    assert payload.plateau_cuts is None or payload.plateau_cuts >= 0
    if payload.kind == "model":
        assert set(payload.dev) == set(BY_NAME[phase].dev_modes)
        for mode in payload.dev:
            numbers = payload.dev_scores(mode)
            assert all(finite(value) for value in numbers.values() if isinstance(value, (int, float)))
    if task == "translation":
        assert payload.task == "translation" and isinstance(payload.source_tokenizer, bytes)
        assert payload.shared_tokenizer or isinstance(payload.target_tokenizer, bytes)
    else:
        assert payload.task == "classification" and payload.vocab and payload.label_names and payload.tokenizer
        assert set(payload.task_entries) >= {"vocab", "label_names", "tokenizer", "data_checksum"}  # nested under the task
        assert payload.net_name == "tiny"


@pytest.mark.parametrize("task", ["classification", "translation"])
def test_every_checkpoint_a_run_writes_reads_through_the_typed_payload(run_folders, task):
    run_dir = run_folders[task]
    named = {best_checkpoint(run_dir, phase.name, mode) for phase in PHASES for mode in (None, *phase.dev_modes)}
    written = set(run_dir.glob("*_best*.pt"))
    assert written and written <= named  # every best checkpoint a run writes is one best_checkpoint names
    for phase in PHASES:
        for mode in (None, *phase.dev_modes):
            path = best_checkpoint(run_dir, phase.name, mode)
            if not path.exists():
                continue
            payload = CheckpointPayload.read(path)
            check_model(payload, phase.name, task)
            assert payload.kind == "model" and payload.keys() == load_checkpoint(path).keys()
    last = run_dir / "last.pt"
    assert last.exists()
    resume = CheckpointPayload.read(last)
    assert resume.kind == "resume" and resume.global_step > 0 and resume.progress["index"] >= 0
    check_model(resume, resume.phase, task)
    check_history(resume["history"], str(last))  # the records as last.pt keeps them
    assert [record.to_dict() for record in resume.history] == resume["history"]
    assert isinstance(resume.rng_cpu, torch.Tensor) and isinstance(resume.rng_cuda, list)


def test_a_payload_reads_as_the_mapping_it_wraps_and_saves_the_same_entries(tmp_path):
    entries = {"format": 2, "kind": "model", "phase": "pretrain", "epoch": 3, "network": {"w": torch.ones(2)},
               "dev": {"net-only": {"a": 1}}}
    payload = CheckpointPayload(entries)
    assert payload["epoch"] == 3 and dict(payload) == entries and CheckpointPayload.of(payload) is payload
    assert payload.dev_scores(Mode.WITH_AGENT) is None and payload.task_entry("label_names") is None
    payload.save(tmp_path / "c.pt")
    again = CheckpointPayload.read(tmp_path / "c.pt")
    assert again.epoch == 3 and torch.equal(again.network_state["w"], torch.ones(2))
    save_atomic(again, tmp_path / "d.pt")  # a payload is what save_atomic writes
    assert load_checkpoint(tmp_path / "d.pt")["tensor_checksum"] == again.tensor_checksum


@pytest.mark.parametrize("rows", [[], {"DRGA (co-trained)": ["net-only"]}])
def test_a_result_file_whose_rows_are_of_the_wrong_kind_is_refused_in_one_line(rows):
    with pytest.raises(UserError, match="x.json: its rows must be an object of rows, each an object of modes"):
        ResultFile.from_dict({"name": "n", "net": "lstm-sa", "dataset": "subj", "seed": 0, "rows": rows}, "x.json")


@pytest.mark.parametrize("seed", ["one", 1.5, True])
def test_a_result_file_whose_seed_is_not_an_integer_is_refused_in_one_line(seed):
    with pytest.raises(UserError, match="x.json: its seed must be an integer"):
        ResultFile.from_dict({"name": "n", "net": "lstm-sa", "dataset": "subj", "seed": seed, "rows": {}}, "x.json")
