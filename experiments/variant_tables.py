"""One table of the beyond-the-paper variants (issue 16, item 4), from the committed result files.

    python experiments/variant_tables.py [--reference experiments/results/paper-regime] \\
        [--variants experiments/results/variant-*] [--out docs/results/variants.md]

Each variant folder holds the runs of ``experiments/variants.sh <name>``; a run that started from
the main study's pretrained network (``REUSE=``) takes its pretrain-only and equal-budget rows from
the reference folder's run of the same seed (checked by the networks' checksums, as
``regime_tables.py --reference`` does). The paper's method itself (the reference folder's own
DRGA rows) is the first row of every data set, on the seeds the variants of that data set ran,
so that each variant is read against it.

For every (variant, data set): the seeds, DRGA with the agent − the equal-budget baseline and DRGA
net-only − the equal-budget baseline (test accuracy points, mean over seeds, 95% t interval,
paired t-test over seeds), Holm's correction across the rows of each network and column that have
a test (identical per-seed differences have no spread to test: "no spread", no p). A
variant that is "better" after Holm is a candidate for the documented recommendation.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import regime_tables as regime  # beside this script
from checkout import ROOT
from study_stats import holm_adjust, paired_comparison, t_interval

#: What each variant sets on top of experiments/configs/paper_regime.toml (experiments/variants.sh).
SETTINGS = {
    "paper": "the paper's method (the main study)",
    "holdout": "data.agent_holdout=0.2",
    "self-critical": "agent.reward_baseline=self-critical",
    "closeness": "reward.closeness=0.5",
    "own-attention": "train.original_attention_loss=0.5",
    "transformer-all-gradients": "train.task_loss_samples=0",  # the Transformer's default (1) re-measured
}
COLUMNS = (("with agent", (regime.DRGA, "with-agent")), ("net-only", (regime.DRGA, "net-only")))


def differences(runs: dict[int, dict], ours: tuple[str, str]) -> list[tuple[float, float]]:
    """(equal-budget baseline, ours) test accuracy pairs over the seeds that have both."""
    pairs = [(regime.test_accuracy(r, regime.BASELINE, "net-only"), regime.test_accuracy(r, *ours)) for r in runs.values()]
    return [(a, b) for a, b in pairs if a is not None and b is not None]


def variant_rows(reference: Path, variants: list[Path]) -> list[dict]:
    """One entry per (variant, network, data set) with its per-column statistics, Holm-adjusted."""
    reference_cells = regime.load([reference])
    groups = [("paper", reference_cells)]
    for folder in variants:
        cells = regime.load([folder])
        regime.borrow_baselines(cells, reference_cells)
        groups.append((folder.name.removeprefix("variant-"), cells))
    entries = []
    for name, cells in groups:
        for key in regime.order(cells):
            runs = cells[key]
            if name == "paper":
                # only the cells some variant ran, and only the seeds the variants ran: every row of a
                # cell is then read on the same seeds (the main study may have more by now)
                seeds = {seed for _, c in groups[1:] for seed in c.get(key, {})}
                if not seeds:
                    continue
                runs = {seed: run for seed, run in runs.items() if seed in seeds}
            entry = {"variant": name, "key": key, "columns": {}}
            for column, ours in COLUMNS:
                pairs = differences(runs, ours)
                comparison = paired_comparison([a for a, _ in pairs], [b for _, b in pairs])
                entry["columns"][column] = {"n": comparison.n, "diff": list(comparison.differences), "p": comparison.p,
                                            "spread": comparison.spread}
            entries.append(entry)
    # one Holm family per network and column: the variants of LSTM+SA are one question, a check of
    # another network's setting (transformer-all-gradients) another, which must not dilute the first
    for column, _ in COLUMNS:
        for network in {e["key"][0] for e in entries}:
            family = [e for e in entries if e["key"][0] == network]
            for entry, holm in zip(family, holm_adjust([e["columns"][column]["p"] for e in family])):
                entry["columns"][column]["holm"] = holm
    cell_order = regime.order({e["key"]: None for e in entries})
    rank = {name: i for i, name in enumerate(SETTINGS)}
    return sorted(entries, key=lambda e: (cell_order.index(e["key"]), rank.get(e["variant"], len(rank)), e["variant"]))


def cell_text(stats: dict) -> str:
    if stats["n"] < 2:
        return "- | - | -"
    mean = statistics.mean(stats["diff"])
    if not stats["spread"]:
        return f"{mean:+.2f} (every seed) | - | no spread"
    low, high = t_interval(stats["diff"])
    verdict = "tie" if not stats["holm"] < 0.05 else ("**better**" if mean > 0 else "worse")
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}] | {stats['p']:.3f} / {stats['holm']:.3f} | {verdict}"


def table(entries: list[dict]) -> list[str]:
    lines = [
        "| data set | network | variant (setting) | seeds | with agent − equal budget [95%] | p / p Holm | verdict "
        "| net-only − equal budget [95%] | p / p Holm | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        seeds = e["columns"]["with agent"]["n"]
        setting = SETTINGS.get(e["variant"], "?")
        lines.append(
            f"| {e['key'][1]} | {e['key'][0]} | {e['variant']} (`{setting}`) | {seeds} "
            f"| {cell_text(e['columns']['with agent'])} | {cell_text(e['columns']['net-only'])} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, default=ROOT / "experiments" / "results" / "paper-regime")
    parser.add_argument("--variants", type=Path, nargs="*", help="variant result folders (default: experiments/results/variant-*)")
    parser.add_argument("--out", type=Path, help="write the table here (markdown) as well as to stdout")
    args = parser.parse_args(argv)
    variants = args.variants if args.variants else sorted((ROOT / "experiments" / "results").glob("variant-*"))
    variants = [v for v in variants if any(v.glob("*.json"))]
    if not variants:
        parser.error("no variant result files yet (experiments/variants.sh writes them)")
    entries = variant_rows(args.reference, variants)
    networks = sorted({e["key"][0] for e in entries})
    tested = {
        network: {column: sum(not math.isnan(e["columns"][column]["p"]) for e in entries if e["key"][0] == network)
                  for column, _ in COLUMNS}
        for network in networks
    }
    families = "; ".join(f"{network}: {t['with agent']} with the agent, {t['net-only']} net-only" for network, t in tested.items())
    named = " ".join(str(v.relative_to(ROOT)) if v.is_relative_to(ROOT) else str(v) for v in variants)
    text = "\n".join(
        [
            f"<!-- generated by `python experiments/variant_tables.py --variants {named}` from the committed result files; "
            "do not edit by hand -->",
            "",
            "Test accuracy points against the equal-budget baseline of the same seed; Holm over the rows of each network and "
            f"column that have a test ({families}).",
            "",
            *table(entries),
        ]
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
