"""Helpers shared by the translation tests: a synthetic parallel corpus and tiny configurations."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from drga.tasks.translation.config import TranslationConfig, load_translation_config

SOURCE_WORDS = [f"wort{i}" for i in range(24)]


def synthetic_sentence_pair(rng: random.Random) -> tuple[str, str]:
    """A source of 3–7 words and its 'translation': each word mapped to another, order reversed."""
    words = [rng.choice(SOURCE_WORDS) for _ in range(rng.randint(3, 7))]
    target = [w.replace("wort", "word") + ("s" if int(w[4:]) % 3 == 0 else "") for w in reversed(words)]
    return " ".join(words) + ".", " ".join(target).capitalize() + "."


def write_synthetic_corpus(folder: Path, train: int = 300, dev: int = 40, test: int = 40, seed: int = 0, gzip_train: bool = True) -> Path:
    """train/val/test.{en,de} in ``folder`` (train gzip'd), line-aligned."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, count in (("train", train), ("val", dev), ("test", test)):
        pairs = [synthetic_sentence_pair(rng) for _ in range(count)]
        for lang, column in (("en", 0), ("de", 1)):
            text = "\n".join(p[column] for p in pairs) + "\n"
            if split == "train" and gzip_train:
                with gzip.open(folder / f"{split}.{lang}.gz", "wt", encoding="utf-8") as handle:
                    handle.write(text)
            else:
                (folder / f"{split}.{lang}").write_text(text, encoding="utf-8")
    return folder


def tiny_translation_config(tmp_path: Path, net: str = "seq2seq-luong", **overrides: object) -> TranslationConfig:
    """A seconds-long translation run on the synthetic corpus (written under tmp_path/corpus)."""
    corpus = tmp_path / "corpus"
    if not (corpus / "val.en").exists():
        write_synthetic_corpus(corpus)
    settings = {
        "network.name": net, "data.dataset": "parallel", "data.data_dir": str(corpus), "data.batch_size": 32,
        "nmt.vocab_size": 80, "network.embedding_dim": 24, "network.hidden_size": 24, "network.layers": 1,
        "network.heads": 2, "network.feedforward_size": 32, "agent.hidden_sizes": "16,16", "agent.samples": 2,
        "train.pretrain_epochs": 2, "train.agent_epochs": 1, "train.cotrain_epochs": 1, "train.patience": 0,
        "nmt.beam_size": 2, "nmt.warmup_steps": 0, "run.logdir": str(tmp_path / "runs"), "run.progress": False,
    }
    settings.update(overrides)
    return load_translation_config(None, [f"{k}={v}" for k, v in settings.items()])
