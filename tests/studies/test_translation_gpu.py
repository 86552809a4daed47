"""The GPU translation study's command rehearsed on the CPU (issue 53): ``SMOKE=1 bash experiments/translation_gpu.sh both``
runs both stages of 2 seeds of each network (tiny networks, a slice of Multi30k) and packs its archive as the GPU call
would; the archive unpacks, the tables build from it, and every BLEU they print is sacrebleu's recomputed from the packed
translations. The rehearsal's runs import nothing the GPU machine's image lacks (anything else is blocked in them: the
image's packages, the standard library and the toolkit's own alone). Then the unpack command's refusals, the time guard's
stopping, and the sizes against the GPU call's limits."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from drga.analysis.stats import mean_std_text
from drga.tasks.translation.metrics import corpus_bleu
from tests.conftest import require_data
from tests.scripts import load_script
from tests.studies.test_portable_paths import result_violations

ROOT = Path(__file__).resolve().parents[2]
#: The Python packages of the GPU machine's image as the device notes listed them on 2026-11-17 (torch 2.11, Python 3.12),
#: by the names they are imported under. A rehearsal's run may import these, the standard library and the toolkit itself:
#: anything else would be missing there (carry it as a wheel: experiments/translation_gpu.py's WHEELS, docs/gpu.md).
GPU_IMAGE_MODULES = frozenset("""
absl accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated_doc anyio attr attrs botorch build certifi charset_normalizer
chex click cloudpickle cmake colorama contourpy coverage cuda cupy cupy_backends cupyx cycler Cython cython diffrax e3nn einops
equinox etils execnet filelock flatbuffers flax fontTools formulaic frozenlist fsspec gpytorch grpc h11 h5py hf_xet httpcore httpx
huggingface_hub humanize hypothesis idna imageio iniconfig interface_meta jax jaxlib jaxtyping jinja2 joblib kiwisolver lazy_loader
lightning lightning_utilities linear_operator lineax llvmlite lxml markdown markdown_it markupsafe matplotlib mpl_toolkits pylab
mdurl mesonbuild ml_dtypes mpi4py mpmath msgpack multidict multipledispatch mypy_extensions nanobind narwhals networkx ninja numba
numba_cuda numpy numpyro nvidia onnx onnx_ir onnxruntime onnxscript cv2 optax opt_einsum opt_einsum_fx optimistix orbax packaging
pandas pathspec patsy peft PIL pip pluggy portalocker prometheus_client propcache google psutil pyarrow pybind11 cpuinfo pygments
pyparsing pyproject_hooks pyre_extensions pytest _pytest py pytest_benchmark pytest_cov pytest_mock pytest_timeout xdist dateutil
pytorch_lightning yaml _yaml regex requests rich sacrebleu safetensors scikit_build_core skimage sklearn scipy seaborn
sentencepiece sentence_transformers setuptools pkg_resources _distutils_hack distutils shellingham simplejson six sortedcontainers
statsmodels sympy tabulate tensorboard tensorboard_data_server tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz
torch torchgen functorch torchaudio torchdiffeq torch_geometric torchmetrics torchvision tqdm transformers treescope triton typer
typing_extensions typing_inspect urllib3 uvloop wadler_lindig werkzeug wheel wrapt xarray xxhash yarl zipp
""".split())
#: The toolkit's own top-level modules and the interpreter's internals.
OWN_MODULES = frozenset({"drga", "agents", "baselines", "envs", "checkout", "sitecustomize", "usercustomize"})
BLOCKER = f'''import importlib.abc, importlib.util, sys
ALLOWED = {sorted(GPU_IMAGE_MODULES | OWN_MODULES)!r}
def _absent(name):
    top = name.split(".")[0]
    return not (top in ALLOWED or top in sys.stdlib_module_names or top.startswith(("_", "__editable__")))
class _NotOnTheGpuMachine(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if _absent(name):
            raise ModuleNotFoundError(f"{{name}} is not on the GPU machine (tests/studies/test_translation_gpu.py)", name=name)
sys.meta_path.insert(0, _NotOnTheGpuMachine())
_find_spec = importlib.util.find_spec
def find_spec(name, package=None):  # what looks for an optional package finds none, as there
    return None if not name.startswith(".") and _absent(name) else _find_spec(name, package)
importlib.util.find_spec = find_spec
import os, time
if os.environ.get("REHEARSAL_HOLD_STAGE_2") and sys.argv[0].endswith("sweep.py") and any(
        item.startswith("train.init_from=") for item in sys.argv):
    time.sleep(120)  # the budget's SIGTERM ends this wait (see run_rehearsal)
'''
RUNS = {"seq2seq-luong": (0, 1), "transformer-nmt": (0, 1)}
CELLS = [("baseline (pretrain only)", "net-only", "pretrain"), ("baseline (equal budget)", "net-only", "baseline"),
         ("agent on frozen network", "with-agent", "agent"), ("DRGA (co-trained)", "net-only", "cotrain"),
         ("DRGA (co-trained)", "with-agent", "cotrain")]


@pytest.fixture(scope="module")
def gpu():
    return load_script("experiments/translation_gpu.py", "translation_gpu_for_tests")


@pytest.fixture(scope="module")
def rehearsal() -> Iterator[dict]:
    """The rehearsal's archive, its members and the command's output. In a temporary folder of its own, not pytest's:
    on a machine where others run pytest meanwhile, pytest deletes all but its latest few base folders, this one's too."""
    require_data("multi30k")
    with tempfile.TemporaryDirectory(prefix="drga-translation-gpu-") as name:
        yield run_rehearsal(Path(name))


def run_rehearsal(folder: Path) -> dict:
    """Two calls, as on the GPU machine: the first stopped by its budget (15 s: the runs are stopped, the finished
    ones packed, the archive partial), the second resuming the same run folders to the end. In the first call each
    stage-2 sweep waits at its start until the budget stops it: the whole rehearsal may take less than 15 s on a fast
    machine, and its stage 2 a few seconds, too short a window for a wall-clock budget to land in on every machine."""
    (folder / "block").mkdir()
    (folder / "block" / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    environment = dict(os.environ, SMOKE="1", PYTHON=sys.executable, WORK=str(folder / "work"), OUT=str(folder / "out"),
                       PYTHONPATH=os.pathsep.join([str(folder / "block"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    calls: dict[str, dict] = {}
    stop_early = ["--budget", "15", "--stop-margin", "0", "--grace", "20"]
    for call, (options, expected, hold) in {"stopped": (stop_early, 3, "1"), "resumed": ([], 0, "")}.items():
        done = subprocess.run(["bash", "experiments/translation_gpu.sh", "both", *options], cwd=ROOT,
                              env=dict(environment, REHEARSAL_HOLD_STAGE_2=hold), capture_output=True, text=True, timeout=540)
        if done.returncode != expected:  # the ends of the runs' logs say why
            logs = "".join(f"\n--- {log}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:])
                           for log in sorted((folder / "work" / "runs").rglob("train.log")))
            pytest.fail(f"the rehearsal's {call} call exited {done.returncode}, not {expected}:\n{done.stdout[-3000:]}"
                        f"{done.stderr[-3000:]}{logs[-6000:]}")
        [archive] = sorted(set((folder / "out").glob("translation-gpu-smoke-*.tar.gz")) - {c["archive"] for c in calls.values()})
        with tarfile.open(archive, "r:gz") as tar:
            members = {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}
        calls[call] = {"archive": archive, "members": members, "manifest": json.loads(members["manifest.json"]), "output": done.stdout}
    return {**calls["resumed"], "stopped": calls["stopped"], "folder": folder}


def rebuilt(archive: Path, target: Path, manifest: dict | None = None, drop: tuple[str, ...] = (),
            change: dict[str, bytes] | None = None) -> Path:
    """A copy of ``archive`` with another manifest, some members left out or changed."""
    with tarfile.open(archive, "r:gz") as tar:
        members = {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}
    if manifest is not None:
        members["manifest.json"] = json.dumps(manifest).encode("utf-8")
    members.update(change or {})
    with tarfile.open(target, "w:gz") as tar:
        for name, content in members.items():
            if name not in drop:
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return target


def at_head(manifest: dict) -> dict:
    """The manifest as if the rehearsal ran from this checkout's HEAD with no uncommitted change (this shared checkout
    usually has some, CI's has none): the unpack's commit check then has nothing to refuse."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    return {**manifest, "source": {**manifest["source"], "commit": head, "dirty_paths": [], "code_dirty_paths": [], "verified": True}}


def test_the_rehearsal_packs_every_run_its_translations_and_its_timings(rehearsal, gpu):
    manifest, members = rehearsal["manifest"], rehearsal["members"]
    names = [f"multi30k-en-de-{net}-seed{seed}" for net, seeds in RUNS.items() for seed in seeds]
    assert manifest["complete"] and manifest["smoke"] and manifest["finished"] == sorted([*names, *(f"pretrain/{n}" for n in names)])
    assert rehearsal["archive"].stat().st_size < gpu.ARCHIVE_LIMIT
    for name in names:
        for prefix, rows in (("", CELLS), ("pretrain/", CELLS[:1])):
            assert f"results/{prefix}{name}.json" in members and f"logs/{prefix}{name}.log" in members
            for _, mode, phase in rows:  # the test translations of every row, greedy and beam
                for search in ("greedy", "beam5"):
                    assert len(members[f"hypotheses/{prefix}{name}/test.{phase}.{mode}.{search}.de"].decode().splitlines()) == 8
        stage2 = manifest["runs"][name]
        assert [e["phase"] for e in stage2["epochs"]] == ["baseline", "baseline", "agent", "cotrain"]
        assert all(e["seconds"] > 0 for e in stage2["epochs"]) and stage2["wall_seconds"] > 0
        assert [e["phase"] for e in manifest["runs"][f"pretrain/{name}"]["epochs"]] == ["pretrain", "pretrain"]
    assert len(members["references/test.de"].decode().splitlines()) == 8
    assert manifest["files"] == {name: gpu.sha256(content) for name, content in members.items() if name != "manifest.json"}
    assert manifest["machine"]["torch"] and manifest["mps"] == "not used" and manifest["commit"] != "unknown"
    assert not os.path.isabs(manifest["work"])  # a committed manifest names no machine's disk (tests/studies/test_portable_paths.py)
    assert "| multi30k-en-de-seq2seq-luong-seed0 | drga | yes | baseline: 2," in rehearsal["output"]  # the seconds per epoch, printed


def test_the_budget_stops_the_first_call_and_the_second_resumes_its_runs(rehearsal, gpu, tmp_path, capsys):
    stopped, resumed = rehearsal["stopped"]["manifest"], rehearsal["manifest"]
    assert stopped["stopped_at_budget"] and not stopped["complete"] and set(stopped["finished"]) < set(stopped["planned"])
    assert "[budget] 15 s reached: stopping the runs" in rehearsal["stopped"]["output"]
    assert resumed["complete"] and not resumed["stopped_at_budget"] and resumed["planned"] == stopped["planned"]
    # the second call goes on in the same run folders: each run's epochs there begin with the first call's
    for name, entry in stopped["runs"].items():
        epochs = [(e["phase"], e["epoch"]) for e in resumed["runs"][name]["epochs"]]
        assert [(e["phase"], e["epoch"]) for e in entry["epochs"]] == epochs[:len(entry["epochs"])]
    # the first call's archive alone is partial; with the second's, the study is whole
    first = rebuilt(rehearsal["stopped"]["archive"], tmp_path / "1.tar.gz", at_head(stopped))
    second = rebuilt(rehearsal["archive"], tmp_path / "2.tar.gz", at_head(resumed))
    assert gpu.main(["unpack", str(first), "--into", str(tmp_path / "study")]) == 2
    assert f"partial: {len(stopped['finished'])} of 8 runs finished" in capsys.readouterr().err
    assert gpu.main(["unpack", str(first), str(second), "--into", str(tmp_path / "study")]) == 0
    assert len(list((tmp_path / "study").glob("*.json"))) == 4 and len(list((tmp_path / "study" / "pretrain").glob("*.json"))) == 4


def test_it_unpacks_and_the_tables_print_the_bleu_recomputed_from_its_translations(rehearsal, gpu, tmp_path, capsys):
    archive = rebuilt(rehearsal["archive"], tmp_path / "a.tar.gz", at_head(rehearsal["manifest"]))
    study = tmp_path / "study"
    assert gpu.main(["unpack", str(archive), "--into", str(study)]) == 0
    assert "unpack: 8 result files and 48 translation files" in capsys.readouterr().out
    logs = sorted((study / "logs").rglob("*.log"))
    assert logs and not [(log.name, result_violations(log.read_text(encoding="utf-8"))[:2]) for log in logs
                         if result_violations(log.read_text(encoding="utf-8"))]  # the GPU tree's absolute paths made portable
    tables = load_script("experiments/translation_tables.py", "translation_tables_for_gpu_tests")
    out = tmp_path / "page.md"
    assert tables.main([str(study), "--out", str(out), "--figures", str(tmp_path / "figures")]) == 0
    page = out.read_text(encoding="utf-8")
    assert "recomputed with sacrebleu from the committed test translations (`hypotheses/`, 48 files" in page
    assert "`bash experiments/translation_gpu.sh` in 1 call(s)" in page and "a rehearsal (SMOKE=1)" in page
    references = gzip.decompress((study / "hypotheses" / "references.test.de.gz").read_bytes()).decode().splitlines()
    for net, seeds in RUNS.items():
        section = page.split(f"### {net}", 1)[1]
        for row, mode, phase in CELLS:
            label = tables.CELL_NAMES[(row, mode)]
            line = next(line for line in section.splitlines() if line.startswith(f"| {label} | {mode} |"))
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            for column, search in ((4, "greedy"), (6, "beam5")):
                bleu = [corpus_bleu(gzip.decompress((study / "hypotheses" / f"multi30k-en-de-{net}-seed{seed}" /
                                                    f"test.{phase}.{mode}.{search}.de.gz").read_bytes()).decode().splitlines(),
                                    references).score for seed in seeds]
                assert cells[column] == mean_std_text(bleu), (net, label, search)
    # a translation that is not the one the run scored is refused, naming it
    victim = study / "hypotheses" / "multi30k-en-de-transformer-nmt-seed1" / "test.cotrain.with-agent.beam5.de.gz"
    victim.write_bytes(gzip.compress(b"ein Hund\n" * 8))
    assert tables.main([str(study), "--out", "-"]) == 2
    error = capsys.readouterr().err
    assert f"{victim}: its scores are not the run's: " in error and "hypothesis_length" in error and "16 recomputed" in error


def test_the_unpack_refuses_what_it_cannot_vouch_for(rehearsal, gpu, tmp_path, capsys):
    manifest, archive = at_head(rehearsal["manifest"]), rehearsal["archive"]
    study = tmp_path / "study"

    def refused(*arguments: str) -> str:
        assert gpu.main(["unpack", *arguments]) == 2
        return capsys.readouterr().err

    # a rehearsal's archive never goes into the study's own folder
    assert "goes into a folder given with --into" in refused(str(rebuilt(archive, tmp_path / "s.tar.gz", manifest)))
    # cut off on its way back
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    assert "not a whole archive" in refused(str(cut), "--into", str(study), "--force")
    # a file that is not the one its manifest hashed, or missing: refused even with --force
    name = "results/multi30k-en-de-seq2seq-luong-seed0.json"
    altered = rebuilt(archive, tmp_path / "altered.tar.gz", manifest, change={name: b"{}"})
    assert f"not whole: 0 file(s) missing (), 1 not the ones its manifest hashed ({name})" in refused(
        str(altered), "--into", str(study), "--force")
    missing = rebuilt(archive, tmp_path / "missing.tar.gz", manifest, drop=(name,))
    assert "1 file(s) missing" in refused(str(missing), "--into", str(study), "--force")
    # another commit: refused unless --force
    other = {**manifest, "source": {**manifest["source"], "commit": "0" * 40}}
    foreign = rebuilt(archive, tmp_path / "foreign.tar.gz", other)
    assert "its commit 0000000000 is not in this repository; --force" in refused(str(foreign), "--into", str(study))
    dirty = {**manifest, "source": {**manifest["source"], "code_dirty_paths": ["drga/core/rollout.py"]}}
    assert "its code had uncommitted changes (drga/core/rollout.py)" in refused(
        str(rebuilt(archive, tmp_path / "dirty.tar.gz", dirty)), "--into", str(study))
    assert not study.exists()
    assert gpu.main(["unpack", str(foreign), "--into", str(study), "--force"]) == 0
    assert "FORCED: its commit 0000000000" in capsys.readouterr().out
    # a partial study (a run the budget stopped): refused unless --partial, which unpacks the finished runs only
    unfinished = "multi30k-en-de-transformer-nmt-seed1"
    partial = {**manifest, "finished": [n for n in manifest["finished"] if n != unfinished], "complete": False}
    partial_archive = rebuilt(archive, tmp_path / "partial.tar.gz", partial)
    assert f"partial: 7 of 8 runs finished; unfinished: {unfinished}; --partial" in refused(str(partial_archive), "--into",
                                                                                               str(tmp_path / "p"))
    assert gpu.main(["unpack", str(partial_archive), "--into", str(tmp_path / "p"), "--partial"]) == 0
    assert not (tmp_path / "p" / f"{unfinished}.json").exists() and (tmp_path / "p" / "pretrain" / f"{unfinished}.json").exists()
    # ... and the archive of the call that resumed it completes the study (the two merge)
    capsys.readouterr()
    assert gpu.main(["unpack", str(partial_archive), str(rebuilt(archive, tmp_path / "whole.tar.gz", manifest)), "--into",
                     str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / f"{unfinished}.json").exists()
    # a result file that would replace a different one already there: refused unless --force
    (tmp_path / "p" / f"{unfinished}.json").write_text("{}", encoding="utf-8")
    assert "1 result file(s) there differ from the archives'" in refused(str(tmp_path / "whole.tar.gz"), "--into", str(tmp_path / "p"))


def test_the_time_guard_stops_every_sweep_and_kills_one_that_does_not_stop(gpu):
    """At the budget's end each sweep gets SIGTERM (a sweep stops its run in order), and SIGKILL after the grace."""
    polite = gpu.Chain("seq2seq-luong", 0, process=subprocess.Popen(["sleep", "60"], start_new_session=True))
    stubborn = gpu.Chain("seq2seq-luong", 1, process=subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
         "time.sleep(60)"], start_new_session=True, stdout=subprocess.PIPE, text=True))
    assert stubborn.process.stdout.readline() == "ready\n"
    said: list[str] = []
    started = time.time()
    gpu.stop_chains([polite, stubborn], 2.0, said.append)
    assert time.time() - started < 10
    assert polite.process.returncode == -signal.SIGTERM and stubborn.process.returncode == -signal.SIGKILL
    assert said == [f"[kill] sweep {stubborn.process.pid} still running after 2 s"]


def test_what_travels_and_what_comes_back_fit_the_gpu_calls_limits(gpu, tmp_path):
    """The tree plus the carried Multi30k under 64 MiB (room left for wheels), and the real study's archive, projected
    from the test references' size, under the 16 MiB a file brought back may have."""
    data = require_data("multi30k")
    carry = tmp_path / "carry"
    (carry / "data" / "multi30k").mkdir(parents=True)
    for name in gpu.MULTI30K_FILES:
        (carry / "data" / "multi30k" / name).write_bytes((data / name).read_bytes())
    tree, carried = gpu.travelling_size(carry)
    assert tree + carried < gpu.TRAVEL_LIMIT - 8 * 2**20, (tree, carried)
    # the real study: 8 stage-2 runs with 10 translation files each, 8 stage-1 runs with 2, each about the references' size
    with gzip.open(data / "test_2016_flickr.de.gz", "rb") as handle:
        references = handle.read()
    translations = (8 * 10 + 8 * 2 + 1) * len(gzip.compress(references))
    result_files = 16 * 200_000  # a result file of a run of 40 epochs is under 100 kB; train.logs are smaller still
    assert translations + result_files < gpu.ARCHIVE_LIMIT / 2, (translations, result_files)


def test_an_unknown_network_is_refused_before_anything_runs(gpu, tmp_path, capsys):
    assert gpu.main(["run", "lstm", "--smoke", "--work", str(tmp_path / "w")]) == 2
    assert "NETS must be luong, transformer or both, not 'lstm'" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_a_copy_without_git_names_the_commit_prepare_recorded_and_says_when_its_files_differ(gpu, tmp_path, monkeypatch):
    """On the GPU machine the tree has no .git: the commit comes from .gpu/source.json, its files checked against it."""
    monkeypatch.setattr(gpu, "ROOT", tmp_path)
    (tmp_path / "drga").mkdir()
    (tmp_path / "drga" / "a.py").write_text("a = 1\n")
    (tmp_path / "README.md").write_text("hello\n")
    carry = tmp_path / ".gpu"
    carry.mkdir()
    files = {name: gpu.sha256((tmp_path / name).read_bytes()) for name in ("drga/a.py", "README.md")}
    record = {"commit": "ab" * 20, "dirty_paths": ["README.md"], "code_dirty_paths": [], "files": files}
    (carry / "source.json").write_text(json.dumps(record))
    source = gpu.running_source(carry)
    assert source["how"] == ".gpu/source.json, files checked" and source["verified"] and source["differing_files"] == []
    assert gpu.commit_stamp(source) == "abababab" + "ab-dirty"  # a tree that was not the commit's says so
    assert gpu.commit_stamp({**source, "dirty_paths": []}) == "ab" * 5
    (tmp_path / "drga" / "a.py").write_text("a = 2\n")  # changed after prepare recorded it
    source = gpu.running_source(carry)
    assert not source["verified"] and source["differing_files"] == ["drga/a.py"] and gpu.commit_stamp(source).endswith("-dirty")
    (carry / "source.json").unlink()
    assert gpu.running_source(carry)["commit"] == "unknown"


def test_outside_a_git_checkout_a_sweep_stamps_its_runs_with_the_commit_it_is_given(monkeypatch):
    """The GPU machine's copy has no .git: drga sweep then names the commit experiments/translation_gpu.py recorded."""
    from drga.sweep import grid

    def no_git(*args, **kwargs):
        raise OSError("no git here")

    monkeypatch.setattr(grid.subprocess, "run", no_git)
    monkeypatch.delenv(grid.SOURCE_COMMIT_VARIABLE, raising=False)
    assert grid.source_commit() == "unknown"
    monkeypatch.setenv(grid.SOURCE_COMMIT_VARIABLE, "0123456789-dirty")
    assert grid.source_commit() == "0123456789-dirty"
