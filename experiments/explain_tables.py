"""docs/EXPLAINABILITY.md and its pictures, rebuilt from the per-run JSON of ``explain_study.py analyze`` alone.

Run through ``python experiments/explain_study.py tables``. Per data set: every measure as mean ± std over
seeds for the three attentions, the paired t-test over seeds of DRGA (each mode) against the equal-budget
baseline with Cohen's d_z, Holm's correction over every test of the data set (the family said on the page) and,
beside it, within the focus or faithfulness question's own tests, and the paper's number beside ours; the
random ranking's draws per sentence, the code each analysis names; pictures of the ERASER curves, the erasure
test and the polarity view. The same JSON gives the same
bytes (the PNGs carry no software version; nothing depends on the time or the machine's paths).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)
import numpy as np
import selected_epochs
from matplotlib.ticker import NullFormatter
from study_stats import holm_adjust, paired_comparison

from drga.analysis.plots import DOC_WIDTH, legend_below, new_figure, save_png, styled
from drga.analysis.polarity import drop_overlapping_labels
from drga.analysis.stats import mean_std_text, paired_effect_size
from drga.names import Mode, PhaseName
from drga.sweep.results import ResultFile, read_result_file

ATTENTIONS = ("baseline", "drga-net-only", "drga-with-agent")
ATTENTION_NAMES = {"baseline": "equal-budget baseline α", "drga-net-only": "DRGA net-only α", "drga-with-agent": "DRGA with-agent α*"}
COLORS = {"baseline": "#4c72b0", "drga-net-only": "#55a868", "drga-with-agent": "#dd8452"}
DRGA = ("drga-net-only", "drga-with-agent")
DATASETS = {"mr": "MR", "subj": "SUBJ", "sst": "SST-5"}
#: Seeds the study plans per data set (the page is partial until every one is in).
PLANNED_SEEDS = 5
BINS = (1, 5, 10, 20, 50)
ALPHA = 0.05
#: The paper's Table VIII: the drop of the highlighted-token count with DRGA (../shared/paper/tables.md).
PAPER_REDUCTION = {"mr": "−22.9 %", "sst": "−26.2 %", "subj": "−23.8 %"}
PAPER_THRESHOLD = "≈ 0.6 → ≈ 0.2"
#: Table VII, one SST sentence under a Transformer: the weight leaves "is", "one", "you", "likely" for "best", "artful", ...
PAPER_WORDS = {"function_mass": "falls (one sentence)", "sentiment_mass": "rises (one sentence)"}


@dataclass(frozen=True)
class Measure:
    """A number per run and attention, read from the per-run JSON by ``path``."""

    key: str
    label: str
    group: str
    path: tuple[str, ...]
    #: +1: higher is the better explanation, −1: lower is, 0: descriptive
    better: int
    #: tested against the baseline (in Holm's family); references and controls are shown only
    tested: bool = True
    digits: int = 3
    #: "focus" or "faithfulness": which half of the page's question the measure answers
    answers: str | None = None
    paper: Callable[[str], str] | None = None

    def value(self, attention: dict[str, Any]) -> float | None:
        value: Any = attention
        for part in self.path:
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _aopc(measure: str, ranking: str) -> tuple[str, ...]:
    return ("faithfulness", measure, ranking, "aopc")


MEASURES = (
    Measure("n", "mean highlighted tokens N", "Highlighted tokens (Table VIII)", ("highlighted", "mean_n"), -1, digits=2,
            answers="focus", paper=lambda d: f"N {PAPER_REDUCTION[d]}" if d in PAPER_REDUCTION else "-"),
    Measure("n_l", "mean N/L", "Highlighted tokens (Table VIII)", ("highlighted", "mean_fraction"), -1, answers="focus"),
    Measure("function_mass", "attention mass on function words", "Function and sentiment words (Table VII as numbers)",
            ("word_classes", "function_word_mass"), -1, answers="focus", paper=lambda d: PAPER_WORDS["function_mass"]),
    Measure("sentiment_mass", "attention mass on sentiment words", "Function and sentiment words (Table VII as numbers)",
            ("word_classes", "sentiment_word_mass"), +1, answers="focus", paper=lambda d: PAPER_WORDS["sentiment_mass"]),
    Measure("function_share", "share of tokens that are function words (uniform attention's mass)",
            "Function and sentiment words (Table VII as numbers)", ("word_classes", "function_word_share"), 0, tested=False),
    Measure("sentiment_share", "share of tokens that are sentiment words (uniform attention's mass)",
            "Function and sentiment words (Table VII as numbers)", ("word_classes", "sentiment_word_share"), 0, tested=False),
    Measure("delta_js_positive", "share of sentences with ΔJS > 0", "Erasure test (Fig. 5)", ("erasure", "share_delta_js_positive"), +1,
            answers="faithfulness"),
    Measure("mean_delta_js", "mean ΔJS", "Erasure test (Fig. 5)", ("erasure", "mean_delta_js"), +1, digits=4, answers="faithfulness"),
    Measure("flip_top", "decision flips, top token removed", "Erasure test (Fig. 5)", ("erasure", "flip_rate_top"), +1,
            answers="faithfulness"),
    Measure("flip_random", "decision flips, random token removed (control)", "Erasure test (Fig. 5)", ("erasure", "flip_rate_random"), 0,
            tested=False),
    Measure("threshold", "Δα above which the binned ΔJS stays > 0", "Erasure test (Fig. 5)", ("erasure", "threshold_delta_alpha"), -1,
            digits=4, paper=lambda d: PAPER_THRESHOLD),
    Measure("comprehensiveness", "comprehensiveness AOPC, attention ranking", "ERASER faithfulness (DeYoung et al. 2020)",
            _aopc("comprehensiveness", "attention"), +1, answers="faithfulness"),
    Measure("comprehensiveness_random", "comprehensiveness AOPC, random ranking (reference)", "ERASER faithfulness (DeYoung et al. 2020)",
            _aopc("comprehensiveness", "random"), 0, tested=False),
    Measure("comprehensiveness_ig", "comprehensiveness AOPC, integrated gradients (reference)",
            "ERASER faithfulness (DeYoung et al. 2020)", _aopc("comprehensiveness", "integrated_gradients"), 0, tested=False),
    Measure("sufficiency", "sufficiency AOPC, attention ranking", "ERASER faithfulness (DeYoung et al. 2020)",
            _aopc("sufficiency", "attention"), -1, answers="faithfulness"),
    Measure("sufficiency_random", "sufficiency AOPC, random ranking (reference)", "ERASER faithfulness (DeYoung et al. 2020)",
            _aopc("sufficiency", "random"), 0, tested=False),
    Measure("sufficiency_ig", "sufficiency AOPC, integrated gradients (reference)", "ERASER faithfulness (DeYoung et al. 2020)",
            _aopc("sufficiency", "integrated_gradients"), 0, tested=False),
    Measure("tau_ig", "Kendall τ(attention, IG), mean over sentences", "ERASER faithfulness (DeYoung et al. 2020)",
            ("faithfulness", "tau_attention_ig", "mean"), +1, answers="faithfulness"),
    Measure("tau_loo", "Kendall τ(attention, leave-one-out), mean over sentences", "ERASER faithfulness (DeYoung et al. 2020)",
            ("faithfulness", "tau_attention_loo", "mean"), +1, answers="faithfulness"),
    Measure("polarity_tau", "Kendall τ(\\|polarity\\|, L·α) over 150 frequent tokens", "Token polarity (Sun & Lu 2020)",
            ("polarity", "tau_abs_polarity_attention"), +1),
    *(
        Measure(f"{view}_{key}", f"{view}: {label}", "Negation and intensification", ("negation", view, key), better)
        for view in ("negation", "intensification")
        for key, label, better in (
            ("cue_mass", "mass on the cues", 0),
            ("modified_word_mass", "mass on the sentiment words they modify", 0),
            ("accuracy", "accuracy on these sentences", +1),
        )
    ),
    Measure("accuracy", "test accuracy (all sentences; as results.json)", "Test accuracy (context)", ("accuracy",), 0, tested=False),
)
GROUPS = tuple(dict.fromkeys(m.group for m in MEASURES))
#: The page's two questions, each answered by the measures whose ``answers`` it is.
QUESTIONS = ("focus", "faithfulness")


def load(results: Path) -> dict[str, list[dict[str, Any]]]:
    """Data set → its runs' JSON, by seed."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(results.glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        runs.setdefault(run["dataset"], []).append(run)
    return {d: sorted(r, key=lambda run: run["seed"]) for d, r in sorted(runs.items(), key=lambda item: _dataset_order(item[0]))}


def _dataset_order(dataset: str) -> tuple[int, str]:
    return (list(DATASETS).index(dataset) if dataset in DATASETS else len(DATASETS), dataset)


def values(runs: list[dict[str, Any]], measure: Measure, attention: str) -> dict[int, float]:
    """Seed → the measure's value for ``attention`` (runs without it left out)."""
    found = {}
    for run in runs:
        value = measure.value(run["attentions"].get(attention, {}))
        if value is not None:
            found[run["seed"]] = value
    return found


def comparisons(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every (measure, DRGA mode) row of a data set: means, the paired test, d_z, and Holm's p over the tested ones."""
    rows = []
    for measure in MEASURES:
        per = {a: values(runs, measure, a) for a in ATTENTIONS}
        if not any(per.values()):
            continue
        row: dict[str, Any] = {"measure": measure, "values": per, "tests": {}}
        for mode in DRGA:
            seeds = sorted(set(per["baseline"]) & set(per[mode]))
            if not measure.tested or not seeds:
                continue
            comparison = paired_comparison([per["baseline"][s] for s in seeds], [per[mode][s] for s in seeds])
            row["tests"][mode] = {
                "n": comparison.n, "mean": float(np.mean(comparison.differences)), "p": comparison.p,
                # no spread (equal differences up to rounding): no effect size either, as no test
                "d": paired_effect_size(comparison.differences) if comparison.spread else float("nan"), "holm": float("nan"),
            }
        rows.append(row)
    family = [test for row in rows for test in row["tests"].values()]
    for test, adjusted in zip(family, holm_adjust([t["p"] for t in family])):
        test["holm"] = adjusted
    # beside it, Holm within each question's own family: the data set's tests of the measures that answer it
    for question in QUESTIONS:
        own = [test for row in rows if row["measure"].answers == question for test in row["tests"].values()]
        for test, adjusted in zip(own, holm_adjust([t["p"] for t in own])):
            test["question_holm"], test["question_family"] = adjusted, len(own)
    return rows


def families(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Holm's family of a data set as :func:`comparisons` forms it: its size, and the measures in it by the question
    they answer (``focus``, ``faithfulness``, or None: a side measure)."""
    tested = [row for row in rows if row["tests"]]
    by_question: dict[str | None, list[str]] = {}
    for row in tested:
        by_question.setdefault(row["measure"].answers, []).append(row["measure"].label)
    return {"tests": sum(len(row["tests"]) for row in tested), "measures": by_question}


def families_note(computed: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What Holm's correction is over, per data set, said as it is."""
    parts = []
    for dataset, rows in computed.items():
        found = families(rows)
        counts = ", ".join(f"{len(found['measures'].get(q, []))} {q}" for q in QUESTIONS)
        parts.append(f"{DATASETS.get(dataset, dataset)} {found['tests']} tests ({counts} and {len(found['measures'].get(None, []))} "
                     "side measures)")
    side = list(dict.fromkeys(label for rows in computed.values() for label in families(rows)["measures"].get(None, [])))
    return [
        "**Holm's families, as they are.** Each data set's p-values are corrected together, every tested measure in both DRGA "
        f"modes: {'; '.join(parts)}. The side measures are: {'; '.join(side)}. So the focus measures are corrected together with "
        "the faithfulness and side measures, and the verdicts below use that family. Beside each focus and faithfulness "
        "p-value stands its Holm p within its own question's family: that question's tests of the data set, both modes.",
        "",
    ]


def verdict(measure: Measure, test: dict[str, Any]) -> str:
    """What the test says, in words: better/worse explanation (or higher/lower), no difference, untested."""
    if math.isnan(test["p"]):
        return "untested (1 seed)" if test["n"] < 2 else "untested (no spread)"
    if not test["holm"] < ALPHA:
        return "no difference"
    if measure.better == 0:
        return "higher" if test["mean"] > 0 else "lower"
    return "**better**" if test["mean"] * measure.better > 0 else "**worse**"


def _number(value: float, digits: int) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _test_cell(measure: Measure, test: dict[str, Any] | None) -> str:
    if test is None:
        return "-"
    if test["n"] < 2:
        return f"{test['mean']:+.{measure.digits}f} (one seed: not tested)"
    d = "-" if math.isnan(test["d"]) else f"{test['d']:+.2f}"
    own = f" ({_number(test['question_holm'], 3)} in the {measure.answers} family)" if "question_holm" in test else ""
    return (f"{test['mean']:+.{measure.digits}f}, d = {d}, p = {_number(test['p'], 3)}, Holm {_number(test['holm'], 3)}{own}: "
            f"{verdict(measure, test)}")


#: The measures of the random ranking, labelled with its draws per sentence.
RANDOM_MEASURES = ("comprehensiveness_random", "sufficiency_random")
#: The commit b30a80f set the hand-set fields below to: the code their analysing process had loaded.
HAND_SET_TO = "572d919"
#: Analysis files whose ``cost.commit`` was rewritten by hand after their first commit (c2f4053 → b30a80f, one minute
#: apart): (data set, seed) → the commit the file named first. Nothing else in them changed (``git show b30a80f``).
HAND_SET_COMMITS = {("mr", 1): "3044793", ("mr", 2): "7c9f41f", ("mr", 3): "7c9f41f", ("mr", 4): "7c9f41f",
                    ("subj", 0): "7c9f41f", ("subj", 1): "7c9f41f"}


def draws_text(runs: list[dict[str, Any]]) -> str:
    """The random ranking's draws per sentence in ``runs`` (a file without the field made one)."""
    draws = sorted({int(run.get("random_draws", 1)) for run in runs})
    if len(draws) == 1:
        return f"{draws[0]} draw{'s' if draws[0] > 1 else ''} per sentence"
    return "draws per sentence: " + ", ".join(f"{d} in {sum(int(r.get('random_draws', 1)) == d for r in runs)} seeds" for d in draws)


def random_draws_note(runs: list[dict[str, Any]]) -> list[str]:
    """What the random ranking is in these runs: one seeded draw per sentence, or the mean of several and their spread."""
    spreads = {"comprehensiveness": [], "sufficiency": []}
    for run in runs:
        for attention in run["attentions"].values():
            by_draw = attention.get("faithfulness", {}).get("random_by_draw")
            for measure in spreads if by_draw else ():
                spreads[measure].append(max(by_draw[measure]) - min(by_draw[measure]))
    seeds = sorted({run.get("analysis_seed", 0) for run in runs})
    text = (f"The random ranking here: {draws_text(runs)}, uniform scores seeded by (the analysis seed, the sentence's "
            "position in the test split), so the same draw for the three attentions"
            + (f" and, the analysis seed being {seeds[0]} in every file, for every seed and run." if len(seeds) == 1 else
               f"; the analysis seeds are {', '.join(map(str, seeds))}."))
    if spreads["comprehensiveness"]:
        text += (" Its AOPC per draw (the mean over the sentences) spreads over the draws by "
                 + ", ".join(f"{measure} {np.mean(found):.4f}" for measure, found in spreads.items())
                 + " (max − min, mean over the runs and attentions that have several draws).")
    else:
        text += (" No analysis of these runs averages several draws (their checkpoints are not committed); how far the "
                 "reference moves over five draws is measured on retrained replicates, in the last section (which names their cells).")
    return [text, ""]


#: The replicate of issue 55 (five random draws per sentence): MR retrained here at the study's training commit, analysed
#: by explain_study.py analyze --random-draws 5; its own folder, apart from the study's files.
REDRAW = "explain-redraw"


def redraw_section(results: Path) -> list[str]:
    """How far the ERASER random reference moves over draws, from the replicate in ``results/explain-redraw/``:
    per data set, attention and measure, the AOPC of the first draw (the committed analyses' kind) and of the mean
    of the draws, the spread over draws, and whether the attention's side of the reference holds for every draw."""
    def read_analyses(folder: Path) -> list[dict[str, Any]]:
        """The per-run JSON of ``explain_study.py analyze``."""
        return [json.loads(f.read_text(encoding="utf-8")) for f in sorted(folder.glob("*.json"))]

    def read_trained(folder: Path) -> dict[str, ResultFile]:
        """The sweep's result files of the trained runs, by run name."""
        return {result.name: result for result in map(read_result_file, sorted(folder.glob("*.json")))}

    by_dataset: dict[str, list[dict[str, Any]]] = {}
    for run in read_analyses(results / REDRAW / "analysis"):
        by_dataset.setdefault(run["dataset"], []).append(run)
    if not by_dataset:
        return []
    by_dataset = dict(sorted(by_dataset.items(), key=lambda item: _dataset_order(item[0])))
    trained = read_trained(results / REDRAW / "regime")
    committed = read_trained(results / "explain-regime")
    analyses = [run for runs in by_dataset.values() for run in runs]
    names = [run["run"] for run in analyses]
    # (a run the study has no file of compares None with the retrained one's checksum)
    same = sum(trained[n].pretrain_checksum == (committed[n].pretrain_checksum if n in committed else None) for n in names if n in trained)
    draws = sorted({int(run.get("random_draws", 1)) for run in analyses})
    commits = sorted({str(trained[n].commit)[:7] for n in names if n in trained})
    analysed = sorted({str(run.get("cost", {}).get("commit", "?"))[:7] for run in analyses})
    logdirs = sorted({str((trained[n].config.get("run") or {}).get("logdir")) for n in names if n in trained})
    # the run folder as the training files record it (``run.logdir``; the analysis reads the runs from the same folder)
    logdir = logdirs[0] if len(logdirs) == 1 and logdirs[0] != "None" else "<the run folder>"
    cells = " and ".join(DATASETS.get(d, d) for d in by_dataset)
    seeds = "; ".join(f"{DATASETS.get(d, d)} {', '.join(str(r['seed']) for r in runs)}" for d, runs in by_dataset.items())
    lines = [
        f"## The random reference over several draws: a replicate on {cells}",
        "",
        f"The committed analyses above rank each sentence's tokens at random once. Their checkpoints are not committed, so "
        f"they cannot be analysed again; instead the seeds of {cells} ({seeds}) were trained again with the study's code and "
        f"settings (commit {', '.join(commits)}, `experiments/explain_regime.sh`'s sweep) on another machine and analysed "
        f"with {', '.join(map(str, draws))} random draws per sentence (analysis code {', '.join(analysed)}). The retrained "
        f"networks are not the study's: {same} of {len(names)} pretrained networks have the checksum the study recorded "
        "(the files do not say why), so these numbers are a replicate of those cells, not a re-analysis of "
        "them. The random ranking enters no test on this page (its rows are a reference); what one draw can change is that "
        "reference line, measured here.",
        "",
        "| data set | attention | measure | attention's AOPC | random, first draw | random, mean of the draws | spread over "
        "draws (max − min) | seed-draws where the attention is on its better side |",
        "|---|---|---|---|---|---|---|---|",
    ]
    first_error: dict[str, list[float]] = {"comprehensiveness": [], "sufficiency": []}
    gaps: list[float] = []
    for dataset, runs in by_dataset.items():
        for attention in ATTENTION_NAMES:
            for measure, better in (("comprehensiveness", +1), ("sufficiency", -1)):
                rows = [run["attentions"][attention]["faithfulness"] for run in runs if attention in run["attentions"]]
                own = [row[measure]["attention"]["aopc"] for row in rows]
                by_draw = [row["random_by_draw"][measure] for row in rows]
                beats = sum(better * (a - d) > 0 for a, draws_of in zip(own, by_draw) for d in draws_of)
                first_error[measure] += [d[0] - np.mean(d) for d in by_draw]
                gaps.append(abs(np.mean(own) - np.mean([np.mean(d) for d in by_draw])))
                lines.append(
                    f"| {DATASETS.get(dataset, dataset)} | {ATTENTION_NAMES[attention]} | {measure} | {np.mean(own):.4f} "
                    f"| {np.mean([d[0] for d in by_draw]):.4f} | {np.mean([np.mean(d) for d in by_draw]):.4f} "
                    f"| {np.mean([max(d) - min(d) for d in by_draw]):.4f} | {beats} of {sum(len(d) for d in by_draw)} |")
    lines += [
        "",
        "Each number is the mean over the seeds; an AOPC is the mean over the sentences and the bins, as in the tables "
        f"above; comprehensiveness: higher is more faithful, sufficiency: lower. Files: `experiments/results/{REDRAW}/` "
        "(`regime/`: the training result files; `analysis/`: the analyses), made by these two commands, the first in a "
        "checkout of the training commit (`git worktree add ../at-280acee 280acee`), with the run folder the training files "
        "record (`run.logdir`):",
        "",
        "```bash",
        f"OMP_NUM_THREADS=1 python experiments/sweep.py --config experiments/configs/paper_regime.toml --nets lstm-sa --datasets "
        f"{' '.join(by_dataset)} \\",
        f"    --seeds 0 1 2 3 4 --jobs 2 --threads-per-run 1 --logdir {logdir} --results experiments/results/{REDRAW}/regime",
        f"OMP_NUM_THREADS=1 python experiments/explain_study.py analyze --runs {logdir} \\",
        f"    --out experiments/results/{REDRAW}/analysis --random-draws 5",
        "```",
        "",
        "The first draw minus the mean of the draws, mean over the data sets, attentions and seeds: "
        + ", ".join(f"{measure} {np.mean(found):+.4f}" for measure, found in first_error.items())
        + ". The first draw is the ranking the committed analyses used (the same seeded draw of the same sentences), so "
        "this estimates how far their reference rows lie from a mean of five; being one ranking shared by every attention "
        "and seed, a draw's error does not average out over the seeds. The smallest gap between an attention's AOPC and "
        f"the reference's mean is {min(gaps):.4f}.",
        "",
    ]
    return lines


def code_note(dataset: str, runs: list[dict[str, Any]]) -> list[str]:
    """The code each analysis names (its ``cost.commit``), and which of those fields were set by hand."""
    by_commit: dict[str, list[int]] = {}
    for run in runs:
        by_commit.setdefault(str(run.get("cost", {}).get("commit", "?"))[:7], []).append(run["seed"])
    text = "Code of the analyses (each file's `cost.commit`): " + "; ".join(
        f"{commit} (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})" for commit, seeds in by_commit.items()) + "."
    edited = [(run["seed"], HAND_SET_COMMITS[(dataset, run["seed"])]) for run in runs
              if (dataset, run["seed"]) in HAND_SET_COMMITS and str(run.get("cost", {}).get("commit", "")).startswith(HAND_SET_TO)]
    if edited:
        text += (" The field of seed" + ("s " if len(edited) > 1 else " ") + ", ".join(str(seed) for seed, _ in edited)
                 + " was rewritten by hand one minute after the files were first committed (c2f4053, then b30a80f): they first "
                 "named " + ", ".join(f"{first} (seed {seed})" for seed, first in edited) + ", the commit checked out when each "
                 f"file was written, not when its analysis started, and b30a80f set them to {HAND_SET_TO}, the code the analysing "
                 "process had loaded. Nothing else in the files changed, and the analysis code is the same at those commits "
                 "(`git diff 572d919 7c9f41f -- drga/analysis experiments/explain_study.py` changes only how a PNG is saved "
                 "and how the tables are imported).")
    return [text, ""]


def group_table(dataset: str, rows: list[dict[str, Any]], group: str, random_label: str = "") -> list[str]:
    mine = [r for r in rows if r["measure"].group == group]
    if not mine:
        return []
    lines = [
        f"#### {group}",
        "",
        "| measure | paper | " + " | ".join(ATTENTION_NAMES[a] for a in ATTENTIONS)
        + " | DRGA net-only − baseline | DRGA with-agent − baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in mine:
        measure = row["measure"]
        cells = []
        for attention in ATTENTIONS:
            found = row["values"][attention]
            text = mean_std_text([found[s] for s in sorted(found)], measure.digits)
            cells.append(f"{text} ({len(found)})" if found else "-")
        paper = measure.paper(dataset) if measure.paper else "-"
        tests = [_test_cell(measure, row["tests"].get(mode)) if measure.tested else "(not tested)" for mode in DRGA]
        label = f"{measure.label}, {random_label}" if random_label and measure.key in RANDOM_MEASURES else measure.label
        lines.append(f"| {label} | {paper} | " + " | ".join(cells) + " | " + " | ".join(tests) + " |")
    return lines + [""]


def same_network_note(runs: list[dict[str, Any]], regime: Path) -> list[str]:
    """How many seeds' DRGA net-only network is the equal-budget baseline's, read from the study's result files
    (``regime``, one per run): both rows at their phase's epoch 0 are the pretrained network (experiments/selected_epochs.py)."""
    files = [regime / f"{run['run']}.json" for run in runs]
    if not all(file.exists() for file in files):
        return []
    results = [read_result_file(file) for file in files]
    rows = (selected_epochs.BASELINE, selected_epochs.DRGA)
    same = sum(all((cell := r.cell(row, Mode.NET_ONLY)) is not None and cell.epoch == 0 for row in rows) for r in results)
    if not same:
        return []
    return [f"In {same} of {len(runs)} seeds DRGA net-only and the equal-budget baseline are one network: both kept the "
            "pretrained network (epoch 0 of their phases), so net-only's differences from the baseline are exactly 0 in those seeds.",
            ""]


def transformer_note(paper_regime: Path) -> list[str]:
    """Why the Transformer on SST-5 (3 seeds if its cost fits) is not on the page: its cost, read from the
    paper-regime study's result files of that cell (``paper_regime``), which record each run's wall time."""
    results = [read_result_file(f) for f in sorted(paper_regime.glob("sst-transformer-seed*.json"))]
    # whole runs only: a run that adopted a pretrained network (train.init_from) did not pay for pretraining
    seconds = [r.wall_seconds for r in results if r.wall_seconds and PhaseName.PRETRAIN in r.phases]
    if not seconds:
        return []
    return [
        "**Not run: the Transformer on SST-5** (the paper's Table VII network). One paper-regime Transformer run on "
        f"SST-5 took {min(seconds) / 3600:.1f}–{max(seconds) / 3600:.1f} h of wall time on one thread "
        f"({len(seconds)} whole runs, pretraining included, `experiments/results/paper-regime/sst-transformer-seed*.json`), "
        "so 3 seeds are about "
        f"{3 * np.mean(seconds) / 3600:.0f} thread-hours before the analysis. On this project's 2-core machine those hours went "
        "to the tuned-coefficients study and the translation study, which answer open accuracy claims. (Adding it means "
        "`--nets transformer` in `experiments/explain_regime.sh` and tables grouped by network as well as data set: "
        "this page groups runs by data set only.)",
        "",
    ]


def answer(dataset: str, runs: list[dict[str, Any]], rows: list[dict[str, Any]], regime: Path) -> list[str]:
    """The page's question for one data set, from the tests of the measures that answer it (``regime``: the study's
    result files, for how many seeds' net-only network is the baseline's)."""
    seeds = ", ".join(str(r["seed"]) for r in runs)
    lines = [f"**{DATASETS.get(dataset, dataset)}** ({len(runs)} of {PLANNED_SEEDS} seeds: {seeds}).", ""]
    lines += same_network_note(runs, regime)
    for half, question in (("focus", "more focused"), ("faithfulness", "more faithful")):
        for mode in DRGA:
            tested = [(r["measure"], r["tests"][mode]) for r in rows if r["measure"].answers == half and mode in r["tests"]]
            if not tested:
                continue
            words = [verdict(m, t).strip("*") for m, t in tested]
            better, worse = words.count("better"), words.count("worse")
            if all(w.startswith("untested") for w in words):
                summary = "cannot be tested yet (one seed)"
            elif better and not worse:
                summary = f"**yes** on {better} of {len(tested)} measures, no measure worse"
            elif worse and not better:
                summary = f"**no: worse** on {worse} of {len(tested)} measures, none better"
            elif better and worse:
                summary = f"**mixed**: better on {better}, worse on {worse} of {len(tested)} measures"
            else:
                summary = f"**no difference** on any of {len(tested)} measures after Holm"
            own = [t["question_holm"] < ALPHA and (t["mean"] * m.better > 0) for m, t in tested if not math.isnan(t["p"])]
            own_worse = [t["question_holm"] < ALPHA and (t["mean"] * m.better < 0) for m, t in tested if not math.isnan(t["p"])]
            if (sum(own), sum(own_worse)) != (better, worse):
                summary += (f" (within the {half} family alone: better on {sum(own)}, worse on {sum(own_worse)} "
                            f"of {len(tested)})")
            detail = "; ".join(
                f"{m.label} {t['mean']:+.{m.digits}f} (d = {_number(t['d'], 2)}, Holm p = {_number(t['holm'], 3)}; "
                f"{_number(t['question_holm'], 3)} among the {t['question_family']} {half} tests)" for m, t in tested
            )
            lines.append(f"- Is {ATTENTION_NAMES[mode].split(' α')[0]}'s attention {question} than the baseline's? {summary}. {detail}.")
    return lines + [""]


# ----------------------------------------------------------------------------- pictures


def _mean_band(curves: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    array = np.array(curves, dtype=np.float64)
    std = array.std(axis=0, ddof=1) if len(array) > 1 else np.zeros(array.shape[1])
    return array.mean(axis=0), std


@styled
def eraser_figure(dataset: str, runs: list[dict[str, Any]]):
    """Comprehensiveness and sufficiency over k: each attention's ranking (solid, band ± std over seeds) and
    its integrated-gradients reference (dotted); the random ranking of the baseline's network (grey)."""
    figure = new_figure(DOC_WIDTH, 4.2, layout="constrained")
    axes = figure.subplots(1, 2, sharex=True)
    x = np.array(BINS, dtype=np.float64)
    for axis, measure, title in ((axes[0], "comprehensiveness", "comprehensiveness ↑"), (axes[1], "sufficiency", "sufficiency ↓")):
        for attention in ATTENTIONS:
            have = [r["attentions"][attention]["faithfulness"] for r in runs if "faithfulness" in r["attentions"].get(attention, {})]
            if not have:
                continue
            for ranking, style, width in (("attention", "-", 2.0), ("integrated_gradients", ":", 1.4)):
                mean, std = _mean_band([[f[measure][ranking][str(k)] for k in BINS] for f in have])
                label = ATTENTION_NAMES[attention] + ("" if ranking == "attention" else ": integrated gradients")
                axis.plot(x, mean, style, color=COLORS[attention], lw=width, marker="o" if ranking == "attention" else None, label=label)
                if ranking == "attention" and len(have) > 1:
                    axis.fill_between(x, mean - std, mean + std, color=COLORS[attention], alpha=0.18, lw=0)
            if attention == "baseline":
                mean, _ = _mean_band([[f[measure]["random"][str(k)] for k in BINS] for f in have])
                axis.plot(x, mean, "--", color="#888", lw=1.4, label="random ranking (baseline's network)")
        axis.set_xscale("log")
        axis.set_xticks(x, [str(k) for k in BINS])
        axis.set_xlabel("rationale: top k % of the tokens")
        axis.set_title(title)
        axis.axhline(0, color="#bbb", lw=0.8)
    axes[0].set_ylabel("p(ŷ|x) − p(ŷ|x with/only the rationale)")
    legend_below(figure, ncol=2)
    figure.suptitle(f"{DATASETS.get(dataset, dataset)}: ERASER curves, mean over {len(runs)} seed(s) (band ± std)")
    return figure


@styled
def erasure_figure(dataset: str, runs: list[dict[str, Any]], edges: list[float]):
    """Mean ΔJS per fixed Δα bin (pooled over seeds, weighted by the sentences in each), per attention."""
    figure = new_figure(DOC_WIDTH, 4.4, layout="constrained")
    axis = figure.subplots()
    centres = (np.array(edges[:-1]) + np.array(edges[1:])) / 2
    for attention in ATTENTIONS:
        curves = [r["attentions"][attention]["erasure"]["curve"] for r in runs if "erasure" in r["attentions"].get(attention, {})]
        if not curves:
            continue
        counts = np.array([c["count"] for c in curves], dtype=np.float64)
        sums = np.array([[0.0 if m is None else m * n for m, n in zip(c["mean_delta_js"], c["count"])] for c in curves])
        total = counts.sum(axis=0)
        keep = total >= 5  # a bin of fewer sentences is noise
        mean = np.where(keep, sums.sum(axis=0) / np.maximum(total, 1), np.nan)
        axis.plot(centres[keep], mean[keep], "-o", color=COLORS[attention], lw=2, ms=4,
                  label=f"{ATTENTION_NAMES[attention]} ({int(total.sum())} sentences)")
    axis.axhline(0, color="#888", lw=0.8)
    for x, text in ((0.6, "paper: > 0 from ≈ 0.6 without DRGA"), (0.2, "paper: from ≈ 0.2 with DRGA")):
        axis.axvline(x, color="#bbb", lw=1, ls="--")
        axis.annotate(text, (x, 0), xycoords=("data", "axes fraction"), xytext=(3, 6), textcoords="offset points", fontsize=10,
                      color="#666")  # at the foot, where ΔJS < 0 is rare and the curves seldom go
    axis.set_yscale("symlog", linthresh=1e-3)
    axis.set_xlim(0, 1)  # Δα's whole range: the paper's thresholds and every data set on one scale
    axis.set_xlabel("Δα = α of the top token − α of a random token (bins of 0.05; ≥ 5 sentences)")
    axis.set_ylabel("mean ΔJS = JS(top removed) − JS(random removed)")
    legend_below(figure, ncol=1)
    figure.suptitle(f"{DATASETS.get(dataset, dataset)}: erasure test, {len(runs)} seed(s) pooled")
    return figure


@styled
def polarity_figure(dataset: str, runs: list[dict[str, Any]], label_names: list[str]):
    """Per attention, each frequent token's polarity against its mean relative attention (both averaged over seeds)."""
    figure = new_figure(DOC_WIDTH, 4.6, layout="constrained")
    axes = figure.subplots(1, 3, sharex=True, sharey=True)
    for axis, attention in zip(axes, ATTENTIONS):
        table: dict[str, list[tuple[float, float, float]]] = {}
        taus = []
        for run in runs:
            view = run["attentions"].get(attention, {}).get("polarity")
            if not view:
                continue
            taus.append(view["tau_abs_polarity_attention"])
            for token, rate, polarity, weight in zip(view["token"], view["rate"], view["polarity"], view["attention"]):
                table.setdefault(token, []).append((rate, polarity, weight))
        if not table:
            axis.set_visible(False)
            continue
        tokens = sorted(table)
        rate, polarity, weight = (np.array([np.mean([v[k] for v in table[t]]) for t in tokens]) for k in range(3))
        points = axis.scatter(np.maximum(weight, 1e-3), polarity, c=rate, cmap="coolwarm", vmin=0, vmax=1, s=18, edgecolors="#444",
                              linewidths=0.3)
        for i in dict.fromkeys(np.argsort(-np.abs(polarity))[:4].tolist() + np.argsort(-weight)[:3].tolist()):  # most extreme first
            axis.annotate(tokens[i], (max(weight[i], 1e-3), polarity[i]), fontsize=10, xytext=(3, 3), textcoords="offset points")
        axis.set_xscale("log")
        axis.axhline(0, color="#999", lw=0.8)
        axis.axvline(1, color="#999", lw=0.8, ls=":")
        tau = "-" if any(t is None for t in taus) else f"{np.mean(taus):+.2f}"
        axis.set_title(f"{ATTENTION_NAMES[attention]}\nτ(|polarity|, L·α) = {tau}", fontsize=11)
        axis.set_xlabel("mean relative attention L·α")
    # whole decades, labelled at the decades only (a narrow range would label its minor ticks on top of each other)
    low, high = axes[0].get_xlim()
    axes[0].set_xlim(10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high)))
    for axis in axes:
        axis.xaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel(f"polarity: log P({label_names[-1]}) − log P({label_names[0]})")
    colorbar = figure.colorbar(points, ax=list(axes), fraction=0.04, aspect=25)
    colorbar.set_label(f"training share of '{label_names[-1]}'")
    drop_overlapping_labels(figure, axes)
    figure.suptitle(f"{DATASETS.get(dataset, dataset)}: token polarity vs attention, 150 frequent tokens, mean of {len(runs)} seed(s)")
    return figure


@styled
def words_figure(dataset: str, runs: list[dict[str, Any]], top: int = 12):
    """The words whose attention DRGA with the agent raised or lowered most against the baseline (mean over seeds)."""
    changes: dict[str, list[float]] = {}
    for run in runs:
        words = run.get("modified_words")
        if words:
            for token, change in zip(words["token"], words["vs_baseline"]):
                changes.setdefault(token, []).append(change)
    common = {t: v for t, v in changes.items() if len(v) == len(runs)}
    order = sorted(common, key=lambda t: (-np.mean(common[t]), t))
    raised, lowered = order[:top], order[::-1][:top]
    figure = new_figure(DOC_WIDTH, 0.3 * top + 1.8, layout="constrained")
    axes = figure.subplots(1, 2, sharex=True)
    for axis, items, color, title in ((axes[0], raised, "#c44e52", "raised"), (axes[1], lowered, "#4c72b0", "lowered")):
        y = np.arange(len(items))[::-1]
        means = [np.mean(common[t]) for t in items]
        spread = [np.std(common[t], ddof=1) if len(runs) > 1 else 0.0 for t in items]
        axis.barh(y, means, xerr=spread, color=color, error_kw={"lw": 0.8})
        axis.set_yticks(y, items)
        axis.axvline(0, color="#666", lw=0.8)
        axis.set_title(f"{title} most by DRGA with the agent")
        axis.set_xlabel("mean α* − baseline α per occurrence")
    figure.suptitle(f"{DATASETS.get(dataset, dataset)}: most-modified words (≥ 10 test occurrences), mean ± std over {len(runs)} seed(s)")
    return figure


def figures(dataset: str, runs: list[dict[str, Any]], folder: Path, edges: list[float]) -> list[tuple[str, str]]:
    """Write the data set's pictures that its runs have data for; (file name, caption) of each."""
    made = []
    attentions = [r["attentions"] for r in runs]
    if any("faithfulness" in a.get(n, {}) for a in attentions for n in ATTENTIONS):
        made.append((f"{dataset}-eraser.png", eraser_figure(dataset, runs), "ERASER comprehensiveness and sufficiency over k"))
    if any("erasure" in a.get(n, {}) for a in attentions for n in ATTENTIONS):
        made.append((f"{dataset}-erasure.png", erasure_figure(dataset, runs, edges), "the erasure test, ΔJS against Δα"))
    if any("polarity" in a.get(n, {}) for a in attentions for n in ATTENTIONS):
        made.append((f"{dataset}-polarity.png", polarity_figure(dataset, runs, runs[0].get("label_names", ["c−", "c+"])),
                     "token polarity against attention"))
    if all(r.get("modified_words") for r in runs):
        made.append((f"{dataset}-words.png", words_figure(dataset, runs), "the most-modified words"))
    for name, figure, _ in made:
        save_png(figure, folder / name, reproducible=True)
    return [(name, caption) for name, _, caption in made]


# ----------------------------------------------------------------------------- the page

INTRO = """\
# Is DRGA's attention a better explanation? The paper's second claim across seeds

The paper claims that DRGA makes attention more interpretable: fewer highlighted tokens (Table VIII), weight
moving from function words to sentiment words (Table VII), and attention whose removal changes the decision
earlier (Fig. 5). This page measures those claims, and the faithfulness measures the field uses today, on
LSTM+SA trained in the paper's regime (`experiments/explain_regime.sh`: GloVe, early stopping, the tuned reward
coefficients; 5 seeds per data set), comparing three attentions **on the same test sentences**:

- **equal-budget baseline α**: the network trained alone for as many epochs as DRGA's agent and co-training
  phases (`baseline_best.pt`), its own attention;
- **DRGA net-only α**: the co-trained network without the agent (`cotrain_best_net-only.pt`), its own attention;
- **DRGA with-agent α\\***: the co-trained network with the agent's revision (`cotrain_best.pt`, the agent's
  deterministic action), the model DRGA reports.

Every number and picture below is rebuilt from the committed per-run JSON
(`experiments/results/explain-analysis/`) by

```bash
OMP_NUM_THREADS=1 python experiments/explain_study.py analyze --runs runs/explain --out experiments/results/explain-analysis
python experiments/explain_study.py tables
```

(`analyze` skips runs whose JSON exists; `tables` writes this page and `docs/explainability/*.png`, the same
bytes on every rerun). `drga analyze CHECKPOINT --only faithfulness` gives the ERASER measures for one's own
checkpoint in both modes ([ANALYSIS.md](ANALYSIS.md), section 9).
"""

METHOD = """\
## How it is measured

Per run (`experiments/explain_study.py analyze`; the functions are `drga.analysis`'s), on the whole test split
unless said otherwise:

- **Highlighted tokens** (`highlighted.mean_highlighted`): N of eq. 5, the tokens that hold δ = 0.85 of the
  attention (the run's δ), and N/L. The paper's Table VIII reports the drop of N with DRGA.
- **Function and sentiment words** (`lexicon`): the attention mass on function words (the Snowball English
  stop-word list, snowballstem.org, committed in `drga/analysis/lexicon.py`, with the Treebank halves of its
  contractions such as n't and 's) and on sentiment words (the single-word entries of the VADER lexicon, Hutto &
  Gilbert 2014, shipped in the `vaderSentiment` package, so it works offline; `drga/analysis/polarity.py` uses no
  lexicon: it derives polarity from the network). The share of tokens in each class (the mass a uniform attention
  would give) is shown for scale. Table VII shows the shift on one sentence; here it is a number per run.
- **Erasure test** (`explainability`, after Serrano & Smith 2019, the paper's Fig. 5): remove the most attended
  token and a random other one (one seeded draw per sentence, the same for the three attentions; zero its weight,
  renormalise), ΔJS = JS(p, q_top) − JS(p, q_random); the share
  with ΔJS > 0, the mean ΔJS, the decision flips (the random token's flips are the control) and the Δα above
  which the binned mean ΔJS stays positive (10 equal-count bins per run).
- **ERASER** (`faithfulness`, DeYoung et al. 2020): comprehensiveness and sufficiency of the top-k % tokens,
  k = 1, 5, 10, 20, 50, and their mean (AOPC), for the attention ranking and two references on the same sentences
  (a random ranking, whose draws per sentence each data set's ERASER table states; integrated gradients from
  captum, 20 Gauss–Legendre steps: on 27 MR test sentences of seed 0
  their token ranking agreed with 200 steps' at mean Kendall τ 0.988 and the IG ranking's comprehensiveness AOPC
  was 0.329 against 0.330, by `python experiments/explain_ig_steps.py runs/explain/mr-lstm-sa-seed0/cotrain_best.pt`),
  removal by deletion; Kendall τ
  of attention with integrated gradients and with leave-one-out (Jain & Wallace 2019). On a seeded sample of 200
  test sentences per run (the same sentences for the three attentions and every seed).
- **Token polarity** (`polarity`, after Sun & Lu 2020): for the 150 most frequent training tokens (≤ 20 test
  occurrences each), the network's log-odds when all attention is on the token against its mean relative
  attention L·α; Kendall τ of |polarity| with L·α (do strongly polar tokens get the attention?). For SUBJ the two
  classes are objective and subjective, so "polarity" is subjectivity evidence.
- **Negation and intensification** (`negation`, MR and SST-5 only): sentences where a negator (VADER's list, or a
  token with n't) or an intensifier (VADER's booster words that raise intensity) stands at most 3 tokens before
  a sentiment word; the mass on those cues, on the words they modify, and the accuracy on those sentences.
  SUBJ is left out: negation flips sentiment, not subjectivity, so the view has no direction to test there.

**Statistics.** Each cell is mean ± std over seeds (the count in brackets). DRGA (each mode) is compared with
the equal-budget baseline by the paired t-test over seeds (`paired_comparison`, experiments/study_stats.py), with
Cohen's d_z (mean paired difference over its std) as the effect size and Holm's correction over every tested
measure and both modes of the data set (`holm_adjust`; side measures included, see *Holm's families* above), and
beside each focus and faithfulness p its Holm p within its own question's family; references, controls and token
shares are shown but not tested. A verdict says **better** or **worse** (as an explanation: fewer highlighted tokens, more comprehensive,
more sufficient, ...) where Holm's p < 0.05, *no difference* otherwise; descriptive measures say higher or lower.
With one seed nothing is tested. The *paper* column quotes `../shared/paper/tables.md`: Table VIII's drop of N
with DRGA (LSTM+SA, per data set), Table VII's direction on its one SST sentence (a Transformer), and Fig. 5's
Δα from which ΔJS turns positive (without → with DRGA); the paper reports no faithfulness, polarity or negation
measure.

**The answer** below takes the tested measures that say whether an attention is *focused* (highlighted tokens,
N/L, mass on function and on sentiment words) or *faithful* (erasure: ΔJS > 0, mean ΔJS, flips of the top
token; ERASER: comprehensiveness, sufficiency, τ with integrated gradients and with leave-one-out) and counts
those where DRGA is better or worse than the baseline after Holm's correction over the data set's whole family
(and, where that differs, within the question's own family).
"""


def write_page(results: Path, page: Path, folder: Path) -> str:
    runs = load(results)
    edges = None
    lines = [INTRO]
    planned = [d for d in DATASETS]
    cells = [f"{DATASETS.get(d, d)} {len(runs.get(d, []))}/{PLANNED_SEEDS}" for d in dict.fromkeys(planned + list(runs))]
    partial = any(len(runs.get(d, [])) < PLANNED_SEEDS for d in planned)
    if partial:
        lines += [
            f"> **Partial.** Seeds analysed per data set: {', '.join(cells)}. Cells with fewer than {PLANNED_SEEDS} seeds are "
            "provisional; a data set with one seed is not tested. The page is rebuilt by the command above when the "
            "remaining runs are in.",
            "",
        ]
    lines += ["## The answer", ""]
    computed = {dataset: comparisons(r) for dataset, r in runs.items()}
    lines += families_note(computed)
    for dataset, dataset_runs in runs.items():
        lines += answer(dataset, dataset_runs, computed[dataset], results.parent / "explain-regime")
    lines += transformer_note(results.parent / "paper-regime")
    lines += [METHOD]
    for dataset, dataset_runs in runs.items():
        edges = edges or _edges(dataset_runs)
        name = DATASETS.get(dataset, dataset)
        costs = [r["cost"]["wall_seconds"] for r in dataset_runs if "cost" in r]
        cost = f" Analysis cost per run: {np.mean(costs) / 60:.1f} min wall on one thread (mean)." if costs else ""
        lines += [
            f"## {name}",
            "",
            f"{len(dataset_runs)} seed(s): {', '.join(str(r['seed']) for r in dataset_runs)}; "
            f"{dataset_runs[0].get('sentences', '?')} test sentences, {dataset_runs[0].get('faithfulness_sentences', '?')} of them "
            f"for ERASER.{cost}",
            "",
        ]
        lines += code_note(dataset, dataset_runs)
        for group in GROUPS:
            table = group_table(dataset, computed[dataset], group, draws_text(dataset_runs))
            random_here = any(r["measure"].group == group and r["measure"].key in RANDOM_MEASURES for r in computed[dataset])
            lines += table + (random_draws_note(dataset_runs) if random_here else [])
        lines += _reduction_note(dataset, dataset_runs)
        for file, caption in figures(dataset, dataset_runs, folder, edges or [0.0, 1.0]):
            relative = Path(os.path.relpath(folder / file, page.parent)).as_posix()
            lines += [f"![{name}: {caption}]({relative})", ""]
    lines += redraw_section(results.parent)
    text = "\n".join(lines).rstrip() + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return text


def _edges(runs: list[dict[str, Any]]) -> list[float] | None:
    for run in runs:
        curve = run["attentions"].get("baseline", {}).get("erasure", {}).get("curve")
        if curve:
            count = len(curve["count"])
            return [round(k / count, 4) for k in range(count + 1)]
    return None


def _reduction_note(dataset: str, runs: list[dict[str, Any]]) -> list[str]:
    """Table VIII's figure: the change of mean N against the baseline, per mode, beside the paper's."""
    measure = MEASURES[0]
    base = values(runs, measure, "baseline")
    parts = []
    for mode in DRGA:
        mine = values(runs, measure, mode)
        seeds = sorted(set(base) & set(mine))
        if seeds:
            changes = [100 * (mine[s] / base[s] - 1) for s in seeds]
            parts.append(f"{ATTENTION_NAMES[mode]} {mean_std_text(changes, 1)} %")
    if not parts:
        return []
    paper = f" (the paper: {PAPER_REDUCTION[dataset]})" if dataset in PAPER_REDUCTION else ""
    return [f"Change of mean N against the baseline, per seed, mean ± std: {'; '.join(parts)}{paper}.", ""]
