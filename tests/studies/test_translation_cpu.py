"""The translation study's CPU unit (issue 61): ``experiments/translation_cpu.py run NET SEED`` runs one seed's
whole pipeline into the study's folder. Its projection by hand, its refusals before anything starts, and the
rehearsal (``--smoke``: tiny networks on a slice of Multi30k) end to end: both stages, the files the tables read,
a second call that skips what is done, and tables whose every BLEU is sacrebleu's recomputed from the unit's
translations."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require_data
from tests.scripts import load_script
from tests.studies.test_portable_paths import result_violations

ROOT = Path(__file__).resolve().parents[2]
NAME = "multi30k-en-de-seq2seq-luong-seed0"
CONFIG = """
[nmt]
epoch_pairs = 4000
[train]
pretrain_epochs = 14
agent_epochs = 2
cotrain_epochs = 4
"""


@pytest.fixture(scope="module")
def cpu():
    return load_script("experiments/translation_cpu.py", "translation_cpu_for_tests")


def probe(study: Path, base: float = 10.0, cotrain: float = 20.0) -> None:
    (study / "probes").mkdir(parents=True, exist_ok=True)
    (study / "probes" / "throughput-seq2seq-luong.json").write_text(
        json.dumps(
            {
                "threads": 2,
                "baseline_seconds_per_1000_pairs": base,
                "cotrain_seconds_per_1000_pairs": cotrain,
                "allowances": {"dev_evaluation_fraction": 0.25, "test_decoding_seconds_per_row": 300},
            }
        ),
        encoding="utf-8",
    )


def hand_unit(cpu, tmp_path: Path):
    config = tmp_path / "nmt_cpu_luong.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return cpu.Unit("seq2seq-luong", 0, tmp_path / "work", tmp_path / "study", config)


def test_the_projection_from_the_probe_worked_by_hand(cpu, tmp_path):
    unit = hand_unit(cpu, tmp_path)
    probe(unit.study)
    projected, source = cpu.projection(unit)
    # stage 1: 14 whole passes of 29,000 pairs at 10 s per 1,000, 25 % more for dev evaluation, one row's test decoding
    assert projected["pretrain"] == pytest.approx(14 * 29 * 10 * 1.25 + 300)
    # stage 2: 6 epochs of 4,000 pairs for the baseline (10 s per 1,000) and for the agent and co-training (20 s),
    # 25 % more for dev evaluation, five rows' test decoding
    assert projected["drga"] == pytest.approx((6 * 4 * 10 + 6 * 4 * 20) * 1.25 + 5 * 300)
    assert "throughput probe" in source and "no unit has finished yet" in source


def test_finished_units_of_the_same_config_replace_the_probe_the_slowest_counting(cpu, tmp_path):
    unit = hand_unit(cpu, tmp_path)
    probe(unit.study)
    units = unit.study / "units"
    units.mkdir(parents=True)
    digest = cpu.sha256(unit.config.read_bytes())
    for seed, (first, second) in enumerate([(4000, 1500), (4200, 1400)]):
        record = {"config_sha256": digest, "finished": True, "stage_seconds": {"pretrain": first, "drga": second}}
        (units / f"multi30k-en-de-seq2seq-luong-seed{seed}.json").write_text(json.dumps(record), encoding="utf-8")
    # an unfinished unit and one of another config do not count
    (units / "multi30k-en-de-seq2seq-luong-seed2.json").write_text(
        json.dumps({"config_sha256": digest, "finished": False, "stage_seconds": {"pretrain": 9999}}), encoding="utf-8"
    )
    (units / "multi30k-en-de-seq2seq-luong-seed3.json").write_text(
        json.dumps({"config_sha256": "other", "finished": True, "stage_seconds": {"pretrain": 9999, "drga": 9999}}), encoding="utf-8"
    )
    projected, source = cpu.projection(unit)
    assert projected == {"pretrain": 4200, "drga": 1500}
    assert "the slowest of 2 finished unit(s)" in source
    # a record with the settings' digest still counts once the config's comments change, not once a setting does
    settings = cpu.settings_sha256(unit.config)
    (units / "multi30k-en-de-seq2seq-luong-seed4.json").write_text(
        json.dumps({"config_sha256": "old bytes", "config_settings_sha256": settings, "finished": True,
                    "stage_seconds": {"pretrain": 5000, "drga": 1000}}), encoding="utf-8")
    unit.config.write_text("# a new comment\n" + unit.config.read_text(encoding="utf-8"), encoding="utf-8")
    projected, source = cpu.projection(unit)
    assert projected == {"pretrain": 5000, "drga": 1000} and "the slowest of 1 finished unit(s)" in source
    unit.config.write_text(unit.config.read_text(encoding="utf-8").replace("pretrain_epochs = ", "pretrain_epochs = 1"), encoding="utf-8")
    assert cpu.settings_sha256(unit.config) != settings


def test_a_unit_that_would_end_after_its_deadline_is_not_started(cpu, tmp_path, capsys):
    work = tmp_path / "work"
    assert cpu.main(["run", "luong", "0", "--study", str(tmp_path / "study"), "--work", str(work), "--budget-min", "5"]) == 2
    out, err = capsys.readouterr()
    assert "[plan] projected finish" in out and "after the deadline" in err and "not started" in err
    assert not work.exists()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["lstm", "0"], "NET must be luong or transformer or next, not 'lstm'"),
        (["luong"], "SEED is missing (or run next)"),
        (["next", "1"], "next chooses the seed itself: give no SEED"),
        (["luong", "-1"], "SEED must be ≥ 0"),
        (["luong", "0", "--deadline", "00:00"], "has passed"),
        (["luong", "0", "--deadline", "soon"], "not HH:MM or an ISO date and time"),
        (["luong", "0", "--deadline", "23:59", "--budget-min", "5"], "give one"),
        (["luong", "0", "--smoke"], "a rehearsal (--smoke) writes into a folder given with --study"),
    ],
)
def test_what_is_refused_before_anything_starts(cpu, tmp_path, capsys, arguments, message):
    assert cpu.main(["run", *arguments, "--work", str(tmp_path / "work")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


def test_stage_two_without_stage_ones_network_on_this_machine_is_refused(cpu, tmp_path, capsys):
    study = tmp_path / "study"
    (study / "pretrain").mkdir(parents=True)
    (study / "pretrain" / f"{NAME}.json").write_text("{}", encoding="utf-8")
    assert cpu.main(["run", "luong", "0", "--study", str(study), "--work", str(tmp_path / "work")]) == 2
    assert "stage 1's result file exists but its network" in capsys.readouterr().err


@pytest.fixture(scope="module")
def rehearsal(cpu) -> Iterator[dict]:
    """One unit of the rehearsal, then the same call again. In a temporary folder of its own, not pytest's (a
    module-scoped fixture's folder may be cleaned by another pytest on the machine)."""
    require_data("multi30k")
    with tempfile.TemporaryDirectory(prefix="drga-translation-cpu-") as name:
        folder = Path(name)
        call = ["run", "luong", "0", "--smoke", "--threads", "1", "--study", str(folder / "study"), "--work", str(folder / "work")]
        first = cpu.main(call)
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            again = cpu.main(call)
        yield {"folder": folder, "study": folder / "study", "codes": (first, again), "again": printed.getvalue()}


def test_the_rehearsal_writes_what_the_tables_read_and_a_second_call_skips_it(rehearsal, capsys):
    assert rehearsal["codes"] == (0, 0)
    assert (
        "stage 1 (pretrain): projected" in rehearsal["again"]
        and f"[done] {NAME}: both stages have their result files" in rehearsal["again"]
    )
    study = rehearsal["study"]
    assert (study / "pretrain" / f"{NAME}.json").is_file() and (study / f"{NAME}.json").is_file()
    translations = sorted(p.name for p in (study / "hypotheses" / NAME).iterdir())
    assert translations == sorted(
        f"test.{phase}.{mode}.{search}.de.gz"
        for phase, mode in [
            ("pretrain", "net-only"),
            ("baseline", "net-only"),
            ("agent", "with-agent"),
            ("cotrain", "net-only"),
            ("cotrain", "with-agent"),
        ]
        for search in ("greedy", "beam5")
    )
    assert (study / "logs" / f"{NAME}.log").is_file() and (study / "logs" / "pretrain" / f"{NAME}.log").is_file()
    for log in (study / "logs" / f"{NAME}.log", study / "logs" / "pretrain" / f"{NAME}.log"):  # no machine's absolute path
        text = log.read_text(encoding="utf-8")
        assert str(ROOT) not in text and not result_violations(text), result_violations(text)[:3]
    record = json.loads((study / "units" / f"{NAME}.json").read_text(encoding="utf-8"))
    assert record["finished"] and set(record["stage_seconds"]) == {"pretrain", "drga"} and record["threads"] == 1
    assert [e["phase"] for e in record["epochs"]["drga"]][:1] == ["baseline"]
    references = gzip.decompress((study / "hypotheses" / "references.test.de.gz").read_bytes()).decode().splitlines()
    assert len(references) == 8  # the rehearsal's slice of test2016


def test_the_tables_build_from_the_rehearsals_files_every_bleu_recomputed(rehearsal, tmp_path):
    tables = load_script("experiments/translation_tables.py", "translation_tables_for_cpu_tests")
    out = tmp_path / "page.md"
    assert tables.main([str(rehearsal["study"]), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    page = out.read_text(encoding="utf-8")
    assert "recomputed with sacrebleu from the committed test translations (`hypotheses/`, 12 files" in page
    assert "one unit per seed on two CPU cores (1 unit(s): their commits, threads and hours are in the units table below)" in page
    assert "| seq2seq-luong seed 0 |" in page.split("## The units", 1)[1]


def test_the_probe_writes_the_bench_seconds_per_1000_pairs(cpu, tmp_path, capsys):
    """``probe`` runs bench/nmt_throughput.py on the network's CPU config and keeps its two epochs' seconds per 1,000 pairs
    (a stand-in bench here: 640 pairs in 6.4 s and 12.8 s are 10 and 20 s per 1,000)."""
    bench = tmp_path / "bench.py"
    bench.write_text("print('| epoch | seconds (median of 1) | target tokens/s | source+target tokens/s |')\n"
                     "print('| baseline training | 6.4 | 1 | 1 |')\nprint('| DRGA co-training | 12.8 | 1 | 1 |')\n", encoding="utf-8")
    study = tmp_path / "study"
    assert cpu.main(["probe", "luong", "--study", str(study), "--python", str(bench_runner(tmp_path, bench))]) == 0
    probe = json.loads((study / "probes" / "throughput-seq2seq-luong.json").read_text(encoding="utf-8"))
    assert (probe["baseline_seconds_per_1000_pairs"], probe["cotrain_seconds_per_1000_pairs"]) == (10.0, 20.0)
    assert probe["threads"] == 2 and probe["config"] == "experiments/configs/nmt_cpu_luong.toml"
    assert "nmt_throughput.py --config experiments/configs/nmt_cpu_luong.toml --epoch-pairs 640" in probe["commands"][0]
    # a bench that fails is named, and nothing is written
    bench.write_text("import sys; sys.exit('no data')\n", encoding="utf-8")
    assert cpu.main(["probe", "luong", "--study", str(tmp_path / "other"), "--python", str(bench_runner(tmp_path, bench))]) == 2
    assert "the bench did not report both epochs (exit 1): no data" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


def bench_runner(tmp_path: Path, bench: Path) -> Path:
    """A 'python' that runs ``bench`` whatever script it is given."""
    runner = tmp_path / "python"
    runner.write_text(f"#!/bin/sh\nexec {sys.executable} {bench}\n", encoding="utf-8")
    runner.chmod(0o755)
    return runner


def finish(study: Path, net: str, seed: int, stage: str = "drga") -> None:
    folder = study / ("pretrain" if stage == "pretrain" else "")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"multi30k-en-de-{net}-seed{seed}.json").write_text("{}", encoding="utf-8")


def test_next_takes_turns_between_the_networks_and_resumes_a_unit_whose_stage_two_is_left(cpu, tmp_path):
    study, work = tmp_path / "study", tmp_path / "work"
    assert cpu.next_unit(study, work) == ("luong", 0, "seeds finished: seq2seq-luong 0 of 5, transformer-nmt 0 of 7")
    finish(study, "seq2seq-luong", 0)
    assert cpu.next_unit(study, work)[:2] == ("transformer", 0)
    finish(study, "transformer-nmt", 0)
    assert cpu.next_unit(study, work)[:2] == ("luong", 1)  # a tie: Luong first
    # a unit whose stage 1 finished, its network still on this machine: its stage 2 first
    finish(study, "transformer-nmt", 1, stage="pretrain")
    assert cpu.next_unit(study, work)[:2] == ("luong", 1)  # its network is not here: not resumable
    (work / "pretrain" / "multi30k-en-de-transformer-nmt-seed1").mkdir(parents=True)
    (work / "pretrain" / "multi30k-en-de-transformer-nmt-seed1" / "pretrain_best.pt").write_bytes(b"")
    assert cpu.next_unit(study, work) == ("transformer", 1, "its stage 1 finished and its network is on this machine: stage 2 is left")
    for seed in range(5):
        finish(study, "seq2seq-luong", seed)
    for seed in range(7):
        finish(study, "transformer-nmt", seed)
    with pytest.raises(cpu.Refused, match="every planned seed of both networks has finished"):
        cpu.next_unit(study, work)


def test_a_unit_with_nothing_to_project_from_measures_first(cpu, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cpu, "STUDY", tmp_path / "no-committed-study")  # the committed probes are not this rehearsal's
    bench = tmp_path / "bench.py"
    bench.write_text("print('| baseline training | 6.4 | 1 | 1 |')\nprint('| DRGA co-training | 12.8 | 1 | 1 |')\n", encoding="utf-8")
    study = tmp_path / "study"
    arguments = ["run", "transformer", "0", "--study", str(study), "--work", str(tmp_path / "work"), "--budget-min", "1"]
    assert cpu.main([*arguments, "--python", str(bench_runner(tmp_path, bench))]) == 2  # measured, then refused by its budget
    out, err = capsys.readouterr()
    assert "[probe] no finished unit of transformer-nmt and no throughput probe: measuring first" in out
    assert (study / "probes" / "throughput-transformer-nmt.json").is_file() and "after the deadline" in err


def test_a_study_folder_that_is_a_file_is_one_message(cpu, tmp_path, capsys):
    """A fault of the machine while the unit writes its files is one message naming the path (the command line's one rule)."""
    bench = tmp_path / "bench.py"
    bench.write_text("print('| baseline training | 6.4 | 1 | 1 |')\nprint('| DRGA co-training | 12.8 | 1 | 1 |')\n", encoding="utf-8")
    study = tmp_path / "study"
    study.write_text("not a folder", encoding="utf-8")
    assert cpu.main(["probe", "luong", "--study", str(study), "--python", str(bench_runner(tmp_path, bench))]) == 2
    error = capsys.readouterr().err
    assert error.startswith("translation_cpu.py: ") and str(study) in error and "Traceback" not in error
