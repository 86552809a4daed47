"""The data bundled with the package (drga/data/bundled/): SUBJ loads from it when no other root has
it, and the GloVe subset glove-6b-50d-subj gives SUBJ's words the full file's vectors."""

from __future__ import annotations

import gzip
from collections import Counter

import pytest
import torch

from drga.data import Vocabulary, load_dataset, locate
from drga.data.embeddings import load_vectors, lookup_keys, resolve_vectors, split_row
from drga.data.locate import DataNotFoundError
from tests.conftest import require_data
from tests.scripts import load_script

SUBJ_FILES = ("plot.tok.gt9.5000", "quote.tok.gt9.5000")


@pytest.fixture
def no_other_root(tmp_path, monkeypatch):
    """Every data root is an empty folder: only the package's own copies can be found."""
    monkeypatch.setattr(locate, "candidate_roots", lambda explicit=None: [tmp_path / "empty-root"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def all_subj_words() -> list[str]:
    return load_script("experiments/cut_glove_subj.py").subj_words(None)


def test_subj_loads_its_10000_sentences_from_the_bundle_and_says_so(no_other_root):
    splits = load_dataset("subj")
    examples = splits.train + splits.dev + splits.test
    assert Counter(ex.label for ex in examples) == {0: 5000, 1: 5000}
    assert (len(splits.train), len(splits.dev), len(splits.test)) == (8000, 1000, 1000)
    assert str(locate.BUNDLED_ROOT / "subj") in splits.notes[0] and "(the copy bundled with the package)" in splits.notes[0]


def test_a_data_set_the_package_does_not_ship_is_still_an_error_naming_the_places_searched(no_other_root):
    with pytest.raises(DataNotFoundError, match="data set 'mr' not found") as error:
        load_dataset("mr")
    assert str(locate.BUNDLED_ROOT) not in str(error.value)  # no bundled mr/ to search


def test_only_the_subj_subset_name_resolves_to_the_bundled_vectors(no_other_root):
    """The full file's name must not fall back to a subset cut for SUBJ alone."""
    path, dim = resolve_vectors("glove-6b-50d-subj")
    assert path == locate.BUNDLED_ROOT / "glove" / "glove.6B.50d.subj.txt.gz" and dim == 50
    with pytest.raises(DataNotFoundError, match="glove.6B.50d.txt.gz"):
        resolve_vectors("glove-6b-50d")


def test_the_subset_holds_only_rows_subj_can_look_up_and_finds_the_words_it_was_cut_for(no_other_root):
    words = all_subj_words()
    with gzip.open(locate.BUNDLED_ROOT / "glove" / "glove.6B.50d.subj.txt.gz", "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    keys = [split_row(line, 50)[0] for line in lines]
    assert len(lines) == 20_179 and len(set(keys)) == len(keys) and set(keys) <= lookup_keys(words)
    assert lines[0].split()[:3] == ["the", "0.418", "0.24968"]  # the first row of glove.6B.50d.txt, as it was
    vectors = load_vectors("glove-6b-50d-subj", Vocabulary(["<pad>", "<unk>", *words]), 50, cache=False)
    # 23,907 distinct tokens: SUBJ is lowercase but for one "É", read as is when not lowercased and found as "é"
    assert (vectors.vocabulary_size, vectors.found_exact, vectors.found_lowercase, vectors.bad_rows) == (23_907, 20_179, 1, 0)


def test_the_bundled_subj_files_are_the_shared_ones_byte_for_byte():
    shared = require_data("subj")
    for name in SUBJ_FILES:
        assert (locate.BUNDLED_ROOT / "subj" / name).read_bytes() == (shared / name).read_bytes(), name


def test_the_subset_gives_every_subj_word_the_full_files_vector(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    full_file = require_data("glove") / "glove.6B.50d.txt.gz"
    vocab = Vocabulary(["<pad>", "<unk>", *all_subj_words()])
    full = load_vectors(full_file, vocab, 50, cache=False)
    subset = load_vectors("glove-6b-50d-subj", vocab, 50, cache=False)
    assert (subset.found_exact, subset.found_lowercase) == (full.found_exact, full.found_lowercase)
    torch.testing.assert_close(subset.matrix, full.matrix, rtol=0.0, atol=1e-7)
    # by hand: the first row of the GloVe file, and the one word found through its lowercase form
    torch.testing.assert_close(subset.matrix[vocab.stoi["the"], :3], torch.tensor([0.418, 0.24968, -0.41242]))
    torch.testing.assert_close(subset.matrix[vocab.stoi["É"]], full.matrix[vocab.stoi["é"]])
