"""Configuration of a translation run: the shared sections plus an ``[nmt]`` section.

A translation run reads the same ``[data]``, ``[network]``, ``[agent]``, ``[reward]``,
``[adjust]``, ``[train]`` and ``[run]`` tables as a classification run (``drga/config.py``), and
one more, ``[nmt]``, defined here. Keeping ``[nmt]`` out of :class:`drga.config.ExperimentConfig`
leaves classification configs, their saved ``config.toml`` and their ``--resume`` checks exactly
as they were.

Fields of the shared sections that a translation run reads:

- ``data``: ``dataset``, ``data_dir``, ``split_seed`` (the seeded subset of ``train_fraction``),
  ``train_fraction``, ``batch_size`` (sentence pairs), ``max_length`` (subword pieces, either
  side: longer training pairs are dropped, longer dev/test pairs cut; both counted).
  ``lowercase`` does not apply: text keeps its case, and BLEU is cased.
- ``network``: ``name``, ``embedding_dim`` (LSTM only), ``hidden_size``, ``dropout``, ``layers``,
  ``heads`` and ``feedforward_size`` (Transformer only). Pretrained vectors are not supported.
- ``agent``, ``reward``, ``adjust``: as for classification.
- ``train``: the phase lengths, ``lr``, ``weight_decay``, ``grad_clip``, ``patience``,
  ``select_mode``, ``fair_baseline``. ``original_attention_loss`` is not used.

Before the TOML file and ``--set``, each network gets translation defaults for the shared
sections (:func:`translation_defaults`, the network's registration), since the classification defaults (300-unit layers, dropout
0.5, a 300-300 agent) are not what a translation model wants.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_type_hints

from drga.config import (
    ConfigError,
    DataConfig,
    ExperimentConfig,
    apply_mapping,
    coerce_value,
    network_run_defaults,
    requested_network,
    suggest,
)
from drga.config import config_to_toml as experiment_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class NMTConfig:
    """The ``[nmt]`` section: data files, subwords, translation-specific network and training options, decoding."""

    source_lang: str = "en"
    """Source language code (file suffix for dataset=parallel)."""
    target_lang: str = "de"
    """Target language code (file suffix for dataset=parallel)."""
    train_files: list[str] = field(default_factory=list)
    """dataset=parallel: the training [source, target] files (plain or gzip); empty: look in data.data_dir."""
    dev_files: list[str] = field(default_factory=list)
    """dataset=parallel: the dev [source, target] files; empty: val/valid/dev.LANG in data.data_dir."""
    test_files: list[str] = field(default_factory=list)
    """dataset=parallel: the test [source, target] files; empty: test.LANG in data.data_dir."""
    subword_model: Literal["bpe", "unigram"] = "bpe"
    """SentencePiece model type, trained on the training side only."""
    vocab_size: int = 8000
    """Subword vocabulary size: of the joint model with shared_vocab, else of each language's model."""
    shared_vocab: bool = True
    """One subword model for both languages (and, for the networks, one embedding table)."""
    encoder: Literal["lstm", "gru"] = "lstm"
    """seq2seq-luong: the bidirectional encoder's cell."""
    rerun_decoder: bool = False
    """seq2seq-luong: predict re-runs the decoder so a revised context also feeds the next step (exact, slower)."""
    label_smoothing: float = 0.0
    """ε of label-smoothed cross-entropy in the task loss (the reward's log P(y|X) is never smoothed)."""
    warmup_steps: int = 0
    """Pretraining: the network's learning rates rise linearly from 0 to their own (train.lr, train.pretrained_lr) over this many
    optimiser steps (0: none); plateau cuts and a decay multiply it (drga/runner/lr_schedule.py).
    """
    beam_size: int = 5
    """Beam width of the final test decoding and the default of `drga translate`."""
    length_penalty: float = 0.6
    """α of beam search's length normalisation ((5 + |y|) / 6)^α (0: raw log-probability)."""
    decode_length_ratio: float = 2.0
    """Decoding stops after ratio · source length + 10 tokens (capped at data.max_length + 1)."""
    epoch_pairs: int = 0
    """Training pairs per epoch, drawn afresh (seeded) every epoch; 0: the whole training set."""
    select_metric: Literal["bleu", "perplexity"] = "bleu"
    """Dev metric that picks each phase's best epoch (greedy-decoded BLEU, or perplexity)."""
    dev_bleu_sentences: int = 0
    """Per-epoch dev BLEU on the first N dev pairs only (0: all); perplexity always uses all."""
    final_beam: bool = True
    """The final test report also decodes with beam search (besides greedy)."""


def translation_defaults(name: str) -> dict[str, dict[str, Any]]:
    """A translation network's defaults by section (its registration's ``defaults=`` and its settings' own,
    :func:`drga.config.network_run_defaults`), applied before the file and --set."""
    nested: dict[str, dict[str, Any]] = {}
    for dotted, value in network_run_defaults(name).items():
        section, key = dotted.split(".", 1)
        nested.setdefault(section, {})[key] = value
    return nested


#: The keys of the shared ``[data]`` section a translation run reads (the module's docstring says how): another one given
#: with ``--set`` is refused, in a file only noted, as for a setting of another data set (:func:`unread_data_settings`).
DATA_KEYS_READ = ("dataset", "data_dir", "split_seed", "train_fraction", "batch_size", "max_length")


def unread_data_settings(mapping: dict[str, Any]) -> list[str]:
    """The ``data.*`` keys of ``mapping`` (a TOML file's tables, or ``--set``'s) that only classification reads."""
    data = mapping.get("data", {})
    known = {f.name for f in dataclasses.fields(DataConfig)}
    return [f"data.{key}" for key in data if key in known and key not in DATA_KEYS_READ] if isinstance(data, dict) else []


def _unread_message(keys: list[str]) -> str:
    return (f"{', '.join(keys)}: read by classification runs only; a translation run reads "
            f"{', '.join('data.' + key for key in DATA_KEYS_READ)} of [data]")


@dataclass
class TranslationConfig:
    """The whole configuration of a translation run: the sections every task shares, and ``[nmt]``."""

    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    nmt: NMTConfig = field(default_factory=NMTConfig)

    def to_toml(self) -> str:
        """As its ``config.toml`` (:func:`config_to_toml`)."""
        return config_to_toml(self)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {**self.experiment.to_dict(), "nmt": dataclasses.asdict(self.nmt)}

    def flat(self) -> dict[str, Any]:
        return {f"{s}.{k}": v for s, values in self.to_dict().items() for k, v in values.items()}

    def validate(self) -> None:
        self.experiment.validate()
        nmt, problems = self.nmt, []
        if nmt.vocab_size < 8:
            problems.append(f"nmt.vocab_size must be at least 8, got {nmt.vocab_size}")
        if not 0.0 <= nmt.label_smoothing < 1.0:
            problems.append(f"nmt.label_smoothing must be in [0, 1), got {nmt.label_smoothing}")
        if nmt.beam_size < 1:
            problems.append(f"nmt.beam_size must be at least 1, got {nmt.beam_size}")
        control = self.experiment.control
        if control.attention != "learned" or control.freeze_scorer:
            problems.append("control.attention and control.freeze_scorer degrade a classifier's attention; a translation network "
                            "takes neither (leave them at learned and false)")
        if nmt.decode_length_ratio <= 0:
            problems.append(f"nmt.decode_length_ratio must be positive, got {nmt.decode_length_ratio}")
        if nmt.warmup_steps < 0 or nmt.dev_bleu_sentences < 0 or nmt.epoch_pairs < 0:
            problems.append("nmt.warmup_steps, nmt.dev_bleu_sentences and nmt.epoch_pairs must be ≥ 0")
        train = self.experiment.train
        if nmt.warmup_steps > 0 and train.lr_schedule == "warmup-linear" and train.warmup_fraction > 0:
            problems.append("nmt.warmup_steps and train.lr_schedule=warmup-linear (train.warmup_fraction > 0) would warm the learning "
                            "rate up twice; set nmt.warmup_steps or train.warmup_fraction to 0")
        for name in ("train_files", "dev_files", "test_files"):
            if getattr(nmt, name) and len(getattr(nmt, name)) != 2:
                problems.append(f"nmt.{name} must name two files [source, target], got {getattr(nmt, name)}")
        if self.experiment.network.vectors:
            problems.append("network.vectors: pretrained word vectors are not supported for translation")
        if problems:
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def _apply_nmt(nmt: NMTConfig, values: dict[str, Any], source: str) -> None:
    hints = get_type_hints(NMTConfig)
    for key, value in values.items():
        if key not in hints:
            raise ConfigError(f"{source}: unknown config key 'nmt.{key}'{suggest(key, list(hints), prefix='nmt.')}")
        setattr(nmt, key, coerce_value(value, hints[key], f"nmt.{key}"))


def _apply(config: TranslationConfig, mapping: dict[str, Any], source: str, lenient: bool = False) -> None:
    mapping = dict(mapping)
    nmt_values = mapping.pop("nmt", {})
    if not isinstance(nmt_values, dict):
        raise ConfigError(f"{source}: 'nmt' must be a table like [nmt]")
    apply_mapping(config.experiment, mapping, source, lenient)
    _apply_nmt(config.nmt, nmt_values, source)


def _read_toml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def _overrides_mapping(overrides: list[str]) -> dict[str, dict[str, Any]]:
    mapping: dict[str, dict[str, Any]] = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override '{item}' must look like section.key=value")
        key, value = item.split("=", 1)
        if "." not in key:
            raise ConfigError(f"config key '{key.strip()}' must be section.key")
        section, name = key.strip().split(".", 1)
        mapping.setdefault(section, {})[name] = value.strip()
    return mapping


def load_translation_config(path: str | Path | None = None, overrides: list[str] | None = None,
                            report: Callable[[str], None] | None = None) -> TranslationConfig:
    """Defaults, the network's translation defaults, the TOML file, then ``section.key=value`` overrides. A ``[data]``
    setting only classification reads is refused in ``overrides`` and noted (``report``) in the file, which may serve
    a sweep of both tasks."""
    overrides = list(overrides or [])
    file_mapping = _read_toml(path) if path is not None else {}
    set_mapping = _overrides_mapping(overrides)
    refused, noted = unread_data_settings(set_mapping), unread_data_settings(file_mapping)
    if refused:
        raise ConfigError(f"--set {_unread_message(refused)}")
    if report is not None and noted:
        report(f"not read by this run: {_unread_message(noted)}")
    config = TranslationConfig(ExperimentConfig(), NMTConfig())
    config.experiment.data.dataset = "multi30k-en-de"
    config.experiment.network.name = "seq2seq-luong"
    name = requested_network(path, overrides) or config.experiment.network.name
    config.experiment.network.name = name  # an unknown setting's error names this network's
    _apply(config, translation_defaults(name), f"translation defaults of {name}")
    _apply(config, file_mapping, str(path))
    _apply(config, set_mapping, "--set")
    config.validate()
    return config


def load_checked_translation_config(path: str | Path | None = None, overrides: list[str] | None = None,
                                    report: Callable[[str], None] | None = None) -> TranslationConfig:
    """:func:`load_translation_config`, its data set one of the parallel ones and its agent trained by
    REINFORCE: translation's loader in the task registry (``drga train``, ``drga tune``). ``report``: told of the
    file's ``[data]`` settings a translation run does not read (translation's defaults, applied before the file, are
    not reported)."""
    from drga.data.parallel import PARALLEL_DATASETS

    translation = load_translation_config(path, overrides, report)
    data = translation.experiment.data
    if data.dataset not in PARALLEL_DATASETS:
        raise ConfigError(
            f"network '{translation.experiment.network.name}' translates parallel text, but data set '{data.dataset}' is not one; "
            f"choose one of: {', '.join(sorted(PARALLEL_DATASETS))}"
        )
    if translation.experiment.agent.algorithm != "reinforce":
        raise ConfigError(f"agent.algorithm={translation.experiment.agent.algorithm}: translation trains the agent with REINFORCE "
                          "(eqs. 6–7) only")
    return translation


def translation_config_from_dict(mapping: dict[str, Any]) -> TranslationConfig:
    """The configuration saved in a checkpoint (every field present, no defaults needed)."""
    config = TranslationConfig(ExperimentConfig(), NMTConfig())
    _apply(config, mapping, "checkpoint", lenient=True)
    return config


def config_to_toml(config: TranslationConfig) -> str:
    """The resolved configuration as TOML, the [nmt] table last (saved next to every run)."""
    nmt_lines = ["[nmt]"]
    for key, value in dataclasses.asdict(config.nmt).items():
        nmt_lines.append(f"{key} = {json.dumps(value)}")
    return experiment_toml(config.experiment) + "\n".join(nmt_lines) + "\n"
