"""The TSV loader refuses or repairs, never invents: BOM, headers, label spellings, labels only in
dev/test, undecodable bytes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drga.data.text import DataFormatError, load_tsv

ROWS = ["0\tgood film", "1\tbad film", "0\tfine acting", "1\tdull plot"] * 5


def write(path, lines, encoding="utf-8", bom=False):
    data = ("\n".join(lines) + "\n").encode(encoding)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def test_a_byte_order_mark_is_stripped(tmp_path):
    splits = load_tsv(tsv_path=write(tmp_path / "d.tsv", ROWS, bom=True))
    assert splits.label_names == ["0", "1"]


@pytest.mark.parametrize("first", ["label\ttext", "Label\tsentence", "class\treview"])
def test_a_header_is_detected_and_reported(tmp_path, first):
    splits = load_tsv(tsv_path=write(tmp_path / "d.tsv", [first, *ROWS]))
    assert splits.label_names == ["0", "1"] and len(splits.train) + len(splits.dev) + len(splits.test) == 20
    assert any("header" in note for note in splits.notes)


def test_the_header_option_overrides_detection(tmp_path):
    path = write(tmp_path / "d.tsv", ["topic\tthe text", *ROWS])
    assert load_tsv(tsv_path=path, tsv_header="yes").label_names == ["0", "1"]
    # not a known column name: a row, whose one-row label is questioned as a header or a typo
    with pytest.raises(DataFormatError, match=r"d\.tsv: label 'topic' has 1 example \(line 1\).*if line 1 is a header, skip it "
                       r"with --set data\.tsv_header=yes"):
        load_tsv(tsv_path=path)
    assert load_tsv(tsv_path=path, rare_labels="keep").label_names == ["0", "1", "topic"]
    path = write(tmp_path / "e.tsv", ["label\tthe text", *ROWS])
    assert load_tsv(tsv_path=path, tsv_header="no", rare_labels="keep").label_names == ["0", "1", "label"]


@pytest.mark.parametrize("other", ["1.0", " 1", "01", "1 "])
def test_labels_that_differ_only_in_spelling_are_refused_with_both_spellings(tmp_path, other):
    path = write(tmp_path / "d.tsv", [*ROWS, f"{other}\tanother text"])
    with pytest.raises(DataFormatError, match="differ only in spelling") as error:
        load_tsv(tsv_path=path)
    assert repr(other) in str(error.value) and "'1'" in str(error.value) and "d.tsv:21" in str(error.value)


def test_case_variants_are_refused_too(tmp_path):
    with pytest.raises(DataFormatError, match="'Pos'"):
        load_tsv(tsv_path=write(tmp_path / "d.tsv", ["pos\ta", "neg\tb", "Pos\tc"]))


def test_a_dev_or_test_label_absent_from_training_is_refused_naming_label_and_file(tmp_path):
    write(tmp_path / "train.tsv", ROWS)
    write(tmp_path / "dev.tsv", ROWS[:4])
    write(tmp_path / "test.tsv", [*ROWS[:4], "2\tneutral words"])
    with pytest.raises(DataFormatError, match=r"test\.tsv:5: label '2' never occurs in train\.tsv"):
        load_tsv(tsv_path=tmp_path)


def test_undecodable_bytes_name_file_line_and_offset_or_load_with_a_warning(tmp_path, drga_warnings):
    path = tmp_path / "d.tsv"
    good = ("\n".join(ROWS[:3]) + "\n").encode()
    path.write_bytes(good + b"1\tcaf\xf0 bad\n" + ("\n".join(ROWS[3:]) + "\n").encode())
    with pytest.raises(DataFormatError, match=rf"d\.tsv:4: byte 0xf0 at offset {len(good) + 5} is not valid utf-8"):
        load_tsv(tsv_path=path)
    splits = load_tsv(tsv_path=path, encoding_errors="replace")  # one sentence through the drga logger, no Python warning
    assert drga_warnings == [
        f"{path}: 1 line holds bytes that are not valid utf-8 (line 4); read with U+FFFD in their place (data.encoding_errors=replace)"
    ]
    assert sum(len(s) for s in (splits.train, splits.dev, splits.test)) == len(ROWS) + 1
    latin = write(tmp_path / "latin.tsv", ["0\tcafé", "1\tnaïve", *ROWS], encoding="latin-1")
    assert load_tsv(tsv_path=latin, encoding="latin-1").label_names == ["0", "1"]


labels = st.sampled_from(["pos", "neg", "neu", "0", "1", "2"])
texts = st.lists(st.text(alphabet="abc xyz.,!", min_size=1, max_size=12).filter(str.strip), min_size=6, max_size=40)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts, chosen=st.lists(labels, min_size=6, max_size=40), bom=st.booleans(), header=st.booleans())
def test_any_well_formed_file_loads_every_row_with_its_own_labels(tmp_path_factory, texts, chosen, bom, header):
    n = min(len(texts), len(chosen))
    rows = [f"{label}\t{text}" for label, text in zip(chosen[:n], texts[:n])]
    if len(set(chosen[:n])) < 2:
        return
    path = write(tmp_path_factory.mktemp("tsv") / "d.tsv", (["label\ttext"] if header else []) + rows, bom=bom)
    splits = load_tsv(tsv_path=path, rare_labels="keep")  # a label of one row in 40 is questioned (below): kept here
    assert splits.label_names == sorted(set(chosen[:n]))
    loaded = sorted(splits.label_names[e.label] for e in splits.train + splits.dev + splits.test)
    assert loaded == sorted(chosen[:n])


def test_raw_text_is_split_into_words_and_punctuation_by_the_tokenizers_library(tmp_path):
    from drga.data.tokenize import raw_text_tokens

    assert raw_text_tokens("It's a film, isn't it? (e-mail me: $5.99)") == [
        "it's", "a", "film", ",", "isn't", "it", "?", "(", "e-mail", "me", ":", "$", "5.99", ")"]
    assert raw_text_tokens("Naïve CAFÉ!", lowercase=False) == ["Naïve", "CAFÉ", "!"]
    splits = load_tsv(tsv_path=write(tmp_path / "d.tsv", ["0\tgood,film!", "1\tbad... plot"] * 10))
    assert sorted({tuple(e.tokens) for e in splits.train + splits.dev + splits.test}) == [
        ("bad", ".", ".", ".", "plot"), ("good", ",", "film", "!")]


REVIEWS = [f"review {i}: a {'fine' if i % 2 else 'dull'} film" for i in range(40)]


def test_swapped_columns_are_named_as_such_not_as_an_empty_label_or_split(tmp_path):
    swapped = [f"{text}\t{'pos' if i % 2 else 'neg'}" for i, text in enumerate(REVIEWS)]
    message = r"40 distinct labels in 40 rows, 40 of them written once \(e\.g\. 'review 0: a dull film', 'review 1: a fine film'\), " \
              r"while the text column holds only 2 distinct values \('neg', 'pos'\): are the columns swapped\?"
    with pytest.raises(DataFormatError, match=message):  # was: "... has an empty dev split"
        load_tsv(tsv_path=write(tmp_path / "swapped.tsv", swapped))
    with pytest.raises(DataFormatError, match="are the columns swapped"):  # a row without text: was "empty label"
        load_tsv(tsv_path=write(tmp_path / "gap.tsv", [*swapped, "\tpos"]))
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("train", "dev", "test"):
        write(folder / f"{name}.tsv", swapped)
    with pytest.raises(DataFormatError, match=r"train\.tsv: 40 distinct labels .* are the columns swapped"):
        load_tsv(tsv_path=folder)
    with pytest.raises(DataFormatError, match=r"d\.tsv:3: empty label"):  # a file the right way round still names the line
        load_tsv(tsv_path=write(tmp_path / "d.tsv", [*ROWS[:2], "\tgood film", *ROWS]))
