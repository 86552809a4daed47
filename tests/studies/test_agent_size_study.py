"""The paper's Table I (issue 57): experiments/agent_size_study.py and its page, experiments/agent_size_tables.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drga.sweep.results import ResultFile
from tests.scripts import ROOT, load_script


@pytest.fixture(scope="module")
def study():
    return load_script("experiments/agent_size_study.py")


@pytest.fixture(scope="module")
def tables():
    return load_script("experiments/agent_size_tables.py")


def test_the_sizes_are_the_papers_ten_and_each_run_starts_from_the_seeds_network(study, tables):
    assert list(study.AGENT_SIZES) == ["1x100", "1x200", "1x300", "2x100", "2x200", "2x300", "2x400", "3x100", "3x200", "3x300"]
    assert study.AGENT_SIZES["2x400"] == ["agent.hidden_sizes=400,400"]
    assert set(tables.PAPER) == set(study.AGENT_SIZES)
    assert study.kinds()[0] == "baseline"
    assert "train.agent_epochs=0" in study.settings_of("baseline", 8) and "train.baseline_epochs=8" in study.settings_of("baseline", 8)
    assert "agent.hidden_sizes=100,100,100" in study.settings_of("3x100", 8)
    assert study.equal_budget_epochs(study.tuned_study.CONFIG, []) == 8  # the paper regime's 3 agent and 5 co-training epochs


def write_run(results: Path, kind: str, seed: int, rows: dict, checksum: str = "net", **extra) -> None:
    folder = results / ("tuned-regime/pretrain" if kind == "tuned-pretrain" else f"agent-size/{kind}")
    folder.mkdir(parents=True, exist_ok=True)
    result = {"name": f"subj-lstm-sa-seed{seed}", "net": "lstm-sa", "dataset": "subj", "seed": seed, "commit": "abc",
              "pretrain_checksum": f"{checksum}{seed}", "wall_seconds": 360.0,
              "rows": {row: {mode: {"epoch": epoch, "dev": 0.9, "test": accuracy / 100} for mode, (accuracy, epoch) in modes.items()}
                       for row, modes in rows.items()}, "history": [], **extra}
    (folder / f"subj-lstm-sa-seed{seed}.json").write_text(json.dumps(result))


def hand_made_study(results: Path, study, tables) -> None:
    """Three seeds. Baseline 90, 91, 92. Size 2x300 with agent 91, 93, 92 (Δ +1, +2, 0); every other size 90, 91, 92
    (Δ 0, no spread); net-only always the baseline + 0.5."""
    for seed, base in enumerate((90.0, 91.0, 92.0)):
        curve = [{"phase": "pretrain", "epoch": 1, "task_loss": 0.5, "dev_net-only_accuracy": 0.8 + seed / 100}]
        write_run(results, "pretrain", seed, {tables.PRETRAIN_ONLY: {"net-only": (base - 1, 10)}}, history=curve)
        # the tuned study's pretraining of the seed: the same curve (seed 0 also the same checksum), seed 2 another curve
        write_run(results, "tuned-pretrain", seed, {}, checksum="net" if seed == 0 else "tuned",
                  history=curve if seed < 2 else [{**curve[0], "task_loss": 0.4}])
        # seed 1's baseline kept its epoch 0 (the pretrained network), after 3 of at most 8 epochs
        write_run(results, "baseline", seed, {tables.EQUAL_BUDGET: {"net-only": (base, 0 if seed == 1 else 4)}},
                  phases={"baseline": {"epochs": 3 if seed == 1 else 8, "max_epochs": 8, "seconds": 60.0, "stopped_early": seed == 1}})
        for size in study.AGENT_SIZES:
            agent = {"2x300": (91.0, 93.0, 92.0)[seed]}.get(size, base)
            # 1x100's seed 0 kept co-training's start in both modes
            cotrain, net_only = (0, 0) if (size, seed) == ("1x100", 0) else (3, 1)
            write_run(results, size, seed, {tables.AGENT_ROW: {"with-agent": (agent, 2)},
                                            tables.DRGA: {"with-agent": (agent, cotrain), "net-only": (base + 0.5, net_only)}})
    (results / "agent-size" / "parameters.json").write_text(json.dumps(
        {"network": 1_234_000, "agent": {size: 100_000 for size in study.AGENT_SIZES} | {"2x300": 271_201},
         "train_examples": 8000, "batch_size": 64, "steps_per_epoch": 125}))


def row_of(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_page_from_a_hand_made_study(study, tables, tmp_path):
    hand_made_study(tmp_path, study, tables)
    text = tables.page(tmp_path, tmp_path / "agent_size.md")
    row = row_of(text, "| 2 × 300 |")
    # 1,234K + 271K; iterations: agent epoch 2 and co-training epoch 3 at 125 updates an epoch
    assert row[1:6] == ["1,505K (271K)", "3,778K", "250 / 375", "1,560", "3"]
    assert row[6] == "92.00 ± 1.00" and row[7] == "91.50 ± 1.00" and row[8] == "95.5 (+2.0)"
    # Δ = +1, +2, 0: mean 1, sd 1, 95% t interval 1 ± 4.303 · 1/√3 = [-1.48, +3.48]; the only size with spread, so Holm's p is p
    assert row[9] == "+1.00 [-1.48, +3.48]"
    assert row[10] == row[11] == "0.225" and row[12] == "tie"
    other = row_of(text, "| 1 × 100 |")
    assert other[9] == "+0.00 (no spread)" and other[12] == "no test"
    baseline = row_of(text, "| none: equal-budget baseline |")
    # the baseline's selected epochs 4, 0, 4 at 125 updates: 333 on average
    assert baseline[1] == "1,234K" and baseline[3].startswith("333 ") and baseline[7] == "91.00 ± 1.00"
    net_only = row_of(text.split("DRGA net-only − the equal-budget baseline")[1], "| 2 × 300 |")
    assert net_only[1:3] == ["3", "+0.50 (no spread)"]
    assert "test 90.00 ± 1.00 over 3 seeds" in text  # the pretrained network alone
    assert "125 per epoch (8000 training sentences; these counts are `agent-size/parameters.json`'s, which records no commit)" in text
    assert "in 2 of 3 seeds every epoch's training loss and dev accuracy are equal to that study's, and in 1 the checkpoint's" in text
    assert "The files do not say why the checksums differ" in text
    assert "The files record no thread count: no `run.threads` in 36 of 36 files." in text
    files = {seed: ResultFile("subj-lstm-sa", "lstm-sa", "subj", seed, {}, config={"run": {"threads": threads}})
             for seed, threads in ((0, 0), (1, 2))}
    assert tables.threads_text({"a": files}) == (
        "`run.threads` is 0 in 1 of 2 files (torch's default); `run.threads` is 2 in 1 of 2 files")
    # the baseline per seed (the hand-made tests need not equal the pretrained network's where the epoch is 0)
    each = text.split("## The baseline in each seed")[1]
    assert row_of(each, "| 1 |")[1:] == ["3 of at most 8, stopped early", "0", "91.00", "90.00", "the pretrained network itself"]
    assert row_of(each, "| 0 |")[1:] == ["8 of at most 8", "4", "90.00", "89.00", "the network after 4 further epochs"]
    # co-training's start: only 1x100's seed 0, in both modes; 1 of 30 runs over the sizes
    starts = text.split("## Selected epochs")[1]
    assert row_of(starts, "| 1 × 100 |")[1:] == ["3", "1/3 (33%)", "1/3 (33%)", "1/3 (33%)"]
    assert row_of(starts, "| 2 × 300 |")[1:] == ["3", "0/3 (0%)", "0/3 (0%)", "0/3 (0%)"]
    assert row_of(starts, "| **all** |")[1:] == ["30", "1/30 (3%)", "1/30 (3%)", "1/30 (3%)"]
    assert "kept the pretrained network (its epoch 0) in 1 of 3 seeds (1)" in starts


def test_a_zero_mean_difference_prints_without_a_sign_of_rounding(tables):
    # 93.1 − 93.2 and 93.3 − 93.2 in floats: a mean of about −1e-14
    entry = {"n": 2, "diff": [93.1 - 93.2, 93.3 - 93.2], "spread": True, "p": 1.0, "holm": 1.0}
    assert tables.comparison_row(entry).startswith("| +0.00 [")


def test_a_run_from_another_network_is_refused(study, tables, tmp_path):
    hand_made_study(tmp_path, study, tables)
    write_run(tmp_path, "1x200", 1, {tables.DRGA: {"with-agent": (90.0, 0)}}, checksum="other")
    with pytest.raises(SystemExit, match="1x200 seed 1 started from another network"):
        tables.page(tmp_path, tmp_path / "agent_size.md")


def test_a_baseline_that_did_not_train_is_refused(study, tables, tmp_path):
    hand_made_study(tmp_path, study, tables)
    write_run(tmp_path, "baseline", 2, {tables.PRETRAIN_ONLY: {"net-only": (90.0, 12)}})
    with pytest.raises(SystemExit, match="baseline seed 2 has no 'baseline \\(equal budget\\)' row"):
        tables.page(tmp_path, tmp_path / "agent_size.md")


def test_rebuilding_the_page_gives_the_same_bytes(study, tables, tmp_path):
    hand_made_study(tmp_path, study, tables)
    out = tmp_path / "page.md"
    assert tables.main(["--results", str(tmp_path), "--out", str(out)]) == 0
    first = out.read_bytes()
    assert tables.main(["--results", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_bytes() == first


def test_the_committed_page_is_what_the_committed_files_give(tables, tmp_path):
    committed = ROOT / "docs" / "results" / "agent_size.md"
    if not (ROOT / "experiments" / "results" / "agent-size").exists():
        pytest.skip("no committed Table I runs yet")
    out = tmp_path / "agent_size.md"
    assert tables.main(["--results", str(ROOT / "experiments" / "results"), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_study_end_to_end_on_bundled_subj(study, tables, tmp_path, monkeypatch, tiny_study_config):
    """One seed, two tiny agent sizes and the baseline from one pretrained network; a second run finds everything done."""
    sizes = {"1x4": ["agent.hidden_sizes=4"], "2x4": ["agent.hidden_sizes=4,4"]}
    monkeypatch.setattr(study, "AGENT_SIZES", sizes)
    monkeypatch.setattr(tables, "AGENT_SIZES", sizes)
    monkeypatch.setattr(tables, "PAPER", {"1x4": (1, 1, 90.0), "2x4": (2, 2, 91.0)})
    common = ["--config", str(tiny_study_config), "--results", str(tmp_path / "results"), "--logdir", str(tmp_path / "runs"),
              "--seeds", "0"]
    assert study.main(["run", *common]) == 0
    checksums = {json.loads(p.read_text())["pretrain_checksum"] for p in (tmp_path / "results").rglob("subj-lstm-sa-seed0.json")}
    assert len(checksums) == 1  # the pretrain-only run, the baseline and both sizes: one network
    baseline = json.loads((tmp_path / "results" / "agent-size" / "baseline" / "subj-lstm-sa-seed0.json").read_text())
    assert baseline["phases"]["baseline"]["epochs"] == 2  # as many as the sizes' agent and co-training epochs (1 + 1)
    assert tables.EQUAL_BUDGET in baseline["rows"]
    parameters = json.loads((tmp_path / "results" / "agent-size" / "parameters.json").read_text())
    assert set(parameters["agent"]) == set(sizes) and parameters["agent"]["2x4"] > parameters["agent"]["1x4"]
    assert parameters["batch_size"] == 64 and parameters["steps_per_epoch"] == -(-parameters["train_examples"] // 64)
    assert study.main(["run", *common]) == 0  # nothing left to do
    out = tmp_path / "agent_size.md"
    assert tables.main(["--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    assert "| 2 × 4 |" in out.read_text()
