"""Scoring a translation network in one evaluation mode: perplexity, reward, BLEU and chrF.

- :func:`teacher_forced_scores`: perplexity, mean log P(y|X), the reward (eq. 5) and its parts,
  with teacher forcing, in the mode's attention (``net-only``: the network's own; ``with-agent``:
  the agent's deterministic action applied, eqs. 1–4, and how far it moved the attention);
- :func:`decode_pairs`: greedy or beam-search translations, detokenized, in the mode;
- :func:`evaluate_translation`: both, scored with sacrebleu against the raw references (BLEU with
  its brevity penalty and lengths, chrF).

Used by the translation trainer (dev every epoch, test at the end) and by ``drga evaluate`` on a
translation checkpoint, so both report the same numbers for the same checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

import torch

from drga.baselines.nmt_common import EOS_ID, PAD_ID, TranslationNetwork
from drga.baselines.protocol import Batch
from drga.data.parallel import EncodedPair, ParallelBatchIterator
from drga.data.subword import SubwordTokenizer
from drga.names import MODES, Mode
from drga.tasks.evaluation import RewardSums, scored_batches
from drga.tasks.translation.config import TranslationConfig
from drga.tasks.translation.decoding import DecodeSettings, agent_adjuster, decode_batches
from drga.tasks.translation.metrics import perplexity, score_translations


@dataclass
class TranslationEval:
    """Dev or test scores of one mode: teacher-forced perplexity and reward, decoded BLEU and chrF."""

    perplexity: float
    log_likelihood: float  #: mean log P(y|X) per sentence
    reward: float
    penalty: float
    highlighted_fraction: float
    bleu: float | None
    chrf: float | None
    sentences: int
    tokens: int
    bleu_signature: str = ""
    chrf_signature: str = ""
    brevity_penalty: float | None = None  #: BLEU's; below 1 when the translations are shorter than the references
    hypothesis_length: int | None = None  #: tokens of the translations as BLEU counts them
    reference_length: int | None = None  #: tokens of the references as BLEU counts them
    #: with-agent: the mean over sentences of TV(α, α′) averaged over the arrays (teacher-forced); None net-only
    attention_shift: float | None = None
    #: teacher-forced, the mean over sentences of the probability of ending (``</s>``) before the reference does:
    #: the network's own inclination to stop short, apart from the search (docs/results/nmt-regime.md, brevity)
    early_stop_probability: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def numbers(self) -> dict[str, float]:
        """The numeric fields (for logs and TensorBoard)."""
        return {k: float(v) for k, v in self.as_dict().items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def decode_settings(config: TranslationConfig, beam_size: int = 1, length_penalty: float | None = None) -> DecodeSettings:
    """Decoding as configured in ``[nmt]``, greedy unless ``beam_size`` > 1; ``length_penalty`` (beam search's α)
    replaces ``nmt.length_penalty`` where given."""
    nmt = config.nmt
    alpha = nmt.length_penalty if length_penalty is None else length_penalty
    return DecodeSettings(beam_size, alpha, nmt.decode_length_ratio, config.experiment.data.max_length + 1)


def early_stop_probability(output: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per sentence, 1 − Π_{t < T} (1 − P(</s> | y_<t, x)): the chance that sampling from the teacher-forced
    next-token distributions stops before the reference's own ``</s>`` at position T. [B, T, V], [B, T] → [B]."""
    stop = torch.softmax(output.float(), dim=-1)[..., EOS_ID]
    before_end = (labels != PAD_ID) & (labels != EOS_ID)  # the reference's words: </s> there ends the sentence early
    go_on = torch.log1p(-stop.clamp(max=1.0 - 1e-7)) * before_end
    return 1.0 - go_on.sum(dim=-1).exp()


class TeacherForced(TypedDict):
    """What :func:`teacher_forced_scores` measures: means per sentence, perplexity per token."""

    perplexity: float
    log_likelihood: float
    reward: float
    penalty: float
    highlighted_fraction: float
    sentences: int
    tokens: int
    attention_shift: float | None  #: None in net-only
    early_stop_probability: float


@torch.no_grad()
def teacher_forced_scores(
    network: TranslationNetwork, batches: Iterable[Batch], config: TranslationConfig, mode: str, policy=None, beta=None, device="cpu"
) -> TeacherForced:
    """Perplexity, mean log P(y|X), reward (eq. 5) and its parts under teacher forcing; with the agent,
    how far its actions moved the attention (``attention_shift``, None in ``net-only``)."""
    nll, tokens, early_stop, sums = 0.0, 0, 0.0, RewardSums()
    for batch, scored in scored_batches(network, batches, config.experiment.reward, mode, policy, beta, device):
        early_stop += early_stop_probability(scored.output, batch.labels).sum().item()
        nll -= scored.terms.log_likelihood.sum().item()
        tokens += int((batch.labels != PAD_ID).sum())
        sums.add(scored, batch.size)
    n, means = max(sums.sequences, 1), sums.means()
    return {
        "perplexity": perplexity(nll, tokens),
        "log_likelihood": means["log_likelihood"],
        "reward": means["reward"],
        "penalty": means["penalty"],
        "highlighted_fraction": means["highlighted_fraction"],
        "sentences": sums.sequences,
        "tokens": tokens,
        "attention_shift": sums.shift / n if mode == Mode.WITH_AGENT else None,
        "early_stop_probability": early_stop / n,
    }


def decode_pairs(
    network: TranslationNetwork,
    pairs: Sequence[EncodedPair],
    target_tokenizer: SubwordTokenizer,
    settings: DecodeSettings,
    mode: str,
    policy=None,
    beta=None,
    device: torch.device | str = "cpu",
    batch_size: int = 64,
    progress: bool = False,
    description: str = "decode",
    source_projection: bool = True,
) -> list[str]:
    """Detokenized translations of ``pairs`` in their order (greedy or beam search per ``settings``), in ``mode``.

    ``source_projection=False``: the with-agent mode builds eq. 1's whole state at every step
    (the plain path) instead of projecting its source side once per sentence (same translations)."""
    if mode not in MODES:
        raise ValueError(f"unknown evaluation mode {mode!r}; choose one of {', '.join(MODES)}")
    adjust = agent_adjuster(policy, beta, source_projection) if mode == Mode.WITH_AGENT else None
    batches = ParallelBatchIterator(pairs, batch_size, shuffle=False)
    ids = decode_batches(network, batches, settings, adjust, device, progress=progress, description=description, total=len(batches))
    return [target_tokenizer.decode(ids[p.index]) for p in pairs]


def evaluate_translation(
    network: TranslationNetwork,
    batches: Iterable[Batch],
    config: TranslationConfig,
    mode: str,
    policy=None,
    beta=None,
    device: torch.device | str = "cpu",
    decode: tuple[Sequence[EncodedPair], Sequence[str], SubwordTokenizer] | None = None,
    beam_size: int = 1,
    progress: bool = False,
    forced: TeacherForced | None = None,
) -> tuple[TranslationEval, list[str]]:
    """Scores of one mode, and the hypotheses.

    ``batches``: the split, for teacher-forced perplexity and reward (``forced``, when given,
    is reused instead: the teacher-forced numbers do not depend on the search). ``decode``:
    (pairs, their raw reference translations, the target tokenizer) to translate and score with
    sacrebleu — greedy for ``beam_size`` 1, else beam search; None: no BLEU or chrF.
    """
    if forced is None:
        forced = teacher_forced_scores(network, batches, config, mode, policy, beta, device)
    hypotheses: list[str] = []
    scores = None
    if decode is not None:
        pairs, references, tokenizer = decode
        hypotheses = decode_pairs(
            network, pairs, tokenizer, decode_settings(config, beam_size), mode, policy, beta, device,
            config.experiment.data.batch_size * 2, progress, f"{mode} beam {beam_size}",
        )
        scores = score_translations(hypotheses, list(references))
    result = TranslationEval(
        perplexity=forced["perplexity"], log_likelihood=forced["log_likelihood"], reward=forced["reward"],
        penalty=forced["penalty"], highlighted_fraction=forced["highlighted_fraction"],
        bleu=scores.bleu if scores else None, chrf=scores.chrf if scores else None,
        sentences=int(forced["sentences"]), tokens=int(forced["tokens"]),
        bleu_signature=scores.bleu_signature if scores else "",
        chrf_signature=scores.chrf_signature if scores else "",
        brevity_penalty=scores.brevity_penalty if scores else None,
        hypothesis_length=scores.hypothesis_length if scores else None,
        reference_length=scores.reference_length if scores else None,
        attention_shift=forced["attention_shift"], early_stop_probability=forced["early_stop_probability"],
    )
    return result, hypotheses
