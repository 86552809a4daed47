"""A grid of `drga train` runs (networks × data sets × seeds), several at a time, resumable.

Each run is a separate `python -m drga.cli train` process in its own folder
``<logdir>/<dataset>-<net>-seed<seed>/``, its output in ``train.log`` there. A run whose folder
has ``results.json`` is finished and skipped; one with ``last.pt`` but no results was
interrupted and continues with ``--resume``. So after a crash, a reboot or Ctrl-C, the same
command picks up where the grid stopped. A run that another process is training (it holds the
folder's lock, ``drga/run_lock.py``) is skipped, so two sweeps over one grid never train a run
at once. At the end (also after an interruption, with what is finished) one results table is
written: every run, then mean ± std over seeds.

    python experiments/sweep.py --nets lstm-sa cnn-sa --datasets subj mr --seeds 0 1 2 \\
        [--jobs 2] [--config experiments/configs/lstm_sa_study.toml] [--logdir runs/sweep] \\
        [--set section.key=value ...] [--out FILE.md] [--threads-per-run N] [--cli MODULE|SCRIPT.py] [--dry-run]

``--results DIR`` keeps a small JSON per finished run in DIR (``<run name>.json``: config, seed,
commit, data checksum, every row's dev and test numbers, phase timings, the epoch record), to
commit as runs finish: a run whose file is there counts as finished, so the study resumes on a
fresh machine from the committed files alone, and its tables are rebuilt from them.

``--cli`` runs another entry point with the same `train` arguments, e.g. a module of yours that
registers your own network before calling ``drga.cli.main`` (docs/custom-network.md).
Standard library only, so that the sweep itself starts instantly and needs no torch.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drga.run_lock import run_lock_holder  # noqa: E402  (filelock, not torch: the sweep stays light)

#: Result columns: (column title, results.json row, evaluation mode).
COLUMNS = [
    ("baseline, pretrain only", "baseline (pretrain only)", "net-only"),
    ("baseline, equal budget", "baseline (equal budget)", "net-only"),
    ("agent on frozen network", "agent on frozen network", "with-agent"),
    ("DRGA net-only", "DRGA (co-trained)", "net-only"),
    ("DRGA with-agent", "DRGA (co-trained)", "with-agent"),
]
#: Seconds a run gets to save and exit after SIGINT before it is killed.
STOP_GRACE_SECONDS = 30.0
#: How often a running run's wall time is written down; a sweep killed outright loses at most this.
WALL_RECORD_SECONDS = 1.0


@dataclass
class Run:
    """One cell of the grid and what happened to it in this invocation."""

    net: str
    dataset: str
    seed: int
    folder: Path
    status: str = "pending"  #: pending, running, finished, finished earlier, failed, interrupted, busy
    returncode: int | None = None
    started: float = 0.0
    #: Seconds of this run's earlier pieces (a resumed run), from its ``wall_seconds.txt``.
    wall_before: float = 0.0
    commit: str = "unknown"
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.folder.name

    #: ``--results``: the committed per-run result file.
    result_file: Path | None = None

    @property
    def finished(self) -> bool:
        return (self.folder / "results.json").exists() or (self.result_file is not None and self.result_file.exists())

    @property
    def interrupted(self) -> bool:
        return not self.finished and (self.folder / "last.pt").exists()


def plan(nets: list[str], datasets: list[str], seeds: list[int], logdir: str | Path, results: str | Path | None = None) -> list[Run]:
    """The grid, in the order runs start: data set, then network, then seed."""
    runs = [Run(net, dataset, seed, Path(logdir) / f"{dataset}-{net}-seed{seed}") for dataset in datasets for net in nets for seed in seeds]
    for run in runs:
        run.result_file = Path(results) / f"{run.name}.json" if results else None
    return runs


def source_commit() -> str:
    """The commit the runs' code is at; ``-dirty`` when tracked files differ from it."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "."], cwd=root).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("-dirty" if dirty else "")


def export_result(run: Run, commit: str) -> None:
    """The run's small result file (``--results``) from its results.json; nothing if it has none yet."""
    source = run.folder / "results.json"
    if run.result_file is None or not source.exists() or run.result_file.exists():
        return
    full = json.loads(source.read_text(encoding="utf-8"))
    rows = {}
    for label, row in full.get("results", {}).items():
        rows[label] = {
            mode: compact_row(row, mode) for mode in ("net-only", "with-agent") if f"test_{mode}" in row
        }
    history = [{k: (round(v, 5) if isinstance(v, float) else v) for k, v in record.items()} for record in full.get("history", [])]
    wall = run.folder / "wall_seconds.txt"
    compact = {
        "name": run.name,
        "net": run.net,
        "dataset": run.dataset,
        "seed": run.seed,
        "commit": commit,
        "data_checksum": full.get("data_checksum"),
        "wall_seconds": float(wall.read_text()) if wall.exists() else None,
        "phases": full.get("phases"),
        "majority_class": full.get("majority_class"),
        "rows": rows,
        "pretrain_checksum": full.get("pretrain_checksum"),
        "config": full.get("config"),
        "history": history,
    }
    run.result_file.parent.mkdir(parents=True, exist_ok=True)
    partial = run.result_file.with_suffix(".json.tmp")
    partial.write_text(json.dumps(compact, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, run.result_file)


def command(run: Run, args: argparse.Namespace) -> list[str]:
    entry = [args.cli] if args.cli.endswith(".py") else ["-m", args.cli]
    cmd = [
        sys.executable,
        *entry,
        "train",
        "--dataset",
        run.dataset,
        "--net",
        run.net,
        "--seed",
        str(run.seed),
        "--logdir",
        str(run.folder.parent),
        "--run-name",
        run.name,
        "--no-progress",
    ]
    if args.config:
        cmd += ["--config", args.config]
    for item in args.set:  # {seed}, {dataset} and {net} stand for the run's
        cmd += ["--set", item.replace("{seed}", str(run.seed)).replace("{dataset}", run.dataset).replace("{net}", run.net)]
    return cmd + (["--resume"] if run.interrupted else [])


def start(run: Run, args: argparse.Namespace) -> None:
    cmd = command(run, args)
    run.commit = source_commit()  # the code this run starts with (a tree edited meanwhile says -dirty)
    run.folder.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ, PYTHONUNBUFFERED="1")
    # Several runs on few cores: give each its share instead of letting every one take them all.
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        environment[variable] = str(args.threads_per_run)
    print(f"[{'resume' if '--resume' in cmd else 'start'}] {run.name}  (log: {run.folder / 'train.log'})", flush=True)
    with open(run.folder / "train.log", "a", encoding="utf-8") as log:
        log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
        log.flush()
        # Its own session: Ctrl-C reaches the sweep only, which then stops its runs in order.
        run.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)
    wall = run.folder / "wall_seconds.txt"
    run.wall_before = float(wall.read_text()) if wall.exists() else 0.0
    run.started = time.time()
    run.status = "running"


def record_wall(run: Run) -> float:
    """Write the run's wall time, summed over its resumed pieces, and return this piece's seconds.

    Written while the run goes, not only when it ends: a sweep killed outright (a session's end,
    SIGKILL) would otherwise lose the whole piece, and a resumed run would under-report its cost."""
    elapsed = time.time() - run.started
    (run.folder / "wall_seconds.txt").write_text(f"{run.wall_before + elapsed:.0f}\n")
    return elapsed


def finish(run: Run, interrupted: bool = False) -> None:
    run.returncode = run.process.returncode
    elapsed = record_wall(run)
    if interrupted and not run.finished:
        run.status = "interrupted"
    elif run.returncode == 0 and run.finished:
        run.status = "finished"
        export_result(run, run.commit)
        print(f"[done] {run.name} in {elapsed:.0f}s", flush=True)
    else:
        run.status = "failed"
        print(f"[fail] {run.name}: exit {run.returncode}; see {run.folder / 'train.log'}", flush=True)


def stop(running: list[Run]) -> None:
    """SIGINT to every running run, then wait; a run loses at most its current epoch (last.pt is per epoch)."""
    running = [run for run in running if run.process is not None]
    for run in running:
        if run.process.poll() is None:
            try:
                os.killpg(run.process.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
    deadline = time.time() + STOP_GRACE_SECONDS
    for run in running:
        try:
            run.process.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(run.process.pid, signal.SIGKILL)
            except ProcessLookupError:  # it exited just now
                pass
            run.process.wait()
        finish(run, interrupted=True)  # one that completed meanwhile counts as finished


def measured_cost(run: Run) -> tuple[float, int] | None:
    """(seconds, epochs) a finished run took, from its result file or results.json; None if unknown."""
    for source in (run.result_file, run.folder / "results.json"):
        if source is not None and source.exists():
            return cost_in(source)
    return None


def cost_in(result_file: Path) -> tuple[float, int] | None:
    """(seconds, epochs) summed over the phases a result file records; None if it records none."""
    phases = json.loads(result_file.read_text(encoding="utf-8")).get("phases") or {}
    if not phases:
        return None
    return sum(p["seconds"] for p in phases.values()), sum(p["epochs"] for p in phases.values())


def projected_compute(todo: list[Run], runs: list[Run], args: argparse.Namespace) -> str:
    """What the runs still to do will cost, projected from the measured runs of the same cells
    (network, data set): runs, epochs, core-hours and wall hours at ``--jobs``."""
    measured: dict[tuple[str, str], list[tuple[float, int]]] = {}
    counted_files = set()
    for run in runs:
        cost = measured_cost(run) if run.finished else None
        if cost is not None:
            measured.setdefault((run.net, run.dataset), []).append(cost)
            counted_files.add(run.result_file)
    # and the committed result files of the same cells' other seeds (a sweep asked for seeds 5-9 of a study)
    for cell, result_file in {((r.net, r.dataset), r.result_file.parent / f"{r.dataset}-{r.net}-seed") for r in todo if r.result_file}:
        for other in sorted(result_file.parent.glob(f"{result_file.name}*.json")):
            cost = cost_in(other) if other not in counted_files else None
            if cost is not None and other.stem.rsplit("seed", 1)[-1].isdigit():
                measured.setdefault(cell, []).append(cost)
                counted_files.add(other)
    threads = max(1, args.threads_per_run or 1)
    seconds = epochs = 0.0
    unmeasured: dict[tuple[str, str], int] = {}
    for run in todo:
        costs = measured.get((run.net, run.dataset))
        if not costs:
            unmeasured[(run.net, run.dataset)] = unmeasured.get((run.net, run.dataset), 0) + 1
            continue
        seconds += statistics.mean(c[0] for c in costs)
        epochs += statistics.mean(c[1] for c in costs)
    counted = len(todo) - sum(unmeasured.values())
    resumed = sum(run.interrupted for run in todo)
    lines = [f"[plan] {len(todo)} runs to do ({resumed} resumed), {args.jobs} at a time, {threads} thread(s) each"]
    if counted:
        lines.append(
            f"[plan] projected for {counted} of them (from {sum(len(c) for c in measured.values())} finished runs of the same "
            f"cells): {epochs:.0f} epochs, {seconds * threads / 3600:.1f} core-hours, {seconds / 3600 / max(args.jobs, 1):.1f} h "
            f"wall at {args.jobs} jobs (a resumed run counts as a whole one)"
        )
    if unmeasured:
        cells = ", ".join(f"{net}/{dataset} ×{count}" for (net, dataset), count in unmeasured.items())
        lines.append(f"[plan] not projected (no finished run of the cell yet): {cells}")
    return "\n".join(lines)


def execute(runs: list[Run], args: argparse.Namespace) -> bool:
    """Run what is not finished, ``args.jobs`` at a time; False if interrupted."""
    todo = []
    commit = source_commit()
    for run in runs:
        run.commit = commit
        export_result(run, commit)  # a run finished by an earlier invocation that had not kept its file
        if run.finished:
            run.status = "finished earlier"
            print(f"[skip] {run.name} is finished", flush=True)
        else:
            todo.append(run)
    print(projected_compute(todo, runs, args), flush=True)
    if args.dry_run:
        for run in todo:
            print(" ".join(command(run, args)))
        return True
    running: list[Run] = []
    recorded = time.time()
    try:
        while todo or running:
            while todo and len(running) < args.jobs:
                run = todo.pop(0)
                holder = run_lock_holder(run.folder)
                if holder is not None:  # another sweep, or a terminal's `drga train --resume`, is training it
                    run.status = "busy"
                    print(f"[busy] {run.name}: another process{f' (pid {holder})' if holder > 0 else ''} is training it; "
                          "skipped (run the sweep again when it has finished)", flush=True)
                    continue
                running.append(run)  # before it starts, so that an interruption cannot orphan it
                start(run, args)
            time.sleep(0.1)
            if time.time() - recorded >= WALL_RECORD_SECONDS:
                recorded = time.time()
                for run in running:
                    record_wall(run)
            for run in [r for r in running if r.process.poll() is not None]:
                running.remove(run)
                finish(run)
    except KeyboardInterrupt:
        print(f"\ninterrupted: stopping {len(running)} run(s); the same command resumes them", file=sys.stderr, flush=True)
        stop(running)
        return False
    return True


def compact_row(row: dict, mode: str) -> dict:
    """One mode of a results.json row: a classification row's accuracies, or a translation row's scores
    (perplexity, BLEU, chrF, reward terms; greedy, and beam search under ``test_beam``) without the
    metric signatures, which the full config determines."""
    test = row[f"test_{mode}"]
    if "accuracy" in test:
        return {
            "epoch": row.get(f"epoch_{mode}", row.get("epoch")),
            "dev": (row.get(f"dev_{mode}") or {}).get("accuracy"),
            "test": test["accuracy"],
            "test_reward": test.get("reward"),
            "test_highlighted_fraction": test.get("highlighted_fraction"),
        }

    def numbers(scores: dict | None) -> dict | None:
        return None if scores is None else {k: v for k, v in scores.items() if not k.endswith("_signature")}

    return {
        "epoch": row.get(f"epoch_{mode}", row.get("epoch")),
        "dev": numbers(row.get(f"dev_{mode}")),
        "test": numbers(test),
        "test_beam": numbers(row.get(f"test_{mode}_beam")),
        "signatures": {k: v for k, v in test.items() if k.endswith("_signature")},
    }


def accuracy(payload: dict, row: str, mode: str) -> float | None:
    result = payload.get("results", {}).get(row, {}).get(f"test_{mode}")
    if result is None:
        return None
    return float(result["accuracy"] if "accuracy" in result else result["bleu"])  # translation: greedy BLEU


def table(runs: list[Run], args: argparse.Namespace) -> str:
    """Every run's test accuracies (%), then mean ± std over seeds per network and data set."""
    titles = [title for title, _, _ in COLUMNS]
    lines = [
        f"Test accuracy (%) of `{' '.join(sys.argv[1:]) or 'sweep.py'}`.",
        "",
        "| network | data set | seed | status | " + " | ".join(titles) + " | wall (s) |",
        "|---|---|---|---|" + "---|" * len(titles) + "---|",
    ]
    rows, groups = [], {}
    for run in runs:
        full = run.folder / "results.json"
        payload = json.loads(full.read_text()) if full.exists() else {}
        values = [accuracy(payload, row, mode) for _, row, mode in COLUMNS]
        wall = run.folder / "wall_seconds.txt"
        seconds = wall.read_text().strip() if wall.exists() else ""
        status = run.status if run.status != "pending" else ("finished" if run.finished else "not run")
        rows.append(
            {
                "network": run.net,
                "dataset": run.dataset,
                "seed": run.seed,
                "status": status,
                **{t: v for t, v in zip(titles, values)},
                "wall_seconds": seconds,
            }
        )
        cells = [f"{100 * v:.2f}" if v is not None else "-" for v in values]
        lines.append(f"| {run.net} | {run.dataset} | {run.seed} | {status} | " + " | ".join(cells) + f" | {seconds} |")
        if run.finished:
            group = groups.setdefault((run.net, run.dataset), {t: [] for t in titles})
            for title, value in zip(titles, values):
                if value is not None:
                    group[title].append(value)
    lines += [
        "",
        "Mean ± std over the finished seeds:",
        "",
        "| network | data set | seeds | " + " | ".join(titles) + " |",
        "|---|---|---|" + "---|" * len(titles),
    ]
    for (net, dataset), group in groups.items():
        seeds = max((len(v) for v in group.values()), default=0)
        lines.append(f"| {net} | {dataset} | {seeds} | " + " | ".join(mean_std(group[t]) for t in titles) + " |")
    with open(Path(args.out).with_suffix(".csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return "\n".join(lines)


def mean_std(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nets", nargs="+", default=["lstm-sa"], help="attention networks (see `drga networks`)")
    parser.add_argument("--datasets", nargs="+", default=["subj"], help="data sets (see `drga datasets`)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--jobs", type=int, default=1, help="runs at the same time")
    parser.add_argument(
        "--threads-per-run", type=int, default=0, help="torch threads per run (default: $OMP_NUM_THREADS if set, else cores / jobs)"
    )
    parser.add_argument("--config", help="TOML file for every run")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override for every run (repeatable); {seed}, {dataset} and {net} stand for the run's",
    )
    parser.add_argument("--logdir", default="runs/sweep", help="parent folder of the run folders")
    parser.add_argument("--out", help="results table (markdown; a .csv beside it); default <logdir>/sweep_results.md")
    parser.add_argument("--results", help="folder of the per-run result files to commit (see above)")
    parser.add_argument("--cli", default="drga.cli", help="module (run with -m) or script with the `train` command")
    parser.add_argument("--dry-run", action="store_true", help="print the commands of the runs still to do")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    inherited = os.environ.get("OMP_NUM_THREADS", "")
    default_threads = int(inherited) if inherited.isdigit() and int(inherited) > 0 else max(1, (os.cpu_count() or 1) // args.jobs)
    args.threads_per_run = args.threads_per_run or default_threads
    args.out = args.out or str(Path(args.logdir) / "sweep_results.md")
    return args


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runs = plan(args.nets, args.datasets, args.seeds, args.logdir, args.results)
    # SIGTERM (a scheduler, `kill`) stops the runs the way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    completed = execute(runs, args)
    if args.dry_run:
        return 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    text = table(runs, args)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print("\n" + text + f"\n\nresults table: {args.out} (and {Path(args.out).with_suffix('.csv')})", flush=True)
    if not completed:
        return 130
    return 1 if any(run.status == "failed" for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
