"""Checkpoints on disk: safetensors without pickle, every entry back as it was written, the task's entries nested
beside its name; a ``torch.save`` file or another format refused by name."""

from __future__ import annotations

import zipfile

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.torch import save_file

import drga.baselines as baselines
from drga.checkpoint_format import CheckpointError, load_checkpoint, save_atomic, tensor_checksum
from drga.cli import main
from drga.records import EpochRecord
from drga.trainer import Trainer
from tests.integration.test_trainer import tiny_config
from tests.tiny_network import TinyAttentionNet


def save_old_format(payload: dict, path) -> None:
    """A checkpoint's entries in torch.save's archive, with their tensor checksum (a file that is not a checkpoint)."""
    torch.save({**payload, "tensor_checksum": tensor_checksum(payload)}, path)


@pytest.fixture(autouse=True)
def register_tiny(monkeypatch):
    monkeypatch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)


def same(a, b) -> bool:
    """Equal payloads: tensors equal in dtype, shape and values, the rest equal and of the same types."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


# no subnormal floats: a library loaded earlier in the suite flushes them to zero, and hypothesis then refuses to draw them
floats = st.floats(allow_nan=False, allow_subnormal=False)
plain = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | floats | st.text(max_size=8) | st.binary(max_size=8)
tensors = st.builds(lambda values, dtype: torch.tensor(values, dtype=dtype),
                    st.lists(st.integers(0, 100), max_size=5), st.sampled_from([torch.float32, torch.int64, torch.uint8, torch.bool]))
keys = st.text(max_size=6) | st.integers(0, 9)  # "$tensor" and the like included: a dict's own keys must never read as tags
payloads = st.recursive(plain | tensors, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                        | st.dictionaries(keys, inner, max_size=3), max_leaves=12)


@settings(max_examples=60)
@given(entries=st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in ("format", "tensor_checksum")),
                               payloads, max_size=4))
def test_every_entry_comes_back_as_it_was_written(tmp_path_factory, entries):
    path = tmp_path_factory.mktemp("round") / "c.pt"
    payload = {**entries, "format": 2}
    save_atomic(payload, path)
    loaded = load_checkpoint(path)
    assert same({k: v for k, v in loaded.items() if k != "tensor_checksum"}, payload)
    assert loaded["tensor_checksum"] == tensor_checksum(payload)


def test_a_checkpoint_is_safetensors_with_its_tensors_named_by_their_place_and_no_pickle(tmp_path):
    weights = torch.nn.Linear(3, 2).state_dict()
    save_atomic({"format": 2, "network": weights, "tied": [weights["weight"], weights["weight"]]}, tmp_path / "c.pt")
    assert not zipfile.is_zipfile(tmp_path / "c.pt")  # not torch.save's archive: nothing to unpickle
    with safe_open(tmp_path / "c.pt", framework="pt") as handle:
        assert sorted(handle.keys()) == ["network/bias", "network/weight", "tied/0", "tied/1"]
        assert torch.equal(handle.get_tensor("network/weight"), weights["weight"])
        assert '"format": 2' in handle.metadata()["drga"]


def test_a_safetensors_file_of_another_kind_is_named_as_such(tmp_path, capsys):
    save_file({"weight": torch.zeros(2)}, tmp_path / "model.safetensors")
    assert main(["evaluate", str(tmp_path / "model.safetensors")]) == 2
    assert "is a safetensors file but not a DRGA checkpoint" in capsys.readouterr().err


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny run's best co-trained checkpoint."""
    folder = tmp_path_factory.mktemp("trained")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(baselines.NETWORKS, "tiny", TinyAttentionNet)
        Trainer(tiny_config(folder), log=lambda _: None).run()
    return folder / "runs" / "tsv-tiny-seed3" / "cotrain_best.pt"


def test_a_torch_save_file_of_a_checkpoint_is_named_as_such_and_never_unpickled(trained, tmp_path, monkeypatch, capsys):
    # only the current format is read: a checkpoint's entries saved by torch.save (as no released version wrote them)
    # are refused by name, before torch.load could run any pickled code
    old = tmp_path / "cotrain_best.pt"
    save_old_format({k: v for k, v in load_checkpoint(trained).items() if k != "tensor_checksum"}, old)
    assert zipfile.is_zipfile(old)

    def unpickle(*args, **kwargs):
        raise AssertionError("torch.load was called")

    monkeypatch.setattr(torch, "load", unpickle)
    with pytest.raises(CheckpointError, match=r"is a torch.save file but not a DRGA checkpoint \(those are safetensors files"):
        load_checkpoint(old)
    assert main(["evaluate", str(old)]) == 2
    assert "is a torch.save file but not a DRGA checkpoint" in capsys.readouterr().err
    assert main(["evaluate", str(trained)]) == 0  # the checkpoint itself, as drga train wrote it


def test_a_checkpoint_of_another_format_is_refused_with_what_to_do(trained, tmp_path):
    payload = load_checkpoint(trained)
    for found, hint in ((1, "older version of the toolkit: retrain it"), (3, "newer version of the toolkit: upgrade drga")):
        save_atomic({**{k: v for k, v in payload.items() if k != "tensor_checksum"}, "format": found}, tmp_path / f"f{found}.pt")
        with pytest.raises(CheckpointError, match=f"is a DRGA checkpoint of format {found}, and this version reads format 2; .*{hint}"):
            load_checkpoint(tmp_path / f"f{found}.pt")


def test_a_checkpoint_keeps_its_tasks_entries_nested_beside_the_tasks_name(trained):
    from drga.checkpoint_format import CheckpointPayload

    payload = CheckpointPayload.read(trained)
    assert payload.task == "classification" and {"vocab", "label_names", "tokenizer", "data_checksum"} <= set(payload.task_entries)
    assert "vocab" not in payload and "data_checksum" not in payload
    assert payload.vocab == payload.task_entries["vocab"] and payload.label_names == payload.task_entries["label_names"]


def test_the_payload_writes_what_it_reads_back_by_name(tmp_path):
    # issue 63: CheckpointPayload writes checkpoints as well as reading them: each entry under the name its property reads
    from drga.checkpoint_format import CheckpointPayload

    weights = {"w": torch.arange(6.0).view(2, 3)}
    model = CheckpointPayload.model(
        phase="cotrain", epoch=3, net_name="tiny", has_agent=True, config={"run": {"seed": 1}}, task="classification",
        task_entries={"vocab": ["<pad>", "<unk>"]},
        state_size=7, action_size=1, half_life_steps=12.5, network=weights, policy={"p": torch.ones(2)}, strength={"s": torch.zeros(1)},
        dev={"net-only": {"accuracy": 0.5}}, plateau_cuts=1,
    )
    last = model.resumable(progress={"index": 2, "epoch": 3}, history=[EpochRecord("cotrain", 3, 1.0)], global_step=9,
                           optimisers={"net_optimizer": None, "agent_optimizer": None, "lr_schedule": None},
                           rng_cpu=torch.get_rng_state(), rng_cuda=[])
    last.save(tmp_path / "last.pt")
    read = CheckpointPayload.read(tmp_path / "last.pt")
    assert (read.kind, read.phase, read.epoch, read.net_name, read.has_agent) == ("resume", "cotrain", 3, "tiny", True)
    assert (read.state_size, read.action_size, read.half_life_steps, read.plateau_cuts, read.global_step) == (7, 1, 12.5, 1, 9)
    assert read.task == "classification" and read.task_entries == {"vocab": ["<pad>", "<unk>"]} and "vocab" not in read
    assert read.vocab == ["<pad>", "<unk>"] and read.dev_scores("net-only") == {"accuracy": 0.5} and read.config == {"run": {"seed": 1}}
    assert torch.equal(read.network_state["w"], weights["w"]) and read.history[0].seconds == 1.0 and read.progress["index"] == 2
    assert read.network_optimizer_state is None and read.lr_schedule_state is None and model.kind == "model"


def test_drga_load_and_predict_read_a_checkpoint_once(trained, tmp_path, monkeypatch):
    # the task that loads a checkpoint is found from its header alone; the loader reads the file once
    import drga
    import drga.checkpoint_format as checkpoint_format
    import drga.tasks.classification.prediction as prediction
    from drga.checkpoint_format import recorded_task

    reads = []
    real = checkpoint_format.load_checkpoint

    def counted(path):
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(checkpoint_format, "load_checkpoint", counted)
    monkeypatch.setattr(prediction, "load_checkpoint", counted)
    assert recorded_task(trained) == "classification" and reads == []
    drga.load(trained).predict(["good w3 w4"])
    assert reads == [str(trained)]
    reads.clear()
    texts = tmp_path / "texts.txt"
    texts.write_text("good w3 w4\n")
    assert main(["predict", str(trained), "--input", str(texts)]) == 0 and reads == [str(trained)]
    (tmp_path / "notes.txt").write_text("not a checkpoint\n")
    with pytest.raises(CheckpointError, match="is not a DRGA checkpoint"):
        recorded_task(tmp_path / "notes.txt")
