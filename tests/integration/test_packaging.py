"""The installed package: one top-level package (drga) holding agents, baselines and envs, its
configs and demo data bundled, experiments/ left out; and it works from any folder."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_drga_alone_and_works_from_an_empty_folder(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(tmp_path.glob("drga-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"drga", wheel.name.split("-py")[0] + ".dist-info"}
    for expected in (
        "drga/baselines/protocol.py",
        "drga/agents/sb3_policy.py",
        "drga/core/policy.py",
        "drga/envs/attention_retrofit.py",
        "drga/configs/demo.toml",
        "drga/cli.py",
        "drga/data/bundled/README.md",
        "drga/data/bundled/subj/plot.tok.gt9.5000",
        "drga/data/bundled/subj/quote.tok.gt9.5000",
        "drga/data/bundled/subj/README.txt",
        "drga/data/bundled/glove/glove.6B.50d.subj.txt.gz",
        "drga/data/bundled/glove/README.md",
    ):
        assert expected in names, expected
    assert not any(name.startswith(("experiments/", "tests/")) for name in names)
    # the base install pulls none of the analysis extra's packages (issue 63): each is required only with extra == "analysis"
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    for package in ("scipy", "captum", "vadersentiment", "statsmodels"):
        found = [spec for spec in requires if spec.lower().startswith(package)]
        assert found and all('extra == "analysis"' in spec for spec in found), (package, found)
    assert any(name.endswith("dist-info/licenses/LICENSE") or name.endswith("dist-info/LICENSE") for name in names)
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    code = (
        "import drga, drga.baselines, drga.envs, gymnasium\n"
        "from drga.config import load_config\n"
        "from drga.data import load_dataset\n"
        "from drga.data.embeddings import resolve_vectors\n"
        "print(drga.__file__.startswith(sys.argv[1]), drga.baselines.__file__.startswith(sys.argv[1]),\n"
        "      drga.ENV_ID in gymnasium.registry, load_config('demo').run.run_name,\n"
        "      len(load_dataset('subj').train), str(resolve_vectors('glove-6b-50d-subj')[0]).startswith(sys.argv[1]))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code, str(target)],
        capture_output=True,
        text=True,
        cwd=empty,
        # no data root holds SUBJ here (no ../shared beside the folders, an empty cache): the wheel's own copy
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")},
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["True", "True", "True", "demo-subj-lstm-sa", "8000", "True"]
