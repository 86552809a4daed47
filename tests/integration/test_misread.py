"""What a user's data can no longer be misread as (issue 44), as a user meets it on the command line:
label names matched by name on evaluate and analyze, resume after the data changed, warnings as one
sentence of the drga logger; and every command that reads a checkpoint, given mismatched data."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path

import pytest

from drga.checkpoint_format import CheckpointError, load_checkpoint, save_atomic
from drga.cli import main
from drga.tasks.classification.trained import label_order
from tests.nmt_helpers import write_synthetic_corpus

TINY = [
    "network.embedding_dim=8", "network.hidden_size=8", "network.attention_size=8", "network.classifier_hidden=8",
    "agent.hidden_sizes=8", "train.agent_epochs=0", "train.cotrain_epochs=0", "train.fair_baseline=false",
    "train.lr=0.03", "data.batch_size=16", "train.pretrain_epochs=1",
]
KEYWORDS = {2: ["bad", "good"], 3: ["bad", "meh", "good"]}


def keyword_lines(names: list[str], count: int, seed: int) -> list[str]:
    """``label<TAB>text`` lines of 5–10 words, one of them the keyword of the label (names[i] ↔ KEYWORDS[i])."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        k = rng.randrange(len(names))
        words = [f"w{rng.randint(0, 30)}" for _ in range(rng.randint(4, 9))]
        words.insert(rng.randrange(len(words) + 1), KEYWORDS[len(names)][k])
        lines.append(f"{names[k]}\t{' '.join(words)}")
    return lines


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def drga(capsys, *argv: str) -> tuple[int, str, str]:
    """``drga ARGV``: exit status, stdout, stderr."""
    capsys.readouterr()
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def train(capsys, data: Path, logdir: Path, *settings: str, extra: tuple[str, ...] = (), quiet: bool = False) -> tuple[int, str, str]:
    argv = [*(["--quiet"] if quiet else []), "train", "--dataset", "tsv", "--tsv", data, "--net", "lstm-sa", "--logdir", logdir,
            "--no-progress", *extra]
    return drga(capsys, *argv, *[a for s in (*TINY, *settings) for a in ("--set", s)])


def one_error(status: int, err: str) -> str:
    """The one error line of a refused command (exit 2, no traceback)."""
    assert status == 2, err[-600:]
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and " error: " in lines[0], err
    return lines[0]


@pytest.fixture(scope="module")
def three_labels(tmp_path_factory):
    """A run that learned neg/neu/pos from their keywords (dev accuracy 1.0 by epoch 4), with an agent."""
    tmp = tmp_path_factory.mktemp("three")
    data = write(tmp / "three.tsv", keyword_lines(["neg", "neu", "pos"], 240, seed=0))
    status = main([str(a) for a in ["--quiet", "train", "--dataset", "tsv", "--tsv", data, "--net", "lstm-sa", "--logdir", tmp / "runs",
                                    "--no-progress",
                                    *[a for s in (*TINY, "train.pretrain_epochs=6", "train.agent_epochs=1") for a in ("--set", s)]]])
    assert status == 0
    return tmp, tmp / "runs" / "tsv-lstm-sa-seed0"


@pytest.fixture
def binary_run(tmp_path, capsys):
    """A one-epoch run on one TSV file labelled 0/1."""
    data = write(tmp_path / "zero_one.tsv", keyword_lines(["0", "1"], 120, seed=1))
    status, _, err = train(capsys, data, tmp_path / "runs")
    assert status == 0, err
    return data, tmp_path / "runs" / "tsv-lstm-sa-seed0"


# ---------------------------------------------------------------- 1. label names on evaluate (and analyze)

def test_evaluate_refuses_a_tsv_labelled_neg_pos_for_a_checkpoint_trained_on_0_1(tmp_path, capsys, binary_run):
    data, run_dir = binary_run
    renamed = write(tmp_path / "neg_pos.tsv", [line.replace("0\t", "neg\t", 1).replace("1\t", "pos\t", 1)
                                                for line in data.read_text().splitlines()])
    message = one_error(*drga(capsys, "evaluate", run_dir / "pretrain_best.pt", "--dataset", "tsv", "--tsv", renamed)[::2])
    assert "trained on the labels '0', '1' and these data are labelled 'neg', 'pos'" in message
    # the same file with the names it was trained on is evaluated
    status, out, _ = drga(capsys, "evaluate", run_dir / "pretrain_best.pt", "--dataset", "tsv", "--tsv", data)
    assert status == 0 and "net-only    accuracy" in out


def test_labels_are_matched_by_name_never_by_position(tmp_path, capsys, three_labels):
    """Two folders with the same test sentences: A's train.tsv has all three labels (neg, neu, pos: numbered
    as the checkpoint's outputs), B's only neg and pos (numbered 0, 1 by the loader). By position, B's pos
    sentences would be scored against output 1, 'neu'; by name both folders give the same accuracy."""
    _, run_dir = three_labels
    test_lines = keyword_lines(["neg", "neu", "pos"], 120, seed=7)
    test_lines = [line for line in test_lines if not line.startswith("neu\t")]
    both = keyword_lines(["neg", "neu", "pos"], 60, seed=8)
    for name, train_lines in (("A", both), ("B", [line for line in both if not line.startswith("neu\t")])):
        for split, lines in (("train", train_lines), ("dev", test_lines), ("test", test_lines)):
            write(tmp_path / name / f"{split}.tsv", lines)
    checkpoint = run_dir / "pretrain_best.pt"
    rows = {}
    for name in ("A", "B"):
        status, out, err = drga(capsys, "evaluate", checkpoint, "--dataset", "tsv", "--tsv", tmp_path / name)
        assert status == 0, err
        rows[name] = [line for line in out.splitlines() if "accuracy" in line]
    assert rows["A"] == rows["B"]
    accuracy = float(re.search(r"net-only\s+accuracy (\S+)", rows["A"][0]).group(1))
    assert accuracy >= 0.95  # the network learned the keywords, so position-matching B would have scored its pos lines wrong
    # analyze reads the same names: no sentence of B is called 'neu'
    status, _, err = drga(capsys, "analyze", run_dir / "agent_best.pt", "--dataset", "tsv", "--tsv", tmp_path / "B",
                          "--out", tmp_path / "analysis", "--only", "maps", "--num-examples", "6", "--no-progress")
    assert status == 0, err
    page = (tmp_path / "analysis" / "attention_maps.html").read_text()
    assert "gold: pos" in page and "gold: neu" not in page


def test_label_order_maps_each_data_label_to_the_output_of_its_name():
    assert label_order(["neg", "neu", "pos"], ["neg", "pos"], "c.pt") == [0, 2]
    assert label_order(["neg", "neu", "pos"], ["pos", "neu", "neg"], "c.pt") == [2, 1, 0]
    assert label_order(["0", "1"], ["0", "1"], "c.pt") == [0, 1]
    with pytest.raises(CheckpointError, match=r"c\.pt was trained on the labels '0', '1' and these data are labelled 'neg', 'pos'"):
        label_order(["0", "1"], ["neg", "pos"], "c.pt")


# ---------------------------------------------------------------- 2. resume after the data changed

def test_resume_after_editing_a_single_tsv_file_names_the_changed_data_and_force_says_why_it_cannot(capsys, binary_run):
    data, run_dir = binary_run
    data.write_text(data.read_text() + "".join(f"1\tgood fresh{i} words\n" for i in range(10)))  # re-split, new words
    message = one_error(*train(capsys, data, run_dir.parent, extra=("--resume",))[::2])
    assert "the data differ from those the run was trained on (fingerprint" in message and "--force" in message
    assert "does not fit" not in message
    message = one_error(*train(capsys, data, run_dir.parent, extra=("--resume", "--force"))[::2])
    assert "even with --force" in message and "vocabulary" in message and "re-split" in message
    assert "does not fit" not in message and "shape" not in message


def test_resume_in_folder_mode_refuses_changed_data_continues_with_force_and_never_on_other_labels(tmp_path, capsys):
    folder = tmp_path / "data"
    lines = keyword_lines(["neg", "pos"], 160, seed=2)
    for split, part in (("train", lines[:120]), ("dev", lines[120:140]), ("test", lines[140:])):
        write(folder / f"{split}.tsv", part)
    runs = tmp_path / "runs"
    assert train(capsys, folder, runs)[0] == 0
    write(folder / "dev.tsv", lines[120:139])  # train.tsv unchanged: same vocabulary and labels
    message = one_error(*train(capsys, folder, runs, extra=("--resume",))[::2])
    assert "the data differ" in message and "--force" in message
    status, out, err = train(capsys, folder, runs, extra=("--resume", "--force"))
    assert status == 0, err
    assert "resuming on changed data (--force)" in out
    for split in ("train", "dev", "test"):  # the same sentences, the labels renamed
        path = folder / f"{split}.tsv"
        path.write_text(path.read_text().replace("neg\t", "negative\t").replace("pos\t", "positive\t"))
    message = one_error(*train(capsys, folder, runs, extra=("--resume", "--force"))[::2])
    assert "its network was trained to output the labels 'neg', 'pos', and these data are labelled 'negative', 'positive'" in message


# ---------------------------------------------------------------- 3. warnings: one sentence of the drga logger

def test_accepted_inputs_warn_in_one_sentence_through_the_drga_logger_never_a_python_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the vectors' cache
    rows = keyword_lines(["neg", "pos"], 80, seed=3)
    data = tmp_path / "bytes.tsv"
    data.write_bytes(("\n".join(rows[:3]) + "\n").encode() + b"pos\tgood caf\xf0 w1\n" + ("\n".join(rows[3:]) + "\n").encode())
    vectors = write(tmp_path / "vectors.txt", ["good " + " ".join(["0.5"] * 8), "bad 0.1 nan" + " 0.2" * 6])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, out, err = train(capsys, data, tmp_path / "runs", "data.encoding_errors=replace", f"network.vectors={vectors}",
                                 quiet=True)
    assert status == 0, err
    ours = [w for w in caught if "drga" in Path(w.filename).parts or "tests" in Path(w.filename).parts]
    assert not ours, [str(w.message) for w in ours]
    assert out.splitlines() == [
        f"warning: {data}: 1 line holds bytes that are not valid utf-8 (line 4); read with U+FFFD in their place "
        "(data.encoding_errors=replace)",
        f"warning: {vectors}: skipped 1 unusable row (line 2: a number missing, text in place of one, NaN or inf); "
        "words found only in those rows start from random vectors",
    ]
    assert "noqa" not in out + err and "lambda" not in out + err and "UserWarning" not in out + err


# ---------------------------------------------------------------- every command that reads a checkpoint, mismatched data

NMT = [
    "nmt.vocab_size=80", "network.embedding_dim=24", "network.hidden_size=24", "network.layers=1", "data.batch_size=32",
    "agent.hidden_sizes=16,16", "agent.samples=2", "train.pretrain_epochs=1", "train.agent_epochs=0", "train.cotrain_epochs=0",
    "nmt.beam_size=2", "nmt.warmup_steps=0",
]


@pytest.fixture
def translation_run(tmp_path, capsys):
    """A one-epoch translation run on the synthetic corpus, and the command that trained it."""
    corpus = write_synthetic_corpus(tmp_path / "corpus")
    argv = ["train", "--net", "seq2seq-luong", "--dataset", "parallel", "--data-dir", corpus, "--logdir", tmp_path / "runs",
            "--no-progress", *[a for s in NMT for a in ("--set", s)]]
    status, _, err = drga(capsys, *argv)
    assert status == 0, err
    return argv, tmp_path / "runs" / "parallel-seq2seq-luong-seed0"


def test_every_command_that_reads_a_checkpoint_refuses_mismatched_data_in_one_message(tmp_path, capsys, three_labels, binary_run,
                                                                                        translation_run):
    _, three_run = three_labels
    data, binary = binary_run
    other_labels = write(tmp_path / "other.tsv", keyword_lines(["negative", "neutral", "positive"], 60, seed=4))
    neg_pos = write(tmp_path / "neg_pos.tsv", keyword_lines(["neg", "pos"], 60, seed=5))
    nmt_argv, nmt_run = translation_run
    swapped = tmp_path / "swapped.pt"  # a translation checkpoint whose subword model is not its network's
    payload = load_checkpoint(nmt_run / "pretrain_best.pt")
    entries = payload["task_entries"]
    source, target = entries["source_tokenizer"], entries["target_tokenizer"]
    save_atomic({**{k: v for k, v in payload.items() if k != "tensor_checksum"},
                 "task_entries": {**entries, "source_tokenizer": target, "target_tokenizer": source, "shared_tokenizer": False}}, swapped)
    (tmp_path / "in.txt").write_text("wort1 wort2 wort3.\n")
    cases = {
        "evaluate": ["evaluate", binary / "pretrain_best.pt", "--dataset", "tsv", "--tsv", neg_pos],
        "evaluate, three labels": ["evaluate", three_run / "pretrain_best.pt", "--dataset", "tsv", "--tsv", other_labels],
        "analyze": ["analyze", three_run / "agent_best.pt", "--dataset", "tsv", "--tsv", other_labels, "--out", tmp_path / "a"],
        "analyze --reference": ["analyze", three_run / "agent_best.pt", "--reference", binary / "pretrain_best.pt",
                                "--out", tmp_path / "b", "--only", "highlighted"],
        "train.init_from": ["train", "--dataset", "tsv", "--tsv", neg_pos, "--net", "lstm-sa", "--logdir", tmp_path / "init",
                            *[a for s in TINY for a in ("--set", s)], "--set", f"train.init_from={binary / 'pretrain_best.pt'}"],
        "translate": ["translate", swapped, "--input", tmp_path / "in.txt"],
        "evaluate, translation": ["evaluate", swapped],
    }
    messages = {name: one_error(*drga(capsys, *argv)[::2]) for name, argv in cases.items()}
    assert "'0', '1'" in messages["evaluate"] and "'neg', 'pos'" in messages["evaluate"]
    for name in ("evaluate, three labels", "analyze"):
        assert "'neg', 'neu', 'pos'" in messages[name] and "'negative', 'neutral', 'positive'" in messages[name], messages[name]
    assert "another vocabulary" in messages["analyze --reference"]
    assert "'0', '1'" in messages["train.init_from"] and "'neg', 'pos'" in messages["train.init_from"]
    for name in ("translate", "evaluate, translation"):
        assert "subword models are not the ones its network was trained with" in messages[name]
    # translation resume: changed text is named as such; --force continues (the subword models are the checkpoint's)
    corpus = tmp_path / "corpus"
    references = (corpus / "val.de").read_text().splitlines()
    (corpus / "val.de").write_text("\n".join([references[0] + " word1", *references[1:]]) + "\n")
    message = one_error(*drga(capsys, *nmt_argv, "--resume")[::2])
    assert "the data differ" in message and "--force" in message
    status, out, err = drga(capsys, *nmt_argv, "--resume", "--force")
    assert status == 0 and "resuming on changed data (--force)" in out, err[-600:]
    # a translation checkpoint from before fingerprints translates as before
    old = tmp_path / "old_nmt.pt"
    save_atomic({k: v for k, v in payload.items() if k not in ("tensor_checksum", "vocab_fingerprint", "data_checksum")}, old)
    assert drga(capsys, "translate", old, "--input", tmp_path / "in.txt")[0] == 0
