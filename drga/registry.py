"""The plug points: one registration for an attention network, one for a reward, one for a task, one for an agent learner.

- :func:`register_network` (``@register_network("my-gru", input="text")`` on the class): the
  network's name (``network.name``, ``--net``), what it reads from a data set (``input``), its
  settings (``settings``, a dataclass; by default the one derived from the constructor's keyword
  parameters), the run defaults it wants (``defaults``, ``section.key`` → value) and, for a network
  that reads a pretrained checkpoint's subwords, the loader of that tokenizer (``tokenizer``).
- :func:`register_reward` (``@register_reward("my-reward")`` on a class or function returning a
  :class:`drga.core.reward.Reward`): the reward ``reward.name`` chooses, with its settings read from
  ``[reward]`` the same way.
- :func:`register_task` (``@register_task("my-task", config=...)`` on a :class:`drga.runner.task.Task` subclass):
  the task's name, its configuration class and loader, what its networks read, its trainer, its inference loader,
  its ``drga evaluate`` and its ``drga`` commands (a :class:`TaskSpec`); the class holds only the hooks the runner
  calls. ``drga train``, the configuration loader (``drga/tasks/run_config.py``), the trainer (``drga/trainer.py``),
  ``drga evaluate``, ``drga.load``, ``drga tune`` and ``drga sweep`` find a task here: by the network (the task its
  registration names, else the one that reads its input), by the configuration's class, by the checkpoint.

- :func:`register_learner` (``@register_learner("my-learner")`` on a class or function that takes no argument and returns a
  :class:`drga.learners.context.Learner`): the learner of Algorithm 1's agent phase that ``agent.algorithm`` (``--agent``)
  chooses; the built-ins are REINFORCE's (``reinforce``) and stable-baselines3's (``sb3-ppo``, ``sb3-a2c``).

All four kinds are kept by one :class:`Registry` each.

A registered class's settings are checked against its constructor when it registers: each must be
one of its parameters, and each parameter without a default must be a setting (or one of the
``runtime`` arguments the toolkit passes itself). The ``[network]`` and ``[reward]`` sections accept
the settings of every registered network or reward (``drga/config.py``); a network is built with
its own settings only (:meth:`NetworkSpec.build`).

This module sits with the utilities, below every network, reward and task, so that the configuration
can read the registries. The built-ins register when their modules are imported (``drga.baselines``,
``drga.core.reward``, ``drga.tasks.classification.task``, ``drga.tasks.translation.task``); a lookup here
imports them first, by name (as gymnasium's string entry points do), and so does it the modules
named in ``$DRGA_PLUGINS`` (comma-separated; a module found on ``sys.path``, else a file or package in the working
folder), so that a plug-in of your own is known to every ``drga`` command and to the processes a local sweep starts
(which inherit the environment).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import importlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, get_type_hints

from drga.errors import UserError

__all__ = [
    "LearnerSpec", "NetworkSpec", "RewardSpec", "Registry", "RegistryError", "register_learner", "register_network",
    "register_reward", "register_task", "find_learner", "learner_spec", "learner_names",
    "network_spec", "find_network", "network_names", "reward_spec", "find_reward", "reward_names", "task_spec", "find_task",
    "task_names", "task_specs", "task_spec_of", "TaskSpec", "TaskReport", "task_for_network", "task_of_config", "task_of_checkpoint",
    "load_for_inference", "plugin_setting",
    "report_metric_of_network",
    "unregister_learner", "unregister_network", "unregister_reward", "unregister_task",
]

#: What a network may read from a data set: token sequences; an aspect term too; the sentences of a
#: document; source and target text (translation, trained by drga/tasks/translation).
INPUTS = ("text", "aspect", "document", "parallel")
#: The constructor arguments every network gets first, positionally: the vocabulary size and the number
#: of labels (a translation network: the source and the target vocabulary sizes).
POSITIONAL = ("vocab_size", "num_classes")
#: Modules whose import registers the built-in networks and rewards.
NETWORK_PLUGINS = ("drga.baselines",)
REWARD_PLUGINS = ("drga.core.reward",)
#: Modules whose import registers the built-in tasks (each its :class:`drga.runner.task.Task` class; torch is not imported).
TASK_PLUGINS = ("drga.tasks.classification.task", "drga.tasks.translation.task")
LEARNER_PLUGINS = ("drga.learners",)
#: The task of a network no registration names (its loader says that the network is unknown).
DEFAULT_TASK = "classification"
#: The environment variable naming modules of your own to import before any lookup (comma-separated).
PLUGINS_VARIABLE = "DRGA_PLUGINS"


class RegistryError(UserError, ValueError):
    """A registration the toolkit cannot use, or a name or setting no registered plug-in has."""


def _copies_of(value: Any) -> Callable[[], Any]:
    """A default factory: a fresh deep copy of ``value`` for each settings object."""
    return lambda: copy.deepcopy(value)


def derived_settings(factory: Callable[..., Any], runtime: tuple[str, ...] = (), skip: tuple[str, ...] = POSITIONAL) -> type:
    """A frozen dataclass of ``factory``'s keyword parameters (its settings), their annotations and defaults.

    ``skip`` (the positional arguments) and ``runtime`` (what the toolkit passes itself) are left out;
    ``*args`` and ``**kwargs`` are not settings.
    """
    hints = _hints(factory)
    fields = []
    for name, parameter in _parameters(factory).items():
        if name in skip or name in runtime or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is parameter.empty:
            raise RegistryError(
                f"{_describe(factory)}: parameter '{name}' has no default; give every setting one (or list it in runtime=)"
            )
        default = parameter.default
        mutable = isinstance(default, (list, dict, set))
        value = field(default_factory=_copies_of(default)) if mutable else field(default=default)
        fields.append((name, hints.get(name, Any), value))
    return dataclasses.make_dataclass(f"{getattr(factory, '__name__', 'Factory')}Settings", fields, frozen=True)


def checked_settings(
    factory: Callable[..., Any], settings: type, runtime: tuple[str, ...] = (), skip: tuple[str, ...] = POSITIONAL
) -> type:
    """``settings`` (a dataclass) checked against ``factory``'s constructor: every field is one of its
    parameters, and every parameter without a default is a field, a positional or a runtime argument."""
    if not dataclasses.is_dataclass(settings) or not isinstance(settings, type):
        raise RegistryError(f"{_describe(factory)}: settings must be a dataclass, got {settings!r}")
    parameters = _parameters(factory)
    swallows = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
    names = {f.name for f in dataclasses.fields(settings)}
    unknown = sorted(n for n in names if n not in parameters and not swallows)
    if unknown:
        raise RegistryError(f"{_describe(factory)}: settings {', '.join(unknown)} of {settings.__name__} are not parameters of its "
                            f"constructor (it takes: {', '.join(n for n in parameters if n not in skip)})")
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    missing = sorted(
        n for n, p in parameters.items()
        if p.default is p.empty and p.kind not in variadic and n not in (*names, *skip, *runtime)
    )
    if missing:
        raise RegistryError(f"{_describe(factory)}: its constructor needs {', '.join(missing)}, which {settings.__name__} does not have")
    return settings


def _parameters(factory: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(factory).parameters
    except (TypeError, ValueError) as error:
        raise RegistryError(f"{_describe(factory)}: cannot read its constructor's parameters ({error})") from None


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        return get_type_hints(target)
    except Exception:  # an annotation that does not resolve: its settings are read as given, unchecked
        return {}


def _describe(factory: Callable[..., Any]) -> str:
    return getattr(factory, "__qualname__", repr(factory))


def _defaults(settings: type) -> dict[str, Any]:
    """A settings dataclass's defaults, by field."""
    found = {}
    for item in dataclasses.fields(settings):
        if item.default is not dataclasses.MISSING:
            found[item.name] = item.default
        elif item.default_factory is not dataclasses.MISSING:
            found[item.name] = item.default_factory()
    return found


def _annotations(settings: type) -> dict[str, Any]:
    try:
        hints = get_type_hints(settings)
    except Exception:
        hints = {}
    return {item.name: hints.get(item.name, Any) for item in dataclasses.fields(settings)}


@dataclass(frozen=True)
class _Plugin:
    name: str
    factory: Callable[..., Any]
    settings: type
    defaults: Mapping[str, Any] = field(default_factory=dict)
    runtime: tuple[str, ...] = ()

    @property
    def setting_names(self) -> tuple[str, ...]:
        """The settings, in the constructor's order."""
        return tuple(item.name for item in dataclasses.fields(self.settings))

    def setting_defaults(self) -> dict[str, Any]:
        """Each setting's default (a fresh copy of a list)."""
        return _defaults(self.settings)

    def annotations(self) -> dict[str, Any]:
        return _annotations(self.settings)

    def arguments(self, section: Any) -> dict[str, Any]:
        """The values of this plug-in's settings in a configuration section: a ``[network]`` or ``[reward]``
        section's (:class:`drga.config.PluginSection`: the value set, else this plug-in's default, as its saved
        form holds them), or any object with some of them as attributes (the rest: the defaults)."""
        value_of = getattr(section, "value_of", None)
        arguments = {}
        for name, default in self.setting_defaults().items():
            if callable(value_of):
                arguments[name] = value_of(name, default)
            elif hasattr(section, name):
                arguments[name] = getattr(section, name)
            else:
                arguments[name] = default
        return arguments


@dataclass(frozen=True)
class NetworkSpec(_Plugin):
    """A registered attention network: how to build it, what it reads, its settings and defaults."""

    input: str = "text"
    tokenizer: Callable[[str | None], Any] | None = None
    task: str | None = None  #: the task that trains it, when not the one that reads its input

    def accepts(self, key: str) -> bool:
        """Whether the constructor takes ``key`` (a setting, or a runtime argument such as ``embeddings``)."""
        parameters = _parameters(self.factory)
        return key in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values())

    def build(self, vocab_size: int, num_classes: int, **arguments: Any) -> Any:
        """The network, given its settings (and runtime arguments) as keywords.

        The keywords are read as a ``[network]`` section: a setting of this network is passed on, a
        setting that only other registered networks have is left out (one section can serve a sweep
        over several networks), and a key no registered network has is an error naming this
        network's settings.
        """
        passed = {}
        for key, value in arguments.items():
            if key in self.setting_names or key in self.runtime:
                if self.accepts(key):  # a runtime argument it does not take (no embeddings parameter): left out
                    passed[key] = value
            elif not _known_network_key(key):  # another network's setting is left out; a key no network has is an error
                raise RegistryError(unknown_setting_message("network", key, self))
        self.settings(**{key: value for key, value in passed.items() if key in self.setting_names})  # the dataclass's own checks
        return self.factory(vocab_size=vocab_size, num_classes=num_classes, **passed)


@dataclass(frozen=True)
class RewardSpec(_Plugin):
    """A registered reward: a class (or function) whose keyword parameters are its ``[reward]`` settings."""

    def build(self, section: Any = None) -> Any:
        """The reward with its settings read from ``section`` (a ``[reward]`` section, or any object with
        some of them as attributes; None: the defaults)."""
        return self.factory(**(self.arguments(section) if section is not None else self.setting_defaults()))


@dataclass(frozen=True)
class LearnerSpec:
    """A registered agent-phase learner: ``factory()`` is a fresh :class:`drga.learners.context.Learner`."""

    name: str
    factory: Callable[[], Any]

    def build(self) -> Any:
        return self.factory()


def imported(reference: str) -> Any:
    """``"module:name"``: that module's attribute, the module imported now (a task names by it what sits above this
    layer, as gymnasium's string entry points do)."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class TaskReport:
    """The one number of a test cell that tables show and TensorBoard's HParams tab reports per arm."""

    #: A key of the task's evaluation scores (classification's ``accuracy``, translation's greedy ``bleu``).
    metric: str = "accuracy"
    #: What a table multiplies it by (100: a fraction shown in percent).
    scale: float = 100.0
    #: The column heading it is shown under.
    label: str = "accuracy (%)"


@dataclass(frozen=True)
class TaskSpec:
    """A registered task: its name, the class of hooks the runner calls (:class:`drga.runner.task.Task`), and what the
    entry points read of it before any run (:func:`register_task`'s arguments). A reference is ``"module:name"``, imported
    when first used, so that ``drga --help`` imports no task's torch code."""

    name: str
    #: The :class:`drga.runner.task.Task` subclass; ``task(config)`` is a run's task.
    task: type
    #: The configuration class: :class:`drga.config.ExperimentConfig`, or a class holding one as ``experiment``.
    config_class: type
    #: What its own networks read (a network reading one is its network, unless the network's registration names another).
    inputs: tuple[str, ...] = ()
    #: ``(path, overrides, report) -> configuration``; None: :func:`drga.config.load_config` into a ``config_class()``.
    config_loader: str | None = None
    #: ``(config, task_class=, **options) -> runner``; None: :class:`drga.runner.PhaseRunner` with ``task(config)``.
    trainer_class: str | None = None
    #: ``(path, **options) -> model``: what ``drga.load`` returns for one of its checkpoints; None: it cannot.
    model_loader: str | None = None
    #: ``(args, payload) -> exit status``: ``drga evaluate`` on one of its checkpoints; None: it has none.
    evaluator: str | None = None
    #: A module with ``register(subparsers) -> {name: handler}`` and ``OPTION_SCOPES``: its own ``drga`` subcommands.
    commands_module: str | None = None
    #: ``drga train`` options only it reads, each with the setting it sets: given for another task, refused.
    train_options: tuple[tuple[str, str], ...] = ()
    #: What to do with one of its checkpoints instead of ``drga predict`` (``{path}``: the checkpoint's).
    inference: str = ""
    report: TaskReport = field(default_factory=TaskReport)

    @property
    def factory(self) -> type:
        """What it registered: its class (a second registration of the same class is no clash)."""
        return self.task

    def load_config(self, path: Any = None, overrides: list[str] | None = None,
                    report: Callable[[str], None] | None = None) -> Any:
        """Its configuration from a TOML file and ``section.key=value`` overrides (``report``: told which of the network's
        own defaults were applied)."""
        if self.config_loader is None:
            return imported("drga.config:load_config")(path, overrides, report, into=self.config_class())
        return imported(self.config_loader)(path, overrides, report)

    def defaults(self) -> Any:
        """Its default configuration (``drga sweep``'s table lists the settings that differ from it)."""
        return self.config_class()

    def shared(self, config: Any) -> Any:
        """The :class:`~drga.config.ExperimentConfig` every task's configuration is or holds (as ``experiment``)."""
        return getattr(config, "experiment", config)

    def to_toml(self, config: Any) -> str:
        """``config`` as its ``config.toml`` (its own ``to_toml()``, else :func:`drga.config.config_to_toml`)."""
        own = getattr(config, "to_toml", None)
        return str(own() if own is not None else imported("drga.config:config_to_toml")(config))

    def trainer(self, config: Any, **options: Any) -> Any:
        """The runner that trains ``config`` (options: ``resume``, ``overwrite``, ``force``, ``log``, ``callbacks``)."""
        if self.trainer_class is None:
            return imported("drga.runner.loop:PhaseRunner")(self.task(config), **options)
        return imported(self.trainer_class)(config, task_class=self.task, **options)

    def load(self, path: Any, **options: Any) -> Any:
        """One of its checkpoints ready for inference (``options``: ``device=``)."""
        if self.model_loader is None:
            raise RegistryError(f"task '{self.name}' cannot load a checkpoint for inference: its registration names no load "
                                "(docs/extending.md, \"A new task\")")
        return imported(self.model_loader)(path, **options)

    def evaluate_checkpoint(self, args: Any, payload: dict[str, Any]) -> int:
        """``drga evaluate`` on one of its checkpoints (``payload``, as loaded): the command's exit status."""
        if self.evaluator is None:
            raise RegistryError(f"task '{self.name}' registered no `drga evaluate` (its registration names no evaluate)")
        return int(imported(self.evaluator)(args, payload))

    def commands(self, subparsers: Any) -> dict[str, Callable[[Any], int]]:
        """Adds its own ``drga`` subcommands to argparse's subparsers object."""
        return dict(importlib.import_module(self.commands_module).register(subparsers)) if self.commands_module else {}

    def option_scopes(self) -> Mapping[str, Mapping[str, str | None]]:
        """Where each option of its commands is read (``drga.cli.OPTION_SCOPES``'s form)."""
        return importlib.import_module(self.commands_module).OPTION_SCOPES if self.commands_module else {}


_LOADED: set[str] = set()


def _working_folder_on_path(module: str) -> None:
    """A ``$DRGA_PLUGINS`` module that nothing on ``sys.path`` holds but the working folder does (``my_network.py``
    beside you, as ``python -m`` would find it): the working folder goes last on ``sys.path``, where the ``drga``
    console script, unlike ``python``, does not put it. Installed modules keep precedence over it."""
    import importlib.util
    import sys

    top = module.split(".", 1)[0]
    folder = os.getcwd()
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):  # a name that is no module's: the import below says so
        found = False
    if found or folder in sys.path or "" in sys.path:
        return
    if (os.path.isfile(os.path.join(folder, f"{top}.py")) or os.path.isdir(os.path.join(folder, top))):
        sys.path.append(folder)


def _load(modules: tuple[str, ...]) -> None:
    """Import the built-in plug-in modules and those of ``$DRGA_PLUGINS`` (found on ``sys.path``, else in the
    working folder), once each."""
    extra = tuple(m.strip() for m in os.environ.get(PLUGINS_VARIABLE, "").split(",") if m.strip())
    for module in modules + extra:
        if module in _LOADED:
            continue
        _LOADED.add(module)  # before the import: the module's registrations may look names up
        if module in extra:
            _working_folder_on_path(module)
        try:
            importlib.import_module(module)
        except ImportError as error:
            _LOADED.discard(module)
            if module in extra:
                raise RegistryError(f"${PLUGINS_VARIABLE} names module '{module}', which cannot be imported: {error}") from None
            raise


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not name or any(c.isspace() or c in "=,[]" for c in name):
        raise RegistryError(f"a {kind} name must be a non-empty word without spaces, '=', ',' or brackets, got {name!r}")


S = TypeVar("S", bound="_Named")


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def factory(self) -> Any: ...


def _factory(entry: Any) -> Any:
    """What a registry entry registered: a network's or reward's factory, a task's class."""
    return entry.factory


class Registry(Generic[S]):
    """The registered plug-ins of one kind (networks, rewards, tasks), by name, in registration order.

    A lookup imports the modules that register the built-ins (``plugins``, by name) and those of
    ``$DRGA_PLUGINS`` first, so that whoever asks never imports a layer above its own.
    """

    def __init__(self, kind: str, plugins: tuple[str, ...]):
        self.kind, self.plugins = kind, plugins
        self._entries: dict[str, S] = {}

    def add(self, spec: S, replace: bool = False) -> None:
        """Register ``spec`` under its name; another plug-in of that name is an error unless ``replace``."""
        held = self._entries.get(spec.name)
        if held is not None and not replace and _factory(held) is not _factory(spec):
            raise RegistryError(f"a {self.kind} named '{spec.name}' is registered already ({_describe(_factory(held))}); "
                                "choose another name or pass replace=True")
        self._entries[spec.name] = spec

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)

    def find(self, name: str) -> S | None:
        """The registered plug-in of that name, or None."""
        if name not in self._entries:
            _load(self.plugins)
        return self._entries.get(name)

    def get(self, name: str) -> S:
        """The registered plug-in of that name; an error naming the registered ones otherwise."""
        spec = self.find(name)
        if spec is None:
            names = self.names()
            raise RegistryError(f"unknown {self.kind} '{name}'{_closest(name, names)}; choose one of: {', '.join(sorted(names))} "
                                f"(a {self.kind} of your own: register it, docs/extending.md)")
        return spec

    def names(self) -> tuple[str, ...]:
        """The registered plug-ins' names, in the order they registered."""
        _load(self.plugins)
        return tuple(self._entries)

    def specs(self) -> list[S]:
        """The registered plug-ins, in the order they registered."""
        _load(self.plugins)
        return self.registered()

    def registered(self) -> list[S]:
        """Those registered so far, without importing the built-ins' modules."""
        return list(self._entries.values())


_NETWORKS: Registry[NetworkSpec] = Registry("network", NETWORK_PLUGINS)
_REWARDS: Registry[RewardSpec] = Registry("reward", REWARD_PLUGINS)
_TASKS: Registry[TaskSpec] = Registry("task", TASK_PLUGINS)
_LEARNERS: Registry[LearnerSpec] = Registry("learner", LEARNER_PLUGINS)


def register_network(
    name: str,
    *,
    input: str = "text",
    settings: type | None = None,
    defaults: Mapping[str, Any] | None = None,
    tokenizer: Callable[[str | None], Any] | None = None,
    runtime: tuple[str, ...] = ("embeddings",),
    task: str | None = None,
    replace: bool = False,
) -> Callable[[Any], Any]:
    """Register an attention network under ``name``: a decorator of its class (or factory function).

    Args:
        name: ``network.name`` / ``--net``.
        input: what it reads from a data set (:data:`INPUTS`, or an input a registered task reads);
            it must be the data set's, except that a text network may read aspect data (ignoring the aspect).
        settings: a dataclass of its ``[network]`` settings, each a constructor parameter; default: the
            constructor's keyword parameters with their annotations and defaults.
        defaults: run settings it wants where a configuration leaves them unset, ``"section.key"`` →
            value (``{"agent.samples": 2}``); the defaults of its own settings apply too.
        tokenizer: for a network that reads its pretrained checkpoint's subwords instead of the
            toolkit's word vocabulary, the loader of that tokenizer from ``network.pretrained``.
        runtime: constructor arguments the toolkit passes itself, not settings (``embeddings``: the
            pretrained vectors of ``network.vectors``).
        task: the registered task that trains it (:func:`register_task`); default: the task that
            reads its ``input`` (classification: text, aspect, document; translation: parallel).
        replace: allow replacing a registered network of that name (else an error).
    """
    _check_name("network", name)
    if input not in INPUTS and not any(input in task.inputs for task in _TASKS.specs()):
        known = sorted({*INPUTS, *(i for task in _TASKS.specs() for i in task.inputs)})
        raise RegistryError(f"network '{name}': input must be one of {', '.join(known)}, got {input!r}")
    for key in defaults or {}:
        if key.count(".") != 1:
            raise RegistryError(f"network '{name}': a default's key must be section.key, got {key!r}")

    def register(factory: Any) -> Any:
        fields = checked_settings(factory, settings, runtime) if settings is not None else derived_settings(factory, runtime)
        _NETWORKS.add(NetworkSpec(name, factory, fields, dict(defaults or {}), tuple(runtime), input, tokenizer, task), replace)
        # its own name, not one inherited from a registered parent class
        if inspect.isclass(factory) and vars(factory).get("net_name", "custom") == "custom":
            network_class: Any = factory  # a network class (AttentionNetwork's net_name), not any type
            network_class.net_name = name  # checkpoints and retrofit() name a network by it
        return factory

    return register


def register_reward(
    name: str, *, settings: type | None = None, replace: bool = False
) -> Callable[[Any], Any]:
    """Register a reward under ``name`` (``reward.name``): a decorator of a class, or a function, whose
    keyword parameters are its ``[reward]`` settings and whose result (an instance) is a
    :class:`drga.core.reward.Reward`: ``reward(log_likelihood, original, revised, masks) -> RewardTerms``."""
    _check_name("reward", name)

    def register(factory: Any) -> Any:
        fields = checked_settings(factory, settings, skip=()) if settings is not None else derived_settings(factory, skip=())
        _REWARDS.add(RewardSpec(name, factory, fields), replace)
        return factory

    return register


def register_task(
    name: str,
    *,
    config: type | None = None,
    inputs: tuple[str, ...] = (),
    load_config: str | None = None,
    trainer: str | None = None,
    load: str | None = None,
    evaluate: str | None = None,
    commands: str | None = None,
    train_options: tuple[tuple[str, str], ...] | None = None,
    inference: str | None = None,
    report: TaskReport | None = None,
    replace: bool = False,
) -> Callable[[type], type]:
    """Register a task under ``name``: a decorator of its :class:`drga.runner.task.Task` subclass, whose methods are the
    hooks the runner calls; the arguments are what the entry points read of it before any run (:class:`TaskSpec`).

    Args:
        name: its name; its checkpoints record it as ``task``.
        config: its configuration class.
        inputs: what its own networks read (:data:`INPUTS`, or a word of its own).
        load_config, trainer, load, evaluate: ``"module:name"`` references (:class:`TaskSpec`'s fields say each one's
            signature and default).
        commands: a module of ``drga`` subcommands of its own.
        train_options: ``drga train`` options only it reads.
        inference: what to do with its checkpoints instead of ``drga predict``.
        report: the number its tables report (default: accuracy, in percent).
        replace: allow replacing a registered task of that name (else an error).

    A subclass of a registered task's class inherits that task's registration, all but its name and ``inputs``: a
    subclass of classification's trains the networks whose registration names it (``register_network(..., task=)``).
    """
    _check_name("task", name)

    def register(cls: type) -> type:
        parent = next((spec for base in cls.__mro__[1:] for spec in _TASKS.registered() if spec.task is base), None)
        given: dict[str, Any] = {"config_class": config, "config_loader": load_config, "trainer_class": trainer, "model_loader": load,
                 "evaluator": evaluate, "commands_module": commands, "train_options": train_options,
                 "inference": inference, "report": report}
        given = {key: value for key, value in given.items() if value is not None}
        if parent is not None:
            spec = dataclasses.replace(parent, name=name, task=cls, inputs=tuple(inputs), **given)
        elif config is None:
            raise RegistryError(f"task '{name}': name its configuration class (register_task(..., config=ExperimentConfig)), "
                                "or subclass a registered task's class")
        else:
            spec = TaskSpec(name=name, task=cls, inputs=tuple(inputs), **given)
        for other in _TASKS.registered():  # not specs(): a built-in registering must not load the others first
            shared = sorted(set(other.inputs) & set(spec.inputs)) if other.name != name else []
            if shared:
                raise RegistryError(f"task '{name}': task '{other.name}' reads {', '.join(shared)} already; "
                                    "name the task in the registration of its networks instead (register_network(..., task=))")
        _TASKS.add(spec, replace)
        return cls

    return register


def register_learner(name: str, *, replace: bool = False) -> Callable[[Any], Any]:
    """Register the learner of Algorithm 1's agent phase that ``agent.algorithm = name`` (``--agent``) chooses: a
    decorator of a class, or a function, that takes no argument and returns a :class:`drga.learners.context.Learner`.
    The network-only phases keep the network's learner and co-training REINFORCE's (``drga.learners.make_learner``)."""
    _check_name("learner", name)

    def register(factory: Any) -> Any:
        _LEARNERS.add(LearnerSpec(name, factory), replace)
        return factory

    return register


def unregister_learner(name: str) -> None:
    """Remove a registered learner (tests; a registration replaced in a notebook)."""
    _LEARNERS.remove(name)


def unregister_network(name: str) -> None:
    """Remove a registered network (tests; a registration replaced in a notebook)."""
    _NETWORKS.remove(name)


def unregister_reward(name: str) -> None:
    """Remove a registered reward (tests; a registration replaced in a notebook)."""
    _REWARDS.remove(name)


def unregister_task(name: str) -> None:
    """Remove a registered task (tests)."""
    _TASKS.remove(name)


find_network = _NETWORKS.find
network_spec = _NETWORKS.get
network_names = _NETWORKS.names
find_reward = _REWARDS.find
reward_spec = _REWARDS.get
reward_names = _REWARDS.names
find_task = _TASKS.find
task_spec = _TASKS.get
task_names = _TASKS.names
find_learner = _LEARNERS.find
learner_spec = _LEARNERS.get
learner_names = _LEARNERS.names


def network_specs() -> Iterator[NetworkSpec]:
    return iter(_NETWORKS.specs())


def task_specs() -> list[TaskSpec]:
    """The registered tasks, in the order they registered (classification, translation, then yours)."""
    return _TASKS.specs()


def task_spec_of(task: type) -> TaskSpec:
    """The registration of a task class (a run's task reads its name here)."""
    for spec in task_specs():
        if spec.task is task:
            return spec
    raise RegistryError(f"{task.__name__} is not a registered task's class: decorate it with @register_task(\"name\", ...)")


def task_for_network(name: str | None) -> TaskSpec:
    """The task that trains the network of that name: the one its registration names (``task=``), else the one whose
    ``inputs`` hold what it reads; a name no network has: :data:`DEFAULT_TASK` (whose loader says so)."""
    network = find_network(name) if name else None
    if network is not None and network.task is not None:
        return task_spec(network.task)
    reads = network.input if network is not None else None
    for task in task_specs():
        if reads in task.inputs:
            return task
    if network is not None:
        raise RegistryError(f"network '{name}' reads {reads} data, and no registered task reads them: register the task that "
                            "trains it (docs/extending.md)")
    return task_spec(DEFAULT_TASK)


def task_of_config(config: Any) -> TaskSpec:
    """The task that trains what ``config`` names: the task whose configuration class it is, and where several tasks
    share that class (classification and a subclass of its task), the one that trains its network
    (:func:`task_for_network`): the configuration carries the task by its network's registration."""
    tasks = [task for task in task_specs() if type(config) is task.config_class]
    if len(tasks) > 1:
        network = getattr(getattr(config, "network", None), "name", None)
        owner = task_for_network(network)
        return owner if owner in tasks else tasks[0]
    if tasks:
        return tasks[0]
    raise RegistryError(f"{type(config).__name__} is the configuration of no registered task "
                        f"(theirs: {', '.join(sorted({task.config_class.__name__ for task in task_specs()}))})")


def report_metric_of_network(name: str) -> str:
    """The metric the tables report of a run of network ``name``: its task's ``report.metric``."""
    return task_for_network(name).report.metric


def task_of_checkpoint(payload: Mapping[str, Any]) -> TaskSpec | None:
    """The task whose checkpoint ``payload`` is (a loaded file, :func:`drga.checkpoint_format.load_checkpoint`), or None."""
    name = payload.get("task")
    return find_task(name) if isinstance(name, str) else None


def load_for_inference(path: Any, **options: Any) -> Any:
    """A checkpoint of any registered task, ready for inference, as its task's class loads it (``load``:
    classification's :class:`~drga.tasks.classification.prediction.Classifier`, translation's model, a task of your
    own's); ``options`` go to that loader (``device=``). A task that gives no ``load`` is named."""
    from drga.checkpoint_format import recorded_task  # torch: only when a checkpoint is read

    name = recorded_task(path)  # its header alone: the task's loader reads the file once
    task = find_task(name) if name is not None else None
    if task is None:
        raise RegistryError(f"{path} is a checkpoint of the task '{name}', which is not registered here "
                            f"(name the module that registers it in ${PLUGINS_VARIABLE})")
    return task.load(path, **options)


def _specs(section: str) -> list[_Plugin]:
    if section == "network":
        return list(_NETWORKS.specs())
    if section == "reward":
        return list(_REWARDS.specs())
    return []


def _setting_owners(section: str, key: str) -> list[_Plugin]:
    return [spec for spec in _specs(section) if key in spec.setting_names]


def _known_network_key(key: str) -> bool:
    """Whether some registered network has ``key`` as a setting or a runtime argument."""
    return any(key in spec.setting_names or key in spec.runtime for spec in network_specs())


def plugin_setting(section: str, key: str) -> tuple[Any, list[str]] | None:
    """A setting of ``[network]`` or ``[reward]`` that a registered plug-in declares: its annotation (the
    first declaring plug-in's) and the plug-ins that have it; None when none has it."""
    owners = _setting_owners(section, key)
    if not owners:
        return None
    return owners[0].annotations()[key], [spec.name for spec in owners]


def plugin_settings(section: str) -> list[str]:
    """Every setting any registered network (``section="network"``) or reward (``"reward"``) declares."""
    names: dict[str, None] = {}
    for spec in _specs(section):
        names.update(dict.fromkeys(spec.setting_names))
    return list(names)


def unknown_setting_message(section: str, key: str, chosen: _Plugin | None, known: list[str] | None = None) -> str:
    """What to say about a ``[section]`` key that no registered plug-in has: the chosen plug-in's settings,
    and the closest known key."""
    known = known if known is not None else plugin_settings(section)
    message = f"unknown config key '{section}.{key}'"
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        message += f"; did you mean '{section}.{close[0]}'?"
    if chosen is not None:
        message += f" ({section} '{chosen.name}' takes: {', '.join(chosen.setting_names) or 'no settings'})"
    return message


def _closest(name: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
