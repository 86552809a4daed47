"""experiments/regime_tables.py and variant_tables.py on hand-made result files: the paired
statistics by hand, the borrowed baselines and their checksum check, Holm across the variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drga.sweep.results import read_result_file
from tests.scripts import ROOT, load_script


def experiment(name: str):
    return load_script(f"experiments/{name}.py")


def write_result(folder: Path, seed: int, rows: dict[str, dict[str, float]], checksum: str = "net", dataset: str = "subj",
                 net: str = "lstm-sa") -> None:
    """A result file as experiments/sweep.py --results writes it, with test accuracies given in %."""
    folder.mkdir(parents=True, exist_ok=True)
    result = {
        "name": f"{dataset}-{net}-seed{seed}", "net": net, "dataset": dataset, "seed": seed, "commit": "abc",
        "wall_seconds": 100.0, "pretrain_checksum": f"{checksum}{seed}",
        "phases": {"pretrain": {"epochs": 10, "max_epochs": 40, "seconds": 60.0, "stopped_early": True}},
        "majority_class": {"label": "a", "dev_accuracy": 0.5, "test_accuracy": 0.5},
        "rows": {row: {mode: {"epoch": 1, "dev": 0.5, "test": v / 100, "test_reward": -0.6, "test_highlighted_fraction": 0.5}
                       for mode, v in modes.items()} for row, modes in rows.items()},
        "history": [{"phase": "pretrain", "epoch": 1, "dev_net-only_accuracy": 0.5}],
    }
    (folder / f"{result['name']}.json").write_text(json.dumps(result))


def main_study(folder: Path) -> None:
    # equal-budget baseline 90, 91, 92; DRGA with agent 91, 93, 95: differences +1, +2, +3
    for seed, (baseline, drga) in enumerate([(90, 91), (91, 93), (92, 95)]):
        write_result(folder, seed, {
            "baseline (pretrain only)": {"net-only": baseline - 1}, "baseline (equal budget)": {"net-only": baseline},
            "DRGA (co-trained)": {"with-agent": drga, "net-only": baseline},
        })


def test_regime_tables_identical_differences_get_no_p_value(tmp_path):
    regime = experiment("regime_tables")
    # two seeds, DRGA with agent 0.2 under the equal-budget baseline in both: no spread, so no t-test
    for seed, baseline in enumerate([92.0, 92.2]):
        write_result(tmp_path / "study", seed, {
            "baseline (pretrain only)": {"net-only": baseline}, "baseline (equal budget)": {"net-only": baseline},
            "DRGA (co-trained)": {"with-agent": baseline - 0.2, "net-only": baseline + seed},
        })
    out = tmp_path / "table.md"
    assert regime.main([str(tmp_path / "study"), "--out", str(out)]) == 0
    with_agent = out.read_text().split("**DRGA with agent − equal-budget baseline**")[1]
    assert table_row(with_agent, "| lstm-sa | subj |") == ["lstm-sa", "subj", "2", "-0.20", "-", "-", "-",
                                                           "no spread (every seed differs by the same)"]
    net_only = out.read_text().split("**DRGA net-only − equal-budget baseline**")[1]
    # differences 0 and +1: a t-test with 1 df, mean +0.50, sd 0.707 → t = 1, p = 0.5
    assert table_row(net_only, "| lstm-sa | subj |")[3:8] == ["+0.50", "[-5.85, +6.85]", "0.500", "0.500", "tie"]


def variant_table(variants, tmp_path: Path, *folders: str) -> str:
    """variant_tables.py's table of the variant ``folders`` under ``tmp_path`` against its ``study``."""
    out = tmp_path / "variants.md"
    arguments = ["--reference", str(tmp_path / "study"), "--variants", *(str(tmp_path / f) for f in folders), "--out", str(out)]
    assert variants.main(arguments) == 0
    return out.read_text()


def table_row(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_regime_tables_paired_difference_by_hand(tmp_path):
    regime = experiment("regime_tables")
    main_study(tmp_path / "study")
    out = tmp_path / "table.md"
    assert regime.main([str(tmp_path / "study"), "--out", str(out)]) == 0
    text = out.read_text()
    # differences +1, +2, +3: mean +2.00, sd 1, t = 2/(1/√3) = 3.464 with 2 df → p = 0.074;
    # 95% interval 2 ± 4.303·1/√3 = [−0.48, +4.48]; one cell, so Holm leaves p as it is
    section = text.split("**DRGA with agent − equal-budget baseline**")[1]
    assert table_row(section, "| lstm-sa | subj |") == ["lstm-sa", "subj", "3", "+2.00", "[-0.48, +4.48]", "0.074", "0.074", "tie"]


def test_borrowed_baselines_need_the_same_pretrained_network(tmp_path):
    regime = experiment("regime_tables")
    main_study(tmp_path / "study")
    for seed in range(3):  # a variant run from the study's pretrained network: no baseline rows of its own
        write_result(tmp_path / "variant", seed, {"DRGA (co-trained)": {"with-agent": 95, "net-only": 94}})
    assert regime.main([str(tmp_path / "variant"), "--reference", str(tmp_path / "study"), "--out", str(tmp_path / "t.md")]) == 0
    assert table_row((tmp_path / "t.md").read_text(), "| lstm-sa | subj | 3 | 93.5")  # the paper's row, then ours
    write_result(tmp_path / "variant", 1, {"DRGA (co-trained)": {"with-agent": 95, "net-only": 94}}, checksum="other")
    with pytest.raises(SystemExit, match="not the reference run's"):
        regime.main([str(tmp_path / "variant"), "--reference", str(tmp_path / "study")])



def test_pretrain_only_runs_fill_the_baseline_table_and_give_way_to_full_runs_of_their_seed(tmp_path, capsys):
    regime = experiment("regime_tables")
    main_study(tmp_path / "study")  # pretrain-only 89, 90, 91
    # pretrain-only runs of seeds 2 and 3 (seed 2 also has its full run, from the same network)
    for seed, accuracy in ((2, 91), (3, 95)):
        write_result(tmp_path / "pretrain", seed, {"baseline (pretrain only)": {"net-only": accuracy}})
    out = tmp_path / "t.md"
    assert regime.main([str(tmp_path / "pretrain"), str(tmp_path / "study"), "--out", str(out)]) == 0
    baselines = out.read_text().split("### DRGA against its baselines")[0]
    # four seeds' pretrain-only accuracy: 89, 90, 91, 95 → mean 91.25, sd 2.63
    assert table_row(baselines, "| lstm-sa | subj |")[2:5] == ["4 (1 pretrain-only)", "50.00", "91.25 ± 2.63"]
    # the DRGA comparison still pairs only the three full runs, and its table's columns are theirs alone
    with_agent = out.read_text().split("**DRGA with agent − equal-budget baseline**")[1]
    assert table_row(with_agent, "| lstm-sa | subj |")[2:4] == ["3", "+2.00"]
    drga = out.read_text().split("### DRGA against its baselines")[1]
    assert table_row(drga, "| lstm-sa | subj |")[2:6] == ["3", "93.5 → 95.5 (+2.0)", "90.00 ± 1.00", "91.00 ± 1.00"]
    runs = out.read_text().split("### Runs")[1]
    assert table_row(runs, "| lstm-sa | subj |")[2:] == ["0, 1, 2, 3", "abc", "100; 100 (pretrain-only runs)"]
    # a pretrain-only run whose network differs from its full run's: the full run is used, with a warning
    write_result(tmp_path / "pretrain", 1, {"baseline (pretrain only)": {"net-only": 70}}, checksum="other")
    assert regime.main([str(tmp_path / "pretrain"), str(tmp_path / "study"), "--out", str(out)]) == 0
    assert "seed 1's pretrain-only and full runs pretrained different networks" in capsys.readouterr().err
    assert table_row(out.read_text(), "| lstm-sa | subj |")[4] == "91.25 ± 2.63"  # 89, 90, 91, 95 as before: not 70
    # two files of one kind for a seed: nothing says which to keep
    write_result(tmp_path / "more", 1, {"baseline (pretrain only)": {"net-only": 90}})
    with pytest.raises(SystemExit, match="two result files of the same kind"):
        regime.main([str(tmp_path / "pretrain"), str(tmp_path / "more")])

def test_variant_table_reads_each_variant_against_the_same_seeds_baseline_with_holm_over_all_rows(tmp_path):
    variants = experiment("variant_tables")
    main_study(tmp_path / "study")
    # closeness: DRGA with agent 90.4, 91.5, 92.6 against the study's baselines 90, 91, 92: +0.4, +0.5, +0.6,
    # mean +0.50, sd 0.1, t = 0.5/(0.1/√3) = 8.660 with 2 df → p = 1 − t/√(t² + 2) = 0.0131
    for seed, drga in enumerate([90.4, 91.5, 92.6]):
        write_result(tmp_path / "variant-closeness", seed, {"DRGA (co-trained)": {"with-agent": drga, "net-only": drga}})
    text = variant_table(variants, tmp_path, "variant-closeness")
    paper = table_row(text, "| subj | lstm-sa | paper")
    closeness = table_row(text, "| subj | lstm-sa | closeness")
    # Holm over the 2 rows: the smaller p doubled, 2·0.0131 = 0.026 (< 0.05: better); the larger kept, 0.074
    assert paper[3:7] == ["3", "+2.00 [-0.48, +4.48]", "0.074 / 0.074", "tie"]
    # 95% interval 0.5 ± 4.303·0.1/√3 = [+0.25, +0.75]
    assert closeness[3:7] == ["3", "+0.50 [+0.25, +0.75]", "0.013 / 0.026", "**better**"]


def test_variant_table_reports_identical_differences_as_no_spread_and_leaves_them_out_of_holm(tmp_path):
    variants = experiment("variant_tables")
    main_study(tmp_path / "study")
    # self-critical: with agent 89.8, 90.8, 91.8 against baselines 90, 91, 92: −0.2 in every seed (up to the
    # float rounding of 91.8 − 92), so no t-test; net-only +0.4, +0.5, +0.6 as in the closeness test above
    for seed, (drga, net_only) in enumerate([(89.8, 90.4), (90.8, 91.5), (91.8, 92.6)]):
        write_result(tmp_path / "variant-self-critical", seed, {"DRGA (co-trained)": {"with-agent": drga, "net-only": net_only}})
    text = variant_table(variants, tmp_path, "variant-self-critical")
    row = table_row(text, "| subj | lstm-sa | self-critical")
    assert row[4:7] == ["-0.20 (every seed)", "-", "no spread"]
    # one row tested in each column (the paper's net-only equals its baseline in every seed): Holm keeps each p
    assert table_row(text, "| subj | lstm-sa | paper")[5] == "0.074 / 0.074"
    assert "that have a test (lstm-sa: 1 with the agent, 1 net-only)" in text


def test_variant_table_holm_families_are_per_network(tmp_path):
    variants = experiment("variant_tables")
    main_study(tmp_path / "study")  # LSTM+SA: with agent +1, +2, +3 → p = 0.074
    for seed, drga in enumerate([90.4, 91.5, 92.6]):  # an LSTM+SA variant: +0.4, +0.5, +0.6 → p = 0.0131
        write_result(tmp_path / "variant-closeness", seed, {"DRGA (co-trained)": {"with-agent": drga, "net-only": drga}})
    # the Transformer in the main study and in a check of one of its settings, both +0.4, +0.5, +0.6 → p = 0.0131
    for folder in ("study", "variant-transformer-all-gradients"):
        for seed, drga in enumerate([90.4, 91.5, 92.6]):
            rows = {"DRGA (co-trained)": {"with-agent": drga, "net-only": drga}}
            if folder == "study":
                rows |= {"baseline (pretrain only)": {"net-only": 90 + seed}, "baseline (equal budget)": {"net-only": 90 + seed}}
            write_result(tmp_path / folder, seed, rows, net="transformer")
    text = variant_table(variants, tmp_path, "variant-closeness", "variant-transformer-all-gradients")
    # two families of two tests each, so Holm doubles the smaller p and keeps the larger; one family
    # of four would have made the smallest 4 · 0.0131 = 0.052, no longer under 0.05
    assert table_row(text, "| subj | lstm-sa | paper")[5] == "0.074 / 0.074"
    assert table_row(text, "| subj | lstm-sa | closeness")[5:7] == ["0.013 / 0.026", "**better**"]
    assert table_row(text, "| subj | transformer | paper")[5] == "0.013 / 0.026"
    assert table_row(text, "| subj | transformer | transformer-all-gradients")[5] == "0.013 / 0.026"
    assert "(lstm-sa: 2 with the agent, 1 net-only; transformer: 2 with the agent, 2 net-only)" in text


def test_variant_table_reads_the_papers_row_on_the_variants_seeds(tmp_path):
    variants = experiment("variant_tables")
    main_study(tmp_path / "study")  # with agent +1, +2, +3 over seeds 0-2
    # a fourth seed of the main study, run after the variants: with agent +10, which must not enter their comparison
    write_result(tmp_path / "study", 3, {
        "baseline (pretrain only)": {"net-only": 92}, "baseline (equal budget)": {"net-only": 93},
        "DRGA (co-trained)": {"with-agent": 103, "net-only": 93},
    })
    for seed, drga in enumerate([90.4, 91.5, 92.6]):
        write_result(tmp_path / "variant-closeness", seed, {"DRGA (co-trained)": {"with-agent": drga, "net-only": drga}})
    paper = table_row(variant_table(variants, tmp_path, "variant-closeness"), "| subj | lstm-sa | paper")
    # seeds 0-2 only: +1, +2, +3 → +2.00 [−0.48, +4.48] as in test_regime_tables_paired_difference_by_hand
    assert paper[3:5] == ["3", "+2.00 [-0.48, +4.48]"]


def test_a_full_run_started_from_a_pretrain_only_runs_network_takes_over_its_pretraining(tmp_path):
    regime = experiment("regime_tables")
    write_result(tmp_path / "pretrain", 0, {"baseline (pretrain only)": {"net-only": 89}})
    write_result(tmp_path / "study", 0, {
        "baseline (pretrain only)": {"net-only": 89}, "baseline (equal budget)": {"net-only": 90},
        "DRGA (co-trained)": {"with-agent": 91, "net-only": 90},
    })
    # the full run skipped pretraining (train.init_from): no pretrain phase, its own curve starts at the baseline
    full_path = tmp_path / "study" / "subj-lstm-sa-seed0.json"
    full = json.loads(full_path.read_text())
    baseline_phase = {"epochs": 8, "max_epochs": 8, "seconds": 240.0, "stopped_early": False}
    full.update(commit="def", wall_seconds=300.0, phases={"baseline": baseline_phase},
                history=[{"phase": "baseline", "epoch": 1, "dev_net-only_accuracy": 0.6}])
    full_path.write_text(json.dumps(full))
    cells = regime.load([tmp_path / "pretrain", tmp_path / "study"])
    merged = cells[("lstm-sa", "subj")][0]
    assert merged.rows == read_result_file(full_path).rows  # the full run's numbers, whole
    assert merged.phases["pretrain"].epochs == 10 and merged.phases["baseline"].to_dict() == baseline_phase
    assert [record.phase for record in merged.history] == ["pretrain", "baseline"]
    assert merged.wall_seconds == 400.0 and merged.pretrained_at == "abc"
    assert regime.load([tmp_path / "study", tmp_path / "pretrain"]) == cells  # whichever folder comes first
    runs = regime.main([str(tmp_path / "pretrain"), str(tmp_path / "study"), "--out", str(tmp_path / "t.md")])
    assert runs == 0
    text = (tmp_path / "t.md").read_text()
    assert table_row(text, "| lstm-sa | subj | 1 |")[7].startswith("10.0 (10–10")  # pretraining epochs from the pretrain-only run
    assert table_row(text.split("### Runs")[1], "| lstm-sa | subj |")[3:5] == ["abc, def", "400"]
    # a full run that pretrained a different network keeps its own record
    full["pretrain_checksum"] = "other0"
    full_path.write_text(json.dumps(full))
    assert not isinstance(regime.load([tmp_path / "pretrain", tmp_path / "study"])[("lstm-sa", "subj")][0], regime.JoinedRun)


def test_a_resumed_runs_wall_time_is_at_least_its_phases_seconds(tmp_path):
    regime = experiment("regime_tables")
    # seed 0: wall 100 s over 60 s of phases; seed 1 was resumed after a hard kill with a sweep that
    # recorded only its last piece (100 s) while its phases took 60 + 240 = 300 s: mean (100 + 300) / 2
    rows = {"baseline (pretrain only)": {"net-only": 90.0}, "baseline (equal budget)": {"net-only": 90.0},
            "DRGA (co-trained)": {"with-agent": 90.0, "net-only": 90.0}}
    for seed in (0, 1):
        write_result(tmp_path / "study", seed, rows)
    resumed = tmp_path / "study" / "subj-lstm-sa-seed1.json"
    record = json.loads(resumed.read_text())
    record["phases"]["cotrain"] = {"epochs": 5, "max_epochs": 5, "seconds": 240.0, "stopped_early": False}
    resumed.write_text(json.dumps(record))
    out = tmp_path / "table.md"
    assert regime.main([str(tmp_path / "study"), "--out", str(out)]) == 0
    runs = out.read_text().split("### Runs")[1]
    assert table_row(runs, "| lstm-sa | subj |")[-1] == "200"


def test_start_counts_by_hand():
    from drga.runner.phases import BY_NAME

    selection = experiment("selected_epochs")
    StartCounts, start_counts = selection.StartCounts, selection.start_counts

    # the row labels the counting reads are the runner's
    assert (selection.BASELINE, selection.AGENT, selection.DRGA) == tuple(BY_NAME[p].report_label for p in ("baseline", "agent", "cotrain"))

    def run(with_agent: int | None, net_only: int | None, baseline: int | None) -> dict:
        rows: dict = {}
        if baseline is not None:
            rows["baseline (equal budget)"] = {"net-only": {"epoch": baseline}}
        if with_agent is not None:
            rows["DRGA (co-trained)"] = {"with-agent": {"epoch": with_agent}, "net-only": {"epoch": net_only}}
        return {"rows": rows}

    runs = [run(0, 0, 0), run(0, 3, 2), run(2, 0, None), run(1, 1, 0), run(None, None, 0)]
    # four runs co-trained (the last is pretrain-and-baseline only): with agent at epoch 0 in runs 1-2, net-only in
    # runs 1 and 3, both in run 1; the baseline at epoch 0 in runs 1 and 4 of the three co-trained runs that have it
    assert start_counts(runs) == StartCounts(runs=4, with_agent=2, net_only=2, both=1, baseline=2, baseline_runs=3)
    assert start_counts([]) == StartCounts()


def test_start_table_counts_each_cell_and_all(tmp_path):
    regime = experiment("regime_tables")
    rows = lambda agent, net: {  # noqa: E731
        "baseline (pretrain only)": {"net-only": 90}, "baseline (equal budget)": {"net-only": 90},
        "DRGA (co-trained)": {"with-agent": agent, "net-only": net},
    }
    for seed in range(3):
        write_result(tmp_path / "study", seed, rows(91, 90))
        write_result(tmp_path / "study", seed, rows(91, 90), dataset="mr")
    for name in ("subj-lstm-sa-seed0", "subj-lstm-sa-seed1", "mr-lstm-sa-seed2"):  # co-training epoch 0 with the agent
        path = tmp_path / "study" / f"{name}.json"
        result = json.loads(path.read_text())
        result["rows"]["DRGA (co-trained)"]["with-agent"]["epoch"] = 0
        path.write_text(json.dumps(result))
    out = tmp_path / "t.md"
    assert regime.main([str(tmp_path / "study"), "--out", str(out)]) == 0
    section = out.read_text().split("### Selected epochs")[1]
    assert table_row(section, "| lstm-sa | mr |")[2:5] == ["3", "1/3 (33%)", "0/3 (0%)"]
    assert table_row(section, "| lstm-sa | subj |")[2:5] == ["3", "2/3 (67%)", "0/3 (0%)"]
    assert table_row(section, "| **all** |")[2:] == ["6", "3/6 (50%)", "0/6 (0%)", "0/6 (0%)", "0/6 (0%)"]


REGIME_PAGES = ("paper-regime", "paper-regime-random-unk", "families-regime", "hf-encoder")


@pytest.mark.parametrize("page", REGIME_PAGES)
def test_the_committed_regime_pages_are_what_the_committed_results_give(page, tmp_path, monkeypatch):
    """Each docs/results page regime_tables.py wrote is rebuilt from the result folders its first line names
    (the curves go to a scratch folder: their bytes depend on the installed matplotlib and fonts)."""
    regime = experiment("regime_tables")
    committed = (ROOT / "docs" / "results" / f"{page}.md").read_text(encoding="utf-8")
    command = committed.splitlines()[0].split("`")[1].split()
    assert command[:2] == ["python", "experiments/regime_tables.py"]
    monkeypatch.chdir(ROOT)  # the page names its folders relative to the repository
    out = tmp_path / f"{page}.md"
    assert regime.main([*command[2:], "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == committed


def test_results_md_quotes_the_main_studys_selected_epochs_table():
    page = (ROOT / "docs" / "results" / "paper-regime.md").read_text(encoding="utf-8")
    table = [line for line in page.split("### Selected epochs")[1].split("### Runs")[0].splitlines() if line.startswith("|")]
    assert len(table) == 12  # header, rule, 9 cells, all
    assert "\n".join(table) in (ROOT / "docs" / "RESULTS.md").read_text(encoding="utf-8")
