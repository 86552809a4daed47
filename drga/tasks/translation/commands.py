"""What ``drga translate`` and ``drga evaluate`` do with a translation checkpoint: the commands
translation registers (``drga/tasks/translation/task.py`` · ``TranslationTask.commands_module``); drga/cli.py parses the command line and
dispatches here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drga.config import ConfigError, refuse_option
from drga.files import write_text_atomic, writing_stdout
from drga.names import MODES, Mode, checked_mode, counted

if TYPE_CHECKING:
    from torch import Tensor

    from drga.data.parallel import EncodedPair, ParallelBatchIterator
    from drga.tasks.translation.config import NMTConfig
    from drga.tasks.translation.trained import TranslationModel


#: Where each option of ``drga translate`` is read (see ``drga.cli.OPTION_SCOPES``).
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "translate": {**{name: None for name in ("checkpoint", "input", "output", "mode", "beam", "batch_size", "reference", "device",
                                             "no_progress")}, "length_penalty": "beam search (a beam above 1)"},
}


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """``drga translate``, added to argparse's subparsers object; its handler by name."""
    translate = commands.add_parser(
        "translate",
        help="translate text (one sentence per line, stdin or --input) with a trained translation checkpoint",
        description="Translate one sentence per line. Output: one detokenized translation per line.",
    )
    translate.add_argument("checkpoint", help="a translation checkpoint, e.g. runs/multi30k-en-de-seq2seq-luong-seed0/cotrain_best.pt")
    translate.add_argument("--input", help="source text file, plain or gzip (default: stdin)")
    translate.add_argument("--output", help="write translations here (default: stdout)")
    translate.add_argument("--mode", choices=list(map(str, MODES)), help="default: with-agent when the checkpoint has a trained agent")
    translate.add_argument("--beam", type=int, help="beam size; 1 = greedy (default: the run's nmt.beam_size)")
    translate.add_argument("--length-penalty", type=float, help="beam search's α (default: the run's nmt.length_penalty)")
    translate.add_argument("--batch-size", type=int, default=64)
    translate.add_argument(
        "--reference", help="reference translations (plain or gzip): print sacrebleu BLEU and chrF with signatures to stderr"
    )
    translate.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    translate.add_argument("--no-progress", action="store_true", help="no progress bar")
    return {"translate": translate_lines}


def _read_lines(path: str | None) -> list[str]:
    from drga.data.parallel import open_text

    if path is None:
        return [line.rstrip("\n").strip() for line in sys.stdin]
    with open_text(path) as handle:
        return [line.rstrip("\n").strip() for line in handle]


def translate_lines(args: argparse.Namespace) -> int:
    """``drga translate``: one translation per input line; optional scoring against references."""
    from drga.tasks.translation.metrics import score_translations
    from drga.tasks.translation.trained import load_translation_model

    if args.length_penalty is not None and args.beam == 1:  # refused before the checkpoint is read
        raise refuse_option("length_penalty", "beam search (a beam above 1), and greedy decoding ranks no hypotheses",
                            "give --beam N with N > 1, or drop --length-penalty")
    model = load_translation_model(args.checkpoint, device=args.device)
    mode = checked_mode(args.mode, model.has_agent, f"{args.checkpoint} (phase '{model.phase}')", "use --mode net-only")
    beam = args.beam if args.beam is not None else model.config.nmt.beam_size
    if beam < 1:
        raise ConfigError(f"--beam must be at least 1, got {beam}")
    if args.length_penalty is not None and beam == 1:
        raise refuse_option("length_penalty", "beam search (a beam above 1), and greedy decoding ranks no hypotheses",
                            "give --beam N with N > 1, or drop --length-penalty")
    sources = _read_lines(args.input)
    progress = not args.no_progress and sys.stderr.isatty()
    translations, cut = model.translate(sources, mode, beam, args.length_penalty, args.batch_size, progress)
    if cut:
        print(f"drga translate: {cut} source lines longer than {model.config.experiment.data.max_length} pieces were cut", file=sys.stderr)
    text = "\n".join(translations) + ("\n" if translations else "")
    if args.output:
        write_text_atomic(args.output, text)
    else:
        with writing_stdout():
            sys.stdout.write(text)
    search = "greedy" if beam == 1 else f"beam {beam}"
    print(f"drga translate: {counted(len(sources), 'line')}, {model.network.net_name} ({model.phase}), {mode}, {search}", file=sys.stderr)
    if args.reference:
        references = _read_lines(args.reference)
        scores = score_translations(translations, references)
        print(f"BLEU {scores.bleu:.2f}  {scores.bleu_signature}", file=sys.stderr)
        print(f"chrF {scores.chrf:.2f}  {scores.chrf_signature}", file=sys.stderr)
    return 0


def evaluate_translation_checkpoint(args: argparse.Namespace, payload: dict | None = None) -> int:
    """``drga evaluate`` on a translation checkpoint: perplexity, BLEU and chrF of a split in both modes.

    Greedy decoding, and beam search of ``--beam`` (default: the run's ``nmt.beam_size`` when
    ``nmt.final_beam``) — what the translation trainer's final report computes. The data set
    is the run's unless ``--dataset`` / ``--data-dir`` say otherwise; the checkpoint's subword
    models encode it.
    """
    from drga.data.parallel import ParallelBatchIterator

    if getattr(args, "tsv", None) is not None:
        raise refuse_option("tsv", "the tsv data set of a classification checkpoint",
                            "a translation checkpoint reads parallel text (--dataset, --data-dir); drop --tsv")
    model = _model_on_requested_data(args, payload)
    data = model.config.experiment.data
    beam = _evaluation_beam(args, model.config.nmt)
    pairs, references, description = evaluation_pairs(model, args.split or "test")  # --split's default
    batches = ParallelBatchIterator(pairs, data.batch_size * 2, shuffle=False)
    progress = sys.stderr.isatty()
    print(f"{args.checkpoint}: {model.network.net_name} from phase '{model.phase}', {description}")
    searches = [1] + ([beam] if beam > 1 else [])
    header = "".join(f"  {'BLEU ' + name:>11s}  {'chrF ' + name:>11s}" for name in ("greedy" if b == 1 else f"beam{b}" for b in searches))
    print(f"  {'mode':10s}  {'ppl':>7s}{header}  {'reward':>8s}  {'N/L':>5s}")
    signature = ""
    beta = model.strength().detach()
    for mode in MODES:
        if mode == Mode.WITH_AGENT and not model.has_agent:
            print(f"  {mode:10s}  -  (this checkpoint has no trained agent)")
            continue
        row, signature = _mode_scores(model, batches, mode, beta, searches, pairs, references, progress)
        print(f"  {mode:10s}  {row}")
    print(f"sacrebleu: {signature}")
    return 0


def _model_on_requested_data(args: argparse.Namespace, payload: dict | None) -> TranslationModel:
    """The checkpoint's translation model, its data set replaced by ``--dataset`` / ``--data-dir`` where given."""
    from drga.tasks.translation.trained import load_translation_model

    model = load_translation_model(args.checkpoint, device=args.device or "cpu", payload=payload)
    data = model.config.experiment.data
    for flag, key in (("dataset", "dataset"), ("data_dir", "data_dir")):
        if getattr(args, flag, None) is not None:
            setattr(data, key, getattr(args, flag))
    return model


def _evaluation_beam(args: argparse.Namespace, nmt: NMTConfig) -> int:
    """``--beam``, else the run's final-report beam (``nmt.beam_size`` when ``nmt.final_beam``, else 1: greedy only)."""
    beam = args.beam if getattr(args, "beam", None) is not None else (nmt.beam_size if nmt.final_beam else 1)
    if beam < 1:
        raise ConfigError(f"--beam must be at least 1, got {beam}")
    return beam


def evaluation_pairs(model: TranslationModel, split: str) -> tuple[list[EncodedPair], list[str], str]:
    """The split's pairs encoded by the checkpoint's subword models (none dropped for length), their
    reference translations and a line describing them."""
    from drga.data.parallel import encode_pairs
    from drga.tasks.translation.data import load_translation_splits

    data = model.config.experiment.data
    splits = load_translation_splits(model.config)
    raw = splits.test if split == "test" else splits.dev
    pairs, report = encode_pairs(raw, model.source_tokenizer, model.target_tokenizer, data.max_length, data.max_length, drop_long=False)
    if not pairs:
        raise ConfigError(f"data set '{data.dataset}' has no usable {split} pair")
    return pairs, [raw[p.index].target for p in pairs], f"{splits.name} {report.describe(split)}"


def _mode_scores(
    model: TranslationModel,
    batches: ParallelBatchIterator,
    mode: str,
    beta: Tensor,
    searches: list[int],
    pairs: list[EncodedPair],
    references: list[str],
    progress: bool,
) -> tuple[str, str]:
    """One mode's row (perplexity, BLEU and chrF of each search, reward, N/L) and the sacrebleu signatures."""
    from drga.tasks.translation.evaluation import evaluate_translation, teacher_forced_scores

    config = model.config
    forced = teacher_forced_scores(model.network, batches, config, mode, model.policy, beta, model.device)
    cells, signature = [], ""
    for size in searches:
        result, _ = evaluate_translation(
            model.network,
            batches,
            config,
            mode,
            model.policy,
            beta,
            model.device,
            decode=(pairs, references, model.target_tokenizer),
            beam_size=size,
            progress=progress,
            forced=forced,
        )
        cells.append(f"  {result.bleu:11.2f}  {result.chrf:11.2f}")
        signature = f"BLEU {result.bleu_signature}; chrF {result.chrf_signature}"
    row = f"{forced['perplexity']:7.2f}{''.join(cells)}  {forced['reward']:8.3f}  {forced['highlighted_fraction']:5.3f}"
    return row, signature
