"""The reproduction study's tables, from a folder of finished `drga train` runs.

Reads every ``<logdir>/*/results.json`` (as written by `drga train` and `experiments/sweep.py`),
groups the runs by network and data set, and writes one markdown file with

* per cell: the number of seeds, test accuracy (%) mean ± std of the baseline at the end of
  pretraining, the **equal-budget baseline** (pretrain + as many extra network epochs as DRGA
  co-trains, same dev-based selection), DRGA net-only and DRGA with-agent;
* the paired difference DRGA − equal-budget baseline over the seeds (same seed = same split,
  same initialisation, same pretraining), a paired t-test p-value and a 95% percentile
  bootstrap interval of the mean difference, for both evaluation modes;
* the mean seconds per run: the sum of the run's epoch times in results.json's history
  (training and dev evaluation of every phase; robust to interruptions, unlike the sweep's
  ``wall_seconds.txt``, which loses the piece of a run that was killed).

    python experiments/study_tables.py runs/repro --out docs/results/reproduction.md
    python experiments/study_tables.py runs/repro --seeds 0 1 2 3 4   # only these seeds' runs

Runs without results.json (unfinished) are counted under "unfinished" and otherwise ignored.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
from study_stats import paired_comparison

from drga.analysis.stats import bootstrap_ci, mean_std_text
from drga.config import tomllib  # the standard library's, or tomli before Python 3.11
from drga.names import ResultRow
from drga.records import RunResults

#: (row of results.json, evaluation mode) of each model in the tables.
EQUAL_BUDGET = (ResultRow.EQUAL_BUDGET, "net-only")
PRETRAIN_ONLY = (ResultRow.PRETRAIN_ONLY, "net-only")
DRGA_NET_ONLY = (ResultRow.DRGA, "net-only")
DRGA_WITH_AGENT = (ResultRow.DRGA, "with-agent")

#: Table layout: family → networks, in the order of the paper's Tables II–IV.
FAMILIES = {
    "self-attention (Table II protocol)": ["lstm-sa", "cnn-sa", "transformer"],
    "multi-dimensional self-attention": ["disan"],
    "task-specific (aspect) attention": ["atae-lstm", "ian"],
    "hierarchical attention": ["han"],
}
DATASET_ORDER = ["subj", "mr", "sst", "sst2", "ag-news", "semeval14-laptop", "semeval14-restaurant",
                 "semeval15-restaurant", "semeval16-restaurant", "movie-reviews"]


@dataclass(frozen=True)
class StudyRun:
    """A finished run's results, and its wall seconds: the sum of its epochs' (not ``wall_seconds.txt``, which loses the
    piece of a run that was killed); None where its epochs have none."""

    results: RunResults

    @property
    def wall_seconds(self) -> float | None:
        epochs = [record.seconds for record in self.results.history if record.seconds is not None]
        return sum(epochs) if epochs else None


def load_runs(logdir: Path, seeds: set[int] | None = None) -> tuple[dict[tuple[str, str], dict[int, StudyRun]], list[Path]]:
    """{(network, data set): {seed: results.json}} and the run folders without results; with
    ``seeds``, runs of other seeds (finished or not) are left out."""
    cells: dict[tuple[str, str], dict[int, StudyRun]] = defaultdict(dict)
    unfinished = []
    for folder in sorted(p for p in logdir.iterdir() if p.is_dir()):
        results = folder / "results.json"
        if not results.exists():
            if seeds is None or _started_seed(folder) in seeds | {None}:
                unfinished.append(folder)
            continue
        run = StudyRun(RunResults.read(results))
        config = run.results.config
        seed = int(config["run"]["seed"])
        if seeds is None or seed in seeds:
            cells[(config["network"]["name"], config["data"]["dataset"])][seed] = run
    return cells, unfinished


def _started_seed(folder: Path) -> int | None:
    """The seed of a run that has not finished, from the config.toml it wrote at its start (None: unknown)."""
    try:
        return int(tomllib.loads((folder / "config.toml").read_text(encoding="utf-8"))["run"]["seed"])
    except (OSError, KeyError, ValueError, tomllib.TOMLDecodeError):
        return None


def accuracy(run: StudyRun, model: tuple[str, str]) -> float | None:
    """The test accuracy (%) of a run's ``model`` (row, mode); None if the run has no such cell."""
    score = run.results.test_score(*model, metric="accuracy")
    return None if score is None else 100.0 * score


def paired_cell(runs: dict[int, StudyRun], model: tuple[str, str]) -> str:
    """Mean paired difference model − equal-budget baseline, p (paired t) and 95% bootstrap CI."""
    pairs = [(accuracy(p, EQUAL_BUDGET), accuracy(p, model)) for p in runs.values()]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        return "-"
    comparison = paired_comparison([a for a, _ in pairs], [b for _, b in pairs])
    mean = statistics.mean(comparison.differences)
    if comparison.n < 2:
        return f"{mean:+.2f}"
    if not comparison.spread:
        return f"{mean:+.2f} (the same in every seed: no spread to test)"
    low, high = bootstrap_ci(comparison.differences)
    return f"{mean:+.2f} (p = {comparison.p:.3f}; [{low:+.2f}, {high:+.2f}])"


def tables(cells: dict[tuple[str, str], dict[int, StudyRun]]) -> list[str]:
    lines = []
    known = {net for nets in FAMILIES.values() for net in nets}
    families = dict(FAMILIES)
    others = sorted({net for net, _ in cells} - known)
    if others:
        families["other networks"] = others
    for family, nets in families.items():
        rows = [(net, ds) for net in nets for ds in DATASET_ORDER + sorted({d for _, d in cells} - set(DATASET_ORDER))
                if (net, ds) in cells]
        if not rows:
            continue
        lines += [f"### {family}", "",
                  "| network | data set | seeds | baseline, pretrain only | **baseline, equal budget** "
                  "| DRGA net-only | **DRGA with-agent** | Δ net-only vs equal budget | Δ with-agent vs equal budget "
                  "| s/run |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for net, dataset in rows:
            runs = cells[(net, dataset)]
            columns = [mean_std_text([v for v in (accuracy(p, m) for p in runs.values()) if v is not None])
                       for m in (PRETRAIN_ONLY, EQUAL_BUDGET, DRGA_NET_ONLY, DRGA_WITH_AGENT)]
            walls = [p.wall_seconds for p in runs.values() if p.wall_seconds is not None]
            wall = f"{statistics.mean(walls):.0f}" if walls else "-"
            lines.append(f"| {net} | {dataset} | {len(runs)} | " + " | ".join(columns)
                         + f" | {paired_cell(runs, DRGA_NET_ONLY)} | {paired_cell(runs, DRGA_WITH_AGENT)} | {wall} |")
        lines.append("")
    return lines


def summary(cells: dict[tuple[str, str], dict[int, StudyRun]]) -> list[str]:
    """How many cells DRGA wins, ties or loses against the equal-budget baseline at p < 0.05."""
    verdicts = defaultdict(list)
    for (net, dataset), runs in cells.items():
        pairs = [(accuracy(p, EQUAL_BUDGET), accuracy(p, DRGA_WITH_AGENT)) for p in runs.values()]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if len(pairs) < 2:
            continue
        comparison = paired_comparison([a for a, _ in pairs], [b for _, b in pairs])
        if not comparison.spread:
            verdict = "no spread (every seed differs by the same)"
        else:
            better = statistics.mean(comparison.differences) > 0
            verdict = "tie (p ≥ 0.05)" if not comparison.p < 0.05 else ("DRGA better" if better else "baseline better")
        verdicts[verdict].append(f"{net}/{dataset}")
    return [f"- {verdict}: {len(names)} cells ({', '.join(sorted(names))})" for verdict, names in sorted(verdicts.items())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logdir", type=Path)
    parser.add_argument("--out", type=Path, help="markdown file (default: print)")
    parser.add_argument("--seeds", type=int, nargs="+", help="only the runs of these seeds (default: all)")
    args = parser.parse_args(argv)
    if not args.logdir.is_dir():
        parser.error(f"{args.logdir} is not a folder of runs")
    cells, unfinished = load_runs(args.logdir, set(args.seeds) if args.seeds else None)
    if not cells:
        parser.error(f"no finished runs (results.json) under {args.logdir}")
    command = f"python experiments/study_tables.py {args.logdir}" + (f" --seeds {' '.join(map(str, args.seeds))}" if args.seeds else "")
    command += f" --out {args.out}" if args.out else ""
    lines = [f"<!-- written by: {command} -->", "",
             f"Test accuracy (%), mean ± std over seeds; Δ = paired difference to the equal-budget baseline "
             f"(mean over seeds, paired t-test p, 95% bootstrap interval). {sum(len(r) for r in cells.values())} "
             f"finished runs, {len(unfinished)} unfinished.", ""]
    lines += tables(cells)
    lines += ["DRGA with-agent against the equal-budget baseline, per cell (paired t-test over seeds):", ""]
    lines += summary(cells) + [""]
    text = "\n".join(lines)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
