"""Parallel text: reading (plain, gzip), alignment errors, subword tokenization, batching, Multi30k."""

from __future__ import annotations

import gzip

import pytest
import torch

from drga.data import DATASETS, DataFormatError
from drga.data.parallel import (
    EncodedPair,
    ParallelBatchIterator,
    collate_parallel,
    encode_pairs,
    load_multi30k,
    load_parallel,
    read_parallel,
)
from drga.data.subword import BOS_ID, EOS_ID, PAD_ID, UNK_ID, SubwordTokenizer
from tests.conftest import require_data
from tests.nmt_helpers import write_synthetic_corpus


def test_plain_and_gzip_files_read_the_same_and_empty_sides_are_counted(tmp_path):
    source, target = "A dog runs.\n\nTwo cats sleep.\nA bird.\r\n", "Ein Hund rennt.\nLeer.\nZwei Katzen schlafen.\nEin Vogel.\n"
    (tmp_path / "a.en").write_text(source, encoding="utf-8")
    (tmp_path / "a.de").write_text(target, encoding="utf-8")
    # gzip recognised by its magic bytes, whatever the name says
    with gzip.open(tmp_path / "b.en.txt", "wt", encoding="utf-8") as handle:
        handle.write(source)
    with gzip.open(tmp_path / "b.de.gz", "wt", encoding="utf-8") as handle:
        handle.write(target)
    plain, skipped = read_parallel(tmp_path / "a.en", tmp_path / "a.de")
    packed, _ = read_parallel(tmp_path / "b.en.txt", tmp_path / "b.de.gz")
    assert plain == packed
    assert skipped == 1  # line 2 has an empty source
    assert [p.source for p in plain] == ["A dog runs.", "Two cats sleep.", "A bird."]
    assert plain[2].target == "Ein Vogel."


def test_misaligned_files_name_the_file_and_the_line(tmp_path):
    (tmp_path / "x.en").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "x.de").write_text("eins\nzwei\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"x\.en:3: misaligned.*x\.de ends after 2 lines"):
        read_parallel(tmp_path / "x.en", tmp_path / "x.de")
    with pytest.raises(DataFormatError, match=r"x\.en:3"):
        read_parallel(tmp_path / "x.de", tmp_path / "x.en")


def test_invalid_utf8_names_the_file_and_the_line(tmp_path):
    (tmp_path / "y.en").write_bytes(b"fine\nbroken \xff byte\n")
    (tmp_path / "y.de").write_text("gut\nkaputt\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"y\.en:2: not valid UTF-8"):
        read_parallel(tmp_path / "y.en", tmp_path / "y.de")


def test_generic_loader_finds_a_folder_or_explicit_files(tmp_path):
    corpus = write_synthetic_corpus(tmp_path / "corpus", train=20, dev=5, test=6)
    splits = load_parallel(corpus, source_lang="en", target_lang="de")
    assert (len(splits.train), len(splits.dev), len(splits.test)) == (20, 5, 6)
    assert splits.provides == "parallel" and splits.name == "parallel-en-de"
    explicit = load_parallel(
        None, train_files=[str(corpus / "train.en.gz"), str(corpus / "train.de.gz")],
        dev_files=[str(corpus / "val.en"), str(corpus / "val.de")], test_files=[str(corpus / "test.en"), str(corpus / "test.de")],
    )
    assert explicit.train == splits.train
    with pytest.raises(FileNotFoundError, match=r"no train files .*train\.en \+ train\.fr"):
        load_parallel(corpus, source_lang="en", target_lang="fr")
    assert "parallel" in DATASETS and "multi30k-en-de" in DATASETS


def test_subword_tokenizer_round_trips_text_and_fixes_special_ids():
    text = ["Zwei junge Männer spielen Fußball.", "Ein Hund läuft über die Wiese!", "A man in an orange hat."] * 20
    tokenizer = SubwordTokenizer.train(text, vocab_size=60)
    assert (tokenizer.id_to_piece(PAD_ID), tokenizer.id_to_piece(UNK_ID)) == ("<pad>", "<unk>")
    assert (tokenizer.id_to_piece(BOS_ID), tokenizer.id_to_piece(EOS_ID)) == ("<s>", "</s>")
    for sentence in text[:3]:
        ids = tokenizer.encode(sentence)
        assert min(ids) > EOS_ID  # no special id in plain text
        assert tokenizer.decode(ids) == sentence
        assert tokenizer.decode(ids + [EOS_ID, PAD_ID]) == sentence  # specials are dropped
    again = SubwordTokenizer(tokenizer.model_proto)  # from the bytes a checkpoint keeps
    assert again.encode(text[0]) == tokenizer.encode(text[0])


def test_collate_puts_the_source_in_tokens_and_target_plus_end_in_labels():
    pairs = [EncodedPair([5, 6, 7], [8, 9], index=4), EncodedPair([10], [11, 12, 13], index=1)]
    batch = collate_parallel(pairs)
    assert batch.tokens.tolist() == [[5, 6, 7], [10, 0, 0]]
    assert batch.mask.tolist() == [[True, True, True], [True, False, False]]
    assert batch.labels.tolist() == [[8, 9, EOS_ID, 0], [11, 12, 13, EOS_ID]]
    assert batch.extras["index"].tolist() == [4, 1]


def test_long_training_pairs_are_dropped_and_long_test_pairs_cut():
    from drga.data.parallel import ParallelPair

    tokenizer = SubwordTokenizer.train(["a b c d e f g h"] * 10, vocab_size=20)
    pairs = [ParallelPair("a b", "c d"), ParallelPair("a b c d e f g h", "a")]
    kept, report = encode_pairs(pairs, tokenizer, tokenizer, 4, 4, drop_long=True)
    assert len(kept) == 1 and report.dropped == 1 and kept[0].index == 0
    cut, report = encode_pairs(pairs, tokenizer, tokenizer, 4, 4, drop_long=False)
    assert len(cut) == 2 and report.truncated == 1 and len(cut[1].source) == 4


def test_batches_cover_every_pair_once_in_a_seeded_order():
    pairs = [EncodedPair([5] * (i % 7 + 1), [6] * (i % 5 + 1), i) for i in range(50)]
    first = [b.extras["index"].tolist() for b in ParallelBatchIterator(pairs, 8, shuffle=True, seed=3)]
    second = [b.extras["index"].tolist() for b in ParallelBatchIterator(pairs, 8, shuffle=True, seed=3)]
    assert first == second
    assert sorted(i for b in first for i in b) == list(range(50))


def test_multi30k_has_the_official_sizes():
    require_data("multi30k")
    splits = load_multi30k()
    assert (len(splits.train), len(splits.dev), len(splits.test)) == (29000, 1014, 1000)
    assert splits.test[0].source.startswith("A man in an orange hat")
    assert splits.source_lang == "en" and splits.target_lang == "de"
    with pytest.raises(ValueError, match="English and German"):
        load_multi30k(source_lang="en", target_lang="fr")


def test_a_classification_network_on_parallel_data_is_a_clear_error(tmp_path):
    from drga.config import ConfigError, load_config
    from drga.tasks.classification.data import prepare_data

    corpus = write_synthetic_corpus(tmp_path / "corpus", train=10, dev=3, test=3)
    config = load_config(None, ["data.dataset=parallel", f"data.data_dir={corpus}", "network.name=lstm-sa"])
    with pytest.raises(ConfigError, match="needs text data but data set 'parallel' provides parallel data"):
        prepare_data(config)
    assert torch.is_tensor(collate_parallel([EncodedPair([4], [5], 0)]).labels)


def test_an_epoch_can_be_a_fixed_number_of_pairs_drawn_afresh():
    pairs = [EncodedPair([5], [6], i) for i in range(50)]
    batches = ParallelBatchIterator(pairs, 8, shuffle=True, seed=1, epoch_size=20)
    assert len(batches) == 3
    first = sorted(i for b in batches for i in b.extras["index"].tolist())
    batches.set_epoch(2)
    second = sorted(i for b in batches for i in b.extras["index"].tolist())
    assert len(first) == len(set(first)) == 20 and len(second) == 20 and first != second
    assert len(ParallelBatchIterator(pairs, 8, shuffle=False, epoch_size=20)) == 7  # evaluation sees everything
