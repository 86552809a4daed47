"""Loading a trained run's checkpoint back into a network, an agent and β, and the data it reads,
labelled as its outputs are (by label name, never by position)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from drga.baselines import NETWORKS
from drga.baselines.protocol import AttentionNetwork
from drga.checkpoint_format import CheckpointError, CheckpointPayload, load_module_state
from drga.config import ExperimentConfig, config_from_dict
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.data import Vocabulary
from drga.data.batching import EncodedExample
from drga.data.text import DataFormatError, TextExample, read_tsv
from drga.data.vocab import vocabulary_fingerprint
from drga.registry import task_of_checkpoint, task_spec
from drga.tasks.classification.config import TASK_NAME
from drga.tasks.classification.data import (
    PreparedData,
    build_attention_network,
    encode_split,
    prepare_data,
    pretrained_vocabulary,
    subword_tokenizer,
)
from drga.tasks.trained import model_checkpoint, ready_for_evaluation, trained_agent


@dataclass
class TrainedModel:
    config: ExperimentConfig
    network: AttentionNetwork
    policy: StatePolicy
    strength: AdjustmentStrength
    vocab: Vocabulary
    label_names: list[str]  #: output i of the network is label_names[i]
    has_agent: bool
    phase: str
    device: torch.device
    #: How its data's texts became tokens (drga/data/tokenize.py's names, or "custom"): what predict applies to new text.
    tokenizer: str = "whitespace"

#: A network of the user's for a checkpoint: an instance, or a class (or function) called with (vocab_size, num_classes).
NetworkSource = AttentionNetwork | Callable[[int, int], AttentionNetwork]


def load_trained(
    path: str | Path, device: str = "cpu", expected_net: str | None = None, network: NetworkSource | None = None,
    payload: Mapping[str, Any] | None = None,
) -> TrainedModel:
    """A model checkpoint's network, agent and β on ``device``, with its configuration, vocabulary and label names.

    ``network``: the module to load the network's weights into, for a network of your own that the
    toolkit's registry (``drga networks``) does not hold: an instance, or a class (or function)
    called with the vocabulary size and the number of labels. ``payload``: the file, already loaded.
    """
    checkpoint = model_checkpoint(path, payload)
    if checkpoint.task_entry("vocab") is None:  # not classification's kind (a translation checkpoint: subword models): what to do instead
        refuse_other_tasks_checkpoint(path, checkpoint)
        raise CheckpointError(f"{path} holds no vocabulary, which a classification checkpoint records")
    if expected_net is not None and checkpoint.net_name != expected_net:
        raise CheckpointError(f"{path} holds the network '{checkpoint.net_name}', not '{expected_net}'")
    if vocabulary_fingerprint(checkpoint.vocab) != checkpoint.vocab_fingerprint:
        raise CheckpointError(f"{path} is corrupted: its vocabulary does not match the fingerprint written with it")
    config = config_from_dict(checkpoint.config)
    config.network.vectors = None  # the trained embeddings are in the checkpoint
    # A network reading its pretrained tokenizer's subwords gets that tokenizer back (checked against the recorded ids).
    subwords = subword_tokenizer(config.network.name) is not None
    vocab = pretrained_vocabulary(config, checkpoint.vocab) if subwords else Vocabulary(checkpoint.vocab)
    label_names = checkpoint.label_names
    network = _network_for(path, config, vocab, len(label_names), network)
    load_module_state(network, checkpoint.network_state, "network", path)
    policy, strength = trained_agent(checkpoint, path, config)
    torch_device = ready_for_evaluation(device, network, policy, strength)
    tokenizer = checkpoint.tokenizer
    return TrainedModel(
        config, network, policy, strength, vocab, list(label_names), checkpoint.has_agent, checkpoint.phase, torch_device, tokenizer
    )


def refuse_other_tasks_checkpoint(path: str | Path, payload: Mapping[str, Any]) -> None:
    """Refuse a checkpoint that holds no classifier (``drga predict`` or ``drga.load`` given one; ``drga analyze`` given
    one it cannot read, a translation checkpoint), saying what to do with it instead, as its task's registration says.
    A task of your own built on classification's (a subclass of its task class) holds a classifier too."""
    task = task_of_checkpoint(payload)
    if task is not None and issubclass(task.task, task_spec(TASK_NAME).task):
        return
    recorded = CheckpointPayload.of(payload).task
    what = f"a {task.name} checkpoint" if task is not None else f"a checkpoint of the task '{recorded}', not registered here"
    instead = f": {task.inference.format(path=path)}" if task is not None and task.inference else ""
    raise CheckpointError(f"{path} is {what}{instead}; drga predict, drga analyze and drga.load read classification checkpoints")


def _network_for(
    path: str | Path, config: ExperimentConfig, vocab: Vocabulary, num_classes: int, given: NetworkSource | None
) -> AttentionNetwork:
    """The module the checkpoint's network weights go into: ``given`` (built when a class or function), else the registry's."""
    if isinstance(given, AttentionNetwork):
        return given
    if given is not None:
        return given(len(vocab), num_classes)
    if config.network.name not in NETWORKS:
        raise CheckpointError(
            f"{path} holds the network '{config.network.name}', which is not among this program's networks (`drga networks`): "
            "in Python, give it: drga.load(path, network=YourNetworkClass); on the command line, register it first "
            "(docs/custom-network.md, 'From the command line')"
        )
    return build_attention_network(config, vocab, num_classes)


def quoted(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def label_order(trained: Sequence[str], given: Sequence[str], source: str | Path) -> list[int]:
    """For each of the data's labels (by index), the network output of the same name; data with a
    label the network was not trained on are refused, naming both sets."""
    unknown = [name for name in given if name not in trained]
    if unknown:
        which = f" ({quoted(unknown)} not among them)" if len(unknown) < len(given) else ""
        raise CheckpointError(
            f"{source} was trained on the labels {quoted(trained)} and these data are labelled {quoted(given)}{which}; labels "
            "are matched by name: give data labelled as the run's training data were (or rename the labels in the file)"
        )
    return [list(trained).index(name) for name in given]


def on_model_labels(data: PreparedData, model: TrainedModel, source: str | Path) -> PreparedData:
    """``data`` with each example's label renumbered as the output of the same label name, and the
    model's label names (data holding only some of its labels are fine; an unknown label is refused)."""
    given = list(data.splits.label_names)
    if given == model.label_names:
        return data
    order = label_order(model.label_names, given, source)

    def moved(examples: list) -> list:
        return [replace(example, label=order[example.label]) for example in examples]

    splits = replace(data.splits, train=moved(data.splits.train), dev=moved(data.splits.dev), test=moved(data.splits.test),
                     label_names=list(model.label_names))
    return replace(data, splits=splits, train=moved(data.train), dev=moved(data.dev), test=moved(data.test),
                   agent_train=moved(data.agent_train))


def data_for(model: TrainedModel, source: str | Path) -> PreparedData:
    """The data ``model.config`` names, encoded with the model's vocabulary and labelled by its label names. A rare
    label is not questioned here (``data.rare_labels`` guards training): the checkpoint's labels are what it knows."""
    model.config.data.rare_labels = "keep"
    return on_model_labels(prepare_data(model.config, vocab=model.vocab), model, source)


def file_examples(model: TrainedModel, path: str | Path, source: str | Path) -> list[EncodedExample]:
    """Every labelled line of one ``label<TAB>text`` file, the test set ``drga evaluate --tsv FILE`` scores whole (not split
    80/10/10 as a training file is): tokenized as TSV text is, encoded with the model's vocabulary and labelled by its label
    names (:func:`label_order`; a label ``source``, the checkpoint, does not know is refused with both sets and its first
    line). One label alone is fine: a test file may hold one class."""
    path = Path(path)
    data = model.config.data
    tsv = read_tsv(path, data.lowercase, data.tsv_header, data.encoding, data.encoding_errors)
    tsv.check(path, columns=False)
    if not tsv.rows:
        raise DataFormatError(f"{path}: no labelled line (each line must be label<TAB>text); is it the file you meant?")
    given = sorted({label for label, _, _ in tsv.rows})
    try:
        order = label_order(model.label_names, given, source)
    except CheckpointError as error:
        label, line = next((label, line) for label, _, line in tsv.rows if label not in model.label_names)
        raise CheckpointError(f"{error} (label {label!r} first at {path}:{line})") from None
    examples = [TextExample(tokens, order[given.index(label)]) for label, tokens, _ in tsv.rows]
    encoded, _ = encode_split(examples, model.vocab, data)
    return encoded
