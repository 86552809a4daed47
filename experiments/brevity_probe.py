"""Why translations come out short: the length terms of translation checkpoints, per mode and search.

For every checkpoint given, on a split (dev by default, every sentence), in each mode it has:

- teacher-forced: perplexity and P(stop early), the network's own chance of ending (``</s>``)
  before the reference does (:func:`drga.tasks.translation.evaluation.early_stop_probability`);
- greedy decoding, and beam search at each ``--length-penalty`` α: BLEU, its brevity penalty, the
  hypothesis and reference tokens sacreBLEU counts, and per sentence the shares of translations under
  0.8 and over 1.25 times their reference's length (13a tokens) and their mean length ratio.

A network that learned to stop short shows it under teacher forcing and in greedy decoding alike;
a search that stops short leaves P(stop early) and greedy lengths alone and shortens beam output,
more so at a small α. ``--history`` prints instead, from a finished run's results.json, the
same dev terms at every epoch the run scored (its greedy dev BLEU's brevity penalty and length):
how much the length moves from one epoch to the next when nothing but training goes on.
docs/results/nmt.md ("Brevity") runs both on the pilot's reproduction:

    python experiments/brevity_probe.py --history runs/brevity/pilot-repro-seed0/results.json
    python experiments/brevity_probe.py runs/brevity/pilot-repro-seed0/{pretrain_best,baseline_best,agent_best,cotrain_best}.pt \\
        --split test --out experiments/results/brevity/pilot-repro-test.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from drga.data.parallel import ParallelBatchIterator
from drga.errors import UserError
from drga.names import MODES, Mode
from drga.records import EpochRecord
from drga.sweep.results import portable_paths
from drga.tasks.translation.commands import evaluation_pairs
from drga.tasks.translation.evaluation import decode_pairs, decode_settings, teacher_forced_scores
from drga.tasks.translation.metrics import corpus_bleu
from drga.tasks.translation.trained import load_translation_model

SHORT = 0.8  #: a translation under this share of its reference's tokens counts as short
LONG = 1.25  #: and over this share as long (repeating itself, as a free-running decoder does)


def length_ratios(hypotheses: list[str], references: list[str]) -> list[float]:
    """Per sentence, hypothesis tokens over reference tokens (sacreBLEU's 13a tokenization; 0 for an empty reference)."""
    tokens = Tokenizer13a()
    ratios = []
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        ref = len(tokens(reference).split())
        ratios.append(len(tokens(hypothesis).split()) / ref if ref else 0.0)
    return ratios


def search_row(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    bleu = corpus_bleu(hypotheses, references)
    ratios = length_ratios(hypotheses, references)
    return {
        "bleu": bleu.score,
        "brevity_penalty": bleu.brevity_penalty,
        "hypothesis_length": bleu.hypothesis_length,
        "reference_length": bleu.reference_length,
        "short_share": sum(r < SHORT for r in ratios) / len(ratios),
        "long_share": sum(r > LONG for r in ratios) / len(ratios),
        "mean_length_ratio": sum(ratios) / len(ratios),
    }


def probe(path: str, split: str, beam: int, length_penalties: list[float], device: str, limit: int = 0) -> dict:
    model = load_translation_model(path, device=device)
    pairs, references, description = evaluation_pairs(model, split)
    if limit:
        pairs, references, description = pairs[:limit], references[:limit], f"{description}; the first {limit}"
    size = model.config.experiment.data.batch_size * 2
    batches = ParallelBatchIterator(pairs, size, shuffle=False)
    beta = model.strength().detach()
    result = {"checkpoint": path, "phase": model.phase, "data": description, "beta": float(beta), "modes": {}}
    for mode in MODES:
        if mode == Mode.WITH_AGENT and not model.has_agent:
            continue
        forced = teacher_forced_scores(model.network, batches, model.config, mode, model.policy, beta, model.device)
        row = {"perplexity": forced["perplexity"], "early_stop_probability": forced["early_stop_probability"],
               "highlighted_fraction": forced["highlighted_fraction"], "searches": {}}
        searches = [("greedy", 1, None)] + [(f"beam{beam} α={alpha:g}", beam, alpha) for alpha in length_penalties]
        for name, beam_size, alpha in searches:
            settings = decode_settings(model.config, beam_size, alpha)
            hypotheses = decode_pairs(model.network, pairs, model.target_tokenizer, settings, mode, model.policy, beta, model.device, size)
            row["searches"][name] = search_row(hypotheses, references)
            print(f"  {Path(path).name} {mode} {name}: BLEU {row['searches'][name]['bleu']:.2f} "
                  f"BP {row['searches'][name]['brevity_penalty']:.3f}", file=sys.stderr, flush=True)
        result["modes"][mode] = row
    return result


def table(results: list[dict]) -> str:
    lines = [
        "| checkpoint | mode | P(stop early) | search | BLEU | brevity penalty | hypothesis / reference tokens "
        f"| short (< {SHORT:g}) | long (> {LONG:g}) | mean length ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for mode, row in result["modes"].items():
            for name, s in row["searches"].items():
                lines.append(
                    f"| {result['phase']} | {mode} | {row['early_stop_probability']:.4f} | {name} | {s['bleu']:.2f} | "
                    f"{s['brevity_penalty']:.3f} | {s['hypothesis_length']:,} / {s['reference_length']:,} | "
                    f"{s['short_share']:.3f} | {s['long_share']:.3f} | {s['mean_length_ratio']:.3f} |"
                )
    return "\n".join(lines)


def history_table(results_file: Path) -> str:
    """Every scored epoch's greedy dev length terms, per mode, from a run's results.json."""
    history = json.loads(results_file.read_text(encoding="utf-8")).get("history")
    if history is None:
        raise UserError(f"{results_file} has no history: give a finished run's results.json")
    lines = [
        f"{results_file}:",
        "| phase | epoch | mode | dev BLEU | brevity penalty | hypothesis / reference tokens | P(stop early) |",
        "|---|---|---|---|---|---|---|",
    ]
    for record in map(EpochRecord.from_dict, history):
        for mode in MODES:
            dev = record.dev.get(mode, {})
            if dev.get("hypothesis_length") is None:
                continue
            hypothesis, reference = dev["hypothesis_length"], dev["reference_length"]
            lines.append(
                f"| {record.phase} | {record.epoch} | {mode} | {dev['bleu']:.2f} | {dev['brevity_penalty']:.3f} | "
                f"{hypothesis:,.0f} / {reference:,.0f} ({hypothesis / reference:.3f}) | {dev['early_stop_probability']:.4f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="*", help="translation checkpoints (a run's *_best.pt)")
    parser.add_argument("--history", type=Path, nargs="+", default=[], help="finished runs' results.json: their dev length terms per epoch")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--length-penalty", type=float, nargs="+", default=[0.6, 1.0], help="beam search's α values")
    parser.add_argument("--limit", type=int, default=0, help="only the split's first N sentences (0: all)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, help="write the numbers here as JSON")
    args = parser.parse_args(argv)
    if args.beam < 2:
        parser.error("--beam must be at least 2 (greedy is always probed)")
    if args.limit < 0:
        parser.error("--limit must be 0 (all) or positive")
    if not args.checkpoints and not args.history:
        parser.error("give checkpoints to probe, or --history with runs' results.json")
    try:
        for results_file in args.history:
            print(history_table(results_file) + "\n")
        results = [probe(path, args.split, args.beam, args.length_penalty, args.device, args.limit) for path in args.checkpoints]
    except (UserError, OSError) as error:  # a missing file, a classification checkpoint, a file with no history
        print(f"brevity_probe: {error}", file=sys.stderr)
        return 2
    if not results:
        return 0
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        # the checkpoints' paths from their run root: no machine's absolute path in a committed file
        numbers = portable_paths({"split": args.split, "short_below": SHORT, "long_above": LONG, "results": results})
        args.out.write_text(json.dumps(numbers, indent=1) + "\n", encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
