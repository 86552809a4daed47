"""Recording the attention of fixed dev examples during training (``drga train --track-examples N``).

At every dev evaluation the trainer calls :meth:`ExampleTracker.record`, which appends to
``tracked_attention.json`` in the run folder:

- the squashed attention (see ``SQUASH_RULE``) of N fixed dev sentences: the network's own α
  always, and the revised α′ with the agent's deterministic actions in the agent and
  co-training phases (earlier the agent is untrained);
- the probability of the gold label under each;
- the polarity and relative-attention scores of 12 followed tokens (``drga.analysis.polarity``).

Documents (HAN): ``original``/``revised`` are the per-sentence word arrays α_s one after the
other, and ``sentences_original``/``sentences_revised`` the sentence weights γ (γ′); the
examples list their ``sentence_lengths``. Token polarity is not defined for documents (see
``drga.analysis.report.POLARITY_DOCUMENTS``) and is not recorded.

The file is rewritten atomically (temporary file, then rename) and records are keyed by
(phase, epoch): an epoch repeated after ``--resume`` replaces its record instead of doubling
it. Recording draws no random numbers and restores the train/eval modes, so a run with
tracking trains exactly like one without.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from drga.analysis.attention import DOCUMENT_RULE, SQUASH_RULE, AnalysisError, compute_records
from drga.analysis.polarity import choose_polarity_tokens, occurrence_scores, token_means, token_occurrences
from drga.baselines.protocol import AttentionNetwork
from drga.core.policy import StatePolicy
from drga.data import EncodedExample, Vocabulary
from drga.files import write_text_atomic

TRACKED_FILE = "tracked_attention.json"
TRACKED_FORMAT = 1
#: How to get a tracked file, for every error that finds none.
HOW_TO_TRACK = "train the run with `drga train ... --track-examples 8` (or --set train.track_examples=8)"


def choose_tracked_examples(
    dev: Sequence[EncodedExample], count: int, seed: int, min_length: int = 5, max_length: int = 30, max_sentences: int = 8
) -> list[int]:
    """``count`` dev positions, drawn by their own ``random.Random(seed)`` among readable lengths.

    Documents: those of 2 to ``max_sentences`` sentences. The global random state is not
    touched, so tracking does not change training.
    """
    readable = lambda ex: (
        2 <= len(ex.sentences) <= max_sentences if ex.sentences is not None else min_length <= len(ex.ids) <= max_length
    )
    eligible = [i for i, ex in enumerate(dev) if readable(ex)] or list(range(len(dev)))
    return sorted(random.Random(seed).sample(eligible, min(count, len(eligible))))


def write_json_atomic(payload: dict[str, Any], path: Path) -> None:
    """Write JSON to a temporary file beside ``path``, then rename: never half a file."""
    write_text_atomic(path, json.dumps(payload, separators=(",", ":")))


def read_tracked(run_dir: str | Path) -> dict[str, Any]:
    """The run's tracked_attention.json; a clear error (saying how to get one) when absent."""
    path = Path(run_dir) / TRACKED_FILE
    if not path.is_file():
        raise AnalysisError(f"{Path(run_dir)} has no {TRACKED_FILE}: {HOW_TO_TRACK}")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise AnalysisError(f"{path} is not valid JSON ({error})") from None
    if payload.get("format") != TRACKED_FORMAT:
        raise AnalysisError(f"{path} is not a tracked-attention file of format {TRACKED_FORMAT}")
    return payload


def _rounded(values: Tensor | np.ndarray | Sequence[float] | None) -> list[float] | None:
    """The values rounded to 5 decimals (None for none: a record without the revised attention or the sentences)."""
    return None if values is None else [round(float(v), 5) for v in values]


def _p_gold(probs: np.ndarray | None, label: int) -> float | None:
    """P(gold label | X), rounded to 5 decimals (None without the probabilities)."""
    return None if probs is None else round(float(probs[label]), 5)


class ExampleTracker:
    """Records tracked examples and followed tokens at every evaluation (see the module docstring)."""

    def __init__(
        self,
        run_dir: Path,
        dev: Sequence[EncodedExample],
        train: Sequence[EncodedExample],
        vocab: Vocabulary,
        label_names: Sequence[str],
        count: int,
        seed: int,
        resume: bool,
        log: Callable[[str], None] = print,
    ):
        self.documents = bool(dev) and dev[0].sentences is not None
        self.path = Path(run_dir) / TRACKED_FILE
        self.dev = dev
        self.vocab = vocab
        self.positions = choose_tracked_examples(dev, count, seed)
        self.examples = [dev[i] for i in self.positions]
        # token polarity needs the output of one token alone, which a document network has not
        self.tokens = [] if self.documents else choose_polarity_tokens(train, vocab, len(label_names))
        self.occurrences = token_occurrences(dev, [t.id for t in self.tokens])
        examples = []
        for i in self.positions:
            example = {"dev_index": i, "tokens": vocab.decode(dev[i].ids), "label": int(dev[i].label)}
            if dev[i].sentences is not None:
                example["sentence_lengths"] = [len(sentence) for sentence in dev[i].sentences]
            examples.append(example)
        self.payload: dict[str, Any] = {
            "format": TRACKED_FORMAT,
            "squash_rule": SQUASH_RULE,
            "label_names": list(label_names),
            "examples": examples,
            "polarity_tokens": [t.as_dict() for t in self.tokens],
            "polarity_classes": [label_names[0], label_names[-1]],
            "records": [],
        }
        if self.documents:
            self.payload["document_rule"] = DOCUMENT_RULE
        if self.path.exists():
            if resume:
                self._continue(log)
            else:  # a replaced run (--overwrite): its old records do not belong to this one
                self.path.unlink()

    def _continue(self, log: Callable[[str], None]) -> None:
        try:
            old = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = {}
        same = all(old.get(k) == self.payload[k] for k in ("format", "examples", "polarity_tokens"))
        if same:
            self.payload["records"] = list(old.get("records", []))
        else:
            log(f"tracking: {self.path.name} followed other examples; starting it afresh")

    @torch.no_grad()
    def record(
        self,
        phase: str,
        epoch: int,
        global_step: int,
        network: AttentionNetwork,
        policy: StatePolicy | None,
        beta: Tensor,
    ) -> dict[str, Any]:
        """Record the current attention (α′ only with a policy), write the file, return the record."""
        records = compute_records(network, self.examples, self.vocab, policy, beta if policy is not None else None)
        entry: dict[str, Any] = {
            "phase": phase,
            "epoch": epoch,
            "global_step": global_step,
            "beta": round(float(beta), 5) if policy is not None else None,
            "original": [_rounded(r.original) for r in records],
            "revised": [_rounded(r.revised) for r in records] if policy is not None else None,
            "p_gold_original": [_p_gold(r.probs_original, r.label) for r in records],
            "p_gold_revised": [_p_gold(r.probs_revised, r.label) for r in records] if policy is not None else None,
            "polarity": None,
        }
        if self.documents:
            entry["sentences_original"] = [_rounded(r.sentence_weights()) for r in records]
            entry["sentences_revised"] = [_rounded(r.sentence_weights(True)) for r in records] if policy is not None else None
        if self.occurrences:
            scores = occurrence_scores(network, self.dev, self.occurrences, policy, beta if policy is not None else None)
            entry["polarity"] = token_means(self.tokens, self.dev, self.occurrences, scores)
        kept = [r for r in self.payload["records"] if (r["phase"], r["epoch"]) != (phase, epoch)]
        self.payload["records"] = kept + [entry]
        write_json_atomic(self.payload, self.path)
        return entry

    def image(self, entry: dict[str, Any]) -> np.ndarray:
        """[H, W, 3] uint8 heatmaps of the tracked examples in ``entry`` (for TensorBoard)."""
        from drga.analysis.maps import MapItem, heatmap_figure
        from drga.analysis.plots import figure_to_array

        names = self.payload["label_names"]
        items = []
        for k, example in enumerate(self.payload["examples"]):
            revised = np.array(entry["revised"][k]) if entry["revised"] is not None else None
            title = f"dev #{example['dev_index']} ({names[example['label']]}), P(gold) {entry['p_gold_original'][k]:.2f}"
            if entry["p_gold_revised"] is not None:
                title += f" → {entry['p_gold_revised'][k]:.2f} with agent"
            item = MapItem(title, example["tokens"], np.array(entry["original"][k]), revised)
            if "sentence_lengths" in example:
                ends = np.cumsum(example["sentence_lengths"]).tolist()
                item.sentences = list(zip([0] + ends[:-1], ends))
                item.sentence_original = np.array(entry["sentences_original"][k])
                if entry.get("sentences_revised") is not None:
                    item.sentence_revised = np.array(entry["sentences_revised"][k])
            items.append(item)
        return figure_to_array(heatmap_figure(items))
