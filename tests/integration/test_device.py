"""The GPU path without a GPU: every tensor a training step creates is on the run's device, and a
step reads no number back from the device (``.item()``, ``.cpu()``, ``.tolist()``).

A stray ``torch.zeros(...)`` without ``device=`` lands on the CPU and breaks a CUDA run. Here the
default device is switched to ``meta`` around each step while the run's tensors live on the CPU:
any tensor created without an explicit device is then a meta tensor, and the first operation that
mixes it with the run's tensors fails (the negative control shows that it does). Reading numbers
back waits for the device; the runner does it only when it logs, every ``LOG_INTERVAL`` steps.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from drga.config import ConfigError, load_config
from drga.runner.phases import PHASE_NAMES
from drga.runtime.device import resolve_device
from drga.trainer import Trainer
from tests.conftest import require_data
from tests.nmt_helpers import tiny_translation_config
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
stepping = load_script("bench/stepping.py")  #: a phase stepped batch by batch, as the benchmarks step it
#: The one read-back a step needs: torch's packed RNNs take the sequence lengths on the host
#: (baselines/ sits inside drga/ in an installed package's layout).
ALLOWED = ("cpu in baselines/common.py", "cpu in drga/baselines/common.py")
SMALL = ["network.hidden_size=16", "network.embedding_dim=16", "network.attention_size=8", "network.classifier_hidden=8",
         "network.feedforward_size=16", "network.layers=1", "agent.hidden_sizes=8,8", "agent.samples=3", "run.progress=false"]
NETWORKS = [("lstm-sa", "subj", "subj"), ("transformer", "subj", "subj"), ("disan", "subj", "subj"),
            ("ian", "semeval14-laptop", "semeval14"), ("han", "movie-reviews", "movie_reviews")]


def test_a_cuda_index_beyond_the_visible_devices_is_refused_with_their_range(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(ConfigError, match=r"'cuda:7' requested but torch sees 2 CUDA device\(s\): use cuda:0 to cuda:1"):
        resolve_device("cuda:7")
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    assert resolve_device("cuda") == torch.device("cuda")
    assert resolve_device("auto") == torch.device("cuda")


def test_cuda_without_a_cuda_device_is_refused_and_auto_falls_back_to_the_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="torch sees no CUDA device"):
        resolve_device("cuda:0")
    assert resolve_device("auto") == torch.device("cpu")


def test_a_tensor_created_without_a_device_is_caught():
    run_tensor = torch.ones(3)
    with torch.device("meta"), pytest.raises(RuntimeError, match="device"):
        _ = torch.zeros(3) + run_tensor


class ReadBacks:
    """Counts the toolkit's own calls that read a tensor's values back to the host (torch's own,
    such as Adam reading its step counter, which lives on the host, are not the toolkit's to avoid)."""

    NAMES = ("item", "cpu", "tolist")

    def __enter__(self) -> ReadBacks:
        self.calls: list[str] = []
        self.saved = {name: getattr(torch.Tensor, name) for name in self.NAMES}
        for name, method in self.saved.items():
            def counting(tensor, *args, _method=method, _name=name, **kwargs):
                caller = sys._getframe(1).f_code.co_filename
                if any(caller.startswith(str(ROOT / part)) for part in ("drga", "agents", "baselines", "envs")):
                    self.calls.append(f"{_name} in {Path(caller).relative_to(ROOT)}:{sys._getframe(1).f_lineno}")
                return _method(tensor, *args, **kwargs)
            setattr(torch.Tensor, name, counting)
        return self

    def __exit__(self, *_: object) -> None:
        for name, method in self.saved.items():
            setattr(torch.Tensor, name, method)


def step_every_phase(trainer, batch) -> None:
    for name in PHASE_NAMES:
        phase = stepping.begin_phase(trainer, name)
        with torch.device("meta"), ReadBacks() as reads:
            stepping.train_step(trainer, phase, batch)
        assert [call for call in reads.calls if not call.startswith(ALLOWED)] == [], f"{name}: read-backs inside the step"


def small_trainer(net: str, dataset: str, folder: str, logdir: Path, *extra: str) -> Trainer:
    """A seconds-small trainer of ``net`` on a slice of the real data set (also tests/integration/test_cuda.py's)."""
    overrides = [f"network.name={net}", f"data.dataset={dataset}", f"data.data_dir={require_data(folder)}",
                 "data.train_fraction=0.02", "data.max_sentences=6", f"run.logdir={logdir}", *SMALL, *extra]
    return Trainer(load_config(None, overrides), log=lambda _: None)


@pytest.mark.parametrize("net,dataset,folder", NETWORKS, ids=[n[0] for n in NETWORKS])
def test_a_classification_step_creates_every_tensor_on_the_run_device(net, dataset, folder, tmp_path):
    trainer = small_trainer(net, dataset, folder, tmp_path)
    step_every_phase(trainer, next(iter(trainer.train_batches)))


def test_a_translation_step_creates_every_tensor_on_the_run_device(tmp_path):
    from drga.trainer import TranslationTrainer

    trainer = TranslationTrainer(tiny_translation_config(tmp_path), log=lambda _: None)
    step_every_phase(trainer, next(iter(trainer.train_batches)))
