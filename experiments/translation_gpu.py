"""The translation study (issue 39) on one GPU in one command, packed to travel back (issue 53).

For a GPU machine you have for a short wall-clock budget, bare and without a network: the whole study
runs in one command that stops itself in time (``--budget``), from a copy of the tree that travels to the
machine with the data and wheels it needs (``prepare`` measures it against ``TRAVEL_LIMIT``, 64 MiB), and
comes back as one archive to bring home (its size checked against ``ARCHIVE_LIMIT``, 16 MiB) that the
CPU side checks and unpacks. This script is that command and what surrounds it:

``run NETS`` (what ``bash experiments/translation_gpu.sh NETS`` calls; NETS: luong, transformer or both)
    Every seed of each network at once (Luong 0-4, the Transformer 0-2), under the CUDA MPS daemon where
    the machine has it: stage 1 pretrains the network alone; each seed's stage 2 (the equal-budget
    baseline, the agent on the frozen network, co-training, and the test decoding, greedy and beam, in
    both modes) starts as soon as its own stage 1 has ended. Both stages are ``experiments/sweep.py``
    runs with the GPU configs ``experiments/configs/nmt_gpu_{luong,transformer}.toml``, as
    ``experiments/translation_regime.sh`` runs the CPU study: a run whose result file exists is skipped,
    an interrupted one resumes from its last epoch. ``--budget S``: the wall-clock seconds the command
    may take; ``--stop-margin`` seconds before its end the runs are stopped (each keeps its last
    epoch's ``last.pt``) and what is finished is packed, the archive marked partial. The same command
    again, while the machine still holds its run folders (``--work``), resumes them. Then one archive,
    ``translation-gpu-<nets>-<time>.tar.gz``, goes to ``--out`` (default ``$OUT``): its manifest
    (commit, GPU, torch, MPS, the budget, every run's state and per-epoch seconds, each file's sha256),
    every finished run's result file, every run's ``train.log``, the test translations of every row
    and the references they were scored against. The command prints every run's seconds per epoch.

    ``--smoke`` (``SMOKE=1``): the CPU rehearsal: the same stages, packing and archive from tiny networks
    on a slice of Multi30k (2 seeds of each network; tests/studies/test_translation_gpu.py runs it in make test).

``unpack ARCHIVE... [--into DIR] [--partial] [--force]`` (on the CPU side)
    Checks and unpacks archives into the study's folder (default experiments/results/translation-regime,
    the layout ``experiments/translation_tables.py`` reads): result files (stage 1 in ``pretrain/``), the
    translations gzip'd under ``hypotheses/``, the logs under ``logs/``, the manifests under ``manifests/``.
    Several archives (a partial one and its resumed successor) merge, a later one's run replacing an
    earlier one's. Refused (exit 2), with what is wrong: an archive that is not whole (a file missing or
    not the one its manifest hashed); one made from code other than this checkout's (another commit
    whose code differs from HEAD's, or a tree whose code had uncommitted changes) unless ``--force``; a
    study with runs unfinished unless ``--partial`` (the finished ones are then unpacked); a result file
    that would replace a different one already there unless ``--force``; a smoke archive into the
    study's own folder.

``prepare [--carry .gpu]`` (on the CPU side, before the GPU call)
    Copies Multi30k into ``.gpu/data`` (``../shared`` does not travel), downloads the wheels of the
    packages the GPU machine lacks into ``.gpu/whl``, records the commit and every travelling file's
    sha256 in ``.gpu/source.json`` (the copy there has no .git: the run checks the files against it and
    stamps its result files with that commit), measures what travels against the 64 MiB limit and
    prints the call to make (docs/gpu.md, "The translation study").
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.errors import UserError
from drga.names import PhaseName, ResultRow, best_checkpoint
from drga.sweep.results import portable_path

ROOT = Path(__file__).resolve().parents[1]
STUDY = Path("experiments/results/translation-regime")
DATASET = "multi30k-en-de"
NETWORKS = {"luong": "seq2seq-luong", "transformer": "transformer-nmt"}
CONFIGS = {"seq2seq-luong": "experiments/configs/nmt_gpu_luong.toml", "transformer-nmt": "experiments/configs/nmt_gpu_transformer.toml"}
SEEDS = {"seq2seq-luong": (0, 1, 2, 3, 4), "transformer-nmt": (0, 1, 2)}
SMOKE_SEEDS = (0, 1)
#: Stage 1 trains the network alone: no agent, no co-training, no equal-budget baseline.
PRETRAIN_ONLY = ["train.agent_epochs=0", "train.cotrain_epochs=0", "train.fair_baseline=false"]
#: The rehearsal's networks and phases: tiny, on the CPU, every phase of both stages still run.
SMOKE_SETTINGS = [
    "run.device=cpu", "network.embedding_dim=16", "network.hidden_size=16", "network.layers=1", "agent.hidden_sizes=8",
    "nmt.vocab_size=500", "nmt.decode_length_ratio=1.0", "data.max_length=32", "data.batch_size=32", "train.pretrain_epochs=2",
    "train.patience=0", "train.agent_epochs=1", "train.cotrain_epochs=1", "nmt.warmup_steps=4", "train.lr=0.003",
]
#: ... and each network's own, where they need more.
SMOKE_NETWORK_SETTINGS = {"transformer-nmt": ["network.feedforward_size=32", "network.heads=2"]}


def smoke_settings(net: str) -> list[str]:
    """The rehearsal's settings of a network: :data:`SMOKE_SETTINGS` less the [network] settings it does not take, and its
    own (a --set of a setting the run's network does not take is refused, issue 62)."""
    from drga.registry import network_spec

    takes = network_spec(net).setting_names
    shared = [item for item in SMOKE_SETTINGS if not item.startswith("network.") or item.split("=")[0].split(".", 1)[1] in takes]
    return shared + SMOKE_NETWORK_SETTINGS.get(net, [])


#: The rehearsal's slice of Multi30k: the first pairs of each split.
SMOKE_PAIRS = {"train": 128, "val": 8, "test_2016_flickr": 8}
MULTI30K_FILES = [f"{stem}.{lang}.gz" for stem in ("train", "val", "test_2016_flickr") for lang in ("en", "de")]
ARCHIVE_LIMIT = 16 * 2**20  #: a file the GPU call brings back
TRAVEL_LIMIT = 64 * 2**20  #: the tree and what it carries to the GPU machine
#: What the GPU machine's image lacks of what a translation run imports (docs/gpu.md); carried as wheels.
WHEELS: list[str] = []
#: The code a study's numbers come from: an archive made where these differ from HEAD's is refused (unpack).
CODE_PATHS = ("drga/", "agents/", "baselines/", "envs/", "pyproject.toml", "experiments/translation_gpu.py",
              "experiments/translation_gpu.sh", "experiments/sweep.py", "experiments/checkout.py", *CONFIGS.values())
EPOCH_LINE = re.compile(r"^\s+(pretrain|baseline|agent|cotrain) (\d+)/(\d+): (.*?)( \*)? \[([0-9.]+)s\]$")
STAGES = ("pretrain", "drga")
FORMAT = 1


def stage_prefix(stage: str) -> str:
    """Where a stage's files go inside the study's folder and the archive: stage 1 in pretrain/."""
    return "pretrain/" if stage == "pretrain" else ""


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Refused(Exception):
    """What the command refuses to do, and why (exit 2)."""


# ------------------------------------------------------------------------------------------ the source


def git(*args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=check).stdout.strip()


def in_git_checkout() -> bool:
    try:
        return Path(git("rev-parse", "--show-toplevel")).resolve() == ROOT
    except (OSError, subprocess.CalledProcessError):
        return False


def travelling_files() -> list[str]:
    """What the GPU call sends of the tree: tracked files and untracked ones git does not ignore."""
    listing = git("ls-files", "--cached", "--others", "--exclude-standard", "-z")
    return sorted({name for name in listing.split("\0") if name and (ROOT / name).is_file()})


def code_path(name: str) -> bool:
    return any(name == path or (path.endswith("/") and name.startswith(path)) for path in CODE_PATHS)


def dirty_paths() -> list[str]:
    """Travelling files that differ from HEAD: modified tracked files and untracked ones."""
    changed = git("diff", "--name-only", "HEAD", "-z").split("\0") + git("ls-files", "--others", "--exclude-standard", "-z").split("\0")
    return sorted({name for name in changed if name})


def source_record() -> dict:
    """The commit this checkout is at and what differs from it (git), for the manifest and .gpu/source.json."""
    dirty = dirty_paths()
    return {"commit": git("rev-parse", "HEAD"), "dirty_paths": dirty, "code_dirty_paths": [p for p in dirty if code_path(p)]}


def running_source(carry: Path) -> dict:
    """The source of the code this command runs: git where the tree is a checkout, else ``carry/source.json``
    (written by ``prepare``) with every travelling file checked against the sha256 it recorded."""
    if in_git_checkout():
        return {**source_record(), "how": "git", "verified": True}
    recorded = carry / "source.json"
    if not recorded.is_file():
        return {"commit": "unknown", "dirty_paths": [], "code_dirty_paths": [], "how": "none", "verified": False}
    source = json.loads(recorded.read_text(encoding="utf-8"))
    differ = sorted(name for name, digest in source["files"].items()
                    if not (ROOT / name).is_file() or sha256((ROOT / name).read_bytes()) != digest)
    return {"commit": source["commit"], "dirty_paths": source["dirty_paths"], "code_dirty_paths": source["code_dirty_paths"],
            "how": f"{portable_path(str(recorded), ROOT)}, files checked",
            "verified": not differ, "differing_files": differ[:50]}


def commit_stamp(source: dict) -> str:
    """The commit the runs' result files name: its first 10 digits, ``-dirty`` where the tree was not that commit's."""
    if source["commit"] == "unknown":
        return "unknown"
    dirty = source["dirty_paths"] or not source.get("verified", True)
    return source["commit"][:10] + ("-dirty" if dirty else "")


# ------------------------------------------------------------------------------------------ the machine


def machine(python: str, smoke: bool) -> dict:
    """torch, CUDA and the GPU: on a GPU machine asked of a short process before MPS starts (this process never
    touches the GPU); in the rehearsal, of this process."""
    probe = ("import json, platform, torch; print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
             "'cuda_available': torch.cuda.is_available(), 'python': platform.python_version()}))")
    if smoke:
        import platform

        import torch

        info = {"torch": torch.__version__, "cuda": torch.version.cuda, "cuda_available": False, "python": platform.python_version()}
    else:
        found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        info = json.loads(found.stdout) if found.returncode == 0 else {"error": found.stderr.strip()[-500:]}
    info["cpus"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if shutil.which("nvidia-smi") and not smoke:
        query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                               capture_output=True, text=True)
        info["gpu"] = query.stdout.strip() or query.stderr.strip()
    return info


@contextlib.contextmanager
def mps_daemon(wanted: bool, say):
    """The CUDA MPS control daemon for the runs, where the machine has it; yields what happened (for the manifest)."""
    control = shutil.which("nvidia-cuda-mps-control")
    if not wanted or control is None:
        yield "not used" if not wanted else "not on this machine"
        return
    started = subprocess.run([control, "-d"], capture_output=True, text=True)
    message = (started.stderr or started.stdout).strip()[:200]
    if started.returncode == 0:
        state = "started"
    elif "already running" in message.lower():  # an earlier call's, left running: the runs use it all the same
        state = f"already running ({message})"
    else:
        state = f"not started ({message})"
    say(f"[mps] nvidia-cuda-mps-control -d: {state}")
    try:
        yield state
    finally:
        if started.returncode == 0:
            subprocess.run([control], input="quit\n", capture_output=True, text=True)


# ------------------------------------------------------------------------------------------ the runs


@dataclass
class Chain:
    """One seed of one network: its stage 1, then its stage 2, each an experiments/sweep.py process."""

    net: str
    seed: int
    stage: str = "pretrain"
    process: subprocess.Popen | None = None
    returncodes: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return f"{DATASET}-{self.net}-seed{self.seed}"


@dataclass
class Study:
    """Where a run of the study keeps its files (``--work``) and how its runs are started."""

    work: Path
    python: str
    smoke: bool
    threads: int
    extra: list[str]

    def logdir(self, stage: str) -> Path:
        return self.work / "runs" / stage_prefix(stage)

    def results(self, stage: str) -> Path:
        return self.work / "results" / stage_prefix(stage)

    def run_folder(self, stage: str, name: str) -> Path:
        return self.logdir(stage) / name

    def result_file(self, stage: str, name: str) -> Path:
        return self.results(stage) / f"{name}.json"

    def command(self, chain: Chain, stage: str) -> list[str]:
        settings = [*(smoke_settings(chain.net) if self.smoke else []), *self.extra]
        if stage == "pretrain":
            settings += PRETRAIN_ONLY
        else:
            settings.append(f"train.init_from={best_checkpoint(self.run_folder('pretrain', chain.name), PhaseName.PRETRAIN)}")
        return [
            self.python, str(ROOT / "experiments" / "sweep.py"), "--config", str(ROOT / CONFIGS[chain.net]), "--nets", chain.net,
            "--datasets", DATASET, "--seeds", str(chain.seed), "--logdir", str(self.logdir(stage)), "--results", str(self.results(stage)),
            "--out", str(self.work / "logs" / f"sweep-{stage}-{chain.name}.md"), "--jobs", "1", "--threads-per-run", str(self.threads),
            *(item for setting in settings for item in ("--set", setting)),
        ]


def run_chain(chain: Chain, study: Study, stopping: threading.Event, environment: dict, say) -> None:
    """Stage 1 of the seed, then, if it finished and the study is not stopping, stage 2."""
    for stage in STAGES:
        if stopping.is_set():
            return
        if stage == "drga" and not study.result_file("pretrain", chain.name).is_file():
            say(f"[wait] {chain.name}: stage 1 did not finish (exit {chain.returncodes.get('pretrain')}); no stage 2")
            return
        log = study.work / "logs" / f"sweep-{stage}-{chain.name}.log"
        with chain.lock:
            if stopping.is_set():
                return
            chain.stage = stage
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"\n=== {now()} {' '.join(study.command(chain, stage))}\n")
                handle.flush()
                chain.process = subprocess.Popen(study.command(chain, stage), cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT,
                                                 env=environment, start_new_session=True)
        chain.returncodes[stage] = chain.process.wait()
        say(f"[{'done' if study.result_file(stage, chain.name).is_file() else 'stop'}] {chain.name} stage "
            f"{1 if stage == 'pretrain' else 2} (exit {chain.returncodes[stage]})")


def stop_chains(chains: list[Chain], grace: float, say) -> None:
    """SIGTERM to every sweep still running (each stops its run in order: SIGINT, the run keeps its last epoch's
    last.pt); after ``grace`` seconds, SIGKILL to what is left."""
    live = []
    for chain in chains:
        with chain.lock:
            process = chain.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            live.append(process)
    deadline = time.time() + grace
    for process in live:
        try:
            process.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            say(f"[kill] sweep {process.pid} still running after {grace:.0f} s")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def stop_left_runs(study: Study, chains: list[Chain], say) -> None:
    """SIGKILL to a run still training after its sweep has gone (it holds its folder's lock, drga/runtime/run_lock.py). A sweep
    starts each run in a session of its own, which the GPU machine does not end with the command: one left running
    would hold the GPU, and its folder's lock against the resuming call."""
    from drga.runtime.run_lock import run_lock_holder

    for chain in chains:
        for stage in STAGES:
            holder = run_lock_holder(study.run_folder(stage, chain.name))
            if holder is not None and holder > 0:
                say(f"[kill] {chain.name} stage {1 if stage == 'pretrain' else 2}: its run (pid {holder}) outlived its sweep")
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(holder, signal.SIGKILL)


def epochs_of(log: Path) -> list[dict]:
    """Every epoch a run's train.log records: phase, epoch, its cap, seconds, dev BLEU (net-only), best so far."""
    if not log.is_file():
        return []
    epochs = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = EPOCH_LINE.match(line)
        if match:
            bleu = re.search(r"BLEU ([0-9.]+)", match.group(4))
            epochs.append({"phase": match.group(1), "epoch": int(match.group(2)), "of": int(match.group(3)),
                           "seconds": float(match.group(6)), "dev_bleu": float(bleu.group(1)) if bleu else None,
                           "best": bool(match.group(5))})
    return epochs


def status_line(study: Study, chain: Chain) -> str:
    epochs = epochs_of(study.run_folder(chain.stage, chain.name) / "train.log")
    if not epochs:
        return f"{chain.net.split('-')[0]}{chain.seed} {chain.stage} starting"
    last = epochs[-1]
    return f"{chain.net.split('-')[0]}{chain.seed} {last['phase']} {last['epoch']} ({last['seconds']:.0f}s, BLEU {last['dev_bleu']})"


# ------------------------------------------------------------------------------------------ packing


def smoke_data(work: Path, say) -> Path:
    """The rehearsal's data root: the first pairs of each Multi30k split (:data:`SMOKE_PAIRS`), gzip'd as Multi30k's."""
    from drga.data.locate import find_dataset_dir

    source = find_dataset_dir("multi30k", MULTI30K_FILES)
    folder = work / "data" / "multi30k"
    folder.mkdir(parents=True, exist_ok=True)
    for name in MULTI30K_FILES:
        keep = SMOKE_PAIRS[name.rsplit(".", 2)[0]]
        with gzip.open(source / name, "rt", encoding="utf-8") as handle:
            lines = [line for _, line in zip(range(keep), handle)]
        with gzip.GzipFile(folder / name, "wb", mtime=0) as out:
            out.write("".join(lines).encode("utf-8"))
    say(f"[data] the rehearsal's slice of {source}: {', '.join(f'{n} {k}' for n, k in SMOKE_PAIRS.items())} pairs, in {folder}")
    return work / "data"


def references(data_root: Path | None) -> tuple[str, dict]:
    """The test references every run's translations were scored against (drga's own reading of Multi30k's
    test2016 German side), as text, and the data files' sha256."""
    from drga.data.locate import find_dataset_dir
    from drga.data.parallel import load_multi30k

    folder = find_dataset_dir("multi30k", MULTI30K_FILES, data_root)
    splits = load_multi30k(folder)
    text = "".join(pair.target + "\n" for pair in splits.test)
    return text, {name: sha256((folder / name).read_bytes()) for name in MULTI30K_FILES}


def pack(study: Study, chains: list[Chain], out: Path, manifest: dict, scored: tuple[str, dict], say) -> Path:
    """One archive of what the study has so far: its manifest, every finished run's result file and translations,
    every run's train.log and sweep log, the references and this command's own log."""
    members: dict[str, bytes] = {}
    runs = {}
    for chain in chains:
        for stage in STAGES:
            prefix, folder = stage_prefix(stage), study.run_folder(stage, chain.name)
            result = study.result_file(stage, chain.name)
            log = folder / "train.log"
            epochs = epochs_of(log)
            entry = {"stage": stage, "finished": result.is_file(), "returncode": chain.returncodes.get(stage), "epochs": epochs}
            if log.is_file():
                members[f"logs/{prefix}{chain.name}.log"] = log.read_bytes()
            sweep_log = study.work / "logs" / f"sweep-{stage}-{chain.name}.log"
            if sweep_log.is_file():
                members[f"logs/sweep/{stage}-{chain.name}.log"] = sweep_log.read_bytes()
            if result.is_file():
                members[f"results/{prefix}{chain.name}.json"] = result.read_bytes()
                content = json.loads(result.read_text(encoding="utf-8"))
                entry["wall_seconds"] = content.get("wall_seconds")
                entry["phases"] = content.get("phases")
                for translation in sorted((folder / "translations").glob("test.*")):
                    members[f"hypotheses/{prefix}{chain.name}/{translation.name}"] = translation.read_bytes()
            elif (folder / "wall_seconds.txt").is_file():
                entry["wall_seconds"] = float((folder / "wall_seconds.txt").read_text())
            runs[f"{prefix}{chain.name}"] = entry
    text, data = scored
    members["references/test.de"] = text.encode("utf-8")
    own_log = study.work / "logs" / "translation_gpu.log"
    if own_log.is_file():
        members["logs/translation_gpu.log"] = own_log.read_bytes()
    finished = sorted(name for name, entry in runs.items() if entry["finished"])
    manifest.update({
        "runs": runs, "planned": sorted(runs), "finished": finished, "complete": len(finished) == len(runs), "data_sha256": data,
        "files": {name: sha256(content) for name, content in sorted(members.items())},
    })
    members["manifest.json"] = (json.dumps(manifest, indent=1) + "\n").encode("utf-8")
    out.mkdir(parents=True, exist_ok=True)
    nets = "-".join(key for key, net in NETWORKS.items() if any(chain.net == net for chain in chains))
    archive = out / f"translation-gpu-{'smoke-' if study.smoke else ''}{nets}-{manifest['ended'].replace(':', '').replace('-', '')}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content), 0, 0o644
            tar.addfile(info, io.BytesIO(content))
    size = archive.stat().st_size
    say(f"[pack] {archive} ({size / 2**20:.2f} MiB of the {ARCHIVE_LIMIT / 2**20:.0f} MiB a file may have; {len(members)} files; "
        f"{len(finished)} of {len(runs)} runs finished{'' if manifest['complete'] else ': PARTIAL'})")
    if size > ARCHIVE_LIMIT:
        say(f"[pack] WARNING: over the {ARCHIVE_LIMIT / 2**20:.0f} MiB a file brought back from the GPU machine may have")
    return archive


def summary(manifest: dict, study: Study) -> list[str]:
    """Every run's epochs and seconds per epoch by phase, the numbers the first GPU call learns the study's cost from."""
    lines = ["", "| run | stage | finished | epochs (phase: n, median s) | wall s | pretrain-only BLEU beam | DRGA with agent BLEU beam |",
             "|---|---|---|---|---|---|---|"]
    for name, entry in manifest["runs"].items():
        by_phase: dict[str, list[float]] = {}
        for epoch in entry["epochs"]:
            by_phase.setdefault(epoch["phase"], []).append(epoch["seconds"])
        phases = "; ".join(f"{phase}: {len(s)}, {sorted(s)[len(s) // 2]:.1f}" for phase, s in by_phase.items()) or "-"
        beams = ["-", "-"]
        if entry["finished"]:
            rows = json.loads((study.work / "results" / f"{name}.json").read_text(encoding="utf-8"))["rows"]
            for index, (row, mode) in enumerate(((ResultRow.PRETRAIN_ONLY, "net-only"), (ResultRow.DRGA, "with-agent"))):
                bleu = (((rows.get(row) or {}).get(mode) or {}).get("test_beam") or {}).get("bleu")
                beams[index] = f"{bleu:.2f}" if bleu is not None else "-"
        wall = entry.get("wall_seconds")
        lines.append(f"| {name.removeprefix('pretrain/')} | {entry['stage']} | {'yes' if entry['finished'] else 'NO'} | {phases} "
                     f"| {wall if wall is None else round(wall)} | {beams[0]} | {beams[1]} |")
    lines.append("")
    for name, entry in manifest["runs"].items():  # the dev curves, to see convergence before anything is unpacked
        curve = " ".join(f"{e['dev_bleu']:.1f}{'*' if e['best'] else ''}" for e in entry["epochs"] if e["dev_bleu"] is not None)
        if curve:
            lines.append(f"dev BLEU per epoch ({'stage 1' if entry['stage'] == 'pretrain' else 'stage 2'}, * best so far) "
                         f"{name.removeprefix('pretrain/')}: {curve}")
    return lines


def run_study(args: argparse.Namespace) -> int:
    started = time.time()
    nets = [NETWORKS[n] for n in NETWORKS] if args.nets == "both" else [NETWORKS.get(args.nets, args.nets)]
    if any(net not in CONFIGS for net in nets):
        raise Refused(f"NETS must be luong, transformer or both, not {args.nets!r}")
    work = (ROOT / args.work).resolve() if not Path(args.work).is_absolute() else Path(args.work)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    own_log = open(work / "logs" / "translation_gpu.log", "a", encoding="utf-8")
    print_lock = threading.Lock()

    def say(line: str) -> None:
        stamped = f"[{time.time() - started:6.1f}s] {line}"
        with print_lock:
            print(stamped, flush=True)
            own_log.write(stamped + "\n")
            own_log.flush()

    seeds = {net: (SMOKE_SEEDS if args.smoke else SEEDS[net]) for net in nets}
    for net, given in (("seq2seq-luong", args.luong_seeds), ("transformer-nmt", args.transformer_seeds)):
        if given and net in seeds:
            seeds[net] = tuple(int(s) for s in given.split())
    chains = [Chain(net, seed) for net in nets for seed in seeds[net]]
    carry = ROOT / args.carry
    source = running_source(carry)
    environment = dict(os.environ, PYTHONUNBUFFERED="1")
    environment["DRGA_SOURCE_COMMIT"] = commit_stamp(source)
    data_root = smoke_data(work, say) if args.smoke else (Path(os.environ["DRGA_DATA"]) if os.environ.get("DRGA_DATA") else None)
    if data_root is not None:
        environment["DRGA_DATA"] = str(data_root)
    scored = references(data_root)  # the test references, read now: a data set that is not there stops the study before it starts
    info = machine(args.python, args.smoke)
    if not args.smoke and not info.get("cuda_available"):
        raise Refused(f"no CUDA device ({info}); the study's configs run on cuda (SMOKE=1 rehearses it on the CPU)")
    threads = args.threads or max(1, (info.get("cpus") or 1) // len(chains))
    study = Study(work, args.python, args.smoke, threads, args.set)
    budget = f"{args.budget:.0f} s, runs stopped at {args.budget - args.stop_margin:.0f} s" if args.budget else "none"
    say(f"[start] {' + '.join(f'{net} seeds {seeds[net]}' for net in nets)}; commit {environment['DRGA_SOURCE_COMMIT']} "
        f"({source['how']}); {info}; {threads} thread(s) per run; budget {budget}; work {work}")
    if source["code_dirty_paths"] or not source.get("verified", True):
        say(f"[source] WARNING: the code is not the commit's: {source['code_dirty_paths'][:10]} {source.get('differing_files', [])[:10]}")
    manifest = {"format": FORMAT, "study": "translation-gpu", "smoke": args.smoke, "nets": nets, "seeds": seeds, "source": source,
                "commit": environment["DRGA_SOURCE_COMMIT"], "machine": info, "budget_seconds": args.budget,
                "stop_margin_seconds": args.stop_margin, "threads_per_run": threads, "started": now(),
                "work": portable_path(str(work), ROOT),
                "configs": {net: {"path": CONFIGS[net], "sha256": sha256((ROOT / CONFIGS[net]).read_bytes())} for net in nets},
                "settings": [*(SMOKE_SETTINGS if args.smoke else []), *args.set],
                "network_settings": {net: smoke_settings(net) for net in nets} if args.smoke else {}}
    stopping = threading.Event()
    with mps_daemon(not args.smoke and not args.no_mps, say) as mps:
        manifest["mps"] = mps
        threads_ = [threading.Thread(target=run_chain, args=(chain, study, stopping, environment, say), daemon=True) for chain in chains]
        for thread in threads_:
            thread.start()
        reported = time.time()
        stop_at = started + args.budget - args.stop_margin if args.budget else None
        while any(thread.is_alive() for thread in threads_):
            time.sleep(0.5)
            if stop_at is not None and time.time() >= stop_at and not stopping.is_set():
                say(f"[budget] {args.budget - args.stop_margin:.0f} s reached: stopping the runs (they keep their last epoch) to pack")
                stopping.set()
                stop_chains(chains, args.grace, say)
                stop_left_runs(study, chains, say)
            if time.time() - reported >= args.report_every:
                reported = time.time()
                say("[status] " + "; ".join(status_line(study, chain) for chain in chains))
        for thread in threads_:
            thread.join()
    manifest.update({"ended": now(), "seconds": round(time.time() - started, 1), "stopped_at_budget": stopping.is_set()})
    archive = pack(study, chains, Path(args.out), manifest, scored, say)
    for line in summary(manifest, study):
        say(line)
    say(f"[end] {time.time() - started:.0f} s; {'complete' if manifest['complete'] else 'PARTIAL'}; archive {archive}")
    own_log.close()
    if not manifest["complete"]:
        return 3
    return 0


# ------------------------------------------------------------------------------------------ unpacking


@dataclass
class Archive:
    path: Path
    manifest: dict
    members: dict[str, bytes]


def read_archive(path: Path) -> Archive:
    """An archive's files, checked against the sha256 its manifest recorded of each."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}
    except (OSError, tarfile.TarError, EOFError) as error:
        raise Refused(f"{path}: not a whole archive ({error}); it may have been cut off on its way back") from None
    if "manifest.json" not in members:
        raise Refused(f"{path}: no manifest.json: not an archive of experiments/translation_gpu.py")
    manifest = json.loads(members["manifest.json"])
    if manifest.get("study") != "translation-gpu" or manifest.get("format") != FORMAT:
        raise Refused(f"{path}: not an archive of experiments/translation_gpu.py (format {FORMAT})")
    missing = sorted(set(manifest["files"]) - set(members))
    altered = sorted(name for name, digest in manifest["files"].items() if name in members and sha256(members[name]) != digest)
    if missing or altered:
        raise Refused(f"{path}: not whole: {len(missing)} file(s) missing ({', '.join(missing[:5])}), {len(altered)} not the ones "
                      f"its manifest hashed ({', '.join(altered[:5])})")
    return Archive(path, manifest, members)


def check_commit(archive: Archive, force: bool) -> str:
    """Why the archive's code is this checkout's (a note), or Refused."""
    source, commit = archive.manifest["source"], archive.manifest["source"]["commit"]
    if commit == "unknown":
        problem = "it records no commit (the tree it ran from was neither a git checkout nor prepared by `prepare`)"
    elif not source.get("verified", True):
        problem = f"the files it ran differ from those `prepare` recorded ({', '.join(source.get('differing_files', [])[:5])})"
    elif source["code_dirty_paths"]:
        problem = f"its code had uncommitted changes ({', '.join(source['code_dirty_paths'][:5])})"
    else:
        head = git("rev-parse", "HEAD")
        if commit == head:
            return f"made at HEAD ({head[:10]})"
        known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True).returncode == 0
        if not known:
            problem = f"its commit {commit[:10]} is not in this repository"
        else:
            changed = [name for name in git("diff", "--name-only", commit, "HEAD").splitlines() if code_path(name)]
            if not changed:
                return f"made at {commit[:10]}, whose code is HEAD's ({head[:10]}: the commits between change no code)"
            problem = f"made at {commit[:10]}, whose code differs from HEAD's ({head[:10]}) in {', '.join(changed[:5])}"
    if force:
        return f"FORCED: {problem}"
    raise Refused(f"{archive.path}: {problem}; --force to unpack it anyway")


def portable_log_bytes(content: bytes) -> bytes:
    """An archived log as committed: the GPU machine's absolute paths in it portable (its tree's own from the tree on,
    ``experiments/configs/...``, ``.gpu/data/...``), every other byte as the run wrote it. (Imported here: the unpacking
    is the CPU side's, and the GPU run imports no more of experiments/ than it needs.)"""
    from portable_result_files import portable_log

    return portable_log(content.decode("utf-8", errors="surrogateescape"), ROOT).encode("utf-8", errors="surrogateescape")


def unpack(args: argparse.Namespace) -> int:
    archives = [read_archive(Path(path)) for path in args.archives]
    into = Path(args.into) if args.into else ROOT / STUDY
    for archive in archives:
        if archive.manifest["smoke"] and not args.into:
            raise Refused(f"{archive.path}: a rehearsal's archive (SMOKE=1) goes into a folder given with --into, not the study's")
    notes = [f"{archive.path.name}: {check_commit(archive, args.force)}" for archive in archives]
    latest: dict[str, Archive] = {}  # run (stage prefix + name) → the last archive that finished it
    planned: set[str] = set()
    for archive in archives:
        planned |= set(archive.manifest["planned"])
        for name in archive.manifest["finished"]:
            latest[name] = archive
    unfinished = sorted(planned - set(latest))
    if unfinished and not args.partial:
        raise Refused(f"partial: {len(latest)} of {len(planned)} runs finished; unfinished: {', '.join(unfinished)}; "
                      "--partial to unpack the finished ones")
    references = {archive.members["references/test.de"] for archive in archives}
    if len(references) > 1:
        raise Refused("the archives' test references differ: they are not runs of one study")
    writes: dict[Path, bytes] = {}
    for name, archive in sorted(latest.items()):
        stage_dir, run = (into / "pretrain", name.removeprefix("pretrain/")) if name.startswith("pretrain/") else (into, name)
        writes[stage_dir / f"{run}.json"] = archive.members[f"results/{name}.json"]
        for member, content in archive.members.items():
            if member.startswith(f"hypotheses/{name}/"):
                writes[into / "hypotheses" / name / (Path(member).name + ".gz")] = gzip.compress(content, mtime=0)
        if f"logs/{name}.log" in archive.members:  # the GPU tree's absolute paths made portable (portable_result_files)
            writes[into / "logs" / f"{name}.log"] = portable_log_bytes(archive.members[f"logs/{name}.log"])
    for name in latest:  # a stage-2 run and the stage-1 run it started from must be of one network
        if not name.startswith("pretrain/") and f"pretrain/{name}" in latest:
            stage2 = json.loads(writes[into / f"{name}.json"])
            stage1 = json.loads(writes[into / "pretrain" / f"{name}.json"])
            if stage2.get("pretrain_checksum") != stage1.get("pretrain_checksum"):
                raise Refused(f"{name}: its stage 2 started from another network than its stage 1 in these archives "
                              "(from another call on a fresh machine?)")
    writes[into / "hypotheses" / "references.test.de.gz"] = gzip.compress(references.pop(), mtime=0)
    for archive in archives:
        stem = archive.path.name.removesuffix(".tar.gz")
        writes[into / "manifests" / f"{stem}.json"] = archive.members["manifest.json"]
        if "logs/translation_gpu.log" in archive.members:
            writes[into / "logs" / f"{stem}.log"] = portable_log_bytes(archive.members["logs/translation_gpu.log"])
    clashes = [path for path, content in writes.items() if path.suffix == ".json" and path.parent.name != "manifests"
               and path.is_file() and path.read_bytes() != content]
    if clashes and not args.force:
        raise Refused(f"{len(clashes)} result file(s) there differ from the archives' ({', '.join(str(p) for p in clashes[:3])}); "
                      "--force to replace them")
    for path, content in writes.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    for note in notes:
        print(f"unpack: {note}")
    translations = sum(1 for path in writes if "hypotheses" in path.parts and path.name.startswith("test."))
    print(f"unpack: {len(latest)} result files and {translations} translation files into {into}"
          + (f"; unfinished, not unpacked: {', '.join(unfinished)}" if unfinished else ""))
    print(f"unpack: the tables: python experiments/translation_tables.py {'' if into == ROOT / STUDY else into}".rstrip())
    return 0


# ------------------------------------------------------------------------------------------ preparing


def travelling_size(carry: Path) -> tuple[int, int]:
    """Bytes of the tree that travels to the GPU machine, and of the carried folder."""
    tree = sum((ROOT / name).stat().st_size for name in travelling_files())
    carried = sum(path.stat().st_size for path in carry.rglob("*") if path.is_file()) if carry.is_dir() else 0
    return tree, carried


def prepare(args: argparse.Namespace) -> int:
    from drga.data.locate import find_dataset_dir

    carry = ROOT / args.carry
    data = carry / "data" / "multi30k"
    data.mkdir(parents=True, exist_ok=True)
    source = find_dataset_dir("multi30k", MULTI30K_FILES, args.data_root)
    for name in MULTI30K_FILES:
        shutil.copyfile(source / name, data / name)
    print(f"prepare: Multi30k from {source} into {data}")
    if WHEELS and not args.no_wheels:
        wheels = carry / "whl"
        wheels.mkdir(exist_ok=True)
        platforms = [item for tag in ("manylinux_2_28", "manylinux_2_17", "manylinux2014") for item in ("--platform", f"{tag}_x86_64")]
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
                        "--implementation", "cp", *platforms, "-d", str(wheels), *WHEELS], check=True)
        print(f"prepare: wheels {', '.join(WHEELS)} in {wheels}")
    record = source_record()
    record["files"] = {name: sha256((ROOT / name).read_bytes()) for name in travelling_files()}
    record["recorded"] = now()
    (carry / "source.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"prepare: source {record['commit'][:10]}, {len(record['files'])} travelling files hashed"
          + (f"; differing from HEAD: {', '.join(record['dirty_paths'][:8])}" if record["dirty_paths"] else "; the tree is HEAD's"))
    if record["code_dirty_paths"]:
        print(f"prepare: WARNING: code differs from HEAD ({', '.join(record['code_dirty_paths'][:8])}): unpack will refuse the archive "
              "unless --force; commit first")
    tree, carried = travelling_size(carry)
    total = tree + carried
    print(f"prepare: travels {total / 2**20:.1f} MiB of {TRAVEL_LIMIT / 2**20:.0f} (tree {tree / 2**20:.1f}, {args.carry} "
          f"{carried / 2**20:.1f})")
    if total > TRAVEL_LIMIT:
        print("prepare: over the limit: the GPU call would be refused", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="the study (or its rehearsal) and its archive")
    run.add_argument("nets", nargs="?", default="both", help="luong, transformer or both (default)")
    run.add_argument("--smoke", action="store_true", help="the CPU rehearsal: tiny networks, a slice of the data, 2 seeds")
    run.add_argument("--budget", type=float, default=0, help="wall-clock seconds this command may take (0: no limit)")
    run.add_argument("--stop-margin", type=float, default=45, help="seconds before the budget's end at which the runs stop")
    run.add_argument("--grace", type=float, default=30, help="seconds a stopped sweep gets before SIGKILL")
    run.add_argument("--work", default="runs/translation-gpu", help="run folders and logs (kept for a resume)")
    run.add_argument("--out", default=os.environ.get("OUT") or "runs/translation-gpu/out", help="where the archive goes (default $OUT)")
    run.add_argument("--carry", default=".gpu", help="the carried folder holding source.json (prepare)")
    run.add_argument("--luong-seeds", help='e.g. "0 1 2 3 4"')
    run.add_argument("--transformer-seeds", help='e.g. "0 1 2"')
    run.add_argument("--threads", type=int, default=0, help="threads per run (default: cores / runs)")
    run.add_argument("--no-mps", action="store_true", help="without the CUDA MPS daemon")
    run.add_argument("--report-every", type=float, default=60, help="seconds between status lines")
    run.add_argument("--python", default=sys.executable, help="the Python the runs use")
    run.add_argument("--set", action="append", default=[], help="an extra setting of every run, section.key=value")
    unpacking = commands.add_parser("unpack", help="check and unpack archives into the study's folder")
    unpacking.add_argument("archives", nargs="+")
    unpacking.add_argument("--into", help=f"the study's folder (default {STUDY})")
    unpacking.add_argument("--partial", action="store_true", help="unpack the finished runs of an unfinished study")
    unpacking.add_argument("--force", action="store_true", help="unpack an archive of other code, replace differing result files")
    preparing = commands.add_parser("prepare", help="what the GPU call carries: Multi30k, wheels, the source's record")
    preparing.add_argument("--carry", default=".gpu")
    preparing.add_argument("--data-root", help="where Multi30k is (default: the usual data roots)")
    preparing.add_argument("--no-wheels", action="store_true")
    args = parser.parse_args(argv)
    try:
        return {"run": run_study, "unpack": unpack, "prepare": prepare}[args.command](args)
    except (Refused, UserError) as error:
        print(f"translation_gpu.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
