"""Translation throughput: baseline training vs DRGA co-training, measured side by side.

One trainer over the whole training set (subword model included), epochs of ``--epoch-pairs``
pairs drawn afresh: it alternates one epoch of baseline training (cross-entropy only) and one
epoch of co-training (K action samples over every cross-attention array, reward, REINFORCE,
network trained on the revised attention), ``--repeats`` times, and prints target tokens/second
of each (``</s>`` counted, padding not), source+target tokens/second, and their ratio.

    python bench/nmt_throughput.py [--net seq2seq-luong] [--epoch-pairs 1500] [--samples 5] [--repeats 2] \
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
from drga.trainer import PHASES


def main() -> None:
    """Time alternating baseline and co-training epochs and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", help="seq2seq-luong or transformer-nmt (default: the config's, else seq2seq-luong)")
    parser.add_argument("--dataset", default="multi30k-en-de")
    parser.add_argument("--config", help="a TOML config (e.g. experiments/configs/nmt_luong.toml); --net and --set override it")
    parser.add_argument("--epoch-pairs", type=int, default=1500, help="training pairs per timed epoch (drawn from the whole set)")
    parser.add_argument("--samples", type=int, default=5, help="K action samples per sentence pair")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as logdir:
        net_override = [f"network.name={args.net}"] if args.net else []
        config = load_translation_config(args.config, net_override + [
            f"data.dataset={args.dataset}", f"nmt.epoch_pairs={args.epoch_pairs}",
            f"agent.samples={args.samples}", f"run.device={args.device}", f"run.logdir={logdir}", "run.progress=false", *args.set,
        ])
        trainer = TranslationTrainer(config, log=lambda _: None)
        pairs_per_epoch = trainer.train_batches.epoch_size
        rates: dict[str, list[tuple[float, int, int]]] = {"baseline": [], "cotrain": []}
        for repeat in range(args.repeats):
            for phase in ("baseline", "cotrain"):
                target_tokens, all_tokens = epoch_tokens(trainer, phase, repeat + 1)
                started = time.perf_counter()
                trainer.train_one_epoch(phase, epoch=repeat + 1)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                rates[phase].append((time.perf_counter() - started, target_tokens, all_tokens))
        trainer.writer.close()

    net = config.experiment.network
    base, co = (statistics.median(s for s, _, _ in rates[p]) for p in ("baseline", "cotrain"))
    rate = {p: (statistics.median(t / s for s, t, _ in rates[p]), statistics.median(a / s for s, _, a in rates[p])) for p in rates}
    print(
        f"# {config.experiment.network.name} on {args.dataset}: {pairs_per_epoch} training pairs per epoch, "
        f"batch {config.experiment.data.batch_size}, hidden {net.hidden_size}, layers {net.layers}, "
        f"{len(trainer.data.target_tokenizer)} target pieces, K = {args.samples}, device {args.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {platform.processor() or platform.machine()}"
    )
    print(f"| epoch | seconds (median of {args.repeats}) | target tokens/s | source+target tokens/s |")
    print("|---|---|---|---|")
    print(f"| baseline training | {base:.1f} | {rate['baseline'][0]:.0f} | {rate['baseline'][1]:.0f} |")
    print(f"| DRGA co-training | {co:.1f} | {rate['cotrain'][0]:.0f} | {rate['cotrain'][1]:.0f} |")
    print(f"baseline / co-training tokens per second: {rate['baseline'][0] / rate['cotrain'][0]:.2f}x")


def epoch_tokens(trainer: TranslationTrainer, phase: str, epoch: int) -> tuple[int, int]:
    """Target tokens (``</s>`` counted) and source + target tokens of the epoch ``train_one_epoch`` will run."""
    trainer.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
    target = source = 0
    for batch in trainer.train_batches:
        target += int((batch.labels != 0).sum())
        source += int(batch.mask.sum())
    return target, target + source


if __name__ == "__main__":
    main()
