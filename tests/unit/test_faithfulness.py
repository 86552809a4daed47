"""The faithfulness measures (drga/analysis/faithfulness.py): numbers worked out by hand on a
bag-of-words network whose probability is a known function of the kept tokens, integrated
gradients on a model linear in its word vectors, Kendall τ of hand-made rankings, every family
network, and ``drga analyze --only faithfulness`` on a tiny trained run."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pytest
import torch
from torch import Tensor, nn

import drga.baselines as baselines
from drga.analysis import faithfulness
from drga.analysis.faithfulness import BINS, ranking, rationale_size
from drga.analysis.stats import kendall_tau
from drga.baselines import NETWORK_INPUTS
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
from drga.cli import main
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.data import EncodedExample, collate
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.tiny_network import TinyAttentionNet
from tests.unit.test_families import CLASSIFIERS, make

#: Token ids of the hand-worked sentence: its evidence e (the one-dimensional word vector) and attention score.
A, B, C, D = 2, 3, 4, 5
EVIDENCE = {A: 2.0, B: -1.0, C: 0.5, D: 0.0}
ATTENTION_SCORE = {A: 1.0, B: -1.0, C: 2.0, D: 0.0}  # attention ranks c > a > d > b


class EvidenceNet(AttentionNetwork):
    """Bag of words: the logit of class 1 is z = Σ_t e_t over the sentence's tokens (class 0: 0), so
    p(1|x) = σ(z) whatever the attention; α = softmax of a fixed score per token."""

    net_name = "evidence"

    def __init__(self):
        super().__init__()
        table = torch.zeros(8, 1)
        for token, value in EVIDENCE.items():
            table[token, 0] = value
        self.embedding = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
        scores = torch.zeros(8)
        for token, value in ATTENTION_SCORE.items():
            scores[token] = value
        self.register_buffer("scores", scores)

    def encode(self, batch: Batch) -> NetworkEncoding:
        words = self.embedding(batch.tokens)  # [B, T, 1]
        alpha = masked_softmax(self.scores[batch.tokens], batch.mask)
        site = AttentionSite.single(words, words, torch.zeros(batch.size, 1), batch.mask, alpha)
        return NetworkEncoding(sites=(site,), cache={"words": words, "mask": batch.mask})

    def logit(self, encoding: NetworkEncoding) -> Tensor:
        return (encoding.cache["words"][..., 0] * encoding.cache["mask"]).sum(dim=1)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        z = self.logit(encoding)
        return torch.stack([torch.zeros_like(z), z], dim=-1)


class LinearProbabilityNet(EvidenceNet):
    """p(1|x) = 0.5 + Σ_t e_t / 10: a probability linear in the word vectors (outputs are log-probabilities)."""

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        p = 0.5 + self.logit(encoding) / 10
        return torch.log(torch.stack([1 - p, p], dim=-1))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


SENTENCE = EncodedExample([A, B, C, D], 1)


# --- the pieces -------------------------------------------------------------------------------


def test_rationale_size_is_the_top_k_percent_with_at_least_one_token():
    assert [rationale_size(4, k) for k in BINS] == [1, 1, 1, 1, 2]
    assert [rationale_size(30, k) for k in BINS] == [1, 1, 3, 6, 15]
    assert [rationale_size(200, k) for k in BINS] == [2, 10, 20, 40, 100]
    assert rationale_size(3, 50) == 1  # ⌊1.5⌋: never more than k %, except the one-token floor


def test_ranking_breaks_ties_by_position():
    assert ranking([0.1, 0.5, 0.5, 0.2, 0.5]).tolist() == [1, 2, 4, 3, 0]
    assert ranking([0.0, 0.0, 0.0]).tolist() == [0, 1, 2]
    assert ranking([-1.0, 2.0]).tolist() == [1, 0]  # signed scores: the most positive first


def test_random_ranking_is_seeded_per_sentence():
    first = faithfulness.random_scores(7, 3, 12)
    assert np.array_equal(first, faithfulness.random_scores(7, 3, 12))
    assert not np.array_equal(first, faithfulness.random_scores(8, 3, 12))  # another seed
    assert not np.array_equal(first, faithfulness.random_scores(7, 4, 12))  # another sentence
    assert np.all((first >= 0) & (first < 1))


def test_kendall_tau_of_hand_made_rankings():
    attention, ig = [2.0, -1.0, 2.5, 0.0], [2.0, -1.0, 0.5, 0.0]  # orders c > a > d > b and a > c > d > b
    assert kendall_tau(attention, ig) == pytest.approx(4 / 6)  # 5 concordant pairs, 1 discordant (a, c)
    assert kendall_tau([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1.0, 1.0], [1.0, 2.0]))  # a constant ranking has no order


# --- by hand on the bag-of-words network ------------------------------------------------------


def test_comprehensiveness_sufficiency_and_leave_one_out_by_hand():
    # e = (2, -1, 0.5, 0): z = 1.5, ŷ = 1, p(ŷ|x) = σ(1.5) = 0.81757. L = 4: n_k = 1, 1, 1, 1, 2.
    (row,) = faithfulness.faithfulness_rows(EvidenceNet().eval(), [SENTENCE], [0], None, None, seed=0)
    assert row.mode == "net-only" and row.predicted == 1 and row.length == 4
    assert row.probability == pytest.approx(0.81757, abs=1e-5)
    # leave-one-out o_t = σ(1.5) − σ(1.5 − e_t): a 0.81757 − σ(−0.5) = 0.44003; b − σ(2.5) = −0.10657; c − σ(1) = 0.08652; d 0
    assert row.scores["leave_one_out"] == pytest.approx([0.44003, -0.10657, 0.08652, 0.0], abs=1e-5)
    # attention ranks c, a, d, b: r_k = {c} for k ≤ 20 %, {c, a} at 50 %
    #   comprehensiveness: σ(1.5) − σ(1.0) = 0.08652; {c, a} removed: σ(1.5) − σ(−1) = 0.54863
    #   sufficiency: σ(1.5) − σ(0.5) = 0.19512; {c, a} kept: σ(1.5) − σ(2.5) = −0.10657
    assert row.comprehensiveness["attention"] == pytest.approx([0.08652] * 4 + [0.54863], abs=1e-5)
    assert row.sufficiency["attention"] == pytest.approx([0.19512] * 4 + [-0.10657], abs=1e-5)
    assert row.aopc("comprehensiveness", "attention") == pytest.approx((4 * 0.08652 + 0.54863) / 5, abs=1e-5)
    # integrated gradients rank by e_t (see the IG test): a, c, d, b; r = {a}, then {a, c}
    #   comprehensiveness: σ(1.5) − σ(−0.5) = 0.44003; {a, c}: σ(1.5) − σ(−1) = 0.54863
    #   sufficiency: σ(1.5) − σ(2) = −0.06322; {a, c} kept: σ(1.5) − σ(2.5) = −0.10657
    assert row.comprehensiveness["integrated_gradients"] == pytest.approx([0.44003] * 4 + [0.54863], abs=1e-5)
    assert row.sufficiency["integrated_gradients"] == pytest.approx([-0.06322] * 4 + [-0.10657], abs=1e-5)
    # τ: attention vs IG 4/6 (one discordant pair, a and c), IG vs LOO 1 (both follow e_t); attention vs LOO the same as vs IG
    assert row.tau_attention_ig == pytest.approx(4 / 6)
    assert row.tau_attention_loo == pytest.approx(4 / 6)
    assert row.tau_ig_loo == pytest.approx(1.0)
    # the random ranking removes and keeps its own top tokens, by the same formulas
    order = ranking(faithfulness.random_scores(0, 0, 4))
    expected = [sigmoid(1.5) - sigmoid(1.5 - sum(EVIDENCE[SENTENCE.ids[t]] for t in order[: rationale_size(4, k)])) for k in BINS]
    assert row.comprehensiveness["random"] == pytest.approx(expected, abs=1e-6)
    assert row.scores["random"] == pytest.approx(faithfulness.random_scores(0, 0, 4).tolist())


def test_the_random_ranking_over_several_draws_is_their_mean_and_its_first_draw_the_single_ones():
    assert np.array_equal(faithfulness.random_scores(0, 3, 12, draw=0), faithfulness.random_scores(0, 3, 12))
    assert not np.array_equal(faithfulness.random_scores(0, 3, 12, draw=1), faithfulness.random_scores(0, 3, 12))
    assert not np.array_equal(faithfulness.random_scores(0, 3, 12, draw=1), faithfulness.random_scores(0, 3, 12, draw=2))
    (single,) = faithfulness.faithfulness_rows(EvidenceNet().eval(), [SENTENCE], [0], None, None, seed=0)
    (row,) = faithfulness.faithfulness_rows(EvidenceNet().eval(), [SENTENCE], [0], None, None, seed=0, random_draws=3)

    def by_hand(draw: int, measure: str) -> list[float]:
        """Draw ``draw``'s curve by the formulas: p(1|x) = σ(z), z the evidence of the kept tokens."""
        order = ranking(faithfulness.random_scores(0, 0, 4, draw))
        curve = []
        for k in BINS:
            top = set(order[: rationale_size(4, k)].tolist())
            kept = [t for t in range(4) if (t not in top) == (measure == "comprehensiveness")]
            curve.append(sigmoid(1.5) - sigmoid(sum(EVIDENCE[SENTENCE.ids[t]] for t in kept)))
        return curve

    for measure in ("comprehensiveness", "sufficiency"):
        curves = [by_hand(draw, measure) for draw in range(3)]
        assert getattr(single, measure)["random"] == pytest.approx(curves[0], abs=1e-6)
        assert getattr(row, measure)["random"] == pytest.approx(np.mean(curves, axis=0), abs=1e-6)
        assert row.random_draws[measure] == pytest.approx([np.mean(c) for c in curves], abs=1e-6)
        assert getattr(row, measure)["attention"] == getattr(single, measure)["attention"]  # the other rankings as before
    assert single.random_draws is None and row.scores["random"] == single.scores["random"]  # the first draw's scores
    summary = faithfulness.summarize([row])["net-only"]
    assert summary["random_draws"] == 3 and summary["random_by_draw"]["sufficiency"] == pytest.approx(row.random_draws["sufficiency"])
    one = faithfulness.summarize([single])["net-only"]
    assert one["random_draws"] == 1 and "random_by_draw" not in one
    with pytest.raises(faithfulness.AnalysisError):
        faithfulness.faithfulness_rows(EvidenceNet().eval(), [SENTENCE], [0], None, None, random_draws=0)


def test_removal_deletes_the_tokens_rather_than_zeroing_them():
    # A network that counts its tokens tells deletion from masking: p(1|x) = σ(L − 3).
    class Counter(EvidenceNet):
        def logit(self, encoding):
            return encoding.cache["mask"].sum(dim=1) - 3 + 0 * super().logit(encoding)  # 0·z: a graph for the IG

    (row,) = faithfulness.faithfulness_rows(Counter().eval(), [SENTENCE], [0], None, None)
    # L = 4: p = σ(1); one token removed: σ(0); only one kept: σ(−2); two removed (50 %): σ(−1)
    p = sigmoid(1)
    assert row.comprehensiveness["attention"] == pytest.approx([p - 0.5] * 4 + [p - sigmoid(-1)], abs=1e-6)
    assert row.sufficiency["attention"] == pytest.approx([p - sigmoid(-2)] * 4 + [p - sigmoid(-1)], abs=1e-6)


def test_integrated_gradients_of_a_linear_model_are_input_times_weight():
    # p(1|e) = 0.5 + Σ e_t / 10 is linear: IG_t = (e_t − 0)·(1/10) exactly, and Σ IG = p(e) − p(0)
    batch = collate([SENTENCE, EncodedExample([C, A], 1)])
    ig = faithfulness.integrated_gradients(LinearProbabilityNet().eval(), batch, "net-only", torch.tensor([1, 1]))
    np.testing.assert_allclose(ig.numpy(), [[0.2, -0.1, 0.05, 0.0], [0.05, 0.2, 0.0, 0.0]], atol=1e-6)  # padding: 0
    # target class 0: p(0|e) = 0.5 − Σ e_t / 10, so the signs flip
    ig0 = faithfulness.integrated_gradients(LinearProbabilityNet().eval(), batch, "net-only", torch.tensor([0, 0]))
    np.testing.assert_allclose(ig0.numpy(), -ig.numpy(), atol=1e-6)


def test_integrated_gradients_of_the_sigmoid_network_by_hand():
    # p(1|a·e) = σ(a·z): ∂p/∂e_t = a·σ'(a·z), so IG_t = e_t·∫₀¹σ'(a·z)da = e_t·(σ(z) − σ(0))/z (completeness)
    batch = collate([SENTENCE])
    ig = faithfulness.integrated_gradients(EvidenceNet().eval(), batch, "net-only", torch.tensor([1]), steps=50)
    scale = (sigmoid(1.5) - 0.5) / 1.5  # 0.21172
    assert ig[0].tolist() == pytest.approx([2 * scale, -scale, 0.5 * scale, 0.0], abs=1e-6)
    assert float(ig.sum()) == pytest.approx(sigmoid(1.5) - 0.5, abs=1e-6)


def test_summary_averages_sentences_and_serialises_to_json(tmp_path):
    examples = [SENTENCE, EncodedExample([D, A, B], 0), EncodedExample([C], 1)]  # the one-token sentence is skipped
    rows = faithfulness.faithfulness_rows(EvidenceNet().eval(), examples, [0, 1, 2], None, None)
    assert [r.index for r in rows] == [0, 1]
    assert rows[1].predicted == 1  # z = 1: ŷ is the network's prediction, not the label 0
    result = faithfulness.write_faithfulness(rows, tmp_path)
    summary = json.loads(json.dumps(result["summary"]))
    net = summary["net-only"]
    assert net["sentences"] == 2
    for measure in ("comprehensiveness", "sufficiency"):
        for name in faithfulness.RANKINGS:
            per_bin = [net[measure][name][str(k)] for k in BINS]
            assert per_bin == pytest.approx([np.mean([getattr(r, measure)[name][i] for r in rows]) for i in range(5)])
            assert net[measure][name]["aopc"] == pytest.approx(np.mean(per_bin))
    assert net["tau_ig_loo"]["mean"] == pytest.approx(1.0) and net["tau_ig_loo"]["n"] == 2
    lines = (tmp_path / "faithfulness.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1]
    assert "| net-only (α) | attention |" in result["markdown"]
    assert (tmp_path / "faithfulness.csv").read_text().count("\n") == 3


# --- every family, both modes -----------------------------------------------------------------


def family_examples(kind: str) -> list[EncodedExample]:
    if kind == "aspect":
        return [EncodedExample([2, 3, 4, 5, 6, 7], 1, {"aspect": [4, 5], "aspect_span": [2, 4]}),
                EncodedExample([8, 9, 10], 2, {"aspect": [9], "aspect_span": [1, 2]})]
    if kind == "document":
        docs = [[[2, 3, 4], [5, 6], [7, 8, 9, 10]], [[11, 12], [3]]]
        return [EncodedExample([i for s in d for i in s], 0, sentences=d) for d in docs]
    return [EncodedExample([2 + j % 15 for j in range(n)], 0) for n in (7, 3, 12)]


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_every_family_gets_both_modes_and_consistent_measures(name):
    network = make(name).eval()
    examples = family_examples(NETWORK_INPUTS[name])
    state, action = state_and_action_size(network, collate(examples))
    torch.manual_seed(0)
    policy = GaussianPolicy(state, action, hidden_sizes=[8]).eval()
    rows = faithfulness.faithfulness_rows(network, examples, range(len(examples)), policy, 0.5, steps=8)
    assert [r.mode for r in rows] == ["net-only"] * len(examples) + ["with-agent"] * len(examples)
    for r in rows:
        assert r.length == len(examples[r.index].ids)
        assert all(len(v) == r.length for v in r.scores.values())
        # with a one-token rationale, comprehensiveness is the leave-one-out of the ranking's top token
        for ranking_name in faithfulness.RANKINGS:
            top = int(ranking(r.scores[ranking_name])[0])
            assert r.comprehensiveness[ranking_name][0] == pytest.approx(r.scores["leave_one_out"][top], abs=1e-9)
            assert all(-1 <= v <= 1 for v in r.comprehensiveness[ranking_name] + r.sufficiency[ranking_name])
        assert sum(r.scores["attention"]) == pytest.approx(1.0, abs=1e-5)  # one weight per token (ω for documents)


# --- drga analyze ------------------------------------------------------------------------------


@pytest.fixture
def tiny_run(tmp_path, monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
    config = tiny_config(tmp_path, **{"train.pretrain_epochs": 1, "train.cotrain_epochs": 1})
    Trainer(config, log=lambda _: None).run()
    return tmp_path / "runs" / "tsv-tiny-seed3", config


def test_analyze_writes_the_faithfulness_of_both_modes_and_of_a_baseline(tiny_run, tmp_path, capsys):
    run_dir, config = tiny_run
    out = tmp_path / "analysis"
    base = ["--tsv", config.data.tsv_path, "--only", "faithfulness", "--faithfulness-examples", "10", "--ig-steps", "10"]
    assert main(["analyze", str(run_dir / "cotrain_best.pt"), "--out", str(out), *base]) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())["faithfulness"]
    assert set(summary) == {"net-only", "with-agent"}
    assert all(s["sentences"] == 10 for s in summary.values())
    assert "## Faithfulness (ERASER)" in (out / "summary.md").read_text()
    assert len((out / "faithfulness.jsonl").read_text().splitlines()) == 20
    # the equal-budget baseline has no agent: its attention is measured in net-only mode
    baseline = tmp_path / "baseline"
    assert main(["analyze", str(run_dir / "baseline_best.pt"), "--out", str(baseline), *base]) == 0, capsys.readouterr().err
    assert set(json.loads((baseline / "summary.json").read_text())["faithfulness"]) == {"net-only"}
    # every other analysis still needs the agent
    code = main(["analyze", str(run_dir / "baseline_best.pt"), "--out", str(baseline), "--tsv", config.data.tsv_path])
    assert code == 2 and "holds no trained agent" in capsys.readouterr().err
