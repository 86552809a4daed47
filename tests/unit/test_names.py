"""The shared names (drga/names.py): enums that are their strings, and the results.json row keys."""

import json

import pytest

from drga.names import (
    MODES,
    Mode,
    Part,
    PhaseName,
    Split,
    epoch_key,
    headline_score,
    history_key,
    parse_history_key,
    score_key,
)
from drga.records import ReportRow
from drga.runner.phases import PHASES, Phase


def test_members_are_the_strings_files_and_configs_hold():
    assert MODES == ("net-only", "with-agent")
    assert [phase.name for phase in PHASES] == ["pretrain", "baseline", "agent", "cotrain"] == list(PhaseName)
    assert f"{Mode.WITH_AGENT}|{Part.BETA:>6}|{PhaseName.COTRAIN}" == "with-agent|  beta|cotrain"
    written = json.dumps({Mode.NET_ONLY: [Part.NETWORK, PhaseName.BASELINE]})
    assert written == '{"net-only": ["network", "baseline"]}'
    assert {"net-only": 1}[Mode.NET_ONLY] == 1 and {Mode.NET_ONLY: 1}["net-only"] == 1
    # what a user's callback prints of a record's scores looks as it did with strings
    assert repr({Mode.NET_ONLY: 0.52, Mode.WITH_AGENT: 0.5}) == "{'net-only': 0.52, 'with-agent': 0.5}"
    assert repr((PhaseName.AGENT, Part.BETA)) == "('agent', 'beta')"


def test_row_keys_are_built_and_parsed_back():
    assert score_key("test", "net-only") == "test_net-only"
    assert score_key(Split.DEV, Mode.WITH_AGENT) == "dev_with-agent"
    assert score_key(Split.TEST, Mode.WITH_AGENT, beam=True) == "test_with-agent_beam"
    assert epoch_key(Mode.NET_ONLY) == "epoch_net-only"
    assert history_key(Mode.WITH_AGENT, "accuracy") == "dev_with-agent_accuracy"
    assert parse_history_key("dev_with-agent_accuracy") == (Mode.WITH_AGENT, "accuracy")
    for other in ("dev_with-agent_", "dev_net-only", "task_loss", "test_net-only_accuracy"):
        assert parse_history_key(other) is None
    with pytest.raises(ValueError):
        score_key("test", "agent-only")


def test_a_row_is_read_through_its_keys():
    written = {"phase": "cotrain", "epoch": 3, "checkpoint": "cotrain_best.pt", "epoch_with-agent": 0,
               "test_net-only": {"accuracy": 0.75}, "test_with-agent": {"bleu": 21.5, "chrf": 50.0}}
    row = ReportRow.from_dict(written)
    assert row.scores(Split.TEST, Mode.NET_ONLY) == {"accuracy": 0.75}
    assert row.scores(Split.DEV, Mode.NET_ONLY) is None
    assert row.epoch_of(Mode.WITH_AGENT) == 0
    assert row.epoch_of(Mode.NET_ONLY) == 3  # a row without the mode's own epoch: the row's
    assert row.test_score(Mode.NET_ONLY, "accuracy") == pytest.approx(0.75)
    assert row.test_score(Mode.WITH_AGENT, "bleu") == pytest.approx(21.5)  # the task's metric, not the keys present
    assert headline_score(written["test_with-agent"], "chrf") == pytest.approx(50.0)
    from drga.registry import report_metric_of_network, task_spec

    assert report_metric_of_network("lstm-sa") == "accuracy" and report_metric_of_network("seq2seq-luong") == "bleu"
    assert task_spec("translation").report.metric == "bleu" and task_spec("translation").report.scale == 1.0


def test_a_phase_row_names_its_settings():
    cotrain = PHASES[-1]
    assert cotrain.trains == (Part.NETWORK, Part.AGENT, Part.BETA) and cotrain.has_agent and not cotrain.network_frozen
    assert cotrain.selection_mode("net-only") == Mode.NET_ONLY and PHASES[2].selection_mode("net-only") == Mode.WITH_AGENT
    with pytest.raises(TypeError):
        Phase(PhaseName.PRETRAIN, (Part.NETWORK,), (Mode.NET_ONLY,), (), False, False, lambda t: 1, "row", "loss")  # type: ignore[misc]
