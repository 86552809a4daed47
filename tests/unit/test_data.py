"""Loaders on the real benchmark files, and on small files the tests write themselves."""

from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from drga.data import (
    BatchIterator,
    DataFormatError,
    DataNotFoundError,
    TextExample,
    Vocabulary,
    encode_examples,
    holdout_split,
    load_dataset,
    parse_tree,
    stratified_split,
)
from tests.conftest import require_data


def test_mr_has_10662_balanced_sentences():
    folder = require_data("mr")
    data = load_dataset("mr", data_dir=folder)
    assert len(data.train) + len(data.dev) + len(data.test) == 10662
    assert Counter(ex.label for ex in data.train + data.dev + data.test) == {0: 5331, 1: 5331}
    assert (len(data.train), len(data.dev), len(data.test)) == (8530, 1066, 1066)


def test_subj_has_10000_sentences_split_80_10_10():
    folder = require_data("subj")
    data = load_dataset("subj", data_dir=folder)
    assert (len(data.train), len(data.dev), len(data.test)) == (8000, 1000, 1000)
    assert Counter(ex.label for ex in data.test) == {0: 500, 1: 500}
    assert data.label_names == ["objective", "subjective"]


def test_split_is_a_pure_function_of_the_seed():
    folder = require_data("subj")
    first = load_dataset("subj", data_dir=folder, split_seed=7)
    again = load_dataset("subj", data_dir=folder, split_seed=7)
    other = load_dataset("subj", data_dir=folder, split_seed=8)
    assert [ex.tokens for ex in first.test] == [ex.tokens for ex in again.test]
    assert [ex.tokens for ex in first.test] != [ex.tokens for ex in other.test]
    train = {" ".join(ex.tokens) for ex in first.train}
    assert not any(" ".join(ex.tokens) in train for ex in first.test[:50] if ex.tokens)  # no leakage by construction


def test_sst_official_splits_and_labels():
    folder = require_data("sst")
    data = load_dataset("sst", data_dir=folder)
    assert (len(data.train), len(data.dev), len(data.test)) == (8543, 1101, 2210)
    assert sorted({ex.label for ex in data.train}) == [0, 1, 2, 3, 4]
    assert len(data.label_names) == 5
    binary = load_dataset("sst2", data_dir=folder)
    assert (len(binary.train), len(binary.dev), len(binary.test)) == (6920, 872, 1821)
    assert sorted({ex.label for ex in binary.test}) == [0, 1]


def test_sst_phrase_level_adds_phrases_to_training_only():
    folder = require_data("sst")
    data = load_dataset("sst", data_dir=folder, phrase_level=True)
    # every distinct labelled phrase of the 8,543 training trees once (the literature's ~155k)
    assert len(data.train) == 157_400 and len(data.dev) == 1101 and len(data.test) == 2210
    assert len({(tuple(e.tokens), e.label) for e in data.train}) == len(data.train)
    assert "161177 repeats dropped" in data.notes[0]
    sentences = load_dataset("sst", data_dir=folder)
    assert len(sentences.train) == 8543 and [e.tokens for e in sentences.test] == [e.tokens for e in data.test]


def test_parse_tree_handles_multi_piece_leaves_and_escapes():
    tree = parse_tree(r"(3 (2 (2 8 1\/2) (2 -LRB-)) (4 good))")
    assert tree.label == 3
    assert tree.leaves() == ["8", "1/2", "(", "good"]


@pytest.mark.parametrize("line", ["(3 (2 a) (4 b)", "3 (2 a)", "(x (2 a))", "(3 (2 a)) extra", "(3)"])
def test_malformed_tree_names_file_and_line(tmp_path, line):
    folder = tmp_path / "sst"
    folder.mkdir()
    (folder / "train.txt").write_text("(3 (2 fine) (3 tree))\n" + line + "\n")
    (folder / "dev.txt").write_text("(1 (1 ok))\n")
    (folder / "test.txt").write_text("(1 (1 ok))\n")
    with pytest.raises(DataFormatError, match=r"train\.txt:2: malformed tree"):
        load_dataset("sst", data_dir=folder)


def test_tsv_single_file_split_and_labels(tmp_path):
    path = tmp_path / "mine.tsv"
    rows = [f"{'pos' if i % 2 else 'neg'}\tsentence number {i}" for i in range(40)] + ["pos\t   "]
    path.write_text("\n".join(rows) + "\n")
    data = load_dataset("tsv", tsv_path=path)
    assert data.label_names == ["neg", "pos"]
    assert (len(data.train), len(data.dev), len(data.test)) == (32, 4, 4)
    assert any("skipped 1 line with empty text" in note for note in data.notes)


def test_tsv_folder_with_official_splits(tmp_path):
    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.tsv").write_text("a\tx y\nb\tz\n")
    data = load_dataset("tsv", tsv_path=tmp_path)
    assert [len(data.train), len(data.dev), len(data.test)] == [2, 2, 2]


def test_tsv_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a\tfine text\nno tab on this line\n")
    with pytest.raises(DataFormatError, match=r"bad\.tsv:2: expected 'label<TAB>text'"):
        load_dataset("tsv", tsv_path=path)


def test_missing_data_names_the_files_and_places(tmp_path, monkeypatch):
    import drga.data.locate as locate

    monkeypatch.setenv("DRGA_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(locate, "_PROJECT_ROOT", tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError) as error:
        load_dataset("mr")
    message = str(error.value)
    assert "rt-polarity.neg" in message and "--data-dir" in message
    for place in (tmp_path / "nowhere" / "mr", tmp_path / "cache" / "drga" / "data" / "mr"):
        assert str(place) in message
    # a folder the user names is where the data must be (issue 62): that folder alone is named, nothing else searched
    with pytest.raises(DataNotFoundError) as error:
        load_dataset("mr", data_dir=tmp_path / "explicit")
    message = str(error.value)
    assert "rt-polarity.neg" in message and str(tmp_path / "explicit") in message and str(tmp_path / "explicit" / "mr") in message
    assert "nothing else is searched" in message and str(tmp_path / "nowhere") not in message


def test_drga_data_environment_variable_is_used(tmp_path, monkeypatch):
    folder = tmp_path / "root" / "subj"
    folder.mkdir(parents=True)
    (folder / "plot.tok.gt9.5000").write_text("\n".join(f"plot {i}" for i in range(20)) + "\n")
    (folder / "quote.tok.gt9.5000").write_text("\n".join(f"quote {i}" for i in range(20)) + "\n")
    monkeypatch.setenv("DRGA_DATA", str(tmp_path / "root"))
    data = load_dataset("subj")
    assert len(data.train) + len(data.dev) + len(data.test) == 40


def test_unknown_dataset_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown dataset 'imdb'"):
        load_dataset("imdb")


def test_vocabulary_min_frequency_and_specials():
    vocab = Vocabulary.build([["a", "b", "a"], ["c", "a", "b"]], min_freq=2)
    assert vocab.itos == ["<pad>", "<unk>", "a", "b"]
    assert vocab.encode(["a", "zzz", "b"]) == [2, 1, 3]


def test_encoding_counts_truncation_and_unknowns():
    vocab = Vocabulary.build([["a", "b"]])
    examples = [TextExample(["a", "b", "a", "b", "a"], 0), TextExample(["q"], 1)]
    encoded, report = encode_examples(examples, vocab, max_length=3)
    assert [ex.ids for ex in encoded] == [[2, 3, 2], [1]]
    assert (report.truncated, report.unknown_tokens, report.tokens) == (1, 1, 4)
    with pytest.raises(ValueError, match="no tokens"):
        encode_examples([TextExample([], 0)], vocab, 3)


def test_batches_pad_and_order_is_fixed_by_seed_and_epoch():
    vocab = Vocabulary.build([["a", "b", "c"]])
    examples, _ = encode_examples([TextExample(["a"] * (i % 5 + 1), i % 2) for i in range(30)], vocab, 10)
    iterator = BatchIterator(examples, 4, shuffle=True, seed=3)
    first = [b.tokens.tolist() for b in iterator]
    assert first == [b.tokens.tolist() for b in iterator]
    iterator.set_epoch(1)
    assert first != [b.tokens.tolist() for b in iterator]
    batch = next(iter(BatchIterator(examples, 30, shuffle=False)))
    assert torch.equal(batch.mask, batch.tokens != 0) and batch.mask.sum().item() == sum(len(e.ids) for e in examples)


def test_stratified_split_keeps_class_proportions():
    examples = [TextExample(["x"], 0) for _ in range(80)] + [TextExample(["y"], 1) for _ in range(20)]
    train, dev, test = stratified_split(examples, seed=0)
    assert Counter(e.label for e in test) == {0: 8, 1: 2}
    assert len(train) == 80


def test_holdout_split_keeps_every_sst_tree_on_one_side():
    # data.agent_holdout on phrase-level SST: a held-out sentence whose phrases the network trains
    # on is no held-out sentence, so a tree's phrases go to one side together
    data = load_dataset("sst", data_dir=require_data("sst"), phrase_level=True)
    kept, held_out = holdout_split(data.train, seed=1, fraction=0.2)
    assert len(kept) + len(held_out) == 157_400
    kept_trees, held_trees = {e.extras["group"] for e in kept}, {e.extras["group"] for e in held_out}
    assert not kept_trees & held_trees
    # 12 of the 8,543 trees repeat an earlier tree's every labelled phrase, which are dropped
    assert len(kept_trees | held_trees) == 8531
    assert abs(len(held_trees) - 0.2 * 8531) <= 5  # a fifth of each label's trees, rounded per label
    assert 0.17 < len(held_out) / 157_400 < 0.23  # and about a fifth of the phrases


def test_holdout_split_without_groups_is_the_stratified_split():
    # MR and SUBJ (sentence-level): the same split as before groups existed, so no number moves
    examples = [TextExample([str(i)], i % 3) for i in range(200)]
    kept, held_out = holdout_split(examples, seed=5, fraction=0.2)
    expected_kept, expected_held, _ = stratified_split(examples, 5, (0.8, 0.2, 0.0))
    assert (kept, held_out) == (expected_kept, expected_held)


@settings(max_examples=60)
@given(
    groups=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 6)), min_size=1, max_size=40),
    fraction=st.floats(0.05, 0.45),
    seed=st.integers(0, 1000),
)
def test_holdout_split_never_splits_a_group(groups, fraction, seed):
    # groups of 1-6 phrases, the longest (first) one carrying the group's label
    examples = [
        TextExample(["w"] * (size - member), label if member == 0 else (label + member) % 3, {"group": number})
        for number, (label, size) in enumerate(groups)
        for member in range(size)
    ]
    kept, held_out = holdout_split(examples, seed, fraction)
    assert sorted(map(id, kept + held_out)) == sorted(map(id, examples))  # every example once
    assert not {e.extras["group"] for e in kept} & {e.extras["group"] for e in held_out}
    for label in range(3):  # stratified by the group's label, as stratified_split rounds it
        of_label = [number for number, (group_label, _) in enumerate(groups) if group_label == label]
        held = {e.extras["group"] for e in held_out} & set(of_label)
        assert len(held) == len(of_label) - round((1 - fraction) * len(of_label))
