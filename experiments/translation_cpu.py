"""The translation study on two CPU cores, one seed at a time (issue 61).

One unit is one seed's whole pipeline, sized to finish within a wall-clock budget of 2 h 15 min (``--deadline``
or ``--budget-min``), and resumed where it stopped by the same command:

    bash experiments/translation_cpu.sh luong 0 [--deadline 10:05 | --budget-min 135] [--dry-run]
    python experiments/translation_cpu.py run luong 0 ...        # the same

1. stage 1: the network alone, whole passes, to early stopping or the config's cap;
2. stage 2, from stage 1's best network (``train.init_from``): the equal-budget baseline, the agent on the
   frozen network and co-training, each counted in training pairs (the config's ``nmt.epoch_pairs``);
3. test2016 decoding, greedy and beam, in both modes: every row's, at the end of each stage's run.

Both stages are ``experiments/sweep.py`` runs with ``experiments/configs/nmt_cpu_<net>.toml``, as the GPU
route runs them (experiments/translation_gpu.py). Their result files go straight into the study's folder,
experiments/results/translation-regime/ (stage 1 in ``pretrain/``), with what the tables check them
against: the gzip'd test translations (``hypotheses/``), the runs' ``train.log`` (``logs/``), the test
references, and one record of the unit (``units/<run>.json``: commit, machine, threads, the projection it
started with and the seconds each stage took). Commit that folder when the unit ends.

Before it starts, the unit prints its plan and its projected finish: from the units of the same network
already recorded in ``units/`` (their stages' measured seconds, the slowest of them), else from the
throughput probe of ``probes/`` (training seconds only, plus the allowances it names). Given a deadline,
it refuses (exit 2) a unit, or a stage, that would not finish before it; stage 1's files are then ready
to commit, and the same command run again later does stage 2, where stage 1's run folder survived. A
killed unit resumes where its run folders survived: a stage whose result file exists is skipped, an
interrupted run resumes from its last epoch (sweep). SIGINT or SIGTERM stops the running stage in order (the run keeps its last
epoch's ``last.pt``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
from portable_result_files import portable_log as portable_log_text
from translation_gpu import (
    DATASET,
    NETWORKS,
    PRETRAIN_ONLY,
    STUDY,
    Refused,
    epochs_of,
    now,
    references,
    running_source,
    sha256,
    smoke_data,
    smoke_settings,
    stage_prefix,
)

from drga.errors import report_command_failure
from drga.files import write_bytes_atomic, write_text_atomic
from drga.names import PhaseName, best_checkpoint
from drga.sweep.results import portable_path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {net: f"experiments/configs/nmt_cpu_{key}.toml" for key, net in NETWORKS.items()}
KEYS = {net: key for key, net in NETWORKS.items()}  #: the short name a command takes (luong, transformer)
STAGES = ("pretrain", "drga")
#: Stage 1 trains on whole passes; the config's nmt.epoch_pairs is stage 2's budget unit.
STAGE_ONE = [*PRETRAIN_ONLY, "nmt.epoch_pairs=0"]
TRAIN_PAIRS = 29_000  #: Multi30k task 1's training pairs (a whole pass)
FORMAT = 1
#: What the probe's training seconds leave out, assumed until a unit has measured it (units/ replaces the probe then).
ALLOWANCES = {
    "dev_evaluation_fraction": 0.25,
    "test_decoding_seconds_per_row": 300,
    "why": "assumed, not measured: the bench times training alone; the first unit measures dev evaluation and test decoding (units/), "
    "and later units project from it",
}
#: The rehearsal's stage 2 counts the slice's 128 training pairs as an epoch.
SMOKE_PAIRS = ("nmt.epoch_pairs=128",)


class NoProbe(Refused):
    """Nothing to project a unit from: no finished unit of its network and config, and no throughput probe."""


@dataclass(frozen=True)
class Unit:
    """One seed of one network: where its runs and files live."""

    net: str
    seed: int
    work: Path
    study: Path
    config: Path
    extra: tuple[str, ...] = ()
    """Settings of both stages' runs (the rehearsal's tiny networks)."""

    @property
    def name(self) -> str:
        return f"{DATASET}-{self.net}-seed{self.seed}"

    def logdir(self, stage: str) -> Path:
        return self.work / stage_prefix(stage)

    def run_folder(self, stage: str) -> Path:
        return self.logdir(stage) / self.name

    def result_file(self, stage: str) -> Path:
        return self.study / stage_prefix(stage) / f"{self.name}.json"

    def record_file(self) -> Path:
        return self.study / "units" / f"{self.name}.json"

    def command(self, stage: str, python: str, threads: int) -> list[str]:
        # run.threads too: the config's own would win over the sweep's --threads-per-run
        settings = [*self.extra, f"run.threads={threads}"]
        if stage == "pretrain":
            settings += STAGE_ONE
        else:
            settings.append(f"train.init_from={portable_path(str(best_checkpoint(self.run_folder('pretrain'), PhaseName.PRETRAIN)), ROOT)}")
        return [
            python,
            str(ROOT / "experiments" / "sweep.py"),
            "--config",
            str(self.config),
            "--nets",
            self.net,
            "--datasets",
            DATASET,
            "--seeds",
            str(self.seed),
            "--logdir",
            str(self.logdir(stage)),
            "--results",
            str(self.study / stage_prefix(stage)),
            "--out",
            str(self.work / f"sweep-{stage}-{self.name}.md"),
            "--jobs",
            "1",
            "--threads-per-run",
            str(threads),
            *(x for s in settings for x in ("--set", s)),
        ]


# ------------------------------------------------------------------------------------------ the projection


def read_config(path: Path) -> dict:
    import tomllib

    with open(path, "rb") as handle:
        return tomllib.load(handle)


def settings_sha256(path: Path) -> str:
    """The digest of a config's settings, its comments left out: a unit of the same settings projects the next, whatever
    the config's comments came to say since."""
    return sha256(json.dumps(read_config(path), sort_keys=True, default=str).encode("utf-8"))


def same_config(record: dict, config: Path) -> bool:
    """Whether a unit record ran ``config``'s settings: its settings digest, or (a record without one) the file's bytes."""
    if "config_settings_sha256" in record:
        return record["config_settings_sha256"] == settings_sha256(config)
    return record.get("config_sha256") == sha256(config.read_bytes())


def projection(unit: Unit) -> tuple[dict[str, float], str]:
    """Projected seconds of each stage, and where the projection comes from."""
    recorded = []
    for path in sorted((unit.study / "units").glob(f"{DATASET}-{unit.net}-seed*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if same_config(record, unit.config) and record.get("finished"):
            recorded.append(record["stage_seconds"])
    if recorded:
        stages = {stage: max(r[stage] for r in recorded) for stage in STAGES}
        return stages, f"the slowest of {len(recorded)} finished unit(s) of this network and config (units/)"
    probe_path = unit.study / "probes" / f"throughput-{unit.net}.json"
    if not probe_path.is_file():  # a rehearsal's own folder has none: the study's probe
        probe_path = ROOT / STUDY / "probes" / probe_path.name
    if not probe_path.is_file():
        raise NoProbe(
            f"no finished unit of {unit.net} and no throughput probe ({portable_path(str(probe_path), ROOT)}): nothing to project from; "
            f"measure first, on an otherwise idle machine: python experiments/translation_cpu.py probe {KEYS[unit.net]}"
        )
    probe = json.loads(probe_path.read_text(encoding="utf-8"))
    config = read_config(unit.config)
    train, nmt = config["train"], config["nmt"]
    base, cotrain = probe["baseline_seconds_per_1000_pairs"], probe["cotrain_seconds_per_1000_pairs"]
    allowance = probe["allowances"]
    evaluated, decoding = 1 + allowance["dev_evaluation_fraction"], allowance["test_decoding_seconds_per_row"]
    # stage 1 decodes one row (pretrain-only); stage 2 five, and trains the baseline as many pairs as the agent and co-training
    stage1 = train["pretrain_epochs"] * TRAIN_PAIRS / 1000 * base * evaluated + decoding
    stage2_pairs = (train["agent_epochs"] + train["cotrain_epochs"]) * nmt["epoch_pairs"] / 1000
    stage2 = stage2_pairs * (base + cotrain) * evaluated + 5 * decoding
    return {"pretrain": stage1, "drga": stage2}, (
        f"the throughput probe {portable_path(str(probe_path), ROOT)} (training seconds at {probe['threads']} threads, the "
        f"epoch cap, and its stated allowances: {allowance['dev_evaluation_fraction']:.0%} for dev evaluation, "
        f"{allowance['test_decoding_seconds_per_row']:.0f} s of test decoding per row; no unit has finished yet)"
    )


def parse_deadline(text: str | None, budget_min: float | None, started: float) -> float | None:
    if text and budget_min:
        raise Refused("--deadline and --budget-min: give one")
    if budget_min:
        return started + budget_min * 60
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text) if "T" in text or "-" in text else None
        if moment is None:
            hours, minutes = (int(x) for x in text.split(":"))
            moment = datetime.now().replace(hour=hours, minute=minutes, second=0, microsecond=0)
    except ValueError as error:
        raise Refused(f"--deadline {text!r}: not HH:MM or an ISO date and time ({error})") from None
    if moment.timestamp() <= started:
        raise Refused(f"--deadline {text!r} has passed ({moment:%Y-%m-%d %H:%M})")
    return moment.timestamp()


def clock(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).strftime("%H:%M")


def duration(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


# ------------------------------------------------------------------------------------------ the unit's files


def collect(unit: Unit, stage: str) -> list[Path]:
    """A finished stage's translations (gzip'd) and train.log into the study's folder, as the tables read them."""
    folder, prefix, written = unit.run_folder(stage), stage_prefix(stage), []
    for translation in sorted((folder / "translations").glob("test.*")):
        target = unit.study / "hypotheses" / f"{prefix}{unit.name}" / f"{translation.name}.gz"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(target, gzip.compress(translation.read_bytes(), mtime=0))
        written.append(target)
    log = folder / "train.log"
    if log.is_file():
        target = unit.study / "logs" / f"{prefix}{unit.name}.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, portable_log(log.read_text(encoding="utf-8", errors="replace")))
        written.append(target)
    return written


def portable_log(text: str) -> str:
    """A log as committed: every absolute path in it portable, from this checkout (portable_result_files.portable_log:
    ``.venv/bin/python``, ``../shared/data/multi30k/train.en.gz``), every other byte as the run wrote it."""
    return portable_log_text(text, ROOT)


def write_references(study: Path, data_root: Path | None) -> None:
    text, _ = references(data_root)
    target = study / "hypotheses" / "references.test.de.gz"
    content = gzip.compress(text.encode("utf-8"), mtime=0)
    if target.is_file() and gzip.decompress(target.read_bytes()) != text.encode("utf-8"):
        raise Refused(f"{portable_path(str(target), ROOT)} holds other references than this data's test2016 German side")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(target, content)


def write_json(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(content, indent=1) + "\n")


def write_record(unit: Unit, record: dict) -> None:
    write_json(unit.record_file(), record)


# ------------------------------------------------------------------------------------------ running


def run_stage(command: list[str], log: Path, environment: dict[str, str]) -> int:
    """One sweep, its output to ``log`` and the terminal; SIGINT/SIGTERM stop it in order (the run keeps last.pt)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"\n=== {now()} {' '.join(command)}\n")
        handle.flush()
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=environment,
            start_new_session=True,
        )

        def forward(signum, frame):  # noqa: ARG001
            process.send_signal(signal.SIGTERM)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            assert process.stdout is not None
            for line in process.stdout:
                handle.write(line)
                handle.flush()
                print(line, end="", flush=True)
            return process.wait()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def network_named(name: str, also: str = "") -> str:
    """The network a command's NET names (luong, transformer, or the network's own name); ``also``: another word it takes."""
    net = NETWORKS.get(name, name)
    if net not in CONFIGS:
        raise Refused(f"NET must be {' or '.join([*NETWORKS, *([also] if also else [])])}, not {name!r}")
    return net


def next_unit(study: Path, work: Path) -> tuple[str, int, str]:
    """The unit to run next, and why: one whose stage 1 finished and whose network is on this machine (its stage 2 is
    left), else the network with the fewest finished seeds among those short of their planned seeds (issue 61: Luong
    0-4, the Transformer 0-2; the networks take turns, Luong first), at its lowest seed not finished."""
    from translation_tables import NETWORKS as PLANNED  # the seeds the study plans: one place, the tables'

    finished: dict[str, list[int]] = {}
    for key, net in NETWORKS.items():
        planned = PLANNED[net].planned_seeds
        finished[net] = [seed for seed in planned if (study / f"{DATASET}-{net}-seed{seed}.json").is_file()]
        for seed in planned:
            unit = Unit(net, seed, work, study, ROOT / CONFIGS[net])
            if (
                unit.result_file("pretrain").is_file()
                and not unit.result_file("drga").is_file()
                and best_checkpoint(unit.run_folder("pretrain"), PhaseName.PRETRAIN).is_file()
            ):
                return key, seed, "its stage 1 finished and its network is on this machine: stage 2 is left"
    short = [net for net in NETWORKS.values() if len(finished[net]) < len(PLANNED[net].planned_seeds)]
    if not short:
        raise Refused("every planned seed of both networks has finished: the study is complete")
    net = min(short, key=lambda n: len(finished[n]))  # min keeps the first of a tie: Luong
    seed = next(seed for seed in PLANNED[net].planned_seeds if seed not in finished[net])
    counts = ", ".join(f"{n} {len(finished[n])} of {len(PLANNED[n].planned_seeds)}" for n in NETWORKS.values())
    return KEYS[net], seed, f"seeds finished: {counts}"


def run_unit(args: argparse.Namespace) -> int:
    started = time.time()
    if args.net == "next":
        if args.seed is not None:
            raise Refused("next chooses the seed itself: give no SEED")
        args.net, args.seed, why = next_unit((ROOT / args.study).resolve(), (ROOT / args.work).resolve())
        print(f"[next] {args.net} seed {args.seed} ({why})")
    elif args.seed is None:
        raise Refused("SEED is missing (or run next)")
    net = network_named(args.net, also="next")
    if args.seed < 0:
        raise Refused(f"SEED must be ≥ 0, not {args.seed}")
    study = (ROOT / args.study).resolve()
    if args.smoke and study == (ROOT / STUDY).resolve():
        raise Refused(f"a rehearsal (--smoke) writes into a folder given with --study, not the study's own {STUDY}")
    unit = Unit(
        net, args.seed, (ROOT / args.work).resolve(), study, ROOT / CONFIGS[net], (*smoke_settings(net), *SMOKE_PAIRS) if args.smoke else ()
    )
    if not unit.config.is_file():
        raise Refused(f"{CONFIGS[net]} is missing")
    data_root = smoke_data(unit.work, print) if args.smoke else None
    environment = dict(os.environ, PYTHONUNBUFFERED="1", **({"DRGA_DATA": str(data_root)} if data_root else {}))
    deadline = parse_deadline(args.deadline, args.budget_min, started)
    if args.smoke:
        projected, source = dict.fromkeys(STAGES, 0.0), "nothing: a rehearsal (--smoke) is not projected"
    else:
        try:
            projected, source = projection(unit)
        except NoProbe:
            if args.dry_run:
                raise
            print(f"[probe] no finished unit of {net} and no throughput probe: measuring first", flush=True)
            probe_throughput(argparse.Namespace(net=net, threads=args.threads, study=str(study), python=args.python))
            projected, source = projection(unit)
    todo = [stage for stage in STAGES if not unit.result_file(stage).is_file()]
    remaining = sum(projected[stage] for stage in todo)
    print(
        f"[plan] {unit.name}: config {CONFIGS[net]}, {args.threads} thread(s), run folders under "
        f"{portable_path(str(unit.work), ROOT)}, files into {portable_path(str(unit.study), ROOT)}"
    )
    for stage in STAGES:
        state = "to do" if stage in todo else "done (its result file exists): skipped"
        resumes = " (resumes its run folder)" if stage in todo and (unit.run_folder(stage) / "last.pt").is_file() else ""
        print(f"[plan]   stage {STAGES.index(stage) + 1} ({stage}): projected {duration(projected[stage])}; {state}{resumes}")
    print(f"[plan] projected from {source}")
    print(
        f"[plan] projected finish {clock(started + remaining)} ({duration(remaining)} from now)"
        + (f"; deadline {clock(deadline)}" if deadline else "; no deadline given")
    )
    if not todo:
        print(f"[done] {unit.name}: both stages have their result files")
        return 0
    if "drga" in todo and "pretrain" not in todo and not best_checkpoint(unit.run_folder("pretrain"), PhaseName.PRETRAIN).is_file():
        raise Refused(
            f"stage 1's result file exists but its network ({portable_path(str(unit.run_folder('pretrain')), ROOT)}) is not on "
            "this machine: stage 2 needs it; move the stage-1 result file aside to pretrain again"
        )
    if deadline and started + remaining > deadline:
        raise Refused(f"the unit would end at {clock(started + remaining)}, after the deadline {clock(deadline)}: not started")
    if args.dry_run:
        for stage in todo:
            print(f"[dry-run] {' '.join(portable_path(part, ROOT) for part in unit.command(stage, args.python, args.threads))}")
        return 0
    write_references(unit.study, data_root)
    record = {
        "format": FORMAT,
        "unit": unit.name,
        "net": net,
        "seed": unit.seed,
        "config": CONFIGS[net],
        "config_sha256": sha256(unit.config.read_bytes()),
        "config_settings_sha256": settings_sha256(unit.config),
        "source": running_source(ROOT / ".gpu"),
        "threads": args.threads,
        "cpus": len(os.sched_getaffinity(0)),
        "started": now(),
        "deadline": clock(deadline) if deadline else None,
        "projected_seconds": {s: round(projected[s]) for s in STAGES},
        "projected_from": source,
        "finished": False,
    }
    if unit.record_file().is_file():  # a resumed unit keeps what its earlier call measured
        earlier = json.loads(unit.record_file().read_text(encoding="utf-8"))
        record["earlier"] = {k: earlier.get(k) for k in ("started", "stage_seconds", "source")}
    record["stage_seconds"] = dict((record.get("earlier") or {}).get("stage_seconds") or {})
    for stage in todo:
        begun = time.time()
        if deadline and stage == "drga" and begun + projected[stage] > deadline:
            write_record(unit, record)
            raise Refused(
                f"stage 2 would end at {clock(begun + projected[stage])}, after the deadline {clock(deadline)}: not started; "
                "commit stage 1's files and run the same command again with the time stage 2 needs"
            )
        print(f"[stage] {stage}: started {clock(begun)}", flush=True)
        code = run_stage(unit.command(stage, args.python, args.threads), unit.work / f"sweep-{stage}-{unit.name}.log", environment)
        seconds = time.time() - begun
        record["stage_seconds"][stage] = round(seconds + record["stage_seconds"].get(stage, 0))
        record.setdefault("epochs", {})[stage] = epochs_of(unit.run_folder(stage) / "train.log")
        if not unit.result_file(stage).is_file():
            write_record(unit, record)
            print(
                f"[stop] {unit.name} stage {stage} ended without its result file (exit {code}) after {duration(seconds)}", file=sys.stderr
            )
            return code or 1
        written = collect(unit, stage)
        print(f"[stage] {stage}: done in {duration(seconds)}; {len(written)} files into {portable_path(str(unit.study), ROOT)}", flush=True)
        write_record(unit, record)
    record.update({"finished": True, "ended": now(), "seconds": round(sum(record["stage_seconds"].values()))})
    write_record(unit, record)
    print(f"[end] {unit.name}: {duration(time.time() - started)} this call; commit {portable_path(str(unit.study), ROOT)}")
    if args.tables:
        return subprocess.call([args.python, str(ROOT / "experiments" / "translation_tables.py"), str(unit.study), "--out", "-"], cwd=ROOT)
    return 0


PROBE_PAIRS = 640  #: training pairs per timed epoch of the probe: about a minute of each kind at two threads
BENCH_ROW = re.compile(r"^\| (baseline training|DRGA co-training) \| ([0-9.]+) \|")


def probe_throughput(args: argparse.Namespace) -> int:
    """Measure first: training seconds per 1,000 pairs of the network's CPU config, baseline and co-training side by
    side (bench/nmt_throughput.py), written to the study's probes/ for the projection of its first unit."""
    net = network_named(args.net)
    study = (ROOT / args.study).resolve()
    command = [
        args.python,
        "bench/nmt_throughput.py",
        "--config",
        CONFIGS[net],
        "--epoch-pairs",
        str(PROBE_PAIRS),
        "--repeats",
        "1",
        "--set",
        f"run.threads={args.threads}",
    ]
    print(f"[probe] {' '.join(command[1:])} (OMP_NUM_THREADS={args.threads}; nothing else should run meanwhile)", flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    print(done.stdout, end="")
    seconds = {match.group(1): float(match.group(2)) for line in done.stdout.splitlines() if (match := BENCH_ROW.match(line))}
    if done.returncode or len(seconds) != 2:
        raise Refused(f"the bench did not report both epochs (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    probe = {
        "format": FORMAT,
        "net": net,
        "config": CONFIGS[net],
        "config_sha256": sha256((ROOT / CONFIGS[net]).read_bytes()),
        "what": "training seconds per 1,000 Multi30k pairs of the config's network, baseline and DRGA co-training, measured side by side "
        "(experiments/translation_cpu.py probe); the projection of translation_cpu.py reads it until a unit has finished",
        "commands": [f"OMP_NUM_THREADS={args.threads} python {' '.join(command[1:])}"],
        "measured": now(),
        "cpus": len(os.sched_getaffinity(0)),
        "threads": args.threads,
        "epoch_pairs": PROBE_PAIRS,
        "baseline_seconds_per_1000_pairs": round(seconds["baseline training"] * 1000 / PROBE_PAIRS, 2),
        "cotrain_seconds_per_1000_pairs": round(seconds["DRGA co-training"] * 1000 / PROBE_PAIRS, 2),
        "allowances": ALLOWANCES,
    }
    path = study / "probes" / f"throughput-{net}.json"
    write_json(path, probe)
    print(
        f"[probe] {portable_path(str(path), ROOT)}: baseline {probe['baseline_seconds_per_1000_pairs']} s, co-training "
        f"{probe['cotrain_seconds_per_1000_pairs']} s per 1,000 pairs at {args.threads} threads"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="one seed's whole pipeline")
    run.add_argument("net", help="luong or transformer, or next: the unit the study needs next (next_unit)")
    run.add_argument("seed", type=int, nargs="?")
    run.add_argument("--deadline", help="HH:MM (today) or an ISO date and time: refuse a unit or stage that would end after it")
    run.add_argument("--budget-min", type=float, help="minutes from now: the deadline as a budget")
    run.add_argument("--dry-run", action="store_true", help="the plan and the commands; nothing starts")
    run.add_argument("--threads", type=int, default=2, help="torch threads of the run (default 2: the machine's two cores)")
    run.add_argument("--work", default="runs/translation-cpu", help="run folders (kept for a resume)")
    run.add_argument("--study", default=str(STUDY), help="the study's folder of committed files")
    run.add_argument("--python", default=sys.executable, help="the Python the runs use")
    run.add_argument("--smoke", action="store_true", help="the rehearsal: tiny networks on a slice of Multi30k (needs --study)")
    run.add_argument("--tables", action="store_true", help="print the tables of the study's folder at the end")
    probing = commands.add_parser("probe", help="measure the network's training throughput for the projection (before its first unit)")
    probing.add_argument("net", help="luong or transformer")
    probing.add_argument("--threads", type=int, default=2)
    probing.add_argument("--study", default=str(STUDY), help="the study's folder of committed files")
    probing.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    try:
        return probe_throughput(args) if args.command == "probe" else run_unit(args)
    except Refused as error:
        print(f"translation_cpu.py: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # the command line's one rule (drga/cli.py · main): a mistake or a fault is one message
        return report_command_failure(error, "translation_cpu.py: ")


if __name__ == "__main__":
    sys.exit(main())
