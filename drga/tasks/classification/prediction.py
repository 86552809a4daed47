"""Classifying new text with a trained network: ``drga predict``, ``drga.load(path)`` and ``RetrofitResult.predict``
(classification's inference loader in the task registry; ``drga/prediction.py`` re-exports it).

A text goes the way its checkpoint's training texts went: split by the same tokenizer
(``drga/data/tokenize.py``; the checkpoint records which), lowercased as they were, looked up in
the same vocabulary (a word it does not hold reads as ``<unk>``, as in training) and cut to the
same ``data.max_length``. The network then runs in one of the two evaluation modes of
``drga/tasks/classification/evaluation.py``: ``net-only``, or ``with-agent`` (the agent's deterministic action
squash(μ(s_t)) revises the attention, eqs. 3–4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from drga.baselines import NETWORK_INPUTS
from drga.baselines.protocol import AttentionNetwork
from drga.checkpoint_format import CheckpointError, load_checkpoint
from drga.config import DataConfig
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.data import EncodedExample, TextExample, Vocabulary, collate
from drga.data.tokenize import CUSTOM_TOKENIZER, TOKENIZERS
from drga.errors import UserError
from drga.names import Mode, checked_mode
from drga.runtime.eval_mode import eval_mode
from drga.tasks.classification.trained import NetworkSource, load_trained, refuse_other_tasks_checkpoint

__all__ = ["Classifier", "EmptyTextError", "Prediction", "load"]

#: A text to classify: a string (split by the model's tokenizer) or a list of tokens (taken as they are).
Text = str | Sequence[str]


@dataclass
class Prediction:
    """One text's label, the probability of every label, and the attention each of its tokens got."""

    text: str
    label: str
    probabilities: dict[str, float]  #: label name → P(label | text), in the order of the network's outputs
    tokens: list[str]  #: what the network read: the text's tokens (a pretrained tokenizer's subwords), cut to data.max_length
    #: One list per attention array of the network (a Transformer has layers × heads of them, then its pooling):
    #: each token's weight, the mean over the H dimensions of a multi-dimensional array; in the chosen mode.
    attention: list[list[float]]
    unknown: list[int]  #: the positions of the tokens the vocabulary does not hold (read as <unk>)
    #: Whether the text was cut to data.max_length tokens (subwords: whether it reached that length, the longer ones cut).
    cut: bool = False

    def as_dict(self, digits: int | None = None) -> dict[str, Any]:
        """The fields as a JSON-ready dict; ``digits``: probabilities and weights rounded to that many decimals."""
        number = (lambda value: value) if digits is None else (lambda value: round(value, digits))
        return {"text": self.text, "label": self.label, "probabilities": {name: number(p) for name, p in self.probabilities.items()},
                "tokens": self.tokens, "attention": [[number(w) for w in array] for array in self.attention],
                "unknown": self.unknown, "cut": self.cut}


class EmptyTextError(UserError):
    """A text with no token: nothing to classify (``position`` counts from 0)."""

    def __init__(self, position: int, text: str):
        self.position = position
        what = "is empty" if not text.strip() else f"holds no token ({text!r})"
        super().__init__(f"text {position + 1} {what}; every text needs at least one word")


class Classifier:
    """A trained network and its agent, classifying texts: what :func:`load` returns.

    ``tokenize``: how a string becomes tokens (None: the texts were split by a tokenizer of the
    user's that is not at hand; strings are refused, token lists accepted). ``data``: the run's
    data settings (``max_length``). ``has_agent``: whether the agent was trained (the with-agent
    mode needs it, and is then the default, as in ``drga translate``). ``about``: what the model
    is, for messages (network, phase, tokenizer).
    """

    def __init__(
        self,
        network: AttentionNetwork,
        policy: StatePolicy,
        strength: AdjustmentStrength,
        vocab: Vocabulary,
        label_names: Sequence[str],
        tokenize: Callable[[str], list[str]] | None,
        data: DataConfig,
        has_agent: bool,
        about: str = "",
    ):
        self.network, self.policy, self.strength, self.vocab = network, policy, strength, vocab
        self.label_names, self.tokenize, self.data, self.has_agent = list(label_names), tokenize, data, has_agent
        self.about = about

    @property
    def device(self) -> torch.device:
        return next(self.network.parameters()).device

    @property
    def default_mode(self) -> str:
        return checked_mode(None, self.has_agent)

    def to(self, device: str | torch.device) -> Classifier:
        """The network, agent and β moved to ``device`` (cpu, cuda, cuda:N); returns self."""
        for module in (self.network, self.policy, self.strength):
            module.to(device)
        return self

    # ------------------------------------------------------------------ the answers

    def predict(self, texts: Sequence[Text], mode: str | None = None) -> list[str]:
        """The label of each text."""
        return [prediction.label for prediction in self.predictions(texts, mode)]

    def probabilities(self, texts: Sequence[Text], mode: str | None = None) -> list[dict[str, float]]:
        """P(label | text) of every label, for each text."""
        return [prediction.probabilities for prediction in self.predictions(texts, mode)]

    def attention(self, texts: Sequence[Text], mode: str | None = None) -> list[tuple[list[str], list[list[float]]]]:
        """(tokens, one weight per token for each attention array) of each text: α in net-only mode, α′ with the agent."""
        return [(prediction.tokens, prediction.attention) for prediction in self.predictions(texts, mode)]

    @torch.no_grad()
    def predictions(self, texts: Sequence[Text], mode: str | None = None, batch_size: int | None = None) -> list[Prediction]:
        """Everything about each text, in order: label, probabilities, tokens and attention in ``mode``
        (default: with-agent when the agent was trained, else net-only)."""
        if isinstance(texts, str):
            raise UserError("give a list of texts (a single string would be read as a list of its characters)")
        if batch_size is not None and batch_size < 1:
            raise UserError(f"the batch size must be at least 1, got {batch_size}")
        mode = self._mode(mode)
        texts = list(texts)
        tokens = [self._tokens(text, position) for position, text in enumerate(texts)]
        encoded = self._encode(tokens)
        size = batch_size or 2 * self.data.batch_size  # the batches of drga evaluate: the same numbers
        results: list[Prediction] = []
        with eval_mode(self.network, self.policy):
            for start in range(0, len(encoded), size):
                chunk = encoded[start : start + size]
                probabilities, labels, attention = self._run(chunk, mode)
                for row, example in enumerate(chunk):
                    position = start + row
                    results.append(self._prediction(texts[position], tokens[position], example, probabilities[row],
                                                    int(labels[row]), [weights[row] for weights in attention]))
        return results

    # ------------------------------------------------------------------ steps

    def _mode(self, mode: str | None) -> str:
        return checked_mode(mode, self.has_agent, "this model")

    def _tokens(self, text: Text, position: int) -> list[str]:
        if isinstance(text, str):
            if self.tokenize is None:
                raise UserError(
                    "this model's texts were split by a tokenizer of your own: give it (drga.load(path, tokenizer=your_function)) "
                    "or give each text as a list of tokens"
                )
            tokens = self.tokenize(text)
        else:
            tokens = [str(token) for token in text]
        if not tokens:
            raise EmptyTextError(position, text if isinstance(text, str) else "")
        return tokens

    def _encode(self, tokens: list[list[str]]) -> list[EncodedExample]:
        examples = [TextExample(words, 0) for words in tokens]  # the label is unknown: any placeholder
        return self.vocab.encode_examples(examples, self.data.max_length)[0]

    def _run(self, chunk: list[EncodedExample], mode: str) -> tuple[Tensor, Tensor, list[Tensor]]:
        """Probabilities [B, C], labels [B] and the attention arrays ([B, arrays, T] per site spanning the tokens) of a chunk."""
        batch = collate(chunk).to(self.device)
        encoding = self.network.encode(batch)
        if mode == Mode.NET_ONLY:
            attention = list(encoding.attention)
            output = self.network.predict(encoding, attention)
        else:  # the deterministic action, as the with-agent evaluation; γ, √L0, δ only shape a reward not read here
            revised = rollout(self.network, self.policy, batch, self.strength().detach(), reward=RewardConstants(0.0, 1.0, 1.0),
                              deterministic=True, encoding=encoding)
            attention, output = revised.revised, revised.output
        length = batch.tokens.shape[1]
        arrays = [weights.mean(dim=-1) if weights.dim() == 4 else weights for weights in attention]
        arrays = [weights.float().cpu() for weights in arrays if weights.shape[-1] == length]  # sites over the text's tokens
        probabilities = torch.softmax(output.float(), dim=-1).cpu()
        return probabilities, self.network.predictions(output).cpu(), arrays

    def _prediction(self, text: Text, words: list[str], example: EncodedExample, probabilities: Tensor, label: int,
                    attention: list[Tensor]) -> Prediction:
        ids = example.ids
        tokens, cut = self.vocab.shown_tokens(words, ids, self.data.max_length)
        unknown_id = self.vocab.unknown_id
        weights = [[float(w) for w in array[: len(ids)]] for site in attention for array in site]
        return Prediction(
            text=text if isinstance(text, str) else " ".join(text),
            label=self.label_names[label],
            probabilities={name: float(p) for name, p in zip(self.label_names, probabilities)},
            tokens=tokens,
            attention=weights,
            unknown=[position for position, i in enumerate(ids) if i == unknown_id],
            cut=cut,
        )


def load(
    path: str | Path,
    *,
    network: NetworkSource | None = None,
    tokenizer: Callable[[str], list[str]] | None = None,
    device: str = "cpu",
) -> Classifier:
    """A model checkpoint (``runs/<run>/cotrain_best.pt``, any ``*_best*.pt``) as a :class:`Classifier`.

    ``network``: for a network of your own (not in ``drga networks``), its class, a function of
    (vocab_size, num_classes) that builds it, or an instance; the weights are loaded into it.
    ``tokenizer``: the function that split the training texts, when that was one of yours (the
    Python API's ``TextData.from_pairs(..., tokenizer=...)``); otherwise the checkpoint's own is used.
    ``device``: cpu, cuda, cuda:N or auto.
    A checkpoint of a task of your own built on classification's is read too; another task's is refused.
    """
    payload = load_checkpoint(path)
    refuse_other_tasks_checkpoint(path, payload)  # another task's checkpoint: what to do with it instead, as its task says
    model = load_trained(path, device=device, network=network, payload=payload)
    reads = NETWORK_INPUTS.get(model.config.network.name, "text")
    if reads != "text":
        raise CheckpointError(
            f"{path}: network '{model.config.network.name}' reads {reads} data, and predict classifies plain texts; "
            "evaluate it on a data set instead (drga evaluate)"
        )
    name, lowercase = model.tokenizer, model.config.data.lowercase
    if tokenizer is None and name != CUSTOM_TOKENIZER:
        tokenizer = lambda text: TOKENIZERS[name](text, lowercase)  # noqa: E731
    split = "your tokenizer" if name == CUSTOM_TOKENIZER else f"the {name} tokenizer" + (", lowercased" if lowercase else "")
    about = f"{model.config.network.name} from phase '{model.phase}', texts split by {split} as in training ({model.config.data.dataset})"
    return Classifier(model.network, model.policy, model.strength, model.vocab, model.label_names, tokenizer, model.config.data,
                      model.has_agent, about)
