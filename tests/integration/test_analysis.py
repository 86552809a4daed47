"""The attention analyses (drga/analysis): known answers, a tiny trained run, the commands.

The trained run is the keyword task of tests/tiny_network.py (the label is decided by one
keyword, 'good' or 'bad'), trained once per module with --track-examples.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch

import drga.baselines as baselines
from drga.analysis import explainability, highlighted, modified_words, saliency, stats
from drga.analysis.attention import (
    AnalysisError,
    AttentionRecord,
    compute_records,
    one_hot_attention,
    remove_token,
    squash_attention,
    token_sites,
)
from drga.analysis.maps import choose_examples, html_page, map_items
from drga.analysis.polarity import occurrence_scores
from drga.analysis.significance import compare_runs
from drga.analysis.tracking import TRACKED_FILE, read_tracked
from drga.baselines.protocol import AttentionSite, Batch, NetworkEncoding
from drga.cli import main
from drga.data import EncodedExample, collate
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.interrupts import ctrl_c_at_call
from tests.tiny_network import TinyAttentionNet

RUN = "tsv-tiny-seed3"


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished tiny run with 4 tracked examples: (run folder, config)."""
    had = "tiny" in baselines.NETWORKS
    baselines.NETWORKS["tiny"] = TinyAttentionNet
    try:
        root = tmp_path_factory.mktemp("trained")
        config = tiny_config(root, **{"train.track_examples": 4})
        Trainer(config, log=lambda _: None).run()
        yield root / "runs" / RUN, config
    finally:
        if not had:
            baselines.NETWORKS.pop("tiny", None)


def record(index, tokens, original, revised, label=0):
    return AttentionRecord(
        index, list(range(2, 2 + len(tokens))), tokens, label, np.array(original, float),
        None if revised is None else np.array(revised, float), np.array([0.5, 0.5]), np.array([0.5, 0.5]),
    )


# --- statistics with known answers ----------------------------------------------------------


def test_js_divergence_known_values():
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    assert np.allclose(stats.js_divergence(p, p), 0.0)  # identical distributions
    assert stats.js_divergence([1.0, 0.0], [0.0, 1.0]) == pytest.approx(math.log(2))  # disjoint: the maximum
    q = np.array([0.6, 0.1, 0.3])
    assert stats.js_divergence(p[0], q) == pytest.approx(stats.js_divergence(q, p[0]))  # symmetric
    assert stats.total_variation([0.2, 0.8], [0.5, 0.5]) == pytest.approx(0.3)


def test_kendall_tau_known_values():
    assert stats.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)  # 5 concordant, 1 discordant
    assert stats.kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert stats.kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))  # τ-b with a tie (scipy: 0.8165)
    assert math.isnan(stats.kendall_tau([1, 1, 1], [1, 2, 3]))  # constant: undefined


def test_t_test_and_bootstrap_known_values():
    assert stats.t_two_sided_p(2.776445, 4) == pytest.approx(0.05, abs=1e-5)  # the t table's 5% critical value
    assert stats.t_two_sided_p(2.0, 10) == pytest.approx(0.07339, abs=1e-4)
    assert stats.t_two_sided_p(1.0, 1) == pytest.approx(0.5)  # Cauchy
    t, p = stats.paired_t_test([1, 2, 3], [2, 3.5, 4])  # d = 1, 1.5, 1: mean 7/6, se 1/6
    assert t == pytest.approx(7.0) and p == pytest.approx(0.0198, abs=1e-4)
    assert stats.bootstrap_ci([0.5, 0.5, 0.5]) == pytest.approx((0.5, 0.5))
    assert all(math.isnan(end) for end in stats.bootstrap_ci([0.5]))  # one value: nothing to resample
    low, high = stats.bootstrap_ci([0.1, 0.4, 0.2, 0.3], seed=1)
    assert low < 0.25 < high and (low, high) == pytest.approx(stats.bootstrap_ci([0.1, 0.4, 0.2, 0.3], seed=1), abs=1e-15)


def test_bootstrap_interval_is_the_percentile_of_the_seeds_resample_means():
    # the study tables were written by 10,000 resamples drawn in one batch from default_rng(seed):
    # scipy's bootstrap must draw the same ones for a seed to give the committed intervals
    values = np.array([0.1, 0.4, 0.2, 0.3, 0.9])
    means = values[np.random.default_rng(3).integers(0, 5, size=(10000, 5))].mean(axis=1)
    expected = np.quantile(means, [0.025, 0.975])
    assert stats.bootstrap_ci(values, seed=3) == pytest.approx(tuple(expected), abs=1e-12)
    # 0 and 1 resampled twice: means 0, ½, ½, 1 with chances ¼, ½, ¼; the 5% and 95% percentiles are 0 and 1
    assert stats.bootstrap_ci([0.0, 1.0], level=0.9) == pytest.approx((0.0, 1.0))


# --- the token view ----------------------------------------------------------------------------


def fake_encoding():
    """Two arrays over 3 tokens, a multi-dimensional site, and an 'aspect' site over 2 other tokens."""
    mask = torch.tensor([[True, True, True]])
    arrays = torch.tensor([[[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]]])
    multi = torch.tensor([[[[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]]])  # per dimension: token 0, token 2
    zeros = lambda k, t: torch.zeros(1, k, t, 2)
    site = lambda att, k, t, m, name: AttentionSite(zeros(k, t), zeros(k, t), torch.zeros(1, k, 2), m, att, name)
    sites = (
        site(arrays, 2, 3, mask.expand(1, 2, 3).unsqueeze(0)[0], "heads"),
        site(multi, 1, 3, mask.unsqueeze(1), "dims"),
        site(torch.tensor([[[0.3, 0.7]]]), 1, 2, torch.tensor([[[True, True]]]), "aspect"),
    )
    return NetworkEncoding(sites=sites), Batch(torch.tensor([[5, 6, 7]]), mask, torch.tensor([0]))


def test_squash_rule_averages_dimensions_then_arrays_then_sites():
    encoding, batch = fake_encoding()
    sites = token_sites(encoding, batch)
    assert sites == [0, 1]  # the aspect site does not span the sentence
    weights = squash_attention(encoding.attention, encoding, sites)
    heads = torch.tensor([0.3, 0.3, 0.4])  # mean of the two arrays
    dims = torch.tensor([0.5, 0.0, 0.5])  # mean over the two dimensions
    assert torch.allclose(weights[0], (heads + dims) / 2)
    assert torch.allclose(squash_attention(encoding.attention, encoding, token_sites(encoding, batch, "dims"))[0], dims)
    with pytest.raises(AnalysisError, match="no attention site named 'aspect' spans"):
        token_sites(encoding, batch, "aspect")


@pytest.mark.parametrize("net", ["transformer", "disan"])
def test_squash_rule_on_multi_head_and_multi_dimensional_networks(net):
    network = baselines.build_network(
        net, vocab_size=30, num_classes=2, embedding_dim=8, hidden_size=8, attention_size=8, classifier_hidden=8,
        heads=2, layers=2, feedforward_size=16, dropout=0.0,
    ).eval()
    batch = collate([EncodedExample([2, 3, 4, 5], 0), EncodedExample([6, 7], 1)])
    encoding = network.encode(batch)
    weights = squash_attention(encoding.attention, encoding, token_sites(encoding, batch))
    assert torch.allclose(weights.sum(dim=1), torch.ones(2), atol=1e-5)
    assert torch.all(weights[1, 2:] == 0)  # padding


def test_remove_token_zeroes_and_renormalises():
    encoding, batch = fake_encoding()
    removed = remove_token(encoding.attention, [0, 1], torch.tensor([0]))
    assert torch.allclose(removed[0][0, 0], torch.tensor([0.0, 1.0, 0.0]))
    assert torch.allclose(removed[0][0, 1], torch.tensor([0.0, 1 / 9, 8 / 9]))
    # dimension 0 held all its mass on token 0: nothing left, it stays zero (no NaN)
    assert torch.equal(removed[1][0, 0], torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
    assert removed[2] is encoding.attention[2]  # a site that does not span the sentence is untouched
    one_hot = one_hot_attention(encoding.attention, [0, 1], torch.tensor([2]))
    assert torch.equal(one_hot[1][0, 0], torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]))


def test_removing_the_only_attended_token_changes_the_output():
    torch.manual_seed(0)
    network = TinyAttentionNet(10, 2).eval()
    batch = collate([EncodedExample([2, 3, 4, 5], 0)])
    encoding = network.encode(batch)
    only = one_hot_attention(encoding.attention, [0], torch.tensor([1]))  # all attention on token 1
    prob = lambda a: torch.softmax(network.predict(encoding, a), -1).detach().numpy()
    p = prob(only)
    assert stats.js_divergence(p, prob(remove_token(only, [0], torch.tensor([1]))))[0] > 1e-6
    assert stats.js_divergence(p, prob(remove_token(only, [0], torch.tensor([2]))))[0] == 0.0  # it had no attention


# --- analyses on hand-built records --------------------------------------------------------


def test_highlighted_counts_of_hand_built_attention():
    assert highlighted.highlighted(np.array([0.7, 0.2, 0.1]), 0.85) == 2
    assert highlighted.highlighted(np.array([0.25, 0.25, 0.25, 0.25]), 0.85) == 4
    assert highlighted.highlighted(np.array([0.9, 0.05, 0.05]), 0.85) == 1
    records = [record(0, list("abc"), [0.7, 0.2, 0.1], [0.9, 0.05, 0.05]), record(1, list("abcd"), [0.25] * 4, [0.4, 0.4, 0.1, 0.1])]
    summary = highlighted.summarize(highlighted.count_all(records, 0.85))
    assert summary["mean_n_original"] == 3.0 and summary["mean_n_revised"] == 2.0  # (2 + 4) / 2 → (1 + 3) / 2
    assert summary["reduction"] == pytest.approx(1 / 3) and summary["sentences_fewer"] == 1.0


def test_most_modified_words_of_a_hand_built_change():
    records = [
        record(0, ["good", "the", "film"], [0.2, 0.5, 0.3], [0.6, 0.1, 0.3]),
        record(1, ["the", "good", "plot"], [0.4, 0.4, 0.2], [0.2, 0.6, 0.2]),
        record(2, ["plot"], [1.0], [1.0]),
    ]
    changes = modified_words.word_changes(records)
    by_token = {c.token: c for c in changes}
    assert by_token["good"].count == 2 and by_token["good"].mean_change == pytest.approx(0.3)  # (0.4 + 0.2) / 2
    assert by_token["the"].mean_change == pytest.approx(-0.3) and by_token["the"].mean_original == pytest.approx(0.45)
    raised, lowered = modified_words.most_modified(changes, k=5)
    assert [c.token for c in raised] == ["good"]
    assert [c.token for c in lowered] == ["the"]  # film and plot did not change
    assert [c.token for c in modified_words.word_changes(records, min_count=2)] == ["good", "plot", "the"]


def test_explainability_threshold_of_synthetic_data():
    delta_alpha = np.linspace(0, 1, 201)
    assert explainability.positive_threshold(delta_alpha, delta_alpha - 0.3) == pytest.approx(0.3, abs=0.1)
    assert explainability.positive_threshold(delta_alpha, delta_alpha + 0.1) == 0.0  # positive everywhere
    assert explainability.positive_threshold(delta_alpha, -delta_alpha - 0.1) is None  # never positive
    other = explainability.random_other(torch.tensor([0, 2, 1]), torch.tensor([3, 3, 2]), torch.tensor([0.0, 0.99, 0.5]))
    assert other.tolist() == [1, 1, 0]  # never the top token


def test_maps_choose_examples_and_escape_tokens():
    records = [record(i, ["<b>", "x", "y", "z"], [0.4, 0.2, 0.2, 0.2], [0.7, 0.1, 0.1, 0.1]) for i in range(5)]
    assert [r.index for r in choose_examples(records, 2, seed=0, chosen=[3, 1])] == [3, 1]
    assert len(choose_examples(records, 2, seed=0)) == 2
    with pytest.raises(AnalysisError, match=r"examples \[9\] are not in the analysed split"):
        choose_examples(records, 2, seed=0, chosen=[9])
    page = html_page(map_items(records[:1], ["neg", "pos"]), "t")
    assert "&lt;b&gt;" in page and "<b>" not in page.split("<body>")[1]
    assert "http" not in page and "<script" not in page  # opens offline


# --- saliency and polarity with known answers ---------------------------------------------


def test_gradient_saliency_of_a_zero_word_vector_is_zero():
    torch.manual_seed(0)
    network = TinyAttentionNet(10, 2).eval()
    with torch.no_grad():
        network.embedding.weight[4] = 0.0
    batch = collate([EncodedExample([2, 3, 4, 5], 1)])
    for mode in ("net-only",):
        values, attention = saliency.gradient_saliency(network, batch, mode)
        assert values[0, 2] == 0.0 and (values[0, [0, 1, 3]] > 0).all()
        assert torch.allclose(attention.sum(), torch.tensor(1.0))


def test_leave_one_out_of_interchangeable_tokens_is_zero():
    network = TinyAttentionNet(10, 2, spread_attention=True).eval()  # uniform α over identical tokens
    importance = saliency.leave_one_out(network, EncodedExample([3, 3, 3, 3], 0), "net-only")
    assert importance.shape == (4,) and np.allclose(importance, 0.0, atol=1e-6)


def test_polarity_is_the_logit_margin_of_the_token_alone():
    torch.manual_seed(0)
    network = TinyAttentionNet(10, 2).eval()
    examples = [EncodedExample([2, 3, 4], 0), EncodedExample([5, 2], 1)]
    scores = occurrence_scores(network, examples, [(0, 1), (1, 0), (1, 1)])
    with torch.no_grad():  # Sun & Lu: with all attention on the token, the logits are W·h(e) + b
        logits = network.classifier(torch.tanh(network.transform(network.embedding.weight[[3, 5, 2]])))
    assert np.allclose(scores["polarity"], (logits[:, 1] - logits[:, 0]).numpy(), atol=1e-5)
    records = compute_records(network, examples, _vocab(10))
    assert scores["attention"][0] == pytest.approx(3 * records[0].original[1])  # L·α


def _vocab(size):
    from drga.data import Vocabulary

    return Vocabulary(["<pad>", "<unk>"] + [f"w{i}" for i in range(2, size)])


# --- the trained run: tracking, the analyze command ----------------------------------------


def test_tracking_records_every_evaluation(trained):
    run_dir, _ = trained
    tracked = read_tracked(run_dir)
    keys = [(r["phase"], r["epoch"]) for r in tracked["records"]]
    assert keys == [("pretrain", 1), ("pretrain", 2), ("baseline", 0), ("baseline", 1), ("baseline", 2), ("baseline", 3), ("agent", 1),
                    ("cotrain", 0), ("cotrain", 1), ("cotrain", 2)]
    assert len(tracked["examples"]) == 4
    for r in tracked["records"]:
        assert (r["revised"] is not None) == (r["phase"] in ("agent", "cotrain"))
        for k, example in enumerate(tracked["examples"]):
            assert len(r["original"][k]) == len(example["tokens"]) and sum(r["original"][k]) == pytest.approx(1, abs=1e-3)
    groups = {t["token"]: t["group"] for t in tracked["polarity_tokens"]}
    assert groups["good"] == "positive" and groups["bad"] == "negative"
    final = tracked["records"][-1]["polarity"]["polarity"]
    position = {t["token"]: k for k, t in enumerate(tracked["polarity_tokens"])}
    assert final[position["bad"]] < 0 and final[position["good"]] > final[position["bad"]]  # the keywords' sides
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tb" / "drga"), size_guidance={"images": 0}).Reload()
    assert "tracked_attention" in events.Tags()["images"]


def test_tracking_survives_resume(tmp_path, monkeypatch):
    overrides = {"train.track_examples": 3, "train.pretrain_epochs": 1, "train.cotrain_epochs": 1, "train.baseline_epochs": 1}
    Trainer(tiny_config(tmp_path / "a", **overrides), log=lambda _: None).run()
    with ctrl_c_at_call(Trainer, "train_epoch", 3):  # the agent phase's epoch: after pretrain 1, baseline 0 and 1 were recorded
        Trainer(tiny_config(tmp_path / "b", **overrides), log=lambda _: None).run()
    Trainer(tiny_config(tmp_path / "b", **overrides), resume=True, log=lambda _: None).run()
    a = json.loads((tmp_path / "a" / "runs" / RUN / TRACKED_FILE).read_text())
    b = json.loads((tmp_path / "b" / "runs" / RUN / TRACKED_FILE).read_text())
    assert [(r["phase"], r["epoch"]) for r in b["records"]] == [
        ("pretrain", 1), ("baseline", 0), ("baseline", 1), ("agent", 1), ("cotrain", 0), ("cotrain", 1)
    ]
    assert a == b  # every record once, with the same numbers as the uninterrupted run


def test_analyze_command_writes_every_output(trained, tmp_path, capsys):
    run_dir, config = trained
    out = tmp_path / "analysis"
    code = main(["analyze", str(run_dir / "cotrain_best.pt"), "--dataset", "tsv", "--tsv", config.data.tsv_path,
                 "--out", str(out), "--saliency-examples", "12", "--faithfulness-examples", "12", "--num-examples", "3",
                 "--reference", str(run_dir / "baseline_best.pt")])
    assert code == 0, capsys.readouterr().err
    for name in ("attention_maps.html", "transitions.md", "highlighted.md", "modified_words.csv", "explainability.csv",
                 "saliency.csv", "polarity_snapshot.csv", "polarity_tracking.csv", "faithfulness.md", "summary.md"):
        assert (out / name).stat().st_size > 0, name
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 300_000, png.name
    assert len(list(out.glob("*.png"))) == 8
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["maps"]["examples"]) == 3
    assert summary["highlighted"]["mean_n_revised"] <= summary["highlighted"]["mean_n_reference"] + 5  # all present
    assert set(summary["explainability"]) == {"original", "revised"}
    assert set(summary["saliency"]) == set(summary["faithfulness"]) == {"net-only", "with-agent"}
    # the keyword decides the label: removing the most attended token beats removing a random one,
    # and attention and leave-one-out agree on the most important token
    assert summary["explainability"]["original"]["share_delta_js_positive"] > 0.5
    assert summary["saliency"]["net-only"]["top_agreement_loo"] > 0.5


def test_trained_attention_maps_point_at_the_keyword(trained):
    from drga.analysis.attention import load_inputs

    run_dir, config = trained
    inputs = load_inputs(run_dir / "cotrain_best.pt", tsv=config.data.tsv_path)
    records = compute_records(inputs.model.network, inputs.examples, inputs.model.vocab, inputs.model.policy, inputs.beta)
    # the network learns "bad → negative, anything else → positive": 'bad' is what it must find
    negative = [r for r in records if "bad" in r.tokens]
    assert len(negative) >= 8
    assert np.mean([r.tokens[int(np.argmax(r.revised))] == "bad" for r in negative]) >= 0.9
    assert np.mean([r.tokens[int(np.argmax(r.original))] == "bad" for r in negative]) >= 0.9
    for r in records:
        assert r.original.sum() == pytest.approx(1.0) and r.revised.sum() == pytest.approx(1.0)
        assert 1 <= highlighted.highlighted(r.revised, 0.85) <= r.length


def test_analyze_refuses_bad_input(trained, tmp_path, capsys):
    run_dir, config = trained
    base = ["--out", str(tmp_path / "out"), "--tsv", config.data.tsv_path]
    code = main(["analyze", str(tmp_path / "missing.pt"), *base])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    code = main(["analyze", str(run_dir / "pretrain_best.pt"), *base])
    assert code == 2 and "holds no trained agent" in capsys.readouterr().err
    out = base[:2]  # another data set, without --tsv (which implies --dataset tsv, and is refused beside another)
    code = main(["analyze", str(run_dir / "cotrain_best.pt"), "--dataset", "subj", *out])
    assert code == 2 and "was trained on 'tsv', not 'subj'" in capsys.readouterr().err
    code = main(["analyze", str(run_dir / "cotrain_best.pt"), "--dataset", "imdb", *out])
    assert code == 2 and "unknown dataset 'imdb'" in capsys.readouterr().err
    code = main(["analyze", str(run_dir / "cotrain_best.pt"), "--dataset", "subj", *base])
    assert code == 2 and "--tsv applies to the tsv data set" in capsys.readouterr().err
    lonely = tmp_path / "copied"
    lonely.mkdir()
    shutil.copy(run_dir / "cotrain_best.pt", lonely / "cotrain_best.pt")  # a run folder without tracked examples
    code = main(["analyze", str(lonely / "cotrain_best.pt"), "--only", "transitions", *base])
    err = capsys.readouterr().err
    assert code == 2 and "no tracked_attention.json" in err and "--track-examples" in err


# --- drga compare ------------------------------------------------------------------------------


def write_results(folder, seed, baseline, drga, dataset="subj"):
    folder.mkdir(parents=True)
    rows = {  # each row as a run writes it: its phase, epoch and checkpoint beside its scores
        "baseline (equal budget)": {"phase": "baseline", "epoch": 1, "checkpoint": "baseline_best.pt",
                                    "test_net-only": {"accuracy": baseline}},
        "DRGA (co-trained)": {"phase": "cotrain", "epoch": 1, "checkpoint": "cotrain_best.pt",
                              "test_net-only": {"accuracy": drga - 0.01}, "test_with-agent": {"accuracy": drga}},
    }
    payload = {"config": {"data": {"dataset": dataset}, "run": {"seed": seed}}, "results": rows, "history": []}
    (folder / "results.json").write_text(json.dumps(payload))


def test_compare_pairs_seeds_and_reports_the_statistics(tmp_path, capsys):
    for seed, (b, d) in enumerate([(0.80, 0.81), (0.82, 0.835), (0.79, 0.80)]):
        write_results(tmp_path / "runs" / f"seed{seed}", seed, b, d)
    table = compare_runs(str(tmp_path / "runs"))
    wanted = "| subj | baseline (equal budget):net-only | DRGA (co-trained):with-agent"
    line = next(row for row in table.splitlines() if row.startswith(wanted))
    cells = [c.strip() for c in line.split("|")[2:-1]]
    assert cells[2] == "3" and cells[3] == "0.8033 ± 0.0153" and cells[4] == "0.8150 ± 0.0180"
    t, p = stats.paired_t_test([0.80, 0.82, 0.79], [0.81, 0.835, 0.80])
    assert cells[5].startswith("+0.0117") and cells[6] == f"{t:.2f}" and cells[7] == f"{p:.3f}"
    write_results(tmp_path / "runs" / "mr-seed0", 0, 0.7, 0.6, dataset="mr")  # another data set: its own line
    assert "| mr | baseline (equal budget):net-only | DRGA (co-trained):with-agent | 1 |" in compare_runs(str(tmp_path / "runs"))
    # two sets: the same model in each, paired by seed; B is 0.01 better everywhere → t = ±inf, p = 0
    for seed in range(3):
        write_results(tmp_path / "other" / f"seed{seed}", seed, 0.5, [0.82, 0.845, 0.81][seed])
    assert main(["compare", str(tmp_path / "runs"), str(tmp_path / "other"), "--a", "DRGA (co-trained):with-agent"]) == 0
    printed = capsys.readouterr().out
    assert "+0.0100 ± 0.0000" in printed and "| 0.000 |" in printed
    code = main(["compare", str(tmp_path / "nothing")])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    code = main(["compare", str(tmp_path / "runs"), "--a", "DRGA"])
    assert code == 2 and "ROW:MODE" in capsys.readouterr().err
