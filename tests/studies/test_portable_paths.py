"""No absolute path of any machine in the README, docs/ or a committed result file (issue 55).

An absolute path names one machine's disk (``/work/runs/tuned-study/drga``): a reader cannot follow it, and it
says nothing the run root does not. Result files give run folders from their run root (``runs/tuned-study/drga``,
drga.sweep.results.portable_path); docs give commands with relative paths. What the scan allows, as clearly
marked examples:

- an example's scratch folder under ``/tmp/``, inside code (a fenced block or a backtick span) of a page:
  the example's own command makes it, on any machine;
- a placeholder under ``/path/to/``;
- a system path every POSIX machine has (``/usr/bin/time``, ``/bin/bash``, ``/dev/null``).

Committed result files (experiments/results/, the SQLite files of the tuned search and the runs' ``.log`` files
included) allow none; experiments/portable_result_files.py rewrites them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from drga.sweep.results import portable_path, portable_paths
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results"
#: An absolute POSIX path of two parts or more, where a path can start: at a line's start, after a space,
#: a quote, a backtick, a bracket or ``=`` (``--logdir=/x/y``). Not a URL's path (after its host), not ``…/x/y``.
ABSOLUTE = re.compile(r"(?:^|(?<=[\s\"'`=(\[,;:]))(/[A-Za-z0-9._~+-]+(?:/[A-Za-z0-9._~+*{},-]*)+)")
PLACEHOLDERS = ("/path/to/",)
SYSTEM = ("/usr/bin/", "/usr/local/bin/", "/bin/", "/dev/", "/proc/", "/etc/os-release")
#: Text files of the docs that the scan reads.
DOC_SUFFIXES = {".md", ".txt", ".csv", ".json", ".html", ".toml", ".yml", ".yaml"}


def doc_files() -> list[Path]:
    return [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file() and p.suffix in DOC_SUFFIXES)


def result_files() -> list[Path]:
    return sorted(p for p in RESULTS.rglob("*") if p.is_file() and p.suffix in {".json", ".md", ".csv", ".txt", ".db", ".log"})


def in_code(line: str, start: int) -> bool:
    """Whether position ``start`` of ``line`` is inside a backtick span (an odd number of backticks before it)."""
    return line[:start].count("`") % 2 == 1


def doc_violations(text: str) -> list[tuple[int, str]]:
    """(line number, path) of every absolute path in a page that is not a marked example."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        for match in ABSOLUTE.finditer(line):
            path = match.group(1)
            if path.startswith(PLACEHOLDERS + SYSTEM):
                continue
            if path.startswith("/tmp/") and (fenced or in_code(line, match.start(1))):
                continue
            found.append((number, path))
    return found


def result_violations(text: str) -> list[tuple[int, str]]:
    """(line number, path) of every absolute path in a committed result file: none is allowed."""
    return [(number, match.group(1)) for number, line in enumerate(text.splitlines(), 1) for match in ABSOLUTE.finditer(line)]


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", doc_files(), ids=name)
def test_a_page_names_no_machines_absolute_path(path):
    found = doc_violations(path.read_text(encoding="utf-8"))
    assert not found, f"{name(path)}: absolute paths (a machine's disk) at " + ", ".join(f"line {n}: {p}" for n, p in found)


@pytest.mark.parametrize("path", result_files(), ids=name)
def test_a_committed_result_file_names_no_machines_absolute_path(path):
    text = path.read_bytes().decode("latin-1") if path.suffix == ".db" else path.read_text(encoding="utf-8")
    found = result_violations(text)
    assert not found, (f"{name(path)}: absolute paths at " + ", ".join(f"line {n}: {p}" for n, p in found[:5])
                       + " (rewrite them with experiments/portable_result_files.py)")


def test_the_scan_finds_what_it_should_and_allows_the_marked_examples():
    page = "\n".join([
        "the run folder `--logdir /work/runs/translation-probes` was lost",  # 1: a machine's path, in code too
        "see /home/someone/runs/x",  # 2
        "```bash",
        "drga train --logdir /tmp/ex/runs   # an example's scratch folder",
        "/usr/bin/time drga train --set network.pretrained=/path/to/checkpoint",
        "```",
        "an example in prose: /tmp/ex/runs",  # 7: /tmp outside code is not marked
        "a URL https://nlp.stanford.edu/data/glove.6B.zip, a fragment …/data/task1/raw/, and/or, runs/explain/x",
        '{"logdir": "/work/main/runs/paper-regime"}',  # 9
    ])
    assert doc_violations(page) == [(1, "/work/runs/translation-probes"), (2, "/home/someone/runs/x"), (7, "/tmp/ex/runs"),
                                    (9, "/work/main/runs/paper-regime")]
    assert result_violations('{\n "logdir": "/tmp/hf-study-runs",\n "token": "/s"\n}') == [(2, "/tmp/hf-study-runs")]


def test_portable_path_writes_run_folders_from_their_run_root(tmp_path):
    repo = tmp_path / "repo"
    assert portable_path(str(repo / "runs" / "paper-regime"), repo) == "runs/paper-regime"  # below the repository
    assert portable_path(str(repo / "experiments" / "results" / "x.json"), repo) == "experiments/results/x.json"
    assert portable_path("/work/runs/tuned-study/pretrain/mr-lstm-sa-seed0/pretrain_best.pt", repo) == \
        "runs/tuned-study/pretrain/mr-lstm-sa-seed0/pretrain_best.pt"  # elsewhere: from its run root on
    assert portable_path("/tmp/hf-study-runs", repo) == "hf-study-runs"
    assert portable_path("/scratch/a/b", repo).startswith("..")  # no run root: relative to the start, never absolute
    assert portable_path("runs/pilot/mr-lstm-sa-seed0", repo) == "runs/pilot/mr-lstm-sa-seed0"  # a relative path is kept
    config = {"run": {"logdir": "/work/runs/explain", "report_to": ["tensorboard"]}, "train": {"init_from": None},
              "data": {"tokens": ["/s", "a / b"]}}
    assert portable_paths(config, repo) == {"run": {"logdir": "runs/explain", "report_to": ["tensorboard"]},
                                            "train": {"init_from": None}, "data": {"tokens": ["/s", "a / b"]}}


def test_the_sweeps_result_file_holds_no_absolute_path(tmp_path, monkeypatch):
    from drga.sweep.grid import Run
    from drga.sweep.results import export_result

    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")  # the sweep's working directory; its runs are elsewhere on the disk
    folder = tmp_path / "elsewhere" / "runs" / "study" / "mr-lstm-sa-seed0"
    folder.mkdir(parents=True)
    results = {
        "config": {"run": {"logdir": str(folder.parent), "run_name": folder.name},
                   "train": {"init_from": str(tmp_path / "elsewhere" / "runs" / "pretrain" / "mr-lstm-sa-seed0" / "pretrain_best.pt")}},
        "results": {"baseline (pretrain only)": {"phase": "pretrain", "epoch": 3, "checkpoint": "pretrain_best.pt",
                                                 "test_net-only": {"accuracy": 0.7}, "dev_net-only": {"accuracy": 0.71},
                                                 "epoch_net-only": 3}},
        "history": [], "phases": {}, "pretrain_checksum": "abc",
    }
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    run = Run(net="lstm-sa", dataset="mr", seed=0, folder=folder, result_file=tmp_path / "results" / "mr-lstm-sa-seed0.json")
    export_result(run, "abc1234567")
    text = run.result_file.read_text(encoding="utf-8")
    assert not result_violations(text)
    config = json.loads(text)["config"]
    assert config["run"]["logdir"] == "runs/study"
    assert config["train"]["init_from"] == "runs/pretrain/mr-lstm-sa-seed0/pretrain_best.pt"



def test_a_logs_absolute_paths_are_rewritten_and_nothing_else(tmp_path):
    rewrite = load_script("experiments/portable_result_files.py")
    repo = tmp_path / "main"
    log = "\n".join([
        f"=== 2026-11-29 09:24:28 {repo}/.venv/bin/python -m drga.cli train --logdir {repo}/runs/translation-cpu/ "
        f"--set train.init_from={repo}/runs/x/pretrain_best.pt",
        "data  train: 29000 pairs from /work/shared/data/multi30k/train.en.gz + /work/shared/data/multi30k/train.de.gz",
        "--config /work/frozen/experiments/configs/nmt_cpu_luong.toml --logdir /work/frozen/runs/translation-cpu/pretrain",
        '  File "/opt/python/lib/python3.11/weakref.py", line 666, in _exitfunc',
        "kept: https://nlp.stanford.edu/data/glove.6B.zip, ../shared/data/x, runs/a/b, and/or, a ratio 3/4, \x00 \u00e9",
    ]) + "\n"
    new = rewrite.portable_log(log, repo)
    assert new.splitlines()[0] == ("=== 2026-11-29 09:24:28 .venv/bin/python -m drga.cli train --logdir runs/translation-cpu/ "
                                   "--set train.init_from=runs/x/pretrain_best.pt")
    assert new.splitlines()[2] == "--config experiments/configs/nmt_cpu_luong.toml --logdir runs/translation-cpu/pretrain"
    assert new.splitlines()[4] == log.splitlines()[4]  # no absolute path in it: as it was
    assert not result_violations(new)
    assert rewrite.portable_log(new, repo) == new  # a second rewrite changes nothing
    pieces, position = rewrite.LOG_PATH.split(log), 0  # every byte but the paths as it was:
    for between, path in zip(pieces[::2], [*pieces[1::2], ""]):  # the text between them, in order, each path rewritten
        assert new.startswith(between, position)
        position += len(between)
        assert new.startswith(rewrite.log_path(path, repo), position) if path else position == len(new)
        position += len(rewrite.log_path(path, repo)) if path else 0
    assert rewrite.log_path("/work/shared/data/multi30k/train.en.gz", "/work/main") == "../shared/data/multi30k/train.en.gz"
    assert rewrite.log_path("/work/shared/data/multi30k/train.en.gz", "/work/main") == \
        portable_path("/work/shared/data/multi30k/train.en.gz", "/work/main")  # as a result file writes it
    assert rewrite.log_path("/work/frozen/.venv/bin/python", "/work/main") == ".venv/bin/python"  # another checkout


def test_the_rewrite_command_fixes_a_logs_paths_and_check_names_it(tmp_path, capsys):
    rewrite = load_script("experiments/portable_result_files.py")
    folder = tmp_path / "results" / "logs"
    folder.mkdir(parents=True)
    log = folder / "run.log"
    log.write_text(f"=== {rewrite.ROOT}/.venv/bin/python -m drga.cli train\nepoch 1: dev BLEU 1.79 *\n", encoding="utf-8")
    assert rewrite.main(["--check", str(tmp_path / "results")]) == 1
    assert "run.log" in capsys.readouterr().out
    assert log.read_text(encoding="utf-8").startswith(f"=== {rewrite.ROOT}/")  # --check writes nothing
    assert rewrite.main([str(tmp_path / "results")]) == 0
    assert log.read_text(encoding="utf-8") == "=== .venv/bin/python -m drga.cli train\nepoch 1: dev BLEU 1.79 *\n"
    assert rewrite.main(["--check", str(tmp_path / "results")]) == 0
