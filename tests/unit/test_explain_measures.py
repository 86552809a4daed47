"""The measures the explainability study adds to drga.analysis, with numbers worked out by hand:
word lists and the attention mass on them, negation/intensification, mean highlighted tokens,
the fixed-bin erasure curve, changes between two attentions, the paired effect size, and the
faithfulness measures of one chosen mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from drga.analysis import faithfulness
from drga.analysis.explainability import fixed_bins
from drga.analysis.highlighted import mean_highlighted
from drga.analysis.lexicon import (
    SNOWBALL_ENGLISH,
    STOP_WORDS,
    is_intensifier,
    is_negator,
    mass_on,
    sentiment_lexicon,
    word_class_masses,
)
from drga.analysis.modified_words import changes_between
from drga.analysis.negation import modifier_pairs, modifier_view
from drga.analysis.stats import paired_effect_size
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.data import EncodedExample, collate
from tests.unit.test_families import make


def test_the_stop_list_is_snowballs_with_the_treebank_clitics():
    assert len(SNOWBALL_ENGLISH) == len(set(SNOWBALL_ENGLISH)) == 174
    assert {"the", "is", "not", "very", "isn't", "n't", "'s"} <= STOP_WORDS
    # the lines Snowball's file comments out stay out
    assert not {"us", "will", "can", "may", "might", "must", "good"} & STOP_WORDS


def test_vader_words():
    lexicon = sentiment_lexicon()
    assert lexicon["good"] == pytest.approx(1.9) and lexicon["bad"] == pytest.approx(-2.5)
    assert "the" not in lexicon and ":)" not in lexicon  # single words only, no emoticons
    assert is_negator("not") and is_negator("never") and is_negator("n't") and is_negator("doesn't")
    assert not is_negator("good")
    assert is_intensifier("very") and is_intensifier("really") and not is_intensifier("barely")  # a dampener


def test_mass_on_function_and_sentiment_words_by_hand():
    tokens, weights = ["the", "film", "is", "good"], [0.1, 0.2, 0.3, 0.4]
    assert mass_on(weights, tokens, STOP_WORDS) == pytest.approx(0.4)  # the + is
    masses = word_class_masses([(tokens, weights), (["bad", "plot"], [0.75, 0.25])])
    # function words: (0.4 + 0) / 2; sentiment words: (0.4 "good" + 0.75 "bad") / 2
    assert masses["function_word_mass"] == pytest.approx(0.2)
    assert masses["sentiment_word_mass"] == pytest.approx(0.575)
    # shares of tokens: function 2/4 and 0/2; sentiment 1/4 and 1/2
    assert masses["function_word_share"] == pytest.approx(0.25)
    assert masses["sentiment_word_share"] == pytest.approx(0.375)
    with pytest.raises(ValueError):
        mass_on([1.0], tokens, STOP_WORDS)


def test_modifier_pairs_within_the_window():
    lexicon = {"good", "bad", "not"}
    assert modifier_pairs(["not", "very", "good", "film"], is_negator, lexicon) == [(0, 2)]
    assert modifier_pairs(["not", "very", "good", "film"], is_intensifier, lexicon) == [(1, 2)]
    assert modifier_pairs(["not", "a", "b", "c", "good"], is_negator, lexicon) == []  # 4 tokens back: outside
    assert modifier_pairs(["not", "bad", "not", "good"], is_negator, lexicon) == [(0, 1), (0, 3), (2, 3)]
    assert modifier_pairs(["good", "not"], is_negator, lexicon) == []  # a cue after the word does not modify it


def test_modifier_view_by_hand():
    lexicon = {"good", "bad"}
    sentences = [
        (["not", "good"], [0.25, 0.75], True),
        (["never", "really", "bad"], [0.5, 0.25, 0.25], False),
        (["a", "good", "one"], [0.2, 0.6, 0.2], True),  # no negator: counted elsewhere
    ]
    view = modifier_view(sentences, is_negator, lexicon)
    assert view["sentences"] == 2
    assert view["cue_mass"] == pytest.approx((0.25 + 0.5) / 2)
    assert view["modified_word_mass"] == pytest.approx((0.75 + 0.25) / 2)
    assert view["accuracy"] == pytest.approx(0.5) and view["accuracy_elsewhere"] == pytest.approx(1.0)
    assert np.isnan(modifier_view(sentences[2:], is_negator, lexicon)["cue_mass"])


def test_mean_highlighted_by_hand():
    # δ = 0.85: [0.5, 0.3, 0.2] needs all 3 tokens (0.8 < 0.85); [0.9, 0.1] needs 1
    result = mean_highlighted([np.array([0.5, 0.3, 0.2]), np.array([0.1, 0.9])], 0.85)
    assert result["mean_n"] == pytest.approx(2.0)
    assert result["mean_fraction"] == pytest.approx((3 / 3 + 1 / 2) / 2)


def test_fixed_bins_by_hand():
    counts, means = fixed_bins([0.01, 0.04, 0.06, 1.0], [1.0, 3.0, 5.0, 7.0], [0.0, 0.05, 0.1, 0.5, 1.0])
    assert counts == [2, 1, 0, 1]  # 1.0 falls in the last bin, which is closed
    assert means[0] == pytest.approx(2.0) and means[1] == pytest.approx(5.0) and means[2] is None
    assert means[3] == pytest.approx(7.0)


@settings(max_examples=30)
@given(st.lists(st.floats(0, 1, allow_subnormal=False), min_size=1, max_size=40))
def test_fixed_bins_count_every_value_once(values):
    counts, _ = fixed_bins(values, values, [0.0, 0.25, 0.5, 1.0])
    assert sum(counts) == len(values)


def test_changes_between_two_attentions_by_hand():
    sentences = [(["a", "b"], [0.5, 0.5], [0.25, 0.75]), (["b", "c"], [0.5, 0.5], [0.75, 0.25])]
    changes = {c.token: c for c in changes_between(sentences)}
    assert changes["a"].mean_change == pytest.approx(-0.25)
    assert changes["b"].count == 2 and changes["b"].mean_change == pytest.approx(0.25)  # (0.25 + 0.25) / 2
    assert changes["b"].mean_revised == pytest.approx(0.75)
    assert [c.token for c in changes_between(sentences, min_count=2)] == ["b"]
    with pytest.raises(ValueError):
        changes_between([(["a"], [1.0], [0.5, 0.5])])


def test_paired_effect_size_by_hand():
    assert paired_effect_size([1.0, 3.0]) == pytest.approx(2 / np.sqrt(2))  # mean 2, sample std √2
    assert np.isnan(paired_effect_size([1.0])) and np.isnan(paired_effect_size([2.0, 2.0]))


def test_faithfulness_of_one_chosen_mode():
    network = make("lstm-sa").eval()
    examples = [EncodedExample([2 + j % 15 for j in range(n)], 0) for n in (7, 3)]
    state, action = state_and_action_size(network, collate(examples))
    torch.manual_seed(0)
    policy = GaussianPolicy(state, action, hidden_sizes=[8]).eval()
    both = faithfulness.faithfulness_rows(network, examples, [0, 1], policy, 0.5, steps=4)
    agent = faithfulness.faithfulness_rows(network, examples, [0, 1], policy, 0.5, steps=4, modes=["with-agent"])
    assert [r.mode for r in agent] == ["with-agent", "with-agent"]
    same = [r for r in both if r.mode == "with-agent"]
    for a, b in zip(agent, same):
        assert a.probability == pytest.approx(b.probability, abs=1e-9)
        assert a.comprehensiveness["attention"] == pytest.approx(b.comprehensiveness["attention"], abs=1e-9)
    with pytest.raises(ValueError):
        faithfulness.faithfulness_rows(network, examples, [0], None, None, modes=["with-agent"])
