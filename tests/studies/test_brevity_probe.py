"""experiments/brevity_probe.py: the length terms by hand, and the whole probe on a tiny trained checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drga.trainer import TranslationTrainer
from tests.nmt_helpers import tiny_translation_config, write_synthetic_corpus
from tests.scripts import load_script


def brevity_probe():
    return load_script("experiments/brevity_probe.py")


def test_length_ratios_count_13a_tokens_of_each_hypothesis_against_its_reference():
    script = brevity_probe()
    # 13a splits the final period off: "Ein Mann läuft." is 4 tokens, "Ein Mann." 3, "Ein Hund spielt im Park." 6
    ratios = script.length_ratios(["Ein Mann.", "Ein Hund spielt im Park."], ["Ein Mann läuft.", "Ein Hund spielt."])
    assert ratios == pytest.approx([3 / 4, 6 / 4])


def test_a_search_row_counts_translations_under_four_fifths_of_their_reference_as_short_and_over_five_quarters_as_long():
    script = brevity_probe()
    references = ["a b c d e", "a b c d e", "a b c d e"]
    row = script.search_row(["a b c", "a b c d", "a b c d e f"], references)  # ratios 0.6, 0.8, 1.2
    assert script.search_row(["a b c d e f g"], references[:1])["long_share"] == 1.0  # 1.4
    assert row["short_share"] == pytest.approx(1 / 3)  # 0.8 itself is not short
    assert row["long_share"] == pytest.approx(0.0)  # nor is 1.2 long (over 1.25)
    assert row["mean_length_ratio"] == pytest.approx((0.6 + 0.8 + 1.2) / 3)
    assert (row["hypothesis_length"], row["reference_length"]) == (3 + 4 + 6, 15)
    # BLEU's brevity penalty for 13 against 15 tokens: exp(1 − 15/13)
    assert row["brevity_penalty"] == pytest.approx(0.8574, abs=1e-4)


def test_the_probe_scores_every_mode_and_search_of_a_trained_checkpoint(tmp_path: Path, capsys):
    write_synthetic_corpus(tmp_path / "corpus", dev=10, test=10)  # few sentences to decode: the run's own scoring is not tested here
    settings = {"run.run_name": "tiny", "train.pretrain_epochs": 1, "nmt.final_beam": False}
    config = tiny_translation_config(tmp_path, "transformer-nmt", **settings)
    TranslationTrainer(config, log=lambda _: None).run()
    checkpoint = tmp_path / "runs" / "tiny" / "cotrain_best.pt"
    out = tmp_path / "probe.json"
    assert brevity_probe().main([str(checkpoint), "--beam", "2", "--length-penalty", "0.6", "1.0", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["results"][0]
    assert result["phase"] == "cotrain"
    assert set(result["modes"]) == {"net-only", "with-agent"}
    for row in result["modes"].values():
        assert 0.0 <= row["early_stop_probability"] <= 1.0
        assert set(row["searches"]) == {"greedy", "beam2 α=0.6", "beam2 α=1"}
        for search in row["searches"].values():
            assert 0.0 < search["brevity_penalty"] <= 1.0 or search["hypothesis_length"] == 0
            assert search["reference_length"] > 0
    table = capsys.readouterr().out
    assert table.count("| cotrain |") == 6  # 2 modes × 3 searches


def test_the_history_table_has_a_row_per_scored_epoch_and_mode_with_its_length_ratio(tmp_path: Path):
    def scores(mode: str, hypothesis: int) -> dict:
        return {f"dev_{mode}_{k}": v for k, v in {
            "bleu": 20.0, "brevity_penalty": 0.9, "hypothesis_length": hypothesis, "reference_length": 1000, "early_stop_probability": 0.01,
        }.items()}

    history = [
        {"phase": "pretrain", "epoch": 1, **scores("net-only", 900)},
        {"phase": "agent", "epoch": 1, "reward": -3.0},  # scored no dev BLEU: no row
        {"phase": "cotrain", "epoch": 1, **scores("net-only", 1100), **scores("with-agent", 1250)},
    ]
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"history": history}))
    rows = [line for line in brevity_probe().history_table(results).splitlines() if line.startswith("| ") and "---" not in line][1:]
    cells = [row.split(" | ") for row in rows]
    assert [c[:3] for c in cells] == [["| pretrain", "1", "net-only"], ["| cotrain", "1", "net-only"], ["| cotrain", "1", "with-agent"]]
    assert [c[5] for c in cells] == ["900 / 1,000 (0.900)", "1,100 / 1,000 (1.100)", "1,250 / 1,000 (1.250)"]


def test_a_file_that_is_not_what_the_probe_reads_is_a_clear_error(tmp_path: Path, capsys):
    script = brevity_probe()
    (tmp_path / "other.json").write_text(json.dumps({"rows": {}}))
    assert script.main(["--history", str(tmp_path / "other.json")]) == 2
    assert "has no history: give a finished run's results.json" in capsys.readouterr().err
    assert script.main([str(tmp_path / "missing.pt")]) == 2
    assert "missing.pt" in capsys.readouterr().err


def test_the_committed_pilot_reproduction_shows_the_undertrained_networks_length_swing():
    """docs/results/nmt.md, "Brevity explained": the pretrained network's greedy dev length jumps between epochs
    (1.063 → 0.874 → 1.042 of the reference over epochs 23–25) while P(stop early) stays near 0.01."""
    committed = Path(__file__).resolve().parents[2] / "experiments" / "results" / "brevity" / "pilot-repro-seed0.json"
    rows = {tuple(c.strip() for c in line.split("|")[1:4]): line for line in brevity_probe().history_table(committed).splitlines()}
    assert "(1.063)" in rows[("pretrain", "23", "net-only")]
    assert "(0.874)" in rows[("pretrain", "24", "net-only")]
    assert "(1.042)" in rows[("pretrain", "25", "net-only")]
    stop_early = [float(rows[("pretrain", epoch, "net-only")].split("|")[-2]) for epoch in ("23", "24", "25")]
    assert all(0.009 < p < 0.013 for p in stop_early)  # 0.0096, 0.0122, 0.0106
