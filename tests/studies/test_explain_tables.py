"""experiments/explain_study.py tables on two hand-made runs (tests/fixtures/explain-analysis): the means, the
paired tests and Holm's adjustment worked out by hand, and the same bytes on every rebuild."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.scripts import ROOT, load_script

FIXTURE = ROOT / "tests" / "fixtures" / "explain-analysis"


def two_sided_p_one_df(t: float) -> float:
    """Student's t with one degree of freedom is Cauchy: P(|T| ≥ |t|) = 1 − 2·atan(|t|)/π."""
    return 1 - 2 * math.atan(abs(t)) / math.pi


@pytest.fixture(scope="module")
def tables():
    load_script("experiments/explain_study.py")
    return load_script("experiments/explain_tables.py")


def test_means_tests_and_holm_by_hand(tables):
    rows = tables.comparisons(tables.load(FIXTURE)["mr"])
    assert [r["measure"].key for r in rows] == ["n", "n_l"]
    n, n_l = rows
    assert n["values"]["baseline"] == {0: 10.0, 1: 12.0}
    # Two seeds: differences (a, b) give t = mean / (std / √2) = (a + b) / |a − b|.
    # N: net-only − baseline = (−1, −3): t = −2; with-agent: (−2, −3): t = −5.
    # N/L: net-only (−0.1, −0.2): t = −3; with-agent (0, −0.1): t = −1.
    p = {("n", "drga-net-only"): two_sided_p_one_df(2), ("n", "drga-with-agent"): two_sided_p_one_df(5),
         ("n_l", "drga-net-only"): two_sided_p_one_df(3), ("n_l", "drga-with-agent"): two_sided_p_one_df(1)}
    assert p[("n", "drga-with-agent")] == pytest.approx(0.125666, abs=1e-6)
    for row in rows:
        for mode, test in row["tests"].items():
            assert test["p"] == pytest.approx(p[(row["measure"].key, mode)], abs=1e-9)
    # Holm over the four: 0.1257·4 = 0.5027; 0.2048·3 = 0.6145; 0.2952·2 = 0.5903 → 0.6145 (monotone); 0.5·1 → 0.6145
    assert n["tests"]["drga-with-agent"]["holm"] == pytest.approx(4 * 0.125666, abs=1e-5)
    for test in (n["tests"]["drga-net-only"], n_l["tests"]["drga-net-only"], n_l["tests"]["drga-with-agent"]):
        assert test["holm"] == pytest.approx(3 * 0.204833, abs=1e-5)
    # both measures answer the focus question, so the focus family is the whole family here
    for row in rows:
        for test in row["tests"].values():
            assert test["question_holm"] == test["holm"] and test["question_family"] == 4
    # d_z of (−2, −3): mean −2.5 over the sample std √0.5
    assert n["tests"]["drga-with-agent"]["d"] == pytest.approx(-2.5 / math.sqrt(0.5))
    assert n["tests"]["drga-with-agent"]["mean"] == pytest.approx(-2.5)


def test_the_page_shows_them(tables, tmp_path):
    text = tables.write_page(FIXTURE, tmp_path / "EXPLAINABILITY.md", tmp_path / "explainability")
    # baseline N: 10, 12 → 11.00 ± 1.41 (sample std √2); with-agent: 8, 9 → 8.50 ± 0.71
    assert "| mean highlighted tokens N | N −22.9 % | 11.00 ± 1.41 (2) | 9.00 ± 0.00 (2) | 8.50 ± 0.71 (2) |" in text
    assert "-2.50, d = -3.54, p = 0.126, Holm 0.503 (0.503 in the focus family): no difference |" in text
    assert "**Partial.**" in text and "MR 2/5, SUBJ 0/5, SST-5 0/5" in text
    # N against the baseline per seed: net-only −10 %, −25 %; with-agent −20 %, −25 %
    assert "DRGA net-only α -17.5 ± 10.6 %; DRGA with-agent α* -22.5 ± 3.5 % (the paper: −22.9 %)" in text
    assert (tmp_path / "explainability" / "mr-words.png").is_file()


def test_rebuilding_gives_the_same_bytes(tables, tmp_path):
    made = []
    for name in ("first", "second"):
        folder = tmp_path / name
        tables.write_page(FIXTURE, folder / "EXPLAINABILITY.md", folder / "explainability")
        made.append({p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()})
    assert list(made[0]) == [Path("EXPLAINABILITY.md"), Path("explainability/mr-words.png")]
    assert made[0] == made[1]


def test_the_committed_page_is_what_the_committed_results_give(tables, tmp_path):
    """docs/EXPLAINABILITY.md is rebuilt from experiments/results/explain-analysis alone (its pictures are drawn
    to a scratch folder here: their bytes depend on the installed matplotlib and fonts)."""
    results = ROOT / "experiments" / "results" / "explain-analysis"
    page = tmp_path / "docs" / "EXPLAINABILITY.md"
    text = tables.write_page(results, page, tmp_path / "docs" / "explainability")
    assert text == (ROOT / "docs" / "EXPLAINABILITY.md").read_text(encoding="utf-8")


def test_the_page_counts_the_seeds_whose_net_only_network_is_the_baseline(tables, tmp_path):
    """From the study's result files beside the analyses: a seed whose DRGA net-only row and equal-budget baseline row
    were both read at their phase's epoch 0 holds the pretrained network twice (experiments/selected_epochs.py)."""
    analyses, regime = tmp_path / "results" / "explain-analysis", tmp_path / "results" / "explain-regime"
    shutil.copytree(FIXTURE, analyses)
    regime.mkdir()
    for seed, (baseline_epoch, net_only_epoch) in enumerate([(0, 0), (0, 2)]):
        rows = {"baseline (equal budget)": {"net-only": {"epoch": baseline_epoch, "test": 0.8}},
                "DRGA (co-trained)": {"net-only": {"epoch": net_only_epoch, "test": 0.8}, "with-agent": {"epoch": 1, "test": 0.8}}}
        result = {"name": f"mr-lstm-sa-seed{seed}", "net": "lstm-sa", "dataset": "mr", "seed": seed, "rows": rows}
        (regime / f"mr-lstm-sa-seed{seed}.json").write_text(json.dumps(result))
    text = tables.write_page(analyses, tmp_path / "EXPLAINABILITY.md", tmp_path / "explainability")
    assert "In 1 of 2 seeds DRGA net-only and the equal-budget baseline are one network" in text
    (regime / "mr-lstm-sa-seed1.json").unlink()  # a result file missing: no count rather than a wrong one
    assert "one network" not in tables.write_page(analyses, tmp_path / "EXPLAINABILITY.md", tmp_path / "explainability")


def test_the_transformer_note_takes_its_cost_from_whole_paper_regime_runs_only(tables, tmp_path):
    regime = tmp_path / "paper-regime"
    regime.mkdir()
    assert tables.transformer_note(regime) == []  # no such runs: no note rather than a made-up cost
    runs = [(5000, {"baseline": 1.0, "agent": 1.0}), (6120, {"pretrain": 1.0, "agent": 1.0}), (7200, {"pretrain": 1.0})]
    for seed, (seconds, phases) in enumerate(runs):
        result = {"name": f"sst-transformer-seed{seed}", "net": "transformer", "dataset": "sst", "seed": seed, "rows": {},
                  "wall_seconds": seconds, "phases": {phase: {"epochs": 1, "seconds": took} for phase, took in phases.items()}}
        (regime / f"sst-transformer-seed{seed}.json").write_text(json.dumps(result))
    note = tables.transformer_note(regime)[0]
    # seed 0 adopted a pretrained network (no pretrain phase): left out; 6120 s = 1.7 h, 7200 s = 2.0 h;
    # 3 seeds at their mean, 3 · 6660 s = 5.55 h → "about 6"
    assert "took 1.7–2.0 h of wall time on one thread (2 whole runs" in note
    assert "3 seeds are about 6 thread-hours" in note


def made_run(seed: int, n: dict[str, float], tau_ig: dict[str, float], polarity: dict[str, float], **extra) -> dict:
    """A per-run JSON with one focus measure (N), one faithfulness measure (τ with IG) and one side measure (polarity τ)."""
    return {"run": f"mr-lstm-sa-seed{seed}", "dataset": "mr", "seed": seed, "attentions": {
        name: {"highlighted": {"mean_n": n[name]}, "faithfulness": {"tau_attention_ig": {"mean": tau_ig[name]}},
               "polarity": {"tau_abs_polarity_attention": polarity[name]}} for name in n}, **extra}


def test_each_questions_own_holm_family_beside_the_data_sets_whole_one(tables):
    values = lambda b, net, agent: {"baseline": b, "drga-net-only": net, "drga-with-agent": agent}  # noqa: E731
    runs = [made_run(0, values(10, 9, 8), values(0.1, 0.2, 0.3), values(0.5, 0.4, 0.5)),
            made_run(1, values(12, 9, 9), values(0.2, 0.4, 0.3), values(0.6, 0.6, 0.4))]
    rows = {row["measure"].key: row for row in tables.comparisons(runs)}
    tests = [test for row in rows.values() for test in row["tests"].values()]
    assert len(tests) == 6  # three tested measures, two modes: the whole family
    holm_adjust = load_script("experiments/study_stats.py").holm_adjust
    assert [t["holm"] for t in tests] == pytest.approx(holm_adjust([t["p"] for t in tests]))
    for key, question in (("n", "focus"), ("tau_ig", "faithfulness")):
        own = list(rows[key]["tests"].values())
        assert [t["question_holm"] for t in own] == pytest.approx(holm_adjust([t["p"] for t in own]))
        assert all(t["question_family"] == 2 for t in own) and rows[key]["measure"].answers == question
    assert not any("question_holm" in t for t in rows["polarity_tau"]["tests"].values())  # a side measure has no question
    found = tables.families(tables.comparisons(runs))
    assert found["tests"] == 6 and {q: len(m) for q, m in found["measures"].items()} == {"focus": 1, "faithfulness": 1, None: 1}
    note = tables.families_note({"mr": tables.comparisons(runs)})[0]
    assert "MR 6 tests (1 focus, 1 faithfulness and 1 side measures)" in note and "The side measures are: Kendall τ(" in note


def test_the_random_ranking_says_its_draws_and_their_spread(tables):
    one = [{"seed": 0, "analysis_seed": 0, "attentions": {}}, {"seed": 1, "attentions": {}}]  # no field: one draw
    assert tables.draws_text(one) == "1 draw per sentence"
    note = tables.random_draws_note(one)[0]
    assert "1 draw per sentence" in note and "for every seed and run" in note
    assert "measured on retrained replicates, in the last section" in note
    by_draw = {"comprehensiveness": [0.03, 0.05, 0.04], "sufficiency": [0.2, 0.3, 0.25]}
    several = [{"seed": 0, "analysis_seed": 0, "random_draws": 3,
                "attentions": {"baseline": {"faithfulness": {"random_by_draw": by_draw}}}}]
    assert tables.draws_text(several) == "3 draws per sentence"
    note = tables.random_draws_note(several)[0]
    assert "comprehensiveness 0.0200, sufficiency 0.1000 (max − min" in note and "awaits" not in note
    assert tables.draws_text(one + several) == "draws per sentence: 1 in 2 seeds, 3 in 1 seeds"


def test_the_code_note_names_each_analysis_commit_and_the_hand_set_ones(tables):
    runs = [{"seed": 0, "cost": {"commit": "572d9197d3"}}, {"seed": 1, "cost": {"commit": "572d9197d3"}},
            {"seed": 2, "cost": {"commit": "cf08b7686a"}}]
    note = tables.code_note("mr", runs)[0]
    assert note.startswith("Code of the analyses (each file's `cost.commit`): 572d919 (seeds 0, 1); cf08b76 (seed 2).")
    # seed 2 is in the hand-set list but names another commit: not the file b30a80f rewrote, so not said of it
    assert "The field of seed 1 was rewritten by hand" in note and "first named 3044793 (seed 1), the commit" in note
    assert "rewritten" not in tables.code_note("sst", runs)[0]


def test_the_redraw_replicate_section_by_hand(tables, tmp_path):
    """Issue 55's replicate: per attention and measure, the attention's AOPC, the first draw, the mean of the
    draws, their spread and the seed-draws on the attention's better side, worked out by hand for two seeds."""
    results = tmp_path / "results"
    (results / "explain-redraw" / "analysis").mkdir(parents=True)
    (results / "explain-redraw" / "regime").mkdir(parents=True)
    (results / "explain-regime").mkdir()

    def faithfulness(attention_aopc: float, draws: list[float]) -> dict:
        return {measure: {"attention": {"aopc": attention_aopc}} for measure in ("comprehensiveness", "sufficiency")} | {
            "random_by_draw": {"comprehensiveness": draws, "sufficiency": draws}}

    for seed, (own, draws) in enumerate([(0.10, [0.02, 0.04, 0.06]), (0.20, [0.05, 0.07, 0.30])]):
        name = f"mr-lstm-sa-seed{seed}"
        analysis = {"run": name, "dataset": "mr", "seed": seed, "random_draws": 3, "cost": {"commit": "abcdef0123"},
                    "attentions": {a: {"faithfulness": faithfulness(own, draws)} for a in tables.ATTENTION_NAMES}}
        (results / "explain-redraw" / "analysis" / f"{name}.json").write_text(json.dumps(analysis))
        (results / "explain-redraw" / "regime" / f"{name}.json").write_text(
            json.dumps({"name": name, "net": "lstm-sa", "dataset": "mr", "seed": seed, "rows": {}, "commit": "280acee7db",
                        "pretrain_checksum": f"new{seed}", "config": {"run": {"logdir": "../elsewhere/runs-x"}}}))
        (results / "explain-regime" / f"{name}.json").write_text(json.dumps(
            {"name": name, "net": "lstm-sa", "dataset": "mr", "seed": seed, "rows": {},
             "pretrain_checksum": "new0" if seed == 0 else "old"}))
    lines = tables.redraw_section(results)
    text = "\n".join(lines)
    assert "1 of 2 pretrained networks have the checksum the study recorded" in text and "a replicate on MR\n" in text + "\n"
    assert "commit 280acee" in text and "analysis code abcdef0" in text and "3 random draws per sentence" in text
    rows = [line for line in lines if line.startswith("| MR | equal-budget baseline")]
    # comprehensiveness (higher is better): own 0.15 on average; first draws 0.02, 0.05 -> 0.035; means 0.04, 0.14 -> 0.09;
    # spreads 0.04, 0.25 -> 0.145; on the better side: 3 of 3 for seed 0, and 0.05, 0.07 of seed 1's (0.30 > 0.20) -> 5 of 6
    assert rows[0] == "| MR | equal-budget baseline α | comprehensiveness | 0.1500 | 0.0350 | 0.0900 | 0.1450 | 5 of 6 |"
    # sufficiency (lower is better): only seed 1's 0.30 lies above its attention's 0.20 -> 1 of 6
    assert rows[1] == "| MR | equal-budget baseline α | sufficiency | 0.1500 | 0.0350 | 0.0900 | 0.1450 | 1 of 6 |"
    # first draw minus the mean: (0.02 - 0.04 + 0.05 - 0.14) / 2 = -0.055; smallest gap |0.15 - 0.09| = 0.06
    assert "comprehensiveness -0.0550, sufficiency -0.0550" in text and "is 0.0600." in text
    # the commands name the run folder the training files record, and the page no cause the files do not give
    assert "--logdir ../elsewhere/runs-x --results" in text and "analyze --runs ../elsewhere/runs-x " in text
    assert "(the files do not say why)" in text and "round" not in text
    assert tables.redraw_section(tmp_path / "nothing") == []
