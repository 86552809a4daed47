"""What ``drga predict`` and ``drga evaluate`` do with a classification checkpoint: the commands
classification registers (``drga/tasks/classification/task.py`` · ``ClassificationTask.commands_module``); drga/cli.py parses the command
line and dispatches here. Everything heavy is imported inside the handlers, so that ``drga --help``
does not load torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drga.config import refuse_option, refuse_unread_data_dir, tsv_implies_dataset
from drga.errors import UserError
from drga.files import writing_stdout
from drga.names import MODES, Mode, counted

#: Where each option of ``drga predict`` is read (see ``drga.cli.OPTION_SCOPES``).
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "predict": {name: None for name in ("checkpoint", "input", "mode", "probabilities", "json", "batch_size", "device")},
}


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """``drga predict``, added to argparse's subparsers object; its handler by name."""
    predict = commands.add_parser(
        "predict", help="classify texts (one per line, stdin or --input) with a trained checkpoint: one label per line"
    )
    predict.add_argument("checkpoint", help="a model checkpoint, e.g. runs/tsv-lstm-sa-seed0/cotrain_best.pt")
    predict.add_argument("--input", help="a UTF-8 text file, one text per line (default: stdin); an empty line is refused")
    predict.add_argument("--mode", choices=list(map(str, MODES)), help="default: with-agent when the checkpoint has a trained agent")
    shown = predict.add_mutually_exclusive_group()
    shown.add_argument("--probabilities", action="store_true", help="after the label, NAME=P for every label, tab-separated")
    shown.add_argument(
        "--json", action="store_true",
        help="one JSON object per line: text, label, probabilities, tokens, attention (per attention array, each token's weight), "
        "unknown (positions read as <unk>), cut (cut to data.max_length)",
    )
    predict.add_argument("--batch-size", type=int, help="texts per batch (default: the run's 2 × data.batch_size, as evaluate)")
    predict.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    return {"predict": predict_lines}


def evaluate_classification_checkpoint(args: argparse.Namespace, payload: dict[str, Any]) -> int:
    """``drga evaluate`` on a classification checkpoint: accuracy, reward and N/L of a split in both modes."""
    from drga.data import BatchIterator
    from drga.tasks.classification.evaluation import evaluate
    from drga.tasks.classification.trained import data_for, file_examples, load_trained

    if args.beam is not None:
        raise refuse_option("beam", "translation checkpoints (beam search)",
                            f"{args.checkpoint} is a classification checkpoint; drop --beam")
    tsv_implies_dataset(args)
    model = load_trained(args.checkpoint, device=args.device or "cpu")
    config = model.config
    for flag, key in (("dataset", "dataset"), ("data_dir", "data_dir"), ("tsv", "tsv_path")):
        if getattr(args, flag) is not None:
            setattr(config.data, key, getattr(args, flag))
    config.data.train_fraction = 1.0
    refuse_unread_data_dir(args, config.data)  # the checkpoint holds its embeddings: no vectors are found by name
    if args.tsv is not None and Path(args.tsv).is_file():  # the test set itself: scored whole, not split as a training file
        if args.split is not None:
            raise refuse_option("split", "a data set with dev and test splits (a --tsv folder, a named data set)",
                                f"{args.tsv} is one file, scored whole; drop --split")
        examples = file_examples(model, args.tsv, args.checkpoint)
        where = f"{args.tsv}, every line ({counted(len(examples), 'example')})"
    else:
        split = args.split or "test"
        data = data_for(model, args.checkpoint)  # labels matched to the network's outputs by name
        examples = data.test if split == "test" else data.dev
        where = f"{config.data.dataset} {split} ({len(examples)} examples)"
    batches = BatchIterator(examples, config.data.batch_size * 2, shuffle=False)
    print(f"{args.checkpoint}: {model.network.net_name} from phase '{model.phase}', {where}")
    for mode in MODES:
        if mode == Mode.WITH_AGENT and not model.has_agent:
            print(f"  {mode:10s}  -  (this checkpoint has no trained agent)")
            continue
        result = evaluate(model.network, batches, config.reward, mode, model.policy, model.strength().detach(), model.device)
        print(f"  {mode:10s}  accuracy {result.accuracy:.4f}  reward {result.reward:.3f}  N/L {result.highlighted_fraction:.3f}")
    return 0


def predict_lines(args: argparse.Namespace) -> int:
    """``drga predict``: the label of each input line (with ``--probabilities`` or ``--json``, more)."""
    from drga.tasks.classification.prediction import EmptyTextError, load

    model = load(args.checkpoint, device=args.device)
    source = args.input or "the input"
    texts = _input_lines(args.input)
    try:
        predictions = model.predictions(texts, args.mode, args.batch_size)
    except EmptyTextError as error:
        what = "is empty" if not texts[error.position].strip() else f"holds no token ({texts[error.position]!r})"
        raise UserError(f"line {error.position + 1} of {source} {what}: predict reads one text per line; remove it") from None
    with writing_stdout():
        for prediction in predictions:
            if args.json:
                print(json.dumps(prediction.as_dict(digits=6), ensure_ascii=False))
            elif args.probabilities:
                print("\t".join([prediction.label, *(f"{name}={p:.4f}" for name, p in prediction.probabilities.items())]))
            else:
                print(prediction.label)
    tokens = sum(len(prediction.tokens) for prediction in predictions)
    unknown = sum(len(prediction.unknown) for prediction in predictions)
    cut = sum(prediction.cut for prediction in predictions)
    mode = args.mode or model.default_mode
    summary = (f"drga predict: {counted(len(predictions), 'text')}, {model.about}, {mode}; {unknown} of {counted(tokens, 'token')} "
               "not in its vocabulary (<unk>)")
    cut_note = f"; {counted(cut, 'text')} cut to data.max_length = {model.data.max_length} tokens" if cut else ""
    print(summary + cut_note, file=sys.stderr)
    return 0


def _input_lines(path: str | None) -> list[str]:
    """The lines of ``path`` (stdin when None) without their line ends (\\n or \\r\\n), UTF-8 (a byte-order mark dropped)."""
    stdin = getattr(sys.stdin, "buffer", None)
    raw: bytes | None = Path(path).read_bytes() if path is not None else stdin.read() if stdin is not None else None
    if raw is None:  # a text stream stands in for stdin (tests, embedding)
        text = sys.stdin.read()
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = raw[: error.start].count(b"\n") + 1
            raise UserError(f"line {line} of {path or 'the input'} is not UTF-8 (byte 0x{raw[error.start]:02x}); give UTF-8 text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the last line's end
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
