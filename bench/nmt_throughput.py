"""Translation throughput: baseline training vs DRGA co-training, measured side by side.

One trainer over the whole training set (subword model included), epochs of ``--epoch-pairs``
pairs drawn afresh: it alternates one epoch of baseline training (cross-entropy only) and one
epoch of co-training (K action samples over every cross-attention array, reward, REINFORCE,
network trained on the revised attention), ``--repeats`` times, and prints target tokens/second
of each (``</s>`` counted, padding not), source+target tokens/second, and their ratio.

    python bench/nmt_throughput.py [--net seq2seq-luong] [--epoch-pairs 1500] [--samples 5] [--repeats 2] \
        [--config experiments/configs/nmt_luong.toml] [--set section.key=value ...]

``--decode CHECKPOINT`` measures decoding instead: a trained checkpoint translates the first
``--sentences`` test sentences of its data set greedily and with beam search (``--beam``), in
both modes where it has an agent, in two variants alternately, ``--repeats`` times; it prints
the median seconds, generated tokens/s, the speed-up and with-agent / net-only, and checks that
both variants give the same translations. ``--compare kv-cache`` (a ``transformer-nmt``): the
decoder's key/value cache (incremental decoding) and none (the whole prefix re-run every step).
``--compare source-projection`` (either network): with the agent, eq. 1's source side projected
through the policy's first layer once per sentence (``drga.core.source_state``) and the whole
state built at every step.

    python bench/nmt_throughput.py --decode runs/nmt/multi30k-en-de-transformer-nmt-seed0/cotrain_best.pt \
        [--sentences 200] [--beam 5] [--repeats 2] [--compare source-projection]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time

import torch

from drga.runner.phases import PHASE_NAMES as PHASES
from drga.tasks.translation.config import load_translation_config
from drga.trainer import TranslationTrainer

from stepping import train_one_epoch


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
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU seconds (for a machine busy with other work; one thread)")
    parser.add_argument("--set", action="append", default=[], help="extra config overrides section.key=value")
    parser.add_argument("--decode", metavar="CHECKPOINT", help="time decoding with and without the key/value cache instead")
    parser.add_argument("--sentences", type=int, default=200, help="--decode: test sentences to translate")
    parser.add_argument("--beam", type=int, default=5, help="--decode: beam size (besides greedy)")
    parser.add_argument("--compare", choices=("kv-cache", "source-projection"), default="kv-cache",
                        help="--decode: the Transformer with and without its key/value cache, or the agent's state with its "
                             "source side projected once per sentence and built whole at every step")
    args = parser.parse_args()
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu measures CPU work; on a GPU use the wall clock")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.decode:
        decode_benchmark(args)
        return

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
                started = clock()
                train_one_epoch(trainer, phase, epoch=repeat + 1)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                rates[phase].append((clock() - started, target_tokens, all_tokens))
        trainer.callbacks.close()

    net = config.experiment.network
    base, co = (statistics.median(s for s, _, _ in rates[p]) for p in ("baseline", "cotrain"))
    rate = {p: (statistics.median(t / s for s, t, _ in rates[p]), statistics.median(a / s for s, _, a in rates[p])) for p in rates}
    print(
        f"# {config.experiment.network.name} on {args.dataset}: {pairs_per_epoch} training pairs per epoch, "
        f"batch {config.experiment.data.batch_size}, hidden {net.hidden_size}, layers {net.layers}, "
        f"{len(trainer.data.target_tokenizer)} target pieces, K = {args.samples}, device {args.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {args.clock} clock, {platform.processor() or platform.machine()}"
    )
    print(f"| epoch | seconds (median of {args.repeats}) | target tokens/s | source+target tokens/s |")
    print("|---|---|---|---|")
    print(f"| baseline training | {base:.1f} | {rate['baseline'][0]:.0f} | {rate['baseline'][1]:.0f} |")
    print(f"| DRGA co-training | {co:.1f} | {rate['cotrain'][0]:.0f} | {rate['cotrain'][1]:.0f} |")
    print(f"baseline / co-training tokens per second: {rate['baseline'][0] / rate['cotrain'][0]:.2f}x")


def decode_benchmark(args: argparse.Namespace) -> None:
    """Decoding time of two variants that must give the same translations, and with-agent / net-only.

    ``--compare kv-cache``: the Transformer with its key/value cache and without it, in both modes.
    ``--compare source-projection``: with the agent, eq. 1's source side projected once per sentence
    (``drga.core.source_state``) and the whole state built at every step (net-only has one variant).
    """
    from drga.data.parallel import encode_pairs
    from drga.tasks.translation.data import load_translation_splits
    from drga.tasks.translation.evaluation import MODES, decode_pairs, decode_settings
    from drga.tasks.translation.trained import load_translation_model

    model = load_translation_model(args.decode, device=args.device)
    network = model.network
    if args.compare == "kv-cache" and not hasattr(network, "kv_cache"):
        raise SystemExit(f"--decode: {network.net_name} has no key/value cache (transformer-nmt has); try --compare source-projection")
    config = model.config
    limit = config.experiment.data.max_length
    raw = load_translation_splits(config).test[: args.sentences]
    pairs, _ = encode_pairs(raw, model.source_tokenizer, model.target_tokenizer, limit, limit, drop_long=False)
    modes = [m for m in MODES if m == "net-only" or model.has_agent]
    names = ("cache", "no cache") if args.compare == "kv-cache" else ("projected", "plain")
    beta = model.strength().detach()
    times: dict[tuple[str, int, bool], list[float]] = {}
    tokens: dict[tuple[str, int], int] = {}
    for _ in range(args.repeats):
        for mode in modes:
            for beam in (1, args.beam):
                outputs = {}
                variants = (True,) if args.compare == "source-projection" and mode == "net-only" else (True, False)
                for first in variants:
                    if args.compare == "kv-cache":
                        network.kv_cache = first
                    started = time.perf_counter()
                    outputs[first] = decode_pairs(
                        network, pairs, model.target_tokenizer, decode_settings(config, beam), mode, model.policy, beta,
                        model.device, config.experiment.data.batch_size * 2,
                        source_projection=first or args.compare != "source-projection",
                    )
                    if model.device.type == "cuda":
                        torch.cuda.synchronize()
                    times.setdefault((mode, beam, first), []).append(time.perf_counter() - started)
                if outputs[True] != outputs.get(False, outputs[True]):
                    raise SystemExit(f"--decode: {names[0]} and {names[1]} {mode} beam {beam} translations differ")
                tokens[(mode, beam)] = sum(len(ids) + 1 for ids in model.target_tokenizer.encode_batch(outputs[True]))
    net = config.experiment.network
    shape = (f"d {net.hidden_size}, {net.layers} + {net.layers} layers, {net.heads} heads" if net.name == "transformer-nmt"
             else f"embeddings {net.embedding_dim}, hidden {net.hidden_size}, {net.layers} layer(s)")
    print(
        f"# {net.name} ({model.phase}), {shape}, agent {list(config.experiment.agent.hidden_sizes)}: "
        f"{len(pairs)} test sentences, batch {config.experiment.data.batch_size * 2}, device {args.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {platform.processor() or platform.machine()}"
    )
    a, b = names
    print(f"| mode | search | seconds, {a} (median of {args.repeats}) | seconds, {b} | generated tokens/s {a} / {b} | speed-up |")
    print("|---|---|---|---|---|---|")
    for mode in modes:
        for beam in (1, args.beam):
            search = "greedy" if beam == 1 else f"beam {beam}"
            fast, t = statistics.median(times[(mode, beam, True)]), tokens[(mode, beam)]
            if (mode, beam, False) not in times:
                print(f"| {mode} | {search} | {fast:.2f} | — | {t / fast:.0f} / — | — |")
                continue
            slow = statistics.median(times[(mode, beam, False)])
            print(f"| {mode} | {search} | {fast:.2f} | {slow:.2f} | {t / fast:.0f} / {t / slow:.0f} | {slow / fast:.2f}x |")
    print(f"(generated tokens: the translations re-encoded in subwords, </s> counted; identical {a} and {b})")
    if model.has_agent:
        for variant, name in ((True, a), (False, b)):
            ratios = []
            for beam in (1, args.beam):
                agent = times.get(("with-agent", beam, variant))
                alone = times.get(("net-only", beam, variant), times[("net-only", beam, True)])
                if agent is not None:
                    search = "greedy" if beam == 1 else f"beam {beam}"
                    ratios.append(f"{search} {statistics.median(agent) / statistics.median(alone):.2f}x")
            print(f"with-agent / net-only seconds, {name}: {', '.join(ratios)}")


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
