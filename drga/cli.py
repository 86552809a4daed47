"""The ``drga`` command: train, evaluate, and list what is available."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import threading

from drga import __version__
from drga.config import (
    DATA_DIR_SCOPE,
    flag_overrides,
    refuse_option,
    refuse_unread_data_dir,
    refuse_unread_settings,
    tsv_implies_dataset,
)
from drga.data import DATASETS
from drga.errors import UserError, quiet_thread_io_failures, report_command_failure
from drga.registry import TaskSpec, task_of_checkpoint, task_specs
from drga.runtime.allocator import keep_freed_memory

#: Modules that add subcommands: each has ``register(commands) -> {name: handler}``, where
#: ``commands`` is argparse's subparsers object and a handler takes the parsed Namespace.
EXTENSIONS: tuple[str, ...] = ("drga.analysis.cli", "drga.sweep.cli", "drga.tune.cli")

def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", help=f"one of: {', '.join(sorted(DATASETS))}")
    parser.add_argument(
        "--data-dir", help="folder of the data set or a data root (default: $DRGA_DATA, ../shared/data, ~/.cache/drga/data)"
    )
    parser.add_argument(
        "--tsv", help="your own data: a label<TAB>text file, or a folder with train/dev/test.tsv (implies --dataset tsv)"
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:N or auto")


def _add_train_arguments(train: argparse.ArgumentParser) -> None:
    _add_data_arguments(train)
    train.add_argument("--net", help="attention network (`drga networks` lists them)")
    train.add_argument("--agent", help="phase 2 learner (agent.algorithm): reinforce, sb3-ppo, sb3-a2c (docs/sb3.md) or one you registered")
    train.add_argument(
        "--config", help="a TOML file with [data], [network], [agent], [reward], [adjust], [train], [run] tables, or the name of a config "
        "bundled with the package: demo (drga/configs/demo.toml)",
    )
    train.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting (repeatable)")
    train.add_argument("--seed", type=int)
    train.add_argument("--logdir", help="parent folder of run folders (default runs/)")
    train.add_argument("--run-name", help="run folder name (default <dataset>-<net>-seed<seed>)")
    train.add_argument("--resume", action="store_true", help="continue the interrupted run in the run folder")
    train.add_argument(
        "--overwrite", action="store_true",
        help="replace a finished or interrupted run in the run folder (it is deleted only once the new run has saved its first epoch)",
    )
    train.add_argument("--force", action="store_true", help="with --resume: continue although the data changed since the run started")
    train.add_argument("--no-progress", action="store_true", help="no progress bars (logs only)")
    train.add_argument("--report-to", metavar="LOGGERS", help="run.report_to: tensorboard, csv or both (tensorboard,csv); [] for none")
    train.add_argument(
        "--track-examples",
        type=int,
        metavar="N",
        help="record the attention of N fixed dev sentences at every evaluation (for drga analyze)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="drga", description="Retrofit attention networks with a deep-RL agent (DRGA).")
    parser.add_argument("--version", action="version", version=f"drga {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (also: DRGA_DEBUG=1)")
    volume = parser.add_mutually_exclusive_group()
    volume.add_argument("--quiet", action="store_true", help="print warnings and errors only (the drga logger at WARNING)")
    volume.add_argument("--verbose", action="store_true", help="print debug messages too (the drga logger at DEBUG)")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="run the three DRGA phases (and the equal-budget baseline)")
    _add_train_arguments(train)
    demo = commands.add_parser(
        "demo",
        help="the README's demo: `train --config demo --overwrite` (LSTM+SA on SUBJ, on the data bundled with the package)",
    )
    _add_train_arguments(demo)
    demo.set_defaults(config="demo", overwrite=None)  # None: replace the demo's run unless resuming it

    evaluate = commands.add_parser(
        "evaluate", help="accuracy (translation: perplexity, BLEU, chrF) of a checkpoint in both evaluation modes"
    )
    evaluate.add_argument("checkpoint")
    _add_data_arguments(evaluate)
    evaluate.add_argument("--split", choices=["dev", "test"], help="the split scored (default test); a --tsv file is scored whole")
    evaluate.add_argument(
        "--beam", type=int, help="translation: beam size decoded besides greedy (default: the run's nmt.beam_size; 1: greedy only)"
    )

    added: set[str | None] = set()
    for task in task_specs():  # each task's own commands: classification's predict, translation's translate, yours
        if task.commands_module in added:  # a task subclassing another inherits its commands: added once
            continue
        added.add(task.commands_module)
        HANDLERS.update(task.commands(commands))
        OPTION_SCOPES.update({name: dict(scopes) for name, scopes in task.option_scopes().items()})
    commands.add_parser("networks", help="list the attention networks: what each reads, and its settings with their defaults")
    commands.add_parser("datasets", help="list the data sets: where each is found, or the command that fetches it")
    download = commands.add_parser(
        "download", help="fetch data sets or word vectors, check their SHA-256 and unpack them where the loaders look (docs/data.md)"
    )
    download.add_argument("names", nargs="*", metavar="NAME", help="a download name (--list), a --dataset name or a vector name")
    download.add_argument("--dir", help="data root to fill (default: $DRGA_DATA, else ~/.cache/drga/data)")
    download.add_argument("--list", action="store_true", help="list what can be fetched: size, licence, URLs")
    commands.add_parser("vectors", help="list the pretrained word vectors known by name, and whether each is on this machine")
    for module_name in EXTENSIONS:
        module = importlib.import_module(module_name)
        HANDLERS.update(module.register(commands))
        OPTION_SCOPES.update(module.OPTION_SCOPES)
    return parser


def cmd_train(args: argparse.Namespace) -> int:
    """``drga train``: a run of the task that trains the requested network (``drga/registry.py`` · ``task_for_network``),
    through the Python API's door (``drga.api.train``) whatever the task."""
    from drga import api
    from drga.data.embeddings import VECTOR_SETS
    from drga.runtime import distributed
    from drga.tasks.run_config import experiment, requested_task

    _refuse_unread_train_options(args)
    interactive = sys.stderr.isatty()
    task = requested_task(args.config, flag_overrides(args, interactive))
    _refuse_options_of_other_tasks(args, task)
    overrides = flag_overrides(args, interactive, task.train_options)
    first_process = not distributed.launched_by_torchrun() or os.environ.get("RANK") == "0"
    config = task.load_config(
        args.config, overrides, lambda line: logging.getLogger("drga").info(f"config  {line}") if first_process else None
    )
    shared = experiment(config)
    refuse_unread_settings(shared, args.set)  # a --set setting this run's network or data set does not read
    refuse_unread_data_dir(args, shared.data, shared.network.vectors in VECTOR_SETS)
    try:  # under torchrun (docs/distributed.md) the trainer joins a process group; leave it at the end
        api.train(config, resume=args.resume, overwrite=args.overwrite, force=args.force)  # the Python API's door
    finally:
        distributed.cleanup()
    return 0


def _refuse_unread_train_options(args: argparse.Namespace) -> None:
    """The options of ``drga train`` that this command line would not read, refused (:data:`OPTION_SCOPES`); ``--tsv`` implies
    ``--dataset tsv``."""
    if args.overwrite is None:  # drga demo: replace its run unless resuming it
        args.overwrite = not args.resume
    if args.force and not args.resume:
        raise refuse_option("force", "--resume (it continues a run although its data changed)", "add --resume, or drop --force")
    if args.overwrite and args.resume:
        raise refuse_option("overwrite", "a fresh run, and --resume continues the one in the folder",
                            "drop --resume to replace the run, or drop --overwrite to continue it")
    tsv_implies_dataset(args)


def _train_scope(name: str) -> str:
    """What ``drga train``'s option ``name``, one that some runs do not read, applies to (:data:`TRAIN_SCOPES`)."""
    scope = TRAIN_SCOPES[name]
    if scope is None:
        raise KeyError(f"--{name} is read by every run: nothing refuses it")
    return scope


def _refuse_options_of_other_tasks(args: argparse.Namespace, task: TaskSpec) -> None:
    """The ``drga train`` options that only other tasks read (their ``train_options``), refused for a network of ``task``."""
    own = {dest for dest, _ in task.train_options}
    network = args.net or "this network"
    for other in task_specs():
        for dest, _ in other.train_options:
            if dest not in own and getattr(args, dest, None) is not None:
                raise refuse_option(dest, _train_scope(dest), f"{network} is a {task.name} network, which does not read it; drop it")


def cmd_evaluate(args: argparse.Namespace) -> int:
    """``drga evaluate``: what the checkpoint's task reports of a split (its registration's ``evaluate``)."""
    from drga.checkpoint_format import CheckpointPayload, load_checkpoint

    payload = load_checkpoint(args.checkpoint)  # as loaded: the task's evaluate reads it
    task = task_of_checkpoint(payload)
    if task is None:
        recorded = CheckpointPayload.of(payload).task
        raise UserError(f"{args.checkpoint} is a checkpoint of the task '{recorded}', which is not registered here: "
                        "register it first (docs/extending.md)")
    if task.evaluator is None:
        raise UserError(f"{args.checkpoint} is a {task.name} checkpoint, and that task registered no `drga evaluate`")
    return int(task.evaluate_checkpoint(args, payload))


def cmd_networks(_: argparse.Namespace) -> int:
    """``drga networks``: each registered network, what it reads, its first docstring line, and its settings with their defaults."""
    from drga.registry import network_specs

    for spec in sorted(network_specs(), key=lambda spec: spec.name):
        doc = (spec.factory.__doc__ or "").strip().splitlines()
        print(f"{spec.name:16s} {spec.input:7s} {doc[0] if doc else ''}".rstrip())
        settings = ", ".join(f"{name}={value!r}" for name, value in spec.setting_defaults().items())
        print(f"{'':16s} {'':7s} settings: {settings or '(none)'}" + (f"; task: {spec.task}" if spec.task else ""))
    return 0


def cmd_datasets(_: argparse.Namespace) -> int:
    from drga.data import candidate_roots
    from drga.data.download import find_source
    from drga.data.locate import BUNDLED_ROOT, bundled_folders
    from drga.data.sources import source_for

    width = max(map(len, DATASETS))
    for name in sorted(DATASETS):
        loader = DATASETS[name][0]
        print(f"{name:{width}s}  {(loader.__doc__ or '').strip().splitlines()[0]}")
        source = source_for(name)
        if source is None:
            print(f"{'':{width}s}  your own files (--tsv or --data-dir)")
            continue
        folder = find_source(source)
        absent = [f for f in source.produces if folder is not None and not (folder / f).exists()]
        where = f"found in {folder}" + (f" (without {', '.join(absent)})" if absent else "") if folder else "missing"
        if folder is None and bundled_folders(source.folder):
            where = f"the copy bundled with the package ({bundled_folders(source.folder)[0]})"
        print(f"{'':{width}s}  {where}; get it with: drga download {source.name}")
    print("\nsearched, in order: " + ", ".join(str(p) for p in candidate_roots()))
    print(f"then the package's own copies ({', '.join(n for n in sorted(DATASETS) if bundled_folders(n))}) in {BUNDLED_ROOT}")
    print("word vectors: drga vectors; everything that can be fetched: drga download --list")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from drga.data.download import describe_sources, download, resolve_names

    if args.list and args.names:
        raise refuse_option("list", "listing what can be fetched, and NAMEs fetch", f"drop --list to fetch {' '.join(args.names)}")
    if args.dir is not None and (args.list or not args.names):
        raise refuse_option("dir", "fetching NAMEs (the folder they are unpacked into)", "name what to fetch, or drop --dir")
    if args.list or not args.names:
        describe_sources()
        return 0
    for source in resolve_names(args.names):
        download(source, args.dir, progress=sys.stderr.isatty())
    return 0


def cmd_vectors(_: argparse.Namespace) -> int:
    from drga.data.embeddings import VECTOR_SETS, resolve_vectors
    from drga.data.locate import DataNotFoundError
    from drga.data.sources import source_for

    width = max(map(len, VECTOR_SETS))
    for name, (subdir, filename, dim) in VECTOR_SETS.items():
        try:
            where = str(resolve_vectors(name)[0])
        except DataNotFoundError:
            source = source_for(name)
            where = f"not found ({subdir}/{filename} under the data roots)" + (f"; drga download {source.name}" if source else "")
        print(f"{name:{width}s} {dim:4d}-d  {where}")
    print("\nuse one with --set network.vectors=NAME (and network.embedding_dim to match), or give a file's path")
    return 0


#: Where each option of the commands above is read: None, by every use of the command; else what it applies to, and given
#: anywhere else it is refused with exit 2 (a user's mistake never becomes a silently ignored option). The extensions
#: (:data:`EXTENSIONS`) and the tasks' commands (their registrations' ``option_scopes``) keep their own;
#: tests/integration/test_user_mistakes.py walks every option of every command.
TRAIN_SCOPES: dict[str, str | None] = {
    "dataset": None, "data_dir": DATA_DIR_SCOPE, "tsv": "the tsv data set of a classification network", "device": None, "net": None,
    "agent": None, "config": None, "set": None, "seed": None, "logdir": None, "run_name": None, "resume": None,
    "overwrite": "a fresh run (not --resume)", "force": "--resume", "no_progress": None, "report_to": None,
    "track_examples": "classification networks",
}
OPTION_SCOPES: dict[str, dict[str, str | None]] = {
    "": {"version": None, "debug": None, "quiet": None, "verbose": None},
    "train": TRAIN_SCOPES,
    "demo": TRAIN_SCOPES,
    "evaluate": {"checkpoint": None, "dataset": None, "data_dir": DATA_DIR_SCOPE, "tsv": "the tsv data set of a classification checkpoint",
                 "device": None, "split": "a data set with dev and test splits (not one --tsv file)", "beam": "translation checkpoints"},
    "networks": {}, "datasets": {}, "vectors": {},
    "download": {"names": None, "dir": "fetching NAMEs", "list": "listing what can be fetched (without NAMEs)"},
}


HANDLERS: dict = {
    "train": cmd_train,
    "demo": cmd_train,
    "evaluate": cmd_evaluate,
    "networks": cmd_networks,
    "datasets": cmd_datasets,
    "download": cmd_download,
    "vectors": cmd_vectors,
}


class CommandLineFormatter(logging.Formatter):
    """A record's message as it is; a warning's (one sentence: what, where, what was done) after "warning: "."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        return f"warning: {message}" if record.levelno >= logging.WARNING else message


def configure_logging(quiet: bool = False, verbose: bool = False) -> None:
    """The command line's handler for the ``drga`` logger: plain lines on stdout, flushed as they come."""
    logger = logging.getLogger("drga")
    for handler in list(logger.handlers):
        if getattr(handler, "_drga_cli", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(CommandLineFormatter())
    handler._drga_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    """Every ``drga`` command's way in, and its one rule for what stops it: a user's mistake and a fault of the machine
    (an OSError: the path, the cause in words, what was kept; ``drga/errors.py`` · ``command_failure``) are one message
    and a non-zero status, never a traceback (``--debug`` or DRGA_DEBUG=1 shows it); anything else is a bug and keeps it.
    SIGTERM stops a command as Ctrl-C does, so that what it must undo (a run moved aside by ``--overwrite``) is undone."""
    debug = bool(os.environ.get("DRGA_DEBUG"))
    try:
        parser = build_parser()  # the tasks' commands: the registry imports the modules of $DRGA_PLUGINS
    except Exception as error:
        return report_command_failure(error, "drga: error: ", debug)
    args = parser.parse_args(argv)
    refuse_empty_values(parser, args)
    configure_logging(args.quiet, args.verbose)
    threading.excepthook = quiet_thread_io_failures  # a writer thread's full disk: said once, by the command
    keep_freed_memory()  # CPU training: freed tensors stay mapped for the next step (drga/runtime/allocator.py)
    handler = HANDLERS[args.command]
    previous = signal.signal(signal.SIGTERM, _interrupt) if _main_thread() else None
    try:
        return handler(args)
    except BrokenPipeError:  # what reads the output stopped (`drga predict ... | head`): nothing to say, as other tools
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; a run's last completed epoch is saved: continue with the same command and --resume (a run "
              "interrupted before its first epoch saved nothing, and left its folder as it was)", file=sys.stderr)
        return 130
    except Exception as error:
        return report_command_failure(error, f"drga {args.command}: error: ", args.debug or debug)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not meet the closed pipe again (its docs' recipe)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a descriptor (a test's capture)
        pass


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _main_thread() -> bool:
    """Whether signal handlers can be set here (Python allows it in the main thread only: a test may call main elsewhere)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An option or argument given an empty value (``--logdir ""``, ``--run-name ''``) is refused as argparse refuses an
    ill-formed one: it would otherwise stand for the current folder, a default, or nothing, without a word."""
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    for sub in (parser, commands.choices[args.command]):
        for action in sub._actions:
            value = getattr(args, action.dest, None)
            values = value if isinstance(value, list) else [value]
            if any(isinstance(item, str) and not item.strip() for item in values):
                name = "/".join(action.option_strings) or action.metavar or action.dest
                sub.error(f"argument {name}: an empty value; give one, or leave the option out")


if __name__ == "__main__":
    sys.exit(main())
