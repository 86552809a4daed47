"""``drga analyze`` and ``drga compare``: the analyses from the command line.

Registered through ``drga.cli.EXTENSIONS``; everything heavy is imported inside the handlers
so that ``drga --help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

#: The analyses ``drga analyze`` runs, in order (``--only`` picks some).
ANALYSES = ("maps", "transitions", "highlighted", "modified-words", "explainability", "saliency", "polarity", "faithfulness", "cue-mass")
#: ``drga analyze`` options read by some analyses only: option → those analyses (given while ``--only`` leaves all of them out,
#: the option is refused). Their defaults are :data:`DEFAULTS`; the parser's are None, so that a given option is told apart.
ANALYSIS_OPTIONS: dict[str, tuple[str, ...]] = {
    "examples": ("maps",), "num_examples": ("maps",), "seed": ("maps", "explainability", "saliency", "faithfulness"),
    "top_k": ("modified-words",), "min_count": ("modified-words",), "saliency_examples": ("saliency",),
    "faithfulness_examples": ("faithfulness",), "ig_steps": ("faithfulness",), "reference": ("highlighted",),
    "cue_words": ("cue-mass",),
    "site": ("maps", "highlighted", "modified-words", "explainability", "saliency", "faithfulness"),
}
#: The values of the options left out.
DEFAULTS: dict[str, Any] = {
    "split": "test", "num_examples": 8, "seed": 0, "top_k": 15, "min_count": 10, "saliency_examples": 300,
    "faithfulness_examples": 200, "ig_steps": 50, "device": "cpu", "allow_other_dataset": False, "no_progress": False,
}
#: The options of ``drga analyze`` that only some runs read → what they apply to.
_ANALYZE_SCOPED: dict[str, str] = {
    "tsv": "the tsv data set", "allow_other_dataset": "--dataset or --tsv (a data set other than the checkpoint's)",
    "data_dir": "finding a data set by name (not a --tsv file)",
    **{name: "the analyses " + ", ".join(names) for name, names in ANALYSIS_OPTIONS.items()},
}
#: Where each option of ``drga analyze`` and ``drga compare`` is read (see ``drga.cli.OPTION_SCOPES``).
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "analyze": {
        **{name: None for name in ("checkpoint", "dataset", "device", "out", "split", "only", "no_progress")},
        **_ANALYZE_SCOPED,
    },
    "compare": {name: None for name in ("runs_a", "runs_b", "model_a", "model_b", "metric", "split", "bootstrap", "seed", "out")},
}


def _indices(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated example positions like 3,17,42, got {text!r}") from None


def _analyses(text: str) -> list[str]:
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [n for n in names if n not in ANALYSES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown analysis {', '.join(unknown)}; choose from {', '.join(ANALYSES)}")
    return names


class _CueWords(argparse.Action):
    """--cue-words: the words, parsed (drga.analysis.cue_mass.cue_words); a value naming none is refused here."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        from drga.analysis.cue_mass import cue_words

        try:
            setattr(namespace, self.dest, cue_words(str(values)))
        except ValueError as error:
            raise argparse.ArgumentError(self, str(error)) from None


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``analyze`` and ``compare`` subcommands; return their handlers."""
    analyze = commands.add_parser(
        "analyze",
        help="what DRGA did to the attention: maps, transitions, highlighted tokens, modified words, explainability, saliency, "
        "polarity, faithfulness",
        description="Run the paper's attention analyses on a trained checkpoint (with an agent) and write "
        "pictures, tables and summary.md to --out. A checkpoint without an agent (baseline_best.pt) takes "
        "--only faithfulness: its attention measured in net-only mode.",
    )
    analyze.add_argument("checkpoint", help="a run's cotrain_best.pt (or agent_best.pt; baseline_best.pt with --only faithfulness)")
    analyze.add_argument("--dataset", help="the data set the run was trained on (default: the checkpoint's)")
    analyze.add_argument("--data-dir", help="folder of the data set or a data root")
    analyze.add_argument("--tsv", help="for --dataset tsv: the label<TAB>text file or folder")
    analyze.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto (default cpu)")
    analyze.add_argument("--out", required=True, help="folder for the outputs (created)")
    analyze.add_argument("--split", choices=["dev", "test"], default="test", help="split to analyse (default test)")
    analyze.add_argument("--only", type=_analyses, help=f"comma-separated subset of: {', '.join(ANALYSES)}")
    analyze.add_argument("--examples", type=_indices, help="attention maps: these split positions (e.g. 3,17,42) instead of random ones")
    analyze.add_argument("--num-examples", type=int, help="attention maps: random sentences to show (default 8)")
    analyze.add_argument("--seed", type=int, help="seed of every random choice of the analyses (default 0)")
    analyze.add_argument("--top-k", type=int, help="modified words: items per direction (default 15)")
    analyze.add_argument("--min-count", type=int, help="modified words: occurrences a word needs (default 10)")
    analyze.add_argument("--saliency-examples", type=int, help="saliency: sentences (random, default 300)")
    analyze.add_argument("--faithfulness-examples", type=int, help="faithfulness: sentences (random, default 200)")
    analyze.add_argument("--ig-steps", type=int, help="faithfulness: integrated-gradients steps (default 50)")
    analyze.add_argument("--site", help="restrict the token view to one attention site by name (default: every site spanning the sentence)")
    analyze.add_argument(
        "--reference", help="highlighted tokens: also count them for this checkpoint's attention (e.g. the run's baseline_best.pt)"
    )
    analyze.add_argument(
        "--cue-words", type=str, action=_CueWords, metavar="WORDS",
        help="cue mass: the attention mass on these words (comma-separated, or @FILE with one per line), before and after the agent",
    )
    analyze.add_argument("--allow-other-dataset", action="store_true", help="analyse on a data set other than the one trained on")
    analyze.add_argument("--no-progress", action="store_true", help="no progress bars")

    compare = commands.add_parser(
        "compare",
        help="significance of a difference between two sets of runs (several seeds): mean ± std, paired t-test, bootstrap CI",
        description="Read results.json of several seeds' runs and compare test scores, paired by seed. RUNS_A and "
        "RUNS_B are each a run folder, a folder of run folders, or a glob (quote it). With RUNS_B omitted the "
        "baseline and DRGA rows of the same runs are compared.",
    )
    compare.add_argument("runs_a", metavar="RUNS_A")
    compare.add_argument("runs_b", metavar="RUNS_B", nargs="?")
    compare.add_argument("--a", dest="model_a", metavar="ROW:MODE", help="model of A, e.g. 'baseline (equal budget):net-only'")
    compare.add_argument("--b", dest="model_b", metavar="ROW:MODE", help="model of B, e.g. 'DRGA (co-trained):with-agent'")
    compare.add_argument("--metric", default="accuracy", help="test metric to compare (default accuracy)")
    compare.add_argument("--split", choices=["test", "dev"], default="test")
    compare.add_argument("--bootstrap", type=int, default=10000, help="bootstrap resamples (default 10000)")
    compare.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    compare.add_argument("--out", help="also write the markdown table to this file")
    return {"analyze": cmd_analyze, "compare": cmd_compare}


def cmd_analyze(args: argparse.Namespace) -> int:
    """Handler of ``drga analyze``."""
    import sys

    from drga.analysis.extra import require_extra
    from drga.analysis.report import AnalyzeOptions, run_analyses

    refuse_unread_options(args)
    require_extra("drga analyze")
    command = _command_line(args)
    for name, value in DEFAULTS.items():  # the options left out
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    options = AnalyzeOptions(
        out=args.out,
        split=args.split,
        only=args.only or list(ANALYSES),
        examples=args.examples,
        num_examples=args.num_examples,
        seed=args.seed,
        top_k=args.top_k,
        min_count=args.min_count,
        saliency_examples=args.saliency_examples,
        faithfulness_examples=args.faithfulness_examples,
        ig_steps=args.ig_steps,
        site=args.site,
        reference=args.reference,
        cue_words=args.cue_words,
        progress=not args.no_progress and sys.stderr.isatty(),
        command=command,
    )
    run_analyses(
        args.checkpoint,
        options,
        dataset=args.dataset,
        data_dir=args.data_dir,
        tsv=args.tsv,
        device=args.device,
        allow_other_dataset=args.allow_other_dataset,
    )
    return 0


def refuse_unread_options(args: argparse.Namespace) -> None:
    """Refuse an option that none of the analyses run (``--only``) reads, ``--num-examples`` beside ``--examples``, and
    ``--allow-other-dataset`` without another data set; ``--tsv`` implies ``--dataset tsv``."""
    from drga.config import ConfigError, refuse_option, tsv_implies_dataset

    chosen = args.only or list(ANALYSES)
    for name, analyses in ANALYSIS_OPTIONS.items():
        if getattr(args, name, None) is not None and not set(analyses) & set(chosen):
            raise refuse_option(name, _ANALYZE_SCOPED[name],
                                f"--only {','.join(chosen)} runs none of them; add one to --only, or drop the option")
    if args.only and "cue-mass" in args.only and args.cue_words is None:
        raise ConfigError("--only cue-mass needs --cue-words: the words whose attention mass it measures (e.g. --cue-words not,never)")
    if args.examples is not None and args.num_examples is not None:
        raise refuse_option("num_examples", "random sentences, and --examples chooses them", "drop one of the two")
    if args.allow_other_dataset and args.dataset is None and args.tsv is None:
        raise refuse_option("allow_other_dataset", _ANALYZE_SCOPED["allow_other_dataset"],
                            "without them the analyses read the checkpoint's own data set; drop it")
    if args.data_dir is not None and args.tsv is not None:
        raise refuse_option("data_dir", _ANALYZE_SCOPED["data_dir"], f"--tsv names the file ({args.tsv}); drop --data-dir")
    tsv_implies_dataset(args)


def _command_line(args: argparse.Namespace) -> str:
    """The analyze command as typed (flags at their defaults left out), for summary.md."""
    import shlex

    defaults = DEFAULTS
    parts = ["drga", "analyze", args.checkpoint]
    for name in (
        "dataset",
        "data_dir",
        "tsv",
        "device",
        "out",
        "split",
        "only",
        "examples",
        "num_examples",
        "seed",
        "top_k",
        "min_count",
        "saliency_examples",
        "faithfulness_examples",
        "ig_steps",
        "site",
        "reference",
        "cue_words",
        "allow_other_dataset",
    ):
        value = getattr(args, name)
        if value is None or value is False or defaults.get(name) == value:
            continue
        flag = "--" + name.replace("_", "-")
        parts += [flag] if value is True else [flag, ",".join(map(str, value)) if isinstance(value, list) else str(value)]
    return " ".join(shlex.quote(p) for p in parts)


def cmd_compare(args: argparse.Namespace) -> int:
    """Handler of ``drga compare``."""
    from drga.analysis.extra import require_extra
    from drga.analysis.significance import compare_runs
    from drga.files import write_text_atomic

    require_extra("drga compare", ("scipy",))
    table = compare_runs(
        args.runs_a,
        args.runs_b,
        args.model_a,
        args.model_b,
        metric=args.metric,
        split=args.split,
        resamples=args.bootstrap,
        seed=args.seed,
    )
    print(table)
    if args.out:
        write_text_atomic(args.out, table + "\n")
    return 0
