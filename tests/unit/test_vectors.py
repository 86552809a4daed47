"""Pretrained word vectors: the GloVe text format, plain and gzip'd, its edge cases, the cache,
short names, and the real GloVe 6B file."""

from __future__ import annotations

import gzip
import math
import time

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drga.config import ConfigError, load_config
from drga.data import Vocabulary, load_dataset
from drga.data.embeddings import VectorFileError, load_vectors, resolve_vectors
from tests.conftest import require_data


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def vocab_of(*words: str) -> Vocabulary:
    return Vocabulary(["<pad>", "<unk>", *words])


def test_plain_and_gzipped_files_give_the_same_vectors(tmp_path):
    text = "good 1 2 3\nbad -1 -2 -3.5\nunused 0 0 0\n"
    (tmp_path / "v.txt").write_text(text)
    with gzip.open(tmp_path / "v.txt.gz", "wt") as handle:
        handle.write(text)
    vocab = vocab_of("good", "bad", "rare")
    plain = load_vectors(tmp_path / "v.txt", vocab, 3)
    zipped = load_vectors(tmp_path / "v.txt.gz", vocab, 3)
    assert torch.equal(plain.matrix[2], torch.tensor([1.0, 2.0, 3.0]))
    assert torch.equal(plain.matrix[3], torch.tensor([-1.0, -2.0, -3.5]))
    assert torch.equal(plain.matrix[0], torch.zeros(3))  # <pad>
    assert torch.equal(plain.matrix[:4], zipped.matrix[:4]) and plain.found == zipped.found == 2
    assert plain.coverage == pytest.approx(2 / 3)
    assert "vocabulary 3 words, 66.7% found" in plain.describe()


def test_a_word_missing_in_its_exact_form_falls_back_to_its_lowercase_form(tmp_path):
    (tmp_path / "v.txt").write_text("paris 1 1\nlondon 2 2\nLondon 3 3\n")
    vectors = load_vectors(tmp_path / "v.txt", vocab_of("Paris", "London", "PARIS"), 2)
    assert torch.equal(vectors.matrix[2], torch.tensor([1.0, 1.0]))  # Paris → paris
    assert torch.equal(vectors.matrix[3], torch.tensor([3.0, 3.0]))  # London exact wins over london
    assert torch.equal(vectors.matrix[4], torch.tensor([1.0, 1.0]))  # PARIS → paris
    assert (vectors.found_exact, vectors.found_lowercase) == (1, 2)


def test_keys_with_spaces_take_all_but_the_last_dim_fields(tmp_path):
    # glove.840B.300d has keys such as ". . ." and "at name@domain.com": the vector is the last dim fields
    (tmp_path / "v.txt").write_text("new york 1 2\n. . . 3 4\nyork 5 6\n")
    vectors = load_vectors(tmp_path / "v.txt", vocab_of("new york", ". . .", "york"), 2)
    assert vectors.matrix[2:5].tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert vectors.bad_rows == 0


def test_unusable_rows_are_counted_with_their_lines_never_fatal(tmp_path, drga_warnings):
    rows = ["good 1 2 3", "bad 1 2", "ugly 1 x 3", "nan nan 1 2", "inf 1 inf 2", "fine 4 5 6", "short"]
    (tmp_path / "v.txt").write_text("\n".join(rows) + "\n")
    vocab = vocab_of("good", "bad", "ugly", "nan", "inf", "fine")
    vectors = load_vectors(tmp_path / "v.txt", vocab, 3)  # one sentence through the drga logger
    assert len(drga_warnings) == 1 and drga_warnings[0].startswith(f"{tmp_path / 'v.txt'}: skipped 5 unusable rows (lines 2, 3, 4, 5, 7: ")
    assert vectors.found == 2  # good, fine
    # "bad 1 2" and "short" lack fields; "ugly 1 x 3" has no number; the NaN and inf rows are no vectors
    assert vectors.bad_rows == 5 and vectors.bad_row_lines == [2, 3, 4, 5, 7]
    assert "5 unusable rows skipped (lines 2, 3, 4, 5, 7)" in vectors.describe()
    assert torch.isfinite(vectors.matrix).all()


def test_a_file_of_another_width_is_one_clear_error(tmp_path):
    (tmp_path / "v.txt").write_text("good 1 2 3 4 5\n")
    with pytest.raises(VectorFileError, match="embedding_dim"):
        load_vectors(tmp_path / "v.txt", vocab_of("good"), 3)
    (tmp_path / "w.txt").write_text("good 1 2\n")
    with pytest.raises(VectorFileError, match=r"w\.txt:1: expected a word and 3 numbers"):
        load_vectors(tmp_path / "w.txt", vocab_of("good"), 3)


def test_a_word2vec_header_is_skipped(tmp_path):
    (tmp_path / "v.txt").write_text("2 3\ngood 1 2 3\nbad 4 5 6\n")
    assert load_vectors(tmp_path / "v.txt", vocab_of("good", "bad"), 3).found == 2


def test_missing_words_get_seeded_random_vectors_of_the_found_spread(tmp_path):
    (tmp_path / "v.txt").write_text("".join(f"w{i} {i % 3 - 1} {i % 5 - 2}\n" for i in range(50)))
    vocab = vocab_of(*(f"w{i}" for i in range(50)), "missing", "absent")
    a = load_vectors(tmp_path / "v.txt", vocab, 2, seed=1, cache=False)
    b = load_vectors(tmp_path / "v.txt", vocab, 2, seed=1, cache=False)
    c = load_vectors(tmp_path / "v.txt", vocab, 2, seed=2, cache=False)
    assert torch.equal(a.matrix, b.matrix) and not torch.equal(a.matrix[-2:], c.matrix[-2:])
    spread = math.sqrt(3) * a.matrix[2:52].std().item()
    assert a.matrix[-2:].abs().max().item() <= spread


def test_the_second_load_comes_from_the_cache_and_a_changed_vocabulary_misses_it(tmp_path):
    (tmp_path / "v.txt").write_text("good 1 2 3\nbad 4 5 6\n")
    first = load_vectors(tmp_path / "v.txt", vocab_of("good", "bad"), 3)
    second = load_vectors(tmp_path / "v.txt", vocab_of("good", "bad"), 3)
    other = load_vectors(tmp_path / "v.txt", vocab_of("good"), 3)
    assert not first.from_cache and second.from_cache and not other.from_cache
    assert torch.equal(first.matrix, second.matrix) and second.found == 2
    (tmp_path / "v.txt").write_text("good 7 8 9\nbad 4 5 6\n")  # the file changed: read again
    assert torch.equal(load_vectors(tmp_path / "v.txt", vocab_of("good", "bad"), 3).matrix[2], torch.tensor([7.0, 8.0, 9.0]))


def test_short_names_are_found_through_the_data_lookup(tmp_path, monkeypatch):
    (tmp_path / "data" / "glove").mkdir(parents=True)
    with gzip.open(tmp_path / "data" / "glove" / "glove.6B.50d.txt.gz", "wt") as handle:
        handle.write("good " + " ".join(["0.5"] * 50) + "\n")
    monkeypatch.setenv("DRGA_DATA", str(tmp_path / "data"))
    path, dim = resolve_vectors("glove-6b-50d")
    assert path == tmp_path / "data" / "glove" / "glove.6B.50d.txt.gz" and dim == 50
    assert load_vectors("glove-6b-50d", vocab_of("good"), 50).found == 1
    with pytest.raises(VectorFileError, match="embedding_dim = 50"):
        load_vectors("glove-6b-50d", vocab_of("good"), 300)
    with pytest.raises(FileNotFoundError, match="not a known name"):
        resolve_vectors("glove-typo")


def test_the_config_names_vectors_and_still_reads_the_old_key(tmp_path):
    config = load_config(overrides=["network.vectors=glove-6b-50d"])
    assert config.network.vectors == "glove-6b-50d"
    assert load_config(overrides=["network.embeddings_path=x.txt"]).network.vectors == "x.txt"
    with pytest.raises(ConfigError, match="did you mean 'network.vectors'"):
        load_config(overrides=["network.vector=glove-6b-50d"])


words = st.text(alphabet="abcXYZé'-", min_size=1, max_size=6)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    table=st.dictionaries(
        words, st.lists(st.floats(-10, 10, width=32, allow_subnormal=False), min_size=3, max_size=3), min_size=1, max_size=12
    ),
    broken=st.lists(st.sampled_from(["x 1 2", "y 1 nope 2", "z nan 0 0", "w 1 2 4e999"]), max_size=4),
    extra=st.lists(words, max_size=4),
)
def test_any_file_loads_the_rows_it_has_and_counts_the_rest(tmp_path_factory, table, broken, extra):
    folder = tmp_path_factory.mktemp("vectors")
    lines = [f"{w} {' '.join(repr(v) for v in vec)}" for w, vec in table.items()]
    lines[1:1] = broken  # after the first row, whose width the file is checked against
    (folder / "v.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    vocab_words = list(dict.fromkeys([*table, *extra]))
    vocab_words = [w for w in vocab_words if w not in ("<pad>", "<unk>")] + ["x", "y", "z", "w"]
    vectors = load_vectors(folder / "v.txt", vocab_of(*vocab_words), 3, cache=False)  # broken rows: counted below
    assert vectors.bad_rows == len(broken)
    assert torch.isfinite(vectors.matrix).all()
    for index, word in enumerate(vocab_words, start=2):
        if word in table:
            assert vectors.matrix[index].tolist() == pytest.approx(table[word], abs=1e-6)
    assert vectors.found_exact == sum(w in table for w in vocab_words)
    assert vectors.matrix[-4:].abs().max() <= max(0.25, 2 * max(abs(v) for vec in table.values() for v in vec))


def test_the_real_glove_6b_file_loads_fast_the_second_time():
    folder = require_data("glove")
    splits = load_dataset("mr", data_dir=folder.parent)
    vocab = Vocabulary.build(ex.tokens for ex in splits.train)
    first = load_vectors("glove-6b-50d", vocab, 50, data_dir=folder.parent)
    assert first.coverage > 0.8 and first.bad_rows == 0
    assert first.matrix[vocab.stoi["the"], :3].tolist() == pytest.approx([0.418, 0.24968, -0.41242])
    start = time.perf_counter()
    second = load_vectors("glove-6b-50d", vocab, 50, data_dir=folder.parent)
    assert time.perf_counter() - start < 2.0 and second.from_cache
    assert torch.equal(first.matrix, second.matrix)
