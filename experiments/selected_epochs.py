"""Which epoch a run's rows were read at: how often co-training kept its starting point (the study tables'
"Selected epochs": experiments/regime_tables.py, tuned_tables.py and explain_tables.py).

A run's result file (``drga sweep --results``) records, per row and evaluation mode, the epoch its
best dev score was at (``rows[<row>][<mode>]["epoch"]``). Co-training and the equal-budget baseline
count their starting point as epoch 0 (:mod:`drga.runner.phases`), so epoch 0 means:

- DRGA with the agent at co-training epoch 0: the agent on the frozen pretrained network (the agent
  phase's best), not a co-trained network;
- DRGA net-only at co-training epoch 0: the pretrained network itself;
- the equal-budget baseline at epoch 0: the pretrained network too (more training did not help on dev).

A row read at epoch 0 holds its starting point's numbers exactly (checked on the paper-regime study's
75 runs: every such row's dev and test equal those of the row it started from).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drga.names import ResultRow

#: The result files' row labels (``Phase.report_label`` in drga.runner.phases).
BASELINE, AGENT, DRGA = ResultRow.EQUAL_BUDGET, ResultRow.AGENT_ON_FROZEN, ResultRow.DRGA

#: What is counted: (name, row, mode) whose selected epoch 0 is the phase's starting point.
STARTS: tuple[tuple[str, str, str], ...] = (
    ("with_agent", DRGA, "with-agent"),
    ("net_only", DRGA, "net-only"),
    ("baseline", BASELINE, "net-only"),
)


@dataclass(frozen=True)
class StartCounts:
    """Of ``runs`` runs with a co-trained row: how many selected their phase's starting point (epoch 0)."""

    runs: int = 0
    with_agent: int = 0  #: DRGA with the agent is the agent on the frozen network
    net_only: int = 0  #: DRGA net-only is the pretrained network
    both: int = 0  #: both of the above in the same run: co-training changed neither row
    baseline: int = 0  #: the equal-budget baseline is the pretrained network (of the runs that have it)
    baseline_runs: int = 0

    def __add__(self, other: StartCounts) -> StartCounts:
        return StartCounts(*(a + b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[int, ...]:
        return (self.runs, self.with_agent, self.net_only, self.both, self.baseline, self.baseline_runs)


def selected_epoch(result: Mapping[str, Any], row: str, mode: str) -> int | None:
    """The epoch at which ``row`` was read in ``mode`` (None: the run has no such row)."""
    entry = result.get("rows", {}).get(row, {}).get(mode)
    return None if entry is None or entry.get("epoch") is None else int(entry["epoch"])


def start_counts(results: Iterable[Mapping[str, Any]]) -> StartCounts:
    """How often the rows of the runs that co-trained were read at their phase's starting point (epoch 0)."""
    total = StartCounts()
    for result in results:
        epochs = {name: selected_epoch(result, row, mode) for name, row, mode in STARTS}
        if epochs["with_agent"] is None or epochs["net_only"] is None:
            continue  # no co-training in this run (a pretrain-only run, say)
        at_start = {name: epoch == 0 for name, epoch in epochs.items()}
        total += StartCounts(
            runs=1, with_agent=int(at_start["with_agent"]), net_only=int(at_start["net_only"]),
            both=int(at_start["with_agent"] and at_start["net_only"]),
            baseline=int(at_start["baseline"]), baseline_runs=int(epochs["baseline"] is not None),
        )
    return total


def start_counts_by_cell(cells: Mapping[Any, Iterable[Mapping[str, Any]]]) -> dict[Any, StartCounts]:
    """:func:`start_counts` of every cell that co-trained (cells with no such run are left out)."""
    counts = {key: start_counts(runs) for key, runs in cells.items()}
    return {key: count for key, count in counts.items() if count.runs}


def fraction_text(count: int, runs: int) -> str:
    """``count/runs (percent)``, or ``-`` when there are no runs."""
    return f"{count}/{runs} ({100 * count / runs:.0f}%)" if runs else "-"


def start_table(counts: Mapping[tuple[str, str], StartCounts], order: list[tuple[str, str]]) -> list[str]:
    """Markdown: per (network, data set) in ``order`` and over all of them, the runs whose rows were read at epoch 0."""
    lines = [
        "| network | data set | runs | DRGA with agent = agent on the frozen network (co-training epoch 0) "
        "| DRGA net-only = pretrained network (co-training epoch 0) | both | equal-budget baseline = pretrained network (epoch 0) |",
        "|---|---|---|---|---|---|---|",
    ]
    keys = [key for key in order if key in counts]
    for label, count in [*((key, counts[key]) for key in keys), (("all", ""), sum((counts[k] for k in keys), StartCounts()))]:
        network, dataset = label
        lines.append(
            f"| {'**all**' if network == 'all' else network} | {dataset} | {count.runs} | {fraction_text(count.with_agent, count.runs)} "
            f"| {fraction_text(count.net_only, count.runs)} | {fraction_text(count.both, count.runs)} "
            f"| {fraction_text(count.baseline, count.baseline_runs)} |"
        )
    return lines
