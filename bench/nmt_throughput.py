"""Translation throughput: baseline training vs DRGA co-training, measured side by side.

One trainer, one data slice: it alternates one epoch of baseline training (cross-entropy only)
and one epoch of co-training (K action samples over every cross-attention array, reward,
REINFORCE, network trained on the revised attention), ``--repeats`` times, and prints target
tokens/second of each (``</s>`` counted, padding not), source+target tokens/second, and the
ratio of epoch times.

    python bench/nmt_throughput.py [--net seq2seq-luong] [--train-fraction 0.05] [--samples 5] [--repeats 2] \
        [--config experiments/configs/nmt_luong.toml] [--set section.key=value ...]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time

import torch

from drga.nmt.config import load_translation_config
from drga.nmt.trainer import TranslationTrainer


def main() -> None:
    """Time alternating baseline and co-training epochs and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", default="seq2seq-luong", help="seq2seq-luong or transformer-nmt")
    parser.add_argument("--dataset", default="multi30k-en-de")
    parser.add_argument("--config", help="a TOML config (e.g. experiments/configs/nmt_luong.toml); --net and --set override it")
    parser.add_argument("--train-fraction", type=float, default=0.05, help="slice of the training pairs timed per epoch")
    parser.add_argument("--samples", type=int, default=5, help="K action samples per sentence pair")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as logdir:
        config = load_translation_config(args.config, [
            f"network.name={args.net}", f"data.dataset={args.dataset}", f"data.train_fraction={args.train_fraction}",
            f"agent.samples={args.samples}", f"run.device={args.device}", f"run.logdir={logdir}", "run.progress=false", *args.set,
        ])
        trainer = TranslationTrainer(config, log=lambda _: None)
        pairs = trainer.data.train
        target_tokens = sum(len(p.target) + 1 for p in pairs)
        all_tokens = target_tokens + sum(len(p.source) for p in pairs)
        seconds: dict[str, list[float]] = {"baseline": [], "cotrain": []}
        for repeat in range(args.repeats):
            for phase in ("baseline", "cotrain"):
                started = time.perf_counter()
                trainer.train_one_epoch(phase, epoch=repeat + 1)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                seconds[phase].append(time.perf_counter() - started)
        trainer.writer.close()

    net = config.experiment.network
    base, co = statistics.median(seconds["baseline"]), statistics.median(seconds["cotrain"])
    print(
        f"# {args.net} on {args.dataset}: {len(pairs)} training pairs ({target_tokens} target tokens), "
        f"batch {config.experiment.data.batch_size}, hidden {net.hidden_size}, layers {net.layers}, "
        f"{len(trainer.data.target_tokenizer)} target pieces, K = {args.samples}, device {args.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {platform.processor() or platform.machine()}"
    )
    print(f"| epoch | seconds (median of {args.repeats}) | target tokens/s | source+target tokens/s |")
    print("|---|---|---|---|")
    print(f"| baseline training | {base:.1f} | {target_tokens / base:.0f} | {all_tokens / base:.0f} |")
    print(f"| DRGA co-training | {co:.1f} | {target_tokens / co:.0f} | {all_tokens / co:.0f} |")
    print(f"co-training / baseline epoch time: {co / base:.2f}x")


if __name__ == "__main__":
    main()
