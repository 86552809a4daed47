"""experiments/tuned_study.py and tuned_tables.py (issue 40): the search spaces, the page from a hand-made study folder
(numbers worked out by hand, rebuilt byte-identical), and the whole study end to end on bundled SUBJ (slow)."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

from tests.scripts import ROOT, load_script

optuna = pytest.importorskip("optuna") if not os.environ.get("CI") else __import__("optuna")


@pytest.fixture(scope="module")
def study():
    return load_script("experiments/tuned_study.py")


@pytest.fixture(scope="module")
def tables():
    return load_script("experiments/tuned_tables.py")


# --- the spaces and the small pieces -------------------------------------------------------------


def test_the_drga_arm_searches_every_knob_of_the_issue_and_the_baseline_arm_its_own(study):
    drga = {d.key: d for d in study.dimensions("drga")}
    assert set(drga) == {
        "reward.gamma", "adjust.beta0", "adjust.beta_half_life_epochs", "reward.sqrt_l0", "reward.delta", "agent.lr", "agent.samples",
        "train.cotrain_epochs", "train.patience", "adjust.trainable_beta", "agent.size", "variant",
    }
    # the paper's Table I: 1-3 layers of 100-400 units, ten sizes
    assert len(drga["agent.size"].choices) == 10 and drga["agent.size"].overrides("2x300") == ["agent.hidden_sizes=300,300"]
    assert drga["variant"].overrides("paper") == []
    assert {d.key for d in study.dimensions("baseline")} == {
        "train.lr", "network.dropout", "train.baseline_epochs", "train.plateau_lr_factor", "train.plateau_patience"}


def test_the_variants_are_those_of_variants_sh_that_a_fixed_network_allows(study):
    script = (ROOT / "experiments" / "variants.sh").read_text()
    settings = dict(re.findall(r'\[([a-z-]+)\]="([^"]+)"', script))
    for name, items in study.VARIANTS.items():
        assert name == "paper" or items == [settings[name]]
    assert set(settings) - set(study.VARIANTS) == {"holdout", "transformer-all-gradients"}  # the pretrained network saw the
    # agent's holdout; the other is no variant of the method


def test_seeds_and_the_time_a_drga_run_spent(study):
    assert study.seeds_of("0-9") == list(range(10)) and study.seeds_of("0,3-4") == [0, 3, 4] and study.seeds_of("2") == [2]
    drga = {"phases": {"agent": {"seconds": 30.5}, "cotrain": {"seconds": 70.25}}}
    assert study.matched_seconds(drga) == pytest.approx(100.75)


def test_the_plan_projects_from_the_main_studys_epochs(study, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # main() works from the repository root; this puts the test's folder back afterwards
    # CNN+SA/MR in the main study: the first seed's agent and co-training epochs set the pace; 2 trials of at most
    # 3 agent epochs + 5.5 co-training epochs each
    seconds = study.epoch_seconds(("cnn-sa", "mr"))
    trial = study.projected_seconds("drga-trial", seconds, 3)
    assert trial == pytest.approx(3 * seconds["agent"] + 5.5 * seconds["cotrain"])
    assert study.main(["search", "--arm", "drga", "--trials", "2", "--nets", "cnn-sa", "--datasets", "mr", "--dry-run",
                       "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"cnn-sa/mr: 2 × drga-trial, ~{trial / 60:.1f} CPU min each, {2 * trial / 3600:.2f} CPU h" in out
    assert not (tmp_path / "tuned-search").exists()  # a dry run writes nothing


# --- the page, from a hand-made study folder -----------------------------------------------------


def write_study(path: Path, name: str, trials: list[dict]) -> None:
    storage = f"sqlite:///{path}"
    made = optuna.create_study(study_name=name, storage=storage, direction="maximize")
    for trial in trials:
        finished = trial.get("state", "COMPLETE") != "FAIL"  # a failed trial records no seconds
        made.add_trial(optuna.trial.create_trial(
            state=getattr(optuna.trial.TrialState, trial.get("state", "COMPLETE")), value=trial.get("value"),
            params=trial["params"], distributions=trial["distributions"], intermediate_values=trial["curve"],
            user_attrs={**({"cpu_seconds": 600.0, "wall_seconds": 900.0, "epoch": trial.get("epoch", 1)} if finished else {}),
                        **({"selection_key": [trial["value"], -1.0]} if trial.get("value") is not None else {}),
                        **trial.get("user_attrs", {})},
            system_attrs=trial.get("system_attrs"),
        ))


def write_run(folder: Path, seed: int, rows: dict, checksum: str, dev: float = 0.5, **extra) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    result = {"name": f"mr-lstm-sa-seed{seed}", "net": "lstm-sa", "dataset": "mr", "seed": seed, "commit": "abc",
              "pretrain_checksum": checksum, "wall_seconds": 100.0,
              "rows": {row: {mode: {"epoch": epoch, "dev": dev, "test": accuracy / 100} for mode, (accuracy, epoch) in modes.items()}
                       for row, modes in rows.items()}, "history": [], **extra}
    (folder / f"{result['name']}.json").write_text(json.dumps(result))


def hand_made_study(results: Path) -> None:
    search = results / "tuned-search"
    search.mkdir(parents=True)
    gamma = optuna.distributions.FloatDistribution(0.02, 1.0, log=True)
    variant = optuna.distributions.CategoricalDistribution(["paper", "closeness"])
    lr = optuna.distributions.FloatDistribution(1e-4, 3e-3, log=True)
    # DRGA: four completed trials (best epochs 0, 2, 3, 0) and two pruned; 6 × 600 CPU s = 1.00 h, 6 × 900 s = 1.50 h
    drga = [{"params": {"reward.gamma": g, "variant": v}, "distributions": {"reward.gamma": gamma, "variant": variant},
             "value": value, "epoch": epoch, "curve": {1: value - 0.01, 2: value}}
            for g, v, value, epoch in ((0.1, "paper", 0.80, 0), (0.5, "closeness", 0.82, 2), (0.9, "paper", 0.79, 3),
                                       (0.05, "closeness", 0.81, 0))]
    drga += [{"params": {"reward.gamma": 0.3, "variant": "paper"}, "distributions": {"reward.gamma": gamma, "variant": variant},
              "state": "PRUNED", "curve": {1: 0.7}}] * 2
    # trial 6 failed, marked by hand (not retried): in no count or hour
    drga += [{"params": {"reward.gamma": 0.2, "variant": "paper"}, "distributions": {"reward.gamma": gamma, "variant": variant},
              "state": "FAIL", "curve": {}, "user_attrs": {"stopped": "killed with the session"}}]
    write_study(search / "mr-lstm-sa-drga.db", "mr-lstm-sa-drga", drga)
    baseline = [{"params": {"train.lr": x}, "distributions": {"train.lr": lr}, "value": v, "curve": {1: v}}
                for x, v in ((2e-4, 0.78), (1e-3, 0.80), (2e-3, 0.79), (5e-4, 0.77))]
    # trial 4 failed when its heartbeat went stale and was retried as trial 5, pruned (drga tune's retry)
    baseline += [{"params": {"train.lr": 3e-4}, "distributions": {"train.lr": lr}, "state": "FAIL", "curve": {}},
                 {"params": {"train.lr": 3e-4}, "distributions": {"train.lr": lr}, "state": "PRUNED", "curve": {1: 0.7},
                  "system_attrs": {"failed_trial": 4, "retry_history": [4]}}]
    write_study(search / "mr-lstm-sa-baseline.db", "mr-lstm-sa-baseline", baseline)
    (search / "pretrained.json").write_text(json.dumps({"mr-lstm-sa": {"seed": 0, "checkpoint": "x.pt", "checksum": "net0",
                                                                       "commit": "abc", "result_file": "y.json"}}))
    regime, main = results / "tuned-regime", results / "paper-regime"
    pretrain, drga_row, baseline_row = "baseline (pretrain only)", "DRGA (co-trained)", "baseline (equal budget)"
    for seed, (tuned_baseline, tuned_drga, untuned_drga, matched) in enumerate([(80, 81, 80.5, 79), (81, 83, 82, 80), (82, 85, 84, 81)]):
        network = f"net{seed}"
        write_run(regime / "pretrain", seed, {pretrain: {"net-only": (78, 5)}}, network, dev=0.805)  # the search's start: seed 0
        write_run(regime / "drga", seed, {pretrain: {"net-only": (78, 5)}, "agent on frozen network": {"with-agent": (79, 1)},
                                          drga_row: {"with-agent": (tuned_drga, seed), "net-only": (79, 0)}}, network,
                  phases={"agent": {"epochs": 3, "seconds": 30.0}, "cotrain": {"epochs": 4, "seconds": 70.0 + 10 * seed}})
        write_run(regime / "baseline", seed, {pretrain: {"net-only": (78, 5)}, baseline_row: {"net-only": (tuned_baseline, 2)}}, network,
                  phases={"baseline": {"epochs": 6, "seconds": 60.0}})
        write_run(regime / "time-matched", seed, {pretrain: {"net-only": (78, 5)}, baseline_row: {"net-only": (matched, 4)}}, network,
                  phases={"baseline": {"epochs": 9 + seed, "seconds": 95.0 + 10 * seed}},
                  config={"train": {"baseline_seconds": 100.0 + 10 * seed}})
        # the main study: seed 2 pretrained another network, so it is left out of the comparison with the untuned DRGA
        write_run(main, seed, {pretrain: {"net-only": (78, 5)}, baseline_row: {"net-only": (79, 1)},
                               drga_row: {"with-agent": (untuned_drga, 1), "net-only": (79, 1)}}, network if seed < 2 else "other")


def row_of(text: str, section: str, start: str) -> list[str]:
    part = text.split(section, 1)[1]
    line = next(line for line in part.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_page_from_a_hand_made_study(tables, tmp_path):
    hand_made_study(tmp_path / "results")
    out = tmp_path / "docs" / "tuned.md"
    assert tables.main(["--results", str(tmp_path / "results"), "--out", str(out), "--figures", str(tmp_path / "docs" / "tuned")]) == 0
    text = out.read_text()
    search = "### The search"
    # above the start (80.50) at some epoch: DRGA's curves (0.81, 0.82) and (0.80, 0.81), not 0.79–0.80, 0.78–0.79 or the
    # pruned 0.70s; none of the baseline's single epochs (0.78, 0.80, 0.79, 0.77)
    assert row_of(text, search, "| lstm-sa | mr | drga |")[3:] == ["4 + 2 (1 failed)", "1.00", "1.50", "82.00 (1)", "80.50", "2/6", "2/4"]
    assert row_of(text, search, "| lstm-sa | mr | baseline |")[3:] == ["4 + 1 (1 failed)", "0.83", "1.25", "80.00 (1)", "80.50", "0/5",
                                                                       "4/4"]
    # the failed trials, each with what its file records of why (these files have no heartbeats: no wall time)
    assert "2 trials ended in state FAIL" in text
    failed = "| network | data set | arm | trial | started |"
    drga_failure, baseline_failure = row_of(text, failed, "| lstm-sa | mr | drga |"), row_of(text, failed, "| lstm-sa | mr | baseline |")
    assert drga_failure[3] == "6" and drga_failure[6] == "-"
    assert drga_failure[7] == "marked FAIL by hand, its note (in other words): killed with the session; no later trial ran its parameters"
    assert baseline_failure[3] == "4" and baseline_failure[6] == "-"
    assert baseline_failure[7].endswith("retried its parameters as trial 5 (pruned)")
    assert row_of(text, "### The best configurations", "| lstm-sa | mr | drga |")[3:] == ["1", "reward.gamma = 0.5, variant = closeness"]
    importance = row_of(text, "### What mattered", "| lstm-sa | mr | drga |")
    assert importance[3] == "4" and "reward.gamma" in importance[4] and "variant" in importance[4]
    assert "![dev accuracy of each arm's best trials](tuned/dev-curves.png)" in text
    assert "![each knob's importance per cell and arm](tuned/importance.png)" in text
    assert (tmp_path / "docs" / "tuned" / "importance.png").stat().st_size > 0
    test = "### The test"
    # seed 0's network is the recorded one; its runs (dev 0.50) do not repeat the best trials (0.82, 0.80)
    assert "every trial started from (the checksum `tuned-search/pretrained.json` records) in 1 of 1 cells" in text
    assert "at the best trial's dev accuracy in 0 of 2 (cell, arm) pairs" in text
    # every file names commit abc; the main study's seeds 0-1 share the network, seed 2 another one trained the same as recorded
    assert row_of(text, "### Code and pretrained networks", "| lstm-sa | mr |")[2:] == ["abc (0–2)", "abc (0–2)", "2 (0, 1)", "1 of 1 (2)"]
    # means: tuned baseline 80, 81, 82; tuned DRGA 81, 83, 85; the untuned study's three seeds (79 ×3; 80.5, 82, 84: sd 1.76),
    # on seeds 0-1 only where the networks are the same (79, 79; 80.5, 82)
    assert row_of(text, test, "| lstm-sa | mr |")[2:] == ["3", "80.1 → 82.4 (+2.3)", "79.00 ± 0.00, 82.17 ± 1.76 (3 seeds)",
                                                          "79.00 ± 0.00, 81.25 ± 1.06 (2 of 3 seeds)",
                                                          "81.00 ± 1.00", "83.00 ± 2.00", "79.00 ± 0.00", "80.00 ± 1.00"]
    # +1, +2, +3: mean +2.00, sd 1, t = 3.464 with 2 df → p = 0.074; 2 ± 4.303/√3 = [−0.48, +4.48]
    assert row_of(text, "**tuned DRGA with agent − tuned baseline**", "| lstm-sa | mr |")[2:] == [
        "3", "+2.00", "[-0.48, +4.48]", "0.074", "0.074", "tie"]
    # against the time-matched 79, 80, 81: +2, +3, +4, mean +3, sd 1 → t = 5.196, p = 0.035; [+0.52, +5.48]
    assert row_of(text, "**tuned DRGA with agent − time-matched baseline**", "| lstm-sa | mr |")[2:] == [
        "3", "+3.00", "[+0.52, +5.48]", "0.035", "0.035", "better"]
    # against the untuned DRGA on the two seeds of the same network: +0.5, +1.0, mean +0.75, sd 0.354 → t = 3, 1 df,
    # p = 0.205; 0.75 ± 12.706 · 0.25 = [−2.43, +3.93]
    assert row_of(text, "**tuned DRGA with agent − untuned DRGA", "| lstm-sa | mr |")[2:] == [
        "2", "+0.75", "[-2.43, +3.93]", "0.205", "0.205", "tie"]
    # given 100, 110, 120 s; used 95, 105, 115 s over 9, 10, 11 epochs; the equal-budget baseline 6 epochs in 60 s
    assert row_of(text, "### Time", "| lstm-sa | mr |")[2:] == ["3", "110 ± 10", "105 ± 10", "10.0 ± 1.0", "6.0 ± 0.0 (60 ± 0)"]
    # co-training epoch 0 with the agent in seed 0; net-only in every seed; the baseline never
    assert row_of(text, "### Selected epochs", "| lstm-sa | mr |")[2:] == ["3", "1/3 (33%)", "3/3 (100%)", "1/3 (33%)", "0/3 (0%)"]


def test_a_trial_failed_by_hand_whose_parameters_a_later_trial_ran(tables):
    from types import SimpleNamespace

    def trial(number, params, state="COMPLETE", **attrs):
        return SimpleNamespace(number=number, params=params, state=SimpleNamespace(name=state), user_attrs=attrs, system_attrs={})

    failed = trial(12, {"reward.gamma": 0.2, "variant": "paper"}, "FAIL", stopped="killed")
    # trial 11 ran them before it (not after), trial 14 others; trial 15 the same two, not recorded as a retry
    trials = [trial(11, dict(failed.params)), failed, trial(14, {"reward.gamma": 0.3, "variant": "paper"}),
              trial(15, dict(failed.params))]
    study = SimpleNamespace(get_trials=lambda deepcopy=False: trials)
    assert tables.failure_of(failed, study) == ("marked FAIL by hand, its note (in other words): killed; trial 15 (complete) "
                                                "ran the same 2 parameters, which the file does not record as a retry")
    # a note about the machine's own working time is said as what happened to the run
    assert tables.paraphrased_note("killed (session 5 ended / sqlite readonly error)") == (
        "killed (the machine it ran on was taken back / sqlite readonly error)")


def test_the_average_over_the_cells(tables):
    from drga.analysis.stats import t_quantile

    # cells +1, +2, +3 (mean 2, v = 1/3) and +2, +4, +6 (mean 4, v = 4/3); a one-seed cell is left out:
    # mean 3, SE² = (1/3 + 4/3)/4 = 5/12, df = (5/3)² / ((1/3)²/2 + (4/3)²/2) = 50/17
    half = t_quantile(0.975, 50 / 17) * math.sqrt(5 / 12)
    line = tables.over_the_cells([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [5.0]])[1]
    assert line.startswith(f"Over the 2 cells, each weighted equally: +3.00 points, 95% interval [{3 - half:+.2f}, {3 + half:+.2f}]")
    assert "2.9 degrees of freedom" in line
    assert tables.over_the_cells([[1.0, 2.0, 3.0], [5.0]]) == []  # one cell: its own table says it all
    without = tables.over_the_cells([[2.0, 3.0], [4.0, 6.0]], without="seed 0 (the search's)")[1]
    assert without.startswith("Without seed 0 (the search's), over the 2 cells, each weighted equally: +3.75 points")
    assert tables.seed_ranges([0, 1, 2, 5, 7, 8]) == "0–2, 5, 7, 8"
    no_spread = tables.over_the_cells([[1.0, 1.0], [2.0, 2.0]])[1]
    assert no_spread == "Over the 2 cells, each weighted equally: +1.50 points (no spread in any cell)."


def test_rebuilding_the_page_gives_the_same_bytes(tables, tmp_path):
    hand_made_study(tmp_path / "results")
    made = []
    for name in ("first", "second"):
        folder = tmp_path / name
        tables.main(["--results", str(tmp_path / "results"), "--out", str(folder / "tuned.md"), "--figures", str(folder / "tuned")])
        made.append({p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})
    figures = [Path("tuned/dev-curves.png"), Path("tuned/importance.png")]
    assert list(made[0]) == [*figures, Path("tuned.md")]
    for figure in figures:
        assert made[0][figure] == made[1][figure]
    first, second = (m[Path("tuned.md")].decode() for m in made)
    assert first.replace(str(tmp_path / "first"), str(tmp_path / "second")) == second  # but for the folder in its command


# --- the whole study, end to end (tests/conftest.py's tiny_study_config) ---------------------------


@pytest.mark.slow
def test_the_study_end_to_end_on_bundled_subj(study, tables, tmp_path, monkeypatch, tiny_study_config):
    """Pretraining, 2 trials per arm, 2 seeds, the page; about 10 minutes on a loaded 2-core machine (each run a process)."""
    # small spaces, so that a trial stays as tiny as the runs: two knobs per arm, one of them a named choice
    monkeypatch.setattr(study, "DRGA_SEARCH", ("reward.gamma=0.1:0.5", "train.cotrain_epochs=1:2"))
    monkeypatch.setattr(study, "AGENT_SIZES", {"1x8": ["agent.hidden_sizes=8"], "1x4": ["agent.hidden_sizes=4"]})
    monkeypatch.setattr(study, "BASELINE_SEARCH", ("train.lr=1e-3:1e-2:log", "train.baseline_epochs=1:2"))
    common = ["--nets", "lstm-sa", "--datasets", "subj", "--config", str(tiny_study_config),
              "--results", str(tmp_path / "results"), "--logdir", str(tmp_path / "runs")]
    assert study.main(["pretrain", *common]) == 0
    recorded = json.loads((tmp_path / "results" / "tuned-search" / "pretrained.json").read_text())
    result = json.loads((tmp_path / "results" / "tuned-regime" / "pretrain" / "subj-lstm-sa-seed0.json").read_text())
    assert recorded["subj-lstm-sa"]["checksum"] == result["pretrain_checksum"]
    for arm in ("drga", "baseline"):
        assert study.main(["search", "--arm", arm, "--trials", "2", *common]) == 0
        storage = tmp_path / "results" / "tuned-search" / f"subj-lstm-sa-{arm}.db"
        stored = optuna.load_study(study_name=f"subj-lstm-sa-{arm}", storage=f"sqlite:///{storage}")
        assert len(stored.trials) == 2 and all(t.user_attrs["cpu_seconds"] > 0 for t in stored.trials)
    assert study.main(["test", "--seeds", "0-1", *common]) == 0
    for kind in ("pretrain", "drga", "baseline", "time-matched"):
        runs = [json.loads(p.read_text()) for p in sorted((tmp_path / "results" / "tuned-regime" / kind).glob("*.json"))]
        assert [r["seed"] for r in runs] == [0, 1]
    regime = tmp_path / "results" / "tuned-regime"
    for seed in (0, 1):  # every arm of a seed started from that seed's network
        checksums = {json.loads((regime / kind / f"subj-lstm-sa-seed{seed}.json").read_text())["pretrain_checksum"]
                     for kind in ("pretrain", "drga", "baseline", "time-matched")}
        assert len(checksums) == 1
    matched = json.loads((tmp_path / "results" / "tuned-regime" / "time-matched" / "subj-lstm-sa-seed0.json").read_text())
    drga = json.loads((tmp_path / "results" / "tuned-regime" / "drga" / "subj-lstm-sa-seed0.json").read_text())
    assert matched["config"]["train"]["baseline_seconds"] == pytest.approx(study.matched_seconds(drga))
    assert matched["phases"]["baseline"]["seconds"] <= study.matched_seconds(drga) + 1e-6
    # a second test finds everything finished
    assert study.main(["test", "--seeds", "0-1", *common]) == 0
    out = tmp_path / "tuned.md"
    assert study.main(["tables", "--results", str(tmp_path / "results"), "--out", str(out), "--figures", str(tmp_path / "tuned")]) == 0
    assert "| lstm-sa | subj | 2 |" in out.read_text().split("### The test")[1]
