"""Tables of the positive controls (docs/controls.md, experiments/controls.sh), rebuilt from the committed result files alone.

    python experiments/control_tables.py [--results experiments/results] [--out docs/results/controls.md]

1. **Planted cues** (``control-planted/<kind>-s<strength>/``): per degradation and network, over seeds, the test
   accuracy of the pretrained network, of the agent on the frozen network and of DRGA with the agent against the
   equal-budget baseline; each difference with its 95% t interval, the paired t-test over seeds and Holm's
   correction across every cell of its column; the attention mass on the cue words before and after the agent
   (``cue-mass/<run>-agent.json``); and where pretraining's early stopping ended.
2. **The uniform-attention ceiling** (``control-uniform/`` against ``paper-regime/``, LSTM+SA, the same seeds): the
   gap learned − uniform of the pretrained networks, what the agent on the frozen uniform network recovers of it
   (paired t-test over seeds, Holm across the data sets), the fraction recovered / gap (ratio of the means over
   seeds, its 95% interval from 10,000 paired bootstrap resamples of the seeds, seed 0), where pretraining stopped,
   and what the agent did to the attention's focus (N/L) and to eq. 5's reward.
3. **The authors' procedure** (``control-authors/``, and ``control-authors-<variant>/`` for one of its settings
   changed): DRGA's best dev accuracy against the pretrained network's, as their code would report it, and test
   accuracy against the equal-budget baseline, as everything else here is reported, from the same runs; the first
   difference split into dev selection, more training and the agent itself.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)
import numpy as np
from study_stats import holm_adjust, paired_comparison, t_interval

from drga.files import write_text_atomic
from drga.names import ResultRow

ROOT = Path(__file__).resolve().parents[1]
PRETRAIN, BASELINE, AGENT, DRGA = ResultRow.PRETRAIN_ONLY, ResultRow.EQUAL_BUDGET, ResultRow.AGENT_ON_FROZEN, ResultRow.DRGA
FOLDER = re.compile(r"(?P<kind>[a-z]+)-s(?P<strength>[0-9.]+)$")
RUN = re.compile(r"(?P<dataset>.+)-(?P<net>[a-z0-9-]+?)-seed(?P<seed>\d+)$")
#: Holm's level, and the resamples and seed of the ceiling's bootstrap.
LEVEL, RESAMPLES, BOOTSTRAP_SEED = 0.05, 10_000, 0


def read_runs(folder: Path) -> dict[tuple[str, str], dict[int, dict[str, Any]]]:
    """(data set, network) → seed → result file, for the ``<dataset>-<net>-seed<k>.json`` of ``folder``."""
    runs: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        payload = json.loads(path.read_text(encoding="utf-8"))
        runs.setdefault((payload["dataset"], payload["net"]), {})[int(payload["seed"])] = payload
    return runs


def test_accuracy(run: Mapping[str, Any], row: str, mode: str) -> float:
    return 100.0 * float(run["rows"][row][mode]["test"])


def verdict(delta: float, p_holm: float, seeds: int) -> str:
    if seeds < 2:
        return "too few seeds"
    if math.isnan(p_holm):
        return "no spread to test"
    if p_holm < LEVEL:
        return "better" if delta > 0 else "worse"
    return "tie"


def _interval(differences: Sequence[float]) -> str:
    low, high = t_interval(differences)
    return "-" if math.isnan(low) else f"[{low:+.2f}, {high:+.2f}]"


def _p(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3g}"


def _compared(cells: Sequence[Mapping[str, Any]], row_a: str, mode_a: str, row_b: str, mode_b: str) -> tuple[list[Any], list[float]]:
    """Per cell, the paired comparison of test accuracy row_b − row_a over its seeds, and the Holm-adjusted p's."""
    return _tested([c["runs"] for c in cells], lambda r: test_accuracy(r, row_b, mode_b) - test_accuracy(r, row_a, mode_a))


def _tested(run_lists: Sequence[Sequence[Mapping[str, Any]]], difference: Any) -> tuple[list[Any], list[float]]:
    """Per list of a cell's runs, the paired comparison of each run's ``difference`` against 0, and the Holm-adjusted p's."""
    tested = [paired_comparison([0.0] * len(runs), [difference(r) for r in runs]) for runs in run_lists]
    return tested, holm_adjust([t.p for t in tested])


def planted_cells(results: Path) -> list[dict[str, Any]]:
    """The planted control's cells, by degradation and strength (strongest first), then network."""
    cells = []
    for folder in sorted((results / "control-planted").glob("*-s*")):
        match = FOLDER.match(folder.name)
        if match is None or not folder.is_dir():
            continue
        for (dataset, net), seeds in sorted(read_runs(folder).items()):
            ordered = [seeds[seed] for seed in sorted(seeds)]
            cue = [_cue_mass(folder, f"{dataset}-{net}-seed{seed}") for seed in sorted(seeds)]
            cells.append({"kind": match["kind"], "strength": float(match["strength"]), "dataset": dataset, "net": net,
                          "runs": ordered, "cue": [c for c in cue if c is not None]})
    return sorted(cells, key=lambda c: (c["kind"], -c["strength"], c["net"]))


def planted_comparisons(results: Path) -> list[dict[str, Any]]:
    """DRGA with the agent − the equal-budget baseline per planted cell, as the table gives it: the cell, its paired
    comparison and its Holm p (the family: every planted cell with a test)."""
    cells = planted_cells(results)
    tested, adjusted = _compared(cells, BASELINE, "net-only", DRGA, "with-agent")
    return [{**cell, "comparison": t, "holm": h} for cell, t, h in zip(cells, tested, adjusted)]


def planted_tables(results: Path) -> str:
    cells = planted_cells(results)
    if not cells:
        return "### Planted cues\n\nNo result files yet (`bash experiments/controls.sh planted`).\n"
    comparisons = {
        "agent on the frozen network − pretrained network": ((PRETRAIN, "net-only"), (AGENT, "with-agent")),
        "DRGA with agent − equal-budget baseline": ((BASELINE, "net-only"), (DRGA, "with-agent")),
    }
    lines = ["### Planted cues (test accuracy %)", "",
             "| degradation | network | data set | seeds | pretrained | agent on frozen | equal-budget baseline | DRGA with agent | "
             "cue mass α → α′ (agent) | pretraining epochs (mean; best) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for cell in cells:
        runs = cell["runs"]
        cue = cell["cue"]
        mass = (f"{np.mean([c['mean_mass_original'] for c in cue]):.3f} → {np.mean([c['mean_mass_revised'] for c in cue]):.3f} "
                f"({len(cue)} seeds)") if cue else "-"
        lines.append(f"| {cell['kind']} s = {cell['strength']:g} | {cell['net']} | {cell['dataset']} | {len(runs)} | "
                     f"{_mean(runs, PRETRAIN, 'net-only'):.2f} | {_mean(runs, AGENT, 'with-agent'):.2f} | "
                     f"{_mean(runs, BASELINE, 'net-only'):.2f} | {_mean(runs, DRGA, 'with-agent'):.2f} | {mass} | "
                     f"{_pretraining(runs)} |")
    for title, ((row_a, mode_a), (row_b, mode_b)) in comparisons.items():
        tested, adjusted = _compared(cells, row_a, mode_a, row_b, mode_b)
        lines += ["", f"**{title}** (points; 95% t interval; paired t-test over seeds; Holm over the "
                      f"{sum(not math.isnan(t.p) for t in tested)} cells with a test):", "",
                  "| degradation | network | seeds | Δ | 95% interval | p | p (Holm) | verdict |", "|---|---|---|---|---|---|---|---|"]
        for cell, comparison, p_holm in zip(cells, tested, adjusted):
            delta = float(np.mean(comparison.differences))
            lines.append(f"| {cell['kind']} s = {cell['strength']:g} | {cell['net']} | {comparison.n} | {delta:+.2f} | "
                         f"{_interval(comparison.differences)} | {_p(comparison.p)} | {_p(p_holm)} | "
                         f"{verdict(delta, p_holm, comparison.n)} |")
    return "\n".join(lines) + "\n"


def _pretraining(runs: Sequence[Mapping[str, Any]]) -> str:
    """Where pretraining's early stopping ended: its epochs' mean over seeds, of the cap, and the range of its best epochs."""
    epochs, cap = [r["phases"]["pretrain"]["epochs"] for r in runs], runs[0]["phases"]["pretrain"]["max_epochs"]
    best = [r["rows"][PRETRAIN]["net-only"]["epoch"] for r in runs]
    return f"{np.mean(epochs):.1f} of {cap}; {min(best)}–{max(best)}"


def _mean(runs: Sequence[Mapping[str, Any]], row: str, mode: str, accuracy: Any = None) -> float:
    """The mean over seeds of a row's accuracy: on test, or what ``accuracy`` reads (:func:`dev_accuracy`)."""
    read = accuracy or test_accuracy
    return float(np.mean([read(run, row, mode) for run in runs]))


def _cue_mass(folder: Path, name: str) -> dict[str, Any] | None:
    path = folder / "cue-mass" / f"{name}-agent.json"
    return json.loads(path.read_text(encoding="utf-8"))["cue_mass"] if path.is_file() else None


def ratio_interval(recovered: Sequence[float], gap: Sequence[float]) -> tuple[float, float]:
    """The 95% paired-bootstrap interval of mean(recovered) / mean(gap) over the seeds (NaN with fewer than two)."""
    recovered_a, gap_a = np.asarray(recovered, dtype=np.float64), np.asarray(gap, dtype=np.float64)
    if len(gap_a) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(gap_a), size=(RESAMPLES, len(gap_a)))
    gaps = gap_a[picks].mean(axis=1)
    ratios = recovered_a[picks].mean(axis=1) / np.where(gaps == 0, np.nan, gaps)
    low, high = np.nanpercentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def ceiling_cells(results: Path) -> list[dict[str, Any]]:
    """Per (data set, network) of ``control-uniform/``, the seeds ``paper-regime/`` has too: the uniform and the learned
    runs, paired by seed."""
    uniform, learned = read_runs(results / "control-uniform"), read_runs(results / "paper-regime")
    cells = []
    for (dataset, net), seeds in sorted(uniform.items()):
        paired = sorted(seed for seed in seeds if seed in learned.get((dataset, net), {}))
        if paired:
            cells.append({"dataset": dataset, "net": net, "seeds": paired, "uniform": [seeds[s] for s in paired],
                          "learned": [learned[(dataset, net)][s] for s in paired]})
    return cells


def ceiling_comparisons(results: Path) -> list[dict[str, Any]]:
    """What the agent on the frozen uniform network recovers (its test accuracy − the uniform network's) per cell, as the
    table gives it: the cell, its paired comparison over seeds and its Holm p (the family: every cell with a test)."""
    cells = ceiling_cells(results)
    tested, adjusted = _compared([{"runs": c["uniform"]} for c in cells], PRETRAIN, "net-only", AGENT, "with-agent")
    return [{**cell, "comparison": t, "holm": h} for cell, t, h in zip(cells, tested, adjusted)]


def ceiling_table(results: Path) -> str:
    entries = ceiling_comparisons(results)
    if not entries:
        return "### The uniform-attention ceiling\n\nNo result files yet (`bash experiments/controls.sh uniform`).\n"
    lines = ["### The uniform-attention ceiling (LSTM+SA, test accuracy %)", "",
             "*Recovered*: the agent on the frozen uniform network − that network (paired t-test over seeds, Holm over the "
             f"{sum(not math.isnan(e['comparison'].p) for e in entries)} cells with a test); *fraction of the gap*: the mean "
             "recovered / the mean gap, with its 95% paired-bootstrap interval.", "",
             "| data set | seeds | learned attention | uniform attention | gap (learned − uniform) | agent on the frozen uniform network | "
             "recovered | p (Holm) | verdict | fraction of the gap | 95% interval | "
             "uniform pretraining: epochs run (mean, of the cap); best epoch (range) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        own = [test_accuracy(r, PRETRAIN, "net-only") for r in e["learned"]]
        flat = [test_accuracy(r, PRETRAIN, "net-only") for r in e["uniform"]]
        agent = [test_accuracy(r, AGENT, "with-agent") for r in e["uniform"]]
        gap = [a - b for a, b in zip(own, flat)]
        recovered = [a - b for a, b in zip(agent, flat)]
        fraction = float(np.mean(recovered) / np.mean(gap)) if np.mean(gap) else float("nan")
        low, high = ratio_interval(recovered, gap)
        interval = "-" if math.isnan(low) else f"[{low:.2f}, {high:.2f}]"
        gap_low, gap_high = t_interval(gap)
        if gap_low <= 0 <= gap_high:  # a ratio to a gap that may be zero has no meaning of its own
            interval += " (the gap's own interval holds 0)"
        elif gap_high < 0:
            interval += " (no gap to close: uniform attention scores higher)"
        runs = e["uniform"]
        lines.append(f"| {e['dataset']} | {len(runs)} | {np.mean(own):.2f} | {np.mean(flat):.2f} | {np.mean(gap):+.2f} {_interval(gap)} | "
                     f"{np.mean(agent):.2f} | {np.mean(recovered):+.2f} {_interval(recovered)} | {_p(e['holm'])} | "
                     f"{verdict(float(np.mean(recovered)), e['holm'], e['comparison'].n)} | {fraction:.2f} | {interval} | "
                     f"{_pretraining(runs)} |")
    lines += ["", "What the agent did to the uniform network, on test (means over seeds): the share of tokens holding the top-δ "
              "attention mass (N/L, eq. 5) and eq. 5's reward, the uniform network's own, then with the agent's deterministic action.",
              "", "| data set | seeds | N/L: uniform → agent | reward: uniform → agent | seeds whose agent lowers the reward |",
              "|---|---|---|---|---|"]
    for e in entries:
        runs = e["uniform"]
        before = [r["rows"][PRETRAIN]["net-only"] for r in runs]
        after = [r["rows"][AGENT]["with-agent"] for r in runs]
        lowered = sum(a["test_reward"] < b["test_reward"] for a, b in zip(after, before))
        share = [np.mean([r["test_highlighted_fraction"] for r in rows]) for rows in (before, after)]
        reward = [np.mean([r["test_reward"] for r in rows]) for rows in (before, after)]
        lines.append(f"| {e['dataset']} | {len(runs)} | {share[0]:.3f} → {share[1]:.3f} | {reward[0]:.3f} → {reward[1]:.3f} | "
                     f"{lowered} of {len(runs)} |")
    return "\n".join(lines) + "\n"


def dev_accuracy(run: Mapping[str, Any], row: str, mode: str) -> float:
    return 100.0 * float(run["rows"][row][mode]["dev"])


AS_REPORTED = "as the authors' code reports it: DRGA's best dev accuracy − the pretrained network's dev accuracy"
ON_TEST = "as this toolkit reports: test accuracy, DRGA with agent − the equal-budget baseline"
#: The two readings of the same runs, each a run's difference in points.
WAYS: dict[str, Any] = {
    AS_REPORTED: lambda r: dev_accuracy(r, DRGA, "with-agent") - dev_accuracy(r, PRETRAIN, "net-only"),
    ON_TEST: lambda r: test_accuracy(r, DRGA, "with-agent") - test_accuracy(r, BASELINE, "net-only"),
}


def authors_cells(results: Path) -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(procedure, data set, network, the seeds' result files) of ``control-authors/`` and its variants'."""
    folders = sorted(f for f in results.glob("control-authors*") if f.is_dir())
    return [(folder.name.removeprefix("control-authors").lstrip("-") or "as in their code", dataset, net,
             [seeds[k] for k in sorted(seeds)]) for folder in folders for (dataset, net), seeds in sorted(read_runs(folder).items())]


def authors_comparisons(results: Path, way: str) -> list[dict[str, Any]]:
    """One reading (:data:`WAYS`) of the authors' procedure's cells as the table gives it: each cell, its paired
    comparison and its Holm p (the family: every cell of that reading, variants included)."""
    cells = authors_cells(results)
    tested, adjusted = _tested([runs for *_, runs in cells], WAYS[way])
    return [{"procedure": c[0], "dataset": c[1], "net": c[2], "comparison": t, "holm": h} for c, t, h in zip(cells, tested, adjusted)]


def authors_table(results: Path) -> str:
    """The authors' code's procedure (``control-authors/``; a variant with one of its settings changed in
    ``control-authors-<variant>/``), each cell read two ways from the same runs, and the first way's Δ split into its parts."""
    cells = authors_cells(results)
    if not cells:
        return "### The authors' procedure\n\nNo result files yet (`bash experiments/controls.sh authors`).\n"
    ways = WAYS
    lines = ["### The authors' procedure (LSTM+SA, accuracy %)", ""]
    for title, difference in ways.items():
        tested, adjusted = _tested([runs for *_, runs in cells], difference)
        lines += [f"**{title}** (points; 95% t interval; paired t-test over seeds; Holm over the "
                  f"{sum(not math.isnan(t.p) for t in tested)} cells with a test):", "",
                  "| procedure | data set | seeds | Δ | 95% interval | p | p (Holm) | verdict |", "|---|---|---|---|---|---|---|---|"]
        for (variant, dataset, _, _), comparison, p_holm in zip(cells, tested, adjusted):
            delta = float(np.mean(comparison.differences))
            lines.append(f"| {variant} | {dataset} | {comparison.n} | {delta:+.2f} | {_interval(comparison.differences)} | "
                         f"{_p(comparison.p)} | {_p(p_holm)} | {verdict(delta, p_holm, comparison.n)} |")
        lines.append("")
    lines += ["**The first way's Δ in parts** (means over seeds; the three add up to it): *dev selection*, how much more DRGA's "
              "dev accuracy exceeds its test accuracy than the pretrained network's does (the best of its epochs picked and "
              "scored on the same sentences); *more training*, the equal-budget baseline's test gain over the pretrained "
              "network (as many epochs as DRGA's agent and co-training phases, without the agent); *the agent*, DRGA with agent "
              "− that baseline on test.", "",
              "| procedure | data set | seeds | pretrained dev / test | DRGA dev / test | baseline test | Δ as reported | "
              "dev selection | more training | the agent | seeds whose agent changes nothing |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for variant, dataset, _, runs in cells:
        pre_dev, pre_test = _mean(runs, PRETRAIN, "net-only", dev_accuracy), _mean(runs, PRETRAIN, "net-only")
        drga_dev, drga_test = _mean(runs, DRGA, "with-agent", dev_accuracy), _mean(runs, DRGA, "with-agent")
        base_test = _mean(runs, BASELINE, "net-only")
        lines.append(f"| {variant} | {dataset} | {len(runs)} | {pre_dev:.2f} / {pre_test:.2f} | {drga_dev:.2f} / {drga_test:.2f} | "
                     f"{base_test:.2f} | {drga_dev - pre_dev:+.2f} | {(drga_dev - drga_test) - (pre_dev - pre_test):+.2f} | "
                     f"{base_test - pre_test:+.2f} | {drga_test - base_test:+.2f} | "
                     f"{sum(map(_agent_changes_nothing, runs))} of {len(runs)} |")
    lines += ["", "*Seeds whose agent changes nothing*: the agent on the frozen network scores exactly what the pretrained network "
              "does on dev and on test, and DRGA with the agent exactly what DRGA's network alone does: the deterministic "
              "policy makes the same choice for every token, and a renormalised α·(1 ± β) is α again."]
    return "\n".join(lines) + "\n"


def _agent_changes_nothing(run: Mapping[str, Any]) -> bool:
    frozen, pretrained = run["rows"][AGENT]["with-agent"], run["rows"][PRETRAIN]["net-only"]
    drga = run["rows"][DRGA]
    same_frozen = all(frozen[split] == pretrained[split] for split in ("dev", "test"))
    same_drga = "net-only" in drga and all(drga["with-agent"][split] == drga["net-only"][split] for split in ("dev", "test"))
    return same_frozen and same_drga


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=str(ROOT / "experiments" / "results"), help="the results folder (default: the committed one)")
    parser.add_argument("--out", help="also write the page to this file")
    args = parser.parse_args(argv)
    results = Path(args.results)
    command = "python experiments/control_tables.py" + (f" --out {args.out}" if args.out else "")
    page = (f"<!-- generated by `{command}` from the committed result files; do not edit by hand -->\n\n"
            f"{planted_tables(results)}\n{ceiling_table(results)}\n{authors_table(results)}")
    print(page, end="")
    if args.out:
        write_text_atomic(args.out, page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
