"""Every committed result file under experiments/results/ reads through the typed reader
(drga.sweep.results.read_result_file): the enums and row keys left the files' format as it was."""

import json
from pathlib import Path

import pytest

from drga.errors import UserError
from drga.names import MODES, Mode
from drga.sweep.results import ResultFile, read_result_file

RESULTS = Path(__file__).resolve().parents[2] / "experiments" / "results"
#: Folders of other kinds of file, each read by its own script, and what marks one: the explainability
#: analysis per run (experiments/explain_tables.py), the reward-tuning grids (experiments/tune_reward.py),
#: the tuned study's record of its pretrained networks (experiments/tuned_study.py) and the translation
#: brevity probe's files (experiments/brevity_probe.py: a run's drga-train results.json, the probe's table).
OTHER_KINDS = {
    "explain-analysis": lambda content: "attentions" in content,
    "reward-tuning": lambda content: "chosen" in content,
    "reward-tuning-repro": lambda content: "chosen" in content,
    "translation-reward": lambda content: "chosen" in content,
    "tuned-search": lambda content: all("checksum" in cell for cell in content.values()),
    "brevity": lambda content: "history" in content or "short_below" in content,
}
#: The explainability replicate's analyses (issue 55), beside its training result files in ``explain-redraw/regime``.
REDRAW_ANALYSES = ("explain-redraw", "analysis")
#: Folders of translation runs, whose test scores are BLEU and perplexity, not an accuracy.
TRANSLATION = ("translation-regime", "translation-probes")
FILES = sorted(RESULTS.rglob("*.json"))


def test_the_committed_files_are_found():
    assert len(FILES) > 250  # the paper-regime, families, variants, hf-encoder and explainability studies


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(RESULTS)))
def test_a_committed_result_file_reads_through_the_typed_reader(path):
    folder = path.relative_to(RESULTS).parts[0]
    if folder in TRANSLATION and path.parent.name == "manifests":  # a GPU call's manifest (experiments/translation_gpu.py)
        assert json.loads(path.read_text(encoding="utf-8"))["study"] == "translation-gpu"
        return
    if folder in TRANSLATION and path.parent.name == "probes":  # a throughput probe (experiments/translation_cpu.py projects from it)
        content = json.loads(path.read_text(encoding="utf-8"))
        assert content["baseline_seconds_per_1000_pairs"] > 0 and content["cotrain_seconds_per_1000_pairs"] > 0
        return
    if folder in TRANSLATION and path.parent.name == "units":  # a CPU unit's record (experiments/translation_cpu.py)
        content = json.loads(path.read_text(encoding="utf-8"))
        assert content["unit"] == path.stem and set(content["stage_seconds"]) <= {"pretrain", "drga"}
        return
    if folder == "agent-size" and path.name == "parameters.json":  # Table I's parameter counts (experiments/agent_size_study.py)
        content = json.loads(path.read_text(encoding="utf-8"))
        assert content["network"] > 0 and all(count > 0 for count in content["agent"].values())
        return
    if folder == "control-planted" and path.parent.name == "cue-mass":  # drga analyze --cue-words, as controls.sh keeps it
        content = json.loads(path.read_text(encoding="utf-8"))
        assert content["commit"] and 0.0 <= content["cue_mass"]["mean_mass_revised"] <= 1.0
        return
    if folder in OTHER_KINDS or (folder, path.parent.name) == REDRAW_ANALYSES:
        assert OTHER_KINDS.get(folder, OTHER_KINDS["explain-analysis"])(json.loads(path.read_text(encoding="utf-8")))
        return
    result = read_result_file(path)
    assert result.name == path.stem and result.rows
    # typed both ways: written again, the file is the same bytes (less the fields added since it was written)
    text = path.read_text(encoding="utf-8")
    written = {key: value for key, value in result.to_dict().items() if key in json.loads(text)}
    assert json.dumps(written, indent=1) + "\n" == text
    if folder in TRANSLATION:
        return
    for row, cells in result.rows.items():
        assert cells and set(cells) <= set(MODES)
        for mode in cells:
            score = result.test_score(row, mode)
            assert 0.0 <= score <= 1.0  # classification accuracy
            assert result.test_score(row, str(mode)) == score  # a mode's string reads the same cell


def test_a_cell_and_the_file_views_agree_on_hand_made_content():
    payload = {"name": "mr-lstm-sa-seed0", "net": "lstm-sa", "dataset": "mr", "seed": 0, "rows": {
        "baseline (equal budget)": {"net-only": {"epoch": 2, "dev": 0.75, "test": 0.7}},
        "DRGA (co-trained)": {"net-only": {"epoch": 0, "dev": 0.76, "test": 0.71}},
    }}
    result = ResultFile.from_dict(payload)
    assert result.test_score("baseline (equal budget)", Mode.NET_ONLY) == pytest.approx(0.7)
    assert result.test_score("agent on frozen network", Mode.WITH_AGENT) is None
    assert result.cell("DRGA (co-trained)", "net-only").epoch == 0
    # a translation run's cell keeps all its scores: the table's number is its task's metric, the greedy BLEU
    translation = ResultFile.from_dict({"name": "iwslt-seq2seq-luong-seed0", "net": "seq2seq-luong", "dataset": "iwslt14-de-en",
                                        "seed": 0, "rows": {"DRGA (co-trained)": {"with-agent": {
                                            "epoch": 1, "dev": {"bleu": 30.0}, "test": {"bleu": 25.5, "perplexity": 9.0}}}}})
    assert translation.test_score("DRGA (co-trained)", "with-agent") == pytest.approx(25.5)


@pytest.mark.parametrize("broken, message", [
    ({"name": "x", "net": "lstm-sa", "dataset": "mr", "seed": 0}, "needs name, net, dataset, seed and rows"),
    ({"name": "x", "net": "lstm-sa", "dataset": "mr", "seed": 0, "rows": {"r": {"agent-only": {"test": 0.5}}}}, "unknown modes"),
    ({"name": "x", "net": "lstm-sa", "dataset": "mr", "seed": 0, "rows": {"r": {"net-only": {"dev": 0.5}}}}, "no test scores"),
])
def test_a_file_that_is_not_a_result_file_is_refused_in_one_line(broken, message, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(UserError, match=message):
        read_result_file(path)
