"""experiments/control_tables.py on hand-made result files, numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scripts import load_script


@pytest.fixture(scope="module")
def tables():
    return load_script("experiments/control_tables.py")


def _row(test: float, epoch: int = 1) -> dict:
    # eq. 5's reward and N/L on test, made up so that each follows the accuracy: test − 1 and 1 − test
    return {"epoch": epoch, "dev": test, "test": test, "test_reward": test - 1.0, "test_highlighted_fraction": 1.0 - test}


def _write(folder: Path, dataset: str, net: str, seed: int, pretrain: float, baseline: float, agent: float, drga: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "dataset": dataset, "net": net, "seed": seed,
        "phases": {"pretrain": {"epochs": 6 + seed, "max_epochs": 40, "stopped_early": True}},
        "rows": {"baseline (pretrain only)": {"net-only": _row(pretrain, 2 + seed)},
                 "baseline (equal budget)": {"net-only": _row(baseline)}, "agent on frozen network": {"with-agent": _row(agent)},
                 "DRGA (co-trained)": {"with-agent": _row(drga)}},
    }
    (folder / f"{dataset}-{net}-seed{seed}.json").write_text(json.dumps(payload), encoding="utf-8")


def test_planted_cells_report_the_agents_gain_with_holm_and_the_cue_mass(tables, tmp_path):
    folder = tmp_path / "control-planted" / "masked-s0.9"
    # agent − pretrained: +28, +30, +29 points → mean +29, sd 1, t(2) interval 29 ± 4.303·1/√3 = [26.52, 31.48]
    for seed, (pretrain, agent) in enumerate([(0.70, 0.98), (0.71, 1.0), (0.69, 0.98)]):
        _write(folder, "planted-subj", "cnn-sa", seed, pretrain, pretrain, agent, agent)
    (folder / "cue-mass").mkdir()
    for seed, (before, after) in enumerate([(0.09, 0.23), (0.1, 0.25), (0.08, 0.21)]):
        summary = {"cue_mass": {"mean_mass_original": before, "mean_mass_revised": after}}
        (folder / "cue-mass" / f"planted-subj-cnn-sa-seed{seed}-agent.json").write_text(json.dumps(summary), encoding="utf-8")
    page = tables.planted_tables(tmp_path)
    row = "| masked s = 0.9 | cnn-sa | planted-subj | 3 | 70.00 | 98.67 | 70.00 | 98.67 | 0.090 → 0.230 (3 seeds) | 7.0 of 40; 2–4 |"
    assert row in page
    assert "| masked s = 0.9 | cnn-sa | 3 | +28.67 |" in page
    agent_rows = page.split("**agent on the frozen network − pretrained network**")[1].split("**DRGA")[0]
    assert "better" in agent_rows and "Holm over the 1 cells with a test" in agent_rows


def test_the_ceiling_is_the_share_of_the_learned_uniform_gap_the_agent_recovers(tables, tmp_path):
    # learned 80, 81, 82; uniform 76, 77, 78: gap 4 each; the agent on the uniform network 78, 79, 80: 2 recovered, half the gap
    for seed in range(3):
        _write(tmp_path / "paper-regime", "mr", "lstm-sa", seed, 0.80 + seed / 100, 0.8, 0.8, 0.8)
        _write(tmp_path / "control-uniform", "mr", "lstm-sa", seed, 0.76 + seed / 100, 0.76, 0.78 + seed / 100, 0.78)
    page = tables.ceiling_table(tmp_path)
    # pretraining stopped at 6, 7, 8 of 40 epochs (mean 7.0), its best epochs 2–4
    assert "| mr | 3 | 81.00 | 77.00 | +4.00 [+4.00, +4.00] | 79.00 | +2.00 [+2.00, +2.00] | - | no spread to test | 0.50 | " \
           "[0.50, 0.50] | 7.0 of 40; 2–4 |" in page
    # uniform 0.76, 0.77, 0.78 → N/L 0.24, 0.23, 0.22 and reward −0.24, −0.23, −0.22; the agent 0.78, 0.79, 0.80 → 0.21 on average
    assert "| mr | 3 | 0.230 → 0.210 | -0.230 → -0.210 | 0 of 3 |" in page
    # recovered 1.9, 2.0, 2.1 points: mean 2, sd 0.1, t = 2 / (0.1 / √3) = 34.6 on 2 df, p = 0.00083 (two-sided): better, one test
    for seed, agent in enumerate([0.779, 0.790, 0.801]):
        _write(tmp_path / "control-uniform", "mr", "lstm-sa", seed, 0.76 + seed / 100, 0.76, agent, 0.78)
    page = tables.ceiling_table(tmp_path)
    assert "| +2.00 [+1.75, +2.25] | 0.000832 | better | 0.50 |" in page and "Holm over the 1 cells with a test" in page
    assert tables.ratio_interval([1.0], [2.0]) != tables.ratio_interval([1.0], [2.0])  # NaN with one seed
    assert "(the gap's own interval holds 0)" not in page  # a gap of 4 points each
    # learned 80 each, uniform 79, 81, 80: gaps +1, −1, 0, whose interval holds 0, so the fraction has no meaning of its own
    for seed, uniform in enumerate([0.79, 0.81, 0.80]):
        _write(tmp_path / "paper-regime", "mr", "lstm-sa", seed, 0.80, 0.8, 0.8, 0.8)
        _write(tmp_path / "control-uniform", "mr", "lstm-sa", seed, uniform, 0.8, 0.8, 0.8)
    assert "(the gap's own interval holds 0)" in tables.ceiling_table(tmp_path)
    # learned 80 each, uniform 81, 81.5, 82: the learned attention scores lower, so there is no gap for the agent to close
    for seed, uniform in enumerate([0.81, 0.815, 0.82]):
        _write(tmp_path / "control-uniform", "mr", "lstm-sa", seed, uniform, 0.8, 0.8, 0.8)
    assert "(no gap to close: uniform attention scores higher)" in tables.ceiling_table(tmp_path)


def test_without_result_files_each_table_names_the_command_that_makes_them(tables, tmp_path):
    assert "bash experiments/controls.sh planted" in tables.planted_tables(tmp_path)
    assert "bash experiments/controls.sh uniform" in tables.ceiling_table(tmp_path)


def test_the_authors_procedure_is_read_both_ways_and_its_reported_gain_split_into_parts(tables, tmp_path):
    folder = tmp_path / "control-authors"
    folder.mkdir(parents=True)
    # pretrained dev 70 / test 71; equal-budget baseline test 74; DRGA dev 77 + seed / test 74 + seed (seeds 0, 1, 2)
    for seed in range(3):
        rows = {"baseline (pretrain only)": {"net-only": {"epoch": 2, "dev": 0.70, "test": 0.71}},
                "baseline (equal budget)": {"net-only": {"epoch": 5, "dev": 0.73, "test": 0.74}},
                "agent on frozen network": {"with-agent": {"epoch": 1, "dev": 0.72, "test": 0.72}},
                "DRGA (co-trained)": {"with-agent": {"epoch": 4, "dev": 0.77 + seed / 100, "test": 0.74 + seed / 100}}}
        payload = {"dataset": "mr", "net": "lstm-sa", "seed": seed, "rows": rows}
        (folder / f"mr-lstm-sa-seed{seed}.json").write_text(json.dumps(payload), encoding="utf-8")
    page = tables.authors_table(tmp_path)
    reported, toolkit = page.split("**as this toolkit reports")[0], page.split("**as this toolkit reports")[1].split("**The first")[0]
    # as reported: 78 − 70 = +8 (7, 8, 9: sd 1, t(2) interval 8 ± 4.303/√3 = [5.52, 10.48]); on test: 75 − 74 = +1 (0, 1, 2)
    assert "| as in their code | mr | 3 | +8.00 | [+5.52, +10.48] |" in reported and "better" in reported
    assert "| as in their code | mr | 3 | +1.00 | [-1.48, +3.48] |" in toolkit and "tie" in toolkit
    # +8 = dev selection (78 − 75) − (70 − 71) = +4, more training 74 − 71 = +3, the agent 75 − 74 = +1
    assert "| as in their code | mr | 3 | 70.00 / 71.00 | 78.00 / 75.00 | 74.00 | +8.00 | +4.00 | +3.00 | +1.00 | 0 of 3 |" in page
    assert "No result files yet" in tables.authors_table(tmp_path / "nothing")


def test_the_committed_page_is_what_the_committed_files_give(tables, capsys):
    from tests.scripts import ROOT

    page = ROOT / "docs" / "results" / "controls.md"
    assert tables.main(["--results", str(ROOT / "experiments" / "results")]) == 0
    built = capsys.readouterr().out
    # the page names its command with --out; the printed one without
    assert built.replace("control_tables.py`", "control_tables.py --out docs/results/controls.md`", 1) == page.read_text(encoding="utf-8")
