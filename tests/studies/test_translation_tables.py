"""experiments/translation_tables.py on synthetic result files of 2 networks × 3 seeds, written the way the
sweep writes them (its export_result and compact_row on a results.json of the translation trainer's shape):
means, paired tests and Holm's adjustment worked out by hand, the same bytes on a rebuild, missing seeds
reported, a malformed file refused with one line naming it."""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from scipy import stats as scipy_stats

from drga.records import EpochRecord, PhaseCost
from drga.sweep.results import ResultFile
from drga.tasks.translation.evaluation import TranslationEval
from tests.scripts import load_script

DATASET = "multi30k-en-de"
CELLS = {  # the results.json rows and the modes each reports
    "baseline (pretrain only)": ("net-only",),
    "baseline (equal budget)": ("net-only",),
    "agent on frozen network": ("with-agent",),
    "DRGA (co-trained)": ("net-only", "with-agent"),
}
PHASES = {"baseline (pretrain only)": "pretrain", "baseline (equal budget)": "baseline", "agent on frozen network": "agent",
          "DRGA (co-trained)": "cotrain"}
#: Beam BLEU of the equal-budget baseline per seed, and DRGA with agent's gain over it:
#: Luong +1, +2, +3; the Transformer +1, −1, +3. Pretrain-only is 1 below the baseline, the agent on the
#: frozen network 0.5 below, DRGA net-only 0.5 above (the same in every seed: no spread to test).
BASELINE = {"seq2seq-luong": (33.0, 34.0, 35.0), "transformer-nmt": (35.0, 36.0, 37.0)}
GAIN = {"seq2seq-luong": (1.0, 2.0, 3.0), "transformer-nmt": (1.0, -1.0, 3.0)}
#: Selected epochs per seed: the baseline's, DRGA net-only's and with-agent's (0: the phase's starting point).
EPOCHS = {"baseline (equal budget)": {"net-only": (1, 0, 2)}, "DRGA (co-trained)": {"net-only": (0, 1, 2), "with-agent": (0, 0, 3)}}
REFERENCE_TOKENS = 12106


def sweep_function(name: str):
    """The sweep's own export_result: in drga.sweep once `drga sweep` is in the package, else in experiments/sweep.py."""
    try:
        return getattr(importlib.import_module("drga.sweep.results"), name)
    except ImportError:
        return getattr(load_script("experiments/sweep.py", "sweep_for_translation_tables"), name)


def beam_bleu(net: str, seed: int, row: str, mode: str) -> float:
    baseline, gain = BASELINE[net][seed % 3], GAIN[net][seed % 3]  # seeds 3 and 4 repeat 0 and 1
    offsets = {"baseline (pretrain only)": -1.0, "baseline (equal budget)": 0.0, "agent on frozen network": -0.5}
    if row in offsets:
        return baseline + offsets[row]
    return baseline + (gain if mode == "with-agent" else 0.5)


def scores(bleu: float, mode: str, search: str) -> dict:
    """A mode's test scores as the translation trainer reports them (TranslationEval.as_dict)."""
    greedy = search == "greedy"
    return TranslationEval(
        perplexity=60.0 - bleu, log_likelihood=-30.0, reward=-30.5, penalty=2.5, highlighted_fraction=0.4 if mode == "net-only" else 0.3,
        bleu=bleu - 1.0 if greedy else bleu, chrf=bleu + 30.0, sentences=1000, tokens=14000,
        bleu_signature="nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
        chrf_signature="nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
        brevity_penalty=0.9 if greedy else 1.0, hypothesis_length=11000 if greedy else 12500, reference_length=REFERENCE_TOKENS,
        attention_shift=None if mode == "net-only" else 0.25, early_stop_probability=0.2 if mode == "net-only" else 0.35,
    ).as_dict()


def results_json(net: str, seed: int, stage: str = "whole") -> dict:
    """A results.json of the translation trainer's shape (drga/tasks/translation/task.py final_report, drga/runner/loop.py):
    a whole run (``whole``), or one of the study's two stages: the network pretrained alone (``pretrain``), or the
    rest from that network (``drga``: train.init_from, no pretraining phase)."""
    rows = {}
    for row, modes in CELLS.items():
        if stage == "pretrain" and row != "baseline (pretrain only)":
            continue
        entry = rows.setdefault(row, {"phase": PHASES[row], "checkpoint": f"{PHASES[row]}_best.pt"})
        for mode in modes:
            epoch = EPOCHS.get(row, {}).get(mode, (4, 5, 6))[seed % 3]
            entry.setdefault("epoch", epoch)
            bleu = beam_bleu(net, seed, row, mode)
            entry[f"epoch_{mode}"] = epoch
            entry[f"test_{mode}"] = scores(bleu, mode, "greedy")
            entry[f"test_{mode}_beam"] = scores(bleu, mode, "beam")
            entry[f"dev_{mode}"] = scores(bleu + 2.0, mode, "greedy")
    phases = {name: {"epochs": epochs, "max_epochs": cap, "seconds": 3600.0, "stopped_early": epochs < cap}
              for name, epochs, cap in (("pretrain", 12 + seed % 3, 40), ("baseline", 4, 4), ("agent", 1, 1), ("cotrain", 3, 3))
              if stage == "whole" or (name == "pretrain") == (stage == "pretrain")}
    return {
        "pretrain_checksum": f"{net}-{seed}",
        "run_dir": "runs/x", "config": {"nmt": {"beam_size": 5, "length_penalty": 0.6}}, "results": rows,
        "history": [entry for entry in HISTORY if stage == "whole" or (entry["phase"] == "pretrain") == (stage == "pretrain")],
        "beam_size": 5, "bleu_signature": "BLEU nrefs:1; chrF nrefs:1", "phases": phases,
    }


#: Every run's dev curve: one pretraining epoch, then one epoch of each phase after it.
HISTORY = [
    {"phase": "pretrain", "epoch": 1, "seconds": 10.0, "dev_net-only_bleu": 20.0},
    {"phase": "baseline", "epoch": 1, "seconds": 10.0, "dev_net-only_bleu": 21.0},
    {"phase": "agent", "epoch": 1, "seconds": 10.0, "dev_with-agent_bleu": 20.5},
    {"phase": "cotrain", "epoch": 1, "seconds": 10.0, "dev_net-only_bleu": 20.8, "dev_with-agent_bleu": 21.2},
]


def write_study(folder: Path, runs: dict[str, list[int]], tmp_path: Path, stage: str = "whole", wall: int = 15000) -> None:
    export_result = sweep_function("export_result")
    for net, seeds in runs.items():
        for seed in seeds:
            name = f"{DATASET}-{net}-seed{seed}"
            run_folder = tmp_path / "runs" / stage / name
            run_folder.mkdir(parents=True, exist_ok=True)
            (run_folder / "results.json").write_text(json.dumps(results_json(net, seed, stage)))
            (run_folder / "wall_seconds.txt").write_text(f"{wall}\n")
            run = SimpleNamespace(name=name, net=net, dataset=DATASET, seed=seed, folder=run_folder, result_file=folder / f"{name}.json")
            export_result(run, "abc1234567")


@pytest.fixture
def tables():
    return load_script("experiments/translation_tables.py")


@pytest.fixture
def study(tmp_path) -> Path:
    folder = tmp_path / "translation-regime"
    write_study(folder, {"seq2seq-luong": [0, 1, 2], "transformer-nmt": [0, 1, 2]}, tmp_path)
    return folder


def table_row(text: str, start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def section(text: str, title: str) -> str:
    return text.split(title, 1)[1]


def t2_p(t: float) -> float:
    """Two-sided p of Student's t with 2 degrees of freedom: 1 − |t|/√(2 + t²)."""
    return 1 - abs(t) / math.sqrt(2 + t * t)


def test_means_paired_tests_and_holm_by_hand(tables, study, tmp_path):
    out = tmp_path / "nmt-regime.md"
    assert tables.main([str(study), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    text = out.read_text(encoding="utf-8")
    luong = section(text, "### seq2seq-luong")
    # DRGA with agent, beam BLEU 34, 36, 38 → 36.00 ± 2.00; greedy 1 below; chrF 30 above; ppl 60 − BLEU
    assert table_row(luong, "| DRGA with agent |") == ["DRGA with agent", "with-agent", "3", "24.00 ± 2.00", "35.00 ± 2.00",
                                                        "66.00 ± 2.00", "36.00 ± 2.00", "66.00 ± 2.00"]
    transformer = section(text, "### transformer-nmt")
    # 36, 35, 40: mean 37, deviations −1, −2, 3 → sample std √(14/2) = 2.65
    assert table_row(transformer, "| DRGA with agent |")[6] == "37.00 ± 2.65"
    # the lengths and the agent's signals: BP, 11,000 and 12,500 tokens over 12,106, P(stop early), N/L, shift (with the agent only)
    lengths = section(luong, "| row | mode | seeds | BP greedy")
    assert [cell.removesuffix(" ± 0.000") for cell in table_row(lengths, "| DRGA with agent |")[3:]] == [
        "0.900", "1.000", "0.909", "1.033", "0.350", "0.300", "0.250"]
    assert table_row(lengths, "| DRGA net-only |")[7:] == ["0.200 ± 0.000", "0.400 ± 0.000", "-"]

    # Beam BLEU, DRGA with agent against the baseline: Luong +1, +2, +3 (mean 2, sd 1, t = 2√3);
    # against pretrain-only +2, +3, +4 (t = 3√3); the Transformer +1, −1, +3 (mean 1, sd 2, t = √3/2) and
    # +2, 0, +4 (t = √3). DRGA net-only differs by the same in every seed: no test, out of Holm's family.
    p = {("seq2seq-luong", "baseline"): t2_p(2 * math.sqrt(3)), ("seq2seq-luong", "pretrain"): t2_p(3 * math.sqrt(3)),
         ("transformer-nmt", "baseline"): t2_p(math.sqrt(3) / 2), ("transformer-nmt", "pretrain"): t2_p(math.sqrt(3))}
    assert p[("seq2seq-luong", "pretrain")] == pytest.approx(0.03510, abs=1e-5)
    assert p[("seq2seq-luong", "baseline")] == pytest.approx(0.07418, abs=1e-5)
    # Holm over the 4: 4 × 0.0351 = 0.140; 3 × 0.0742 = 0.223; 2 × 0.2254 = 0.451; 1 × 0.4778 = 0.478 (already increasing)
    holm = {("seq2seq-luong", "pretrain"): 4 * 0.035098, ("seq2seq-luong", "baseline"): 3 * 0.074180,
            ("transformer-nmt", "pretrain"): 2 * 0.225403, ("transformer-nmt", "baseline"): 0.477767}
    entries = tables.paired_tests(tables.load(study), tables.BLEU_BEAM)
    tested = {(e["net"], "baseline" if "equal" in e["reference"][0] else "pretrain"): e for e in entries if e["ours"][1] == "with-agent"}
    for key, entry in tested.items():
        assert entry["comparison"].p == pytest.approx(p[key], abs=1e-9)
        assert entry["holm"] == pytest.approx(holm[key], abs=1e-5)
    assert all(math.isnan(e["holm"]) for e in entries if e["ours"][1] == "net-only")
    beam = section(text, "**BLEU beam**")
    assert "Holm over the 4 cells of this metric with a test" in beam.splitlines()[0]
    # 95% interval of +1, +2, +3: 2 ± t(0.975, 2) · 1/√3 = 2 ± 4.303 · 0.577
    # could detect: the d_z that 3 pairs detect with 80% power at 0.05/4, times the differences' sd (1 BLEU):
    # the noncentral t's power there is 0.8
    d = tables.detectable_effect(3, 0.05 / 4)
    critical = scipy_stats.t.ppf(1 - 0.05 / 8, 2)
    power = scipy_stats.nct.sf(critical, 2, d * math.sqrt(3)) + scipy_stats.nct.cdf(-critical, 2, d * math.sqrt(3))
    assert power == pytest.approx(0.8, abs=1e-6)
    assert table_row(beam, "| seq2seq-luong | DRGA with agent − equal-budget baseline |")[2:] == [
        "3", "+2.00", "[-0.48, +4.48]", "0.074", "0.223", f"{d * 1.0:.2f}", "tie"]
    assert table_row(beam, "| seq2seq-luong | DRGA with agent − pretrain-only |")[5:] == ["0.035", "0.140", f"{d * 1.0:.2f}", "tie"]
    assert table_row(beam, "| seq2seq-luong | DRGA net-only − equal-budget baseline |")[3:] == [
        "+0.50", "-", "-", "-", "-", "no spread (every seed differs by the same)"]
    # perplexity is 60 − BLEU: lower is better, so the same differences turn negative
    ppl = section(text, "**test ppl**")
    assert "lower is better" in ppl.splitlines()[0]
    assert table_row(ppl, "| seq2seq-luong | DRGA with agent − equal-budget baseline |")[3] == "-2.00"

    # convergence: pretrain-only 32, 33, 34 against Luong's floor 30.0 (issue 61); the equal budget adds 1 (not under 0.5)
    convergence = section(text, "## Baselines and convergence")
    assert table_row(convergence, "| seq2seq-luong |")[2:] == ["33.00 ± 1.00", "30.0 ✓", "13.0 (12–14; best 4–6)", "+1.00 (1.00 ± 0.00) ✗"]
    # the paper's Table V beside ours: Luong 23.0 → 25.6; ours pretrain-only 33 → DRGA with agent 36
    paper = section(text, "## The paper's Table V beside ours")
    assert table_row(paper, "| seq2seq-luong |")[1:5] == ["23.0 → 25.6 (+2.6)", "6.3 → 5.2 (-1.1, -17.5 %)", "33.00 → 36.00 (+3.00)",
                                                          "34.00 → 36.00 (+2.00)"]
    # ppl 27 → 24: −3.00, −11.1 %
    assert table_row(paper, "| seq2seq-luong |")[5] == "27.00 → 24.00 (-3.00, -11.1 %)"
    # selected epochs, and how often a selection kept the starting point
    epochs = section(text, "## Selected epochs")
    assert table_row(epochs, "| seq2seq-luong | DRGA with agent |")[3:] == ["0 (seed 0), 0 (seed 1), 3 (seed 2)", "1 of 3", "2 of 3"]
    assert table_row(epochs, "| transformer-nmt | equal-budget baseline |")[4:] == ["2 of 3", "1 of 3"]
    runs = section(text, "## Runs")
    assert table_row(runs, "| seq2seq-luong |")[1:] == ["0–2", "abc1234567", "4.2", "13.0, 4.0, 1.0, 3.0"]
    assert "`BLEU nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0; chrF" in text and "beam search of 5" in text


def test_a_rebuild_gives_the_same_bytes_and_stdout_the_same_page(tables, study, tmp_path, capsys):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    assert tables.main([str(study), "--out", str(first), "--figures", str(tmp_path / "figures")]) == 0
    assert tables.main([str(study), "--out", str(second), "--figures", str(tmp_path / "figures")]) == 0
    assert first.read_bytes().replace(b"b.md", b"a.md") == second.read_bytes().replace(b"b.md", b"a.md")
    assert tables.main([str(study), "--out", str(first), "--figures", str(tmp_path / "figures")]) == 0
    rebuilt, curves = first.read_bytes(), (tmp_path / "figures" / "dev-curves.png").read_bytes()
    assert tables.main([str(study), "--out", str(first), "--figures", str(tmp_path / "figures")]) == 0 and first.read_bytes() == rebuilt
    assert (tmp_path / "figures" / "dev-curves.png").read_bytes() == curves
    capsys.readouterr()
    assert tables.main([str(study), "--out", "-"]) == 0
    printed = capsys.readouterr().out

    def body(text: str) -> list[str]:  # all but the command in the header and the figure's link (relative to each page)
        return [line for line in text.splitlines()[1:] if not line.startswith("![")]

    assert body(printed) == body(rebuilt.decode("utf-8"))
    assert "](nmt-regime/dev-curves.png)" in printed  # the default page's link; printing writes no PNG


def test_missing_seeds_are_reported_as_incomplete_cells(tables, study, tmp_path):
    (study / f"{DATASET}-transformer-nmt-seed1.json").unlink()
    out = tmp_path / "t.md"
    assert tables.main([str(study), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    text = out.read_text(encoding="utf-8")
    assert "**Partial**: seq2seq-luong 3/5, transformer-nmt 2/7 seeds so far" in text
    seeds = section(text, "## Seeds")
    assert table_row(seeds, "| seq2seq-luong |")[1:] == ["0–4", "0–2", "3, 4", "incomplete (3 of 5)"]
    assert table_row(seeds, "| transformer-nmt |")[1:] == ["0–6", "0, 2", "1, 3, 4, 5, 6", "incomplete (2 of 7)"]
    write_study(study, {"seq2seq-luong": [3, 4], "transformer-nmt": [1, 3, 4, 5, 6]}, tmp_path)
    assert tables.main([str(study), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Every network has its planned seeds." in text
    assert table_row(section(text, "## Seeds"), "| seq2seq-luong |")[1:] == ["0–4", "0–4", "-", "complete"]


def test_a_run_of_the_second_stage_counts_its_first_stages_pretraining(tables, tmp_path, capsys):
    """translation_regime.sh's two stages: the network alone (pretrain/), then the rest from it (train.init_from)."""
    folder = tmp_path / "translation-regime"
    seeds = {"seq2seq-luong": [0, 1, 2], "transformer-nmt": [0, 1, 2]}
    write_study(folder / "pretrain", seeds, tmp_path, stage="pretrain", wall=5000)
    write_study(folder, seeds, tmp_path, stage="drga")
    out = tmp_path / "t.md"
    assert tables.main([str(folder), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    text = out.read_text(encoding="utf-8")
    # the same pretraining epochs (12, 13, 14) as a whole run's; hours 15,000 + 5,000 s = 5.6 h; epochs from both stages
    assert table_row(section(text, "## Baselines and convergence"), "| seq2seq-luong |")[4] == "13.0 (12–14; best 4–6)"
    assert table_row(section(text, "## Runs"), "| seq2seq-luong |")[1:] == ["0–2", "abc1234567", "5.6", "13.0, 4.0, 1.0, 3.0"]
    # without its first stage a second-stage run has no pretraining epochs to show
    for path in (folder / "pretrain").glob("*transformer-nmt*.json"):
        path.unlink()
    assert tables.main([str(folder), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    assert table_row(section(out.read_text(encoding="utf-8"), "## Runs"), "| transformer-nmt |")[3:] == ["4.2", "-, 4.0, 1.0, 3.0"]
    # a second stage started from another network than its first stage's is refused, naming the file
    stage1 = folder / "pretrain" / f"{DATASET}-seq2seq-luong-seed2.json"
    result = json.loads(stage1.read_text(encoding="utf-8"))
    stage1.write_text(json.dumps({**result, "pretrain_checksum": "another"}), encoding="utf-8")
    capsys.readouterr()
    assert tables.main([str(folder), "--out", "-"]) == 2
    assert capsys.readouterr().err == (f"translation_tables.py: {folder / f'{DATASET}-seq2seq-luong-seed2.json'}: started from another "
                                       f"network than {stage1} pretrained (checksum seq2seq-luon, not another)\n")


def test_stage_one_alone_makes_a_page_of_its_networks_and_their_curves(tables, tmp_path):
    """While stage 2 has not run, the page shows the pretrained networks against the floors, and their dev curves."""
    folder = tmp_path / "translation-regime"
    write_study(folder / "pretrain", {"seq2seq-luong": [0, 1, 2], "transformer-nmt": [0, 1]}, tmp_path, stage="pretrain")
    out = tmp_path / "docs" / "nmt-regime.md"
    assert tables.main([str(folder), "--out", str(out), "--figures", str(tmp_path / "docs" / "nmt-regime")]) == 0
    text = out.read_text(encoding="utf-8")
    stage1 = section(text, "## Stage 1: the networks pretrained alone")
    # Luong: epochs 12, 13, 14; selected 4–6; dev BLEU 20 at its one recorded epoch; pretrain-only beam 32, 33, 34 against 30.0
    early = "seed 0: early stop; seed 1: early stop; seed 2: early stop"
    assert table_row(stage1, "| seq2seq-luong |")[1:] == ["0–2", "13.0 (12–14)", "4–6", "20.00 ± 0.00", "33.00 ± 1.00", "30.0 ✓", early]
    # the Transformer's two seeds: beam 34, 35 (mean 34.5) over its floor of 33.0
    assert table_row(stage1, "| transformer-nmt |")[1:] == ["0, 1", "12.5 (12–13)", "4–5", "20.00 ± 0.00", "34.50 ± 0.71", "33.0 ✓",
                                                           "seed 0: early stop; seed 1: early stop"]
    assert "![dev BLEU per epoch: pretraining, and after it](nmt-regime/dev-curves.png)" in text
    assert "**Stage 2 has not run yet**" in text and "## Paired tests" not in text
    assert (tmp_path / "docs" / "nmt-regime" / "dev-curves.png").stat().st_size > 0


def test_the_floors_and_the_plateau_by_hand(tables):
    """Issue 61's floors (mean pretrain-only test BLEU, beam): 30 for Luong, 33 for the Transformer; pretraining that the
    cap ended is on its plateau when its last 3 epochs lie within 0.5 dev BLEU of its best."""
    assert tables.floor_verdict("seq2seq-luong", [29.0, 31.2]) == "30.0 ✓"  # mean 30.1
    assert tables.floor_verdict("transformer-nmt", [32.0, 33.8]) == "33.0 ✗"  # mean 32.9

    def run(curve, stopped_early=False):
        history = [EpochRecord.from_dict({"phase": "pretrain", "epoch": i + 1, "seconds": 1.0, "dev_net-only_bleu": b})
                   for i, b in enumerate(curve)]
        pretraining = PhaseCost(len(curve), 40, float(len(curve)), stopped_early)
        return ResultFile("run", "seq2seq-luong", DATASET, 0, {}, phases={"pretrain": pretraining}, history=history)

    assert tables.on_plateau(run([20.0, 30.0, 30.6, 30.2, 30.1]))  # best 30.6, last three ≥ 30.1
    assert not tables.on_plateau(run([20.0, 30.0, 30.6, 30.2, 30.0]))  # 30.0 is 0.6 under the best
    assert tables.on_plateau(run([20.0, 25.0], stopped_early=True))
    assert tables.plateau_text({0: run([30.0, 30.4, 30.2]), 1: run([20.0, 25.0, 29.0])}) == (
        "seed 0: at its 40-epoch cap, on its plateau; seed 1: at its 40-epoch cap, dev BLEU **still rising**")


def test_the_curves_after_pretraining_count_the_phases_in_order(tables):
    run = ResultFile("run", "seq2seq-luong", DATASET, 0, {}, history=[EpochRecord.from_dict(record) for record in HISTORY])
    assert tables.pretraining_history(run) == [(1, 20.0)]
    assert tables.after_pretraining(run, ("baseline",), "net-only") == [(1, 21.0)]
    # with the agent: the agent phase's epoch, then co-training's (its net-only score is not DRGA with the agent's)
    assert tables.after_pretraining(run, ("agent", "cotrain"), "with-agent") == [(1, 20.5), (2, 21.2)]


def test_a_malformed_file_is_refused_with_one_line_naming_it(tables, study, tmp_path, capsys):
    path = study / f"{DATASET}-seq2seq-luong-seed1.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    del result["rows"]["DRGA (co-trained)"]["with-agent"]["test_beam"]["bleu"]
    path.write_text(json.dumps(result), encoding="utf-8")
    assert tables.main([str(study), "--out", str(tmp_path / "t.md"), "--figures", str(tmp_path / "figures")]) == 2
    error = capsys.readouterr().err
    assert error == f"translation_tables.py: {path}: DRGA (co-trained) / with-agent has no test_beam bleu\n"
    assert not (tmp_path / "t.md").exists()
    path.write_text("{not json", encoding="utf-8")
    assert tables.main([str(study), "--out", "-"]) == 2
    assert capsys.readouterr().err.startswith(f"translation_tables.py: {path}: not JSON")
    assert tables.main([str(tmp_path / "empty"), "--out", "-"]) == 2
    assert "no result files in" in capsys.readouterr().err


def test_every_committed_score_is_sacrebleus_of_the_committed_translations(tables):
    """The study's committed result files (experiments/results/translation-regime, written by the CPU units of
    experiments/translation_cpu.py, or unpacked from GPU calls' archives by experiments/translation_gpu.py): every BLEU,
    chrF, brevity penalty and length the tables print, recomputed with sacrebleu from the committed test translations,
    equals the run's own (issue 53). The rehearsals are checked the same way in tests/test_translation_{gpu,cpu}.py."""
    folder = Path(__file__).resolve().parents[2] / tables.STUDY
    if not (folder / tables.TRANSLATIONS).is_dir():
        pytest.skip(f"no translations committed in {tables.STUDY} yet (each CPU unit adds its seed's: experiments/translation_cpu.py)")
    pretrained = tables.load_pretraining(folder / tables.PRETRAINING)
    runs, stage1 = tables.load(folder, pretrained), tables.stage_one(pretrained)
    searches = sum(bool(tables.test_scores(cell, key)) for files in (runs, stage1) for seeds in files.values()
                   for result in seeds.values() for cells in result.rows.values() for cell in cells.values()
                   for key in ("test", "test_beam"))
    assert tables.check_translations(folder, runs, stage1) == searches > 0


def test_the_units_table_by_hand(tables):
    """Each CPU unit's stages, projected against measured, and whether the unit fit its 2 h 15 min."""
    units = [
        {"net": "seq2seq-luong", "seed": 0, "threads": 2, "finished": True,
         "source": {"commit": "0123456789abcdef", "code_dirty_paths": []},
         "stage_seconds": {"pretrain": 5400, "drga": 1800}, "projected_seconds": {"pretrain": 5000, "drga": 2400}},
        {"net": "seq2seq-luong", "seed": 1, "threads": 2, "finished": True,
         "source": {"commit": "fedcba9876543210", "code_dirty_paths": ["x"]},
         "stage_seconds": {"pretrain": 7200, "drga": 1800}, "projected_seconds": {"pretrain": 5000, "drga": 2400}},
        {"net": "transformer-nmt", "seed": 0, "threads": 2, "finished": False, "source": {"commit": "aaaaaaaaaaaa"},
         "stage_seconds": {"pretrain": 3600}, "projected_seconds": {"pretrain": 5000, "drga": 2400}},
    ]
    assert tables.units_table(units)[2:] == [
        "| seq2seq-luong seed 0 | 0123456789 | 2 | 1.50 (1.39) | 0.50 (0.67) | 2.00 | yes | yes |",  # 7,200 s of 8,100
        "| seq2seq-luong seed 1 | fedcba9876-dirty | 2 | 2.00 (1.39) | 0.50 (0.67) | 2.50 | **no** | yes |",
        "| transformer-nmt seed 0 | aaaaaaaaaa | 2 | 1.00 (1.39) | - (0.67) | 1.00 | - | no |",
    ]
