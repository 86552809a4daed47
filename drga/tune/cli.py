"""``drga tune``: search settings of `drga train` with Optuna (``pip install drga[tune]``; docs/distributed.md, "Tuning").

Registered through ``drga.cli.EXTENSIONS``; Optuna and torch are imported by the handler only, so
that ``drga --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drga.config import DATA_DIR_SCOPE, flag_overrides, refuse_unread_data_dir, refuse_unread_settings, tsv_implies_dataset

#: Where each option of ``drga tune`` is read (see ``drga.cli.OPTION_SCOPES``).
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "tune": {
        **{name: None for name in ("config", "set", "dataset", "net", "seed", "device", "search", "trials", "sampler",
                                   "sampler_seed", "no_prune", "study", "dir", "storage", "best")},
        "tsv": "the tsv data set", "data_dir": DATA_DIR_SCOPE,
    }
}

DESCRIPTION = """\
Search settings of `drga train` with Optuna: TPE (or --sampler grid), median pruning on each epoch's
dev score, every trial a run in <dir>/trial-<n>/, the trials in a database (an SQLite file in <dir>
by default; --storage postgresql://... for a study that several machines share). The same command
continues the study; the best trial's settings are written to <dir>/best.toml for `drga train --config`.

  drga tune --config my.toml --search reward.sqrt_l0=0.05:0.6 --search reward.delta=0.8,0.85,0.9 --trials 30

Without --search: the reward's √L0, δ, γ and β0 (reward.sqrt_l0, reward.delta, reward.gamma, adjust.beta0).
A trial is scored by the best dev accuracy of the plan's last phase (co-training, or the agent phase
when train.cotrain_epochs = 0), in the mode that selects its best epoch; test data is never read."""


def register(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add the ``tune`` subcommand to ``drga``; return its handler."""
    tune = commands.add_parser(
        "tune", help="search settings (the reward's coefficients, any section.key) with Optuna; resumable",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tune.add_argument("--config", help="the base TOML file (every trial starts from it)")
    tune.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override of the base (repeatable)")
    tune.add_argument("--dataset", help="data set (data.dataset)")
    tune.add_argument("--net", help="attention network (network.name)")
    tune.add_argument("--seed", type=int, help="every trial's seed (run.seed)")
    tune.add_argument("--data-dir", help="folder of the data set or a data root")
    tune.add_argument("--tsv", help="your own data: a label<TAB>text file, or a folder with train/dev/test.tsv (implies --dataset tsv)")
    tune.add_argument("--device", help="cpu, cuda, cuda:N or auto")
    tune.add_argument(
        "--search", action="append", default=[], metavar="SECTION.KEY=SPEC",
        help="a searched setting (repeatable): LOW:HIGH, LOW:HIGH:log or A,B,C (default: the reward's coefficients)",
    )
    tune.add_argument("--trials", type=int, help="finished trials the study should have, its earlier ones counted "
                      "(default 20; --sampler grid: the grid's size)")
    tune.add_argument("--sampler", choices=["tpe", "grid"], default="tpe", help="tpe (default) or grid: every combination of choices")
    tune.add_argument("--sampler-seed", type=int, help="seed of the sampler (a reproducible study with one worker)")
    tune.add_argument("--no-prune", action="store_true", help="train every trial to its end (no median pruning)")
    tune.add_argument("--study", help="the study's name in the database (default <dataset>-<net>)")
    tune.add_argument("--dir", help="the study folder: trial run folders, the SQLite file, best.toml (default runs/tune/<study>)")
    tune.add_argument("--storage", help="an SQLAlchemy database URL (default: sqlite:///<dir>/study.db)")
    tune.add_argument("--best", help="where the best trial's config goes (default <dir>/best.toml)")
    return {"tune": cmd_tune}


def settings_from(args: argparse.Namespace) -> Any:
    """The study the command line describes, its base configuration checked."""
    from drga.config import ConfigError
    from drga.tasks.run_config import experiment, load_run_config
    from drga.tune.space import grid, parse_search
    from drga.tune.study import TuneSettings

    args.no_progress = False  # the trials' own run.progress=false stays out of the best config
    tsv_implies_dataset(args)
    base = flag_overrides(args, interactive=True, extra=(("tsv", "data.tsv_path"),))
    config = experiment(load_run_config(args.config, base))  # checked now, not in trial 1
    refuse_unread_settings(config, args.set)
    from drga.data.embeddings import VECTOR_SETS

    refuse_unread_data_dir(args, config.data, config.network.vectors in VECTOR_SETS)
    dimensions = parse_search(args.search)
    trials = args.trials
    if trials is None:
        trials = 20
        if args.sampler == "grid":
            trials = 1
            for choices in grid(dimensions).values():
                trials *= len(choices)
    if trials < 1:
        raise ConfigError("--trials must be at least 1")
    name = args.study or f"{config.data.dataset}-{config.network.name}"
    folder = Path(args.dir or Path("runs") / "tune" / name)
    return TuneSettings(
        config=args.config, base=base, dimensions=dimensions, trials=trials, folder=folder, study_name=name,
        storage=args.storage, sampler=args.sampler, sampler_seed=args.sampler_seed, prune=not args.no_prune,
        best_path=Path(args.best) if args.best else None, log=lambda line: print(line, flush=True),
    )


def cmd_tune(args: argparse.Namespace) -> int:
    from drga.tune.study import optuna_module, summary, tune

    optuna_module()  # missing: say so before anything else
    settings = settings_from(args)
    try:
        study = tune(settings)
    except KeyboardInterrupt:
        print("\ninterrupted: the same command continues the study (the interrupted trial resumes from its last.pt)",
              file=sys.stderr, flush=True)
        return 130
    print(summary(settings, study), flush=True)
    return 0
