"""Typed hyperparameters, overridable from a TOML file and from ``--set section.key=value``.

Defaults are the paper's where it gives one (γ = 0.2, β0 = 0.4, √L0 = 0.2, δ = 0.85, a
2-layer 300-unit agent, Adam 5e-4, dropout 0.5). A network may come with defaults of its own
for settings a config leaves unset (its registration's, ``drga/registry.py``; :data:`NETWORK_DEFAULTS`
shows them, :func:`load_config` applies them).

``[network]`` holds the network's name, its word vectors and the chosen network's own settings (its
registered settings dataclass's fields), and ``[reward]`` the reward's name, what the toolkit adds to
any reward and the chosen reward's settings (:class:`PluginSection`, ``drga/registry.py``); no section
lists the built-in networks' keys. The rule for ``[network]``: a key must be a setting of some registered
network (else an error naming the chosen network's settings); a setting of other networks that
the chosen one does not take is left out of its construction (one section serves a sweep over
several networks) and the run's log says so. ``[data]`` settings of other data sets likewise
(:data:`DATA_SETTING_SCOPES`). The command line's ``--set`` is for the run at hand: such a setting
given there is refused (:func:`refuse_unread_settings`).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args, get_origin, get_type_hints

from drga import registry
from drga.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class DataConfig:
    dataset: str = "subj"
    """Data set name: mr, subj, sst, sst2, ag-news, semeval14-laptop, semeval14-restaurant, semeval15-restaurant, semeval16-restaurant,
    movie-reviews or tsv.
    """
    data_dir: str | None = None
    """Folder of the data set (or a data root containing its folder), the only place the data set is looked for when set; default:
    $DRGA_DATA, ../shared/data, ~/.cache/drga/data, then the package's own copies. Word vectors found by name are looked for
    there first, then in those places.
    """
    tsv_path: str | None = None
    """For dataset=tsv: a label<TAB>text file (split 80/10/10) or a folder with train/dev/test.tsv."""
    tsv_header: Literal["auto", "yes", "no"] = "auto"
    """For dataset=tsv: skip a header line: auto (when the first label is a column name such as 'label' or 'class'), yes or no."""
    encoding: str = "utf-8"
    """For dataset=tsv: the files' text encoding (a UTF-8 byte-order mark is always stripped)."""
    encoding_errors: Literal["strict", "replace"] = "strict"
    """For dataset=tsv: undecodable bytes stop the load with their file, line and offset (strict), or are read as U+FFFD with a warning
    that counts the lines (replace).
    """
    rare_labels: Literal["refuse", "keep"] = "refuse"
    """For dataset=tsv: a training label with fewer than 5 examples where another label has 10 times as many, or with under 1% of
    the commonest label's examples, is refused as a likely typo, naming its lines and the closest other labels (refuse); keep trains it
    as a class of its own.
    """
    split_seed: int = 1234
    """Seed of the stratified 80/10/10 split for data sets without an official one (not the training seed)."""
    max_length: int = 100
    """Tokens kept per sentence; longer ones are truncated and the count is reported."""
    min_freq: int = 1
    """Training-set frequency a word needs to enter the vocabulary; rarer words become <unk>."""
    lowercase: bool = True
    """Lowercase the text before building the vocabulary."""
    phrase_level: bool = False
    """SST only: train on every labelled phrase of the training trees."""
    batch_size: int = 64
    """Sentences per batch; under torchrun the global batch, split across the processes (docs/distributed.md)."""
    agent_holdout: float = 0.0
    """Beyond the paper: hold out this fraction of the training split (stratified by label, seeded by split_seed; with
    phrase_level, whole trees: a sentence and all its phrases) from every phase that trains the network; the agent
    learns on it alone, so its reward log P(y|X) comes from sentences the network has not fit (0: the paper, the
    agent learns on the training batches).
    """
    train_fraction: float = 1.0
    """Use only this fraction of the training split (quick runs, learning curves)."""
    max_sentences: int = 40
    """Documents (movie-reviews): sentences kept per document; the rest are dropped and counted."""
    max_sentence_length: int = 50
    """Documents (movie-reviews): tokens kept per sentence; longer ones are truncated and counted."""


class PluginSection:
    """What ``[network]`` and ``[reward]`` share: a few fields of the toolkit's own (the plug-in's ``name`` first), and the
    settings of the chosen plug-in: its registered settings dataclass's fields (``drga/registry.py``; a built-in network
    or reward registers them as a plug-in of your own does, docs/extending.md), read as attributes
    (``config.network.hidden_size``): the value set (by a TOML file, ``--set``, the Python API or the network's run
    defaults; kept in :attr:`given`), else the chosen plug-in's own default. :meth:`own_settings` is that dataclass.

    A section may also hold settings of other registered plug-ins (one file's ``[network]`` serves a sweep over several
    networks): they are kept while the configuration lives, the run's log notes them, and the chosen plug-in is built
    without them (:meth:`drga.registry.NetworkSpec.build`). A key no registered plug-in has is refused (:func:`set_value`).

    Its saved form (:meth:`to_dict`: ``config.toml``, checkpoints, result files, the settings fingerprint) is the
    section's own fields (``name`` first), then every setting of the chosen plug-in: the value set, else its own default.
    Another plug-in's settings are not saved; reading one the chosen plug-in lacks is an error naming what it takes.
    """

    #: ``network`` or ``reward``: the section, and the registry its plug-ins are in.
    KIND: ClassVar[str] = ""
    given: dict[str, Any]

    def __init__(self, name: str | None = None, given: Mapping[str, Any] | None = None, **values: Any):
        object.__setattr__(self, "given", dict(given or {}))
        for item in dataclasses.fields(self):  # type: ignore[arg-type]  # each subclass is a dataclass
            if item.name != "given":
                factory: Any = item.default_factory
                object.__setattr__(self, item.name, copy.deepcopy(item.default) if item.default is not dataclasses.MISSING else factory())
        if name is not None:
            self.name = name
        for key, value in values.items():
            setattr(self, key, value)

    @classmethod
    def own_fields(cls) -> tuple[str, ...]:
        """The toolkit's own fields (``name`` ...), not a plug-in's settings."""
        return tuple(item.name for item in dataclasses.fields(cls) if item.name != "given")  # type: ignore[arg-type]  # a dataclass

    def chosen(self) -> Any:
        """The registered plug-in that ``name`` chooses (a :class:`drga.registry.NetworkSpec` or ``RewardSpec``), or None."""
        return (registry.find_network if self.KIND == "network" else registry.find_reward)(self.name)

    def own_settings(self) -> Any:
        """The chosen plug-in's settings dataclass, filled from this section (:meth:`drga.registry.NetworkSpec.arguments`)."""
        plugin = self.chosen()
        if plugin is None:
            raise ConfigError(f"{self.KIND}.name: '{self.name}' is not registered")
        return plugin.settings(**plugin.arguments(self))

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_") or "given" not in self.__dict__:  # copy, pickle: not a setting
            raise AttributeError(key)
        if key in self.given:
            return self.given[key]
        plugin = self.chosen()
        if plugin is not None and key in plugin.setting_names:
            return self._read(key, plugin.setting_defaults()[key])
        takes = f" (it takes: {', '.join(plugin.setting_names) or 'no settings'})" if plugin is not None else ""
        raise AttributeError(f"{self.KIND} '{self.__dict__.get('name')}' has no setting '{key}'{takes}")

    def __setattr__(self, key: str, value: Any) -> None:
        if key in self.own_fields():
            object.__setattr__(self, key, value)
        else:
            self.given[key] = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PluginSection) and type(other) is type(self) and self.to_dict() == other.to_dict()

    def setting(self, key: str, default: Any) -> Any:
        """The chosen plug-in's ``key`` where it has that setting, else ``default``: for what the toolkit reads of any plug-in
        that has it (a network's ``freeze_embeddings``; a reward's ``delta``, which defines the highlighted tokens)."""
        plugin = self.chosen()
        return getattr(self, key) if key in self.given or (plugin is not None and key in plugin.setting_names) else default

    def annotation(self, key: str) -> Any:
        """How a given value of ``key`` is read: the chosen plug-in's annotation of it, else the first registered plug-in's
        that declares it, else None (no registered plug-in has it)."""
        plugin = self.chosen()
        if plugin is not None and key in plugin.setting_names:
            return plugin.annotations()[key]
        declared = registry.plugin_setting(self.KIND, key)
        return declared[0] if declared is not None else None

    def value_of(self, key: str, default: Any) -> Any:
        """A plug-in's setting as this section gives it: the value set, else ``default`` (the plug-in's own) read as a
        set value would be, as the saved form holds it (:meth:`drga.registry.NetworkSpec.arguments`)."""
        return self.given[key] if key in self.given else self._read(key, default)

    def _read(self, key: str, value: Any) -> Any:
        """A plug-in's default as a given value of ``key`` would be read (a tuple as a list)."""
        annotation = self.annotation(key)
        try:
            return coerce_value(copy.deepcopy(value), annotation, f"{self.KIND}.{key}") if annotation is not None else value
        except ConfigError:  # a default its own annotation does not describe: as it is
            return copy.deepcopy(value)

    def to_dict(self) -> dict[str, Any]:
        """The saved form (see the class): what ``config.toml``, checkpoints and result files hold. Of a plug-in this
        program has not registered (a saved configuration read without its module), every setting given."""
        plugin = self.chosen()
        saved = {key: copy.deepcopy(getattr(self, key)) for key in self.own_fields()}
        if plugin is None:
            saved.update(copy.deepcopy(self.given))
        else:
            saved.update({key: self.value_of(key, default) for key, default in plugin.setting_defaults().items()})
        return saved


@dataclass(init=False, eq=False)
class NetworkConfig(PluginSection):
    """``[network]``: which attention network, the word vectors it starts from, and the network's own settings.

    No setting is common to every network: ``vectors`` is the toolkit's (the file it reads and hands to a network
    that takes ``embeddings``), and even ``dropout``, which every built-in network has, is a network's own choice
    (a network of your own need not have it). So a network's settings, its sizes included, are its registered
    settings dataclass's fields (by default its constructor's keyword parameters: ``drga networks`` lists them),
    and this section holds ``name``, ``vectors`` and those (:class:`PluginSection`)."""

    name: str = "lstm-sa"
    """Attention network to retrofit (see `drga networks`)."""
    vectors: str | None = None
    """Pretrained word vectors that initialise the embeddings: a short name (`drga vectors` lists them, e.g. glove-6b-50d), found like the
    data sets, or the path of a GloVe-format file (.txt or .txt.gz); random when unset. Their width must equal the network's embedding_dim.
    """
    given: dict[str, Any] = field(default_factory=dict)
    """The network settings set (``network.KEY = value`` in TOML or ``--set``; saved flat, not under this name): the chosen network's,
    and those of other networks that a shared section holds."""

    KIND = "network"


@dataclass
class AgentConfig:
    hidden_sizes: list[int] = field(default_factory=lambda: [300, 300])
    """Hidden layers of the policy MLP."""
    samples: int = 5
    """K: action samples per sequence; their mean reward is the REINFORCE baseline."""
    init_log_std: float = -3.0
    """Initial log σ of the Gaussian policy. −3 keeps an untrained agent's sampled adjustment gentle: at β0 = 0.4 and L = 20 the expected
    total-variation distance between α and α′ is ≈ 0.08 (−0.5 gave ≈ 0.45 and zeroed a third of the tokens; tests/unit/test_equations.py).
    """
    log_std_min: float = -5.0
    """Lower clamp of log σ."""
    log_std_max: float = 1.0
    """Upper clamp of log σ."""
    normalize_state: bool = True
    """LayerNorm on the state before the MLP (the state mixes α·h, which is ~1/L, with h)."""
    reward_baseline: Literal["mean-of-k", "self-critical"] = "mean-of-k"
    """REINFORCE baseline: the mean reward of the K samples (the paper), or the reward of the policy's mean action on the same encoding
    (self-critical, beyond the paper).
    """
    entropy_coef: float = 0.0
    """Weight of the policy-entropy bonus."""
    normalize_advantage: bool = True
    """Divide the advantage by its batch standard deviation."""
    lr: float = 5e-4
    """Adam learning rate of the agent (also the SB3 algorithms' learning rate)."""
    algorithm: str = "reinforce"
    """Phase 2 learner, a registered one (``drga.registry.register_learner``): REINFORCE (eqs. 6–7), stable-baselines3's PPO or A2C
    on the Gymnasium env (sb3-ppo, sb3-a2c; docs/sb3.md), or yours."""
    sb3_total_steps: int = 0
    """SB3: environment steps (tokens) of phase 2 in all; 0: REINFORCE's budget, agent_epochs × samples × training tokens."""
    sb3_n_envs: int = 4
    """SB3: environments stepped together in one DummyVecEnv."""
    sb3_n_steps: int = 0
    """SB3: steps per environment per rollout; 0: the algorithm's default (PPO 2048, A2C 5)."""
    sb3_batch_size: int = 64
    """SB3 PPO: minibatch size (capped at sb3_n_steps × sb3_n_envs)."""
    sb3_action_limit: float = 8.0
    """SB3: its action u ∈ [-1, 1] is eq. 2's pre-squash x = limit·u, so |a| ≤ 2·sigmoid(limit) − 1."""
    policy: Literal["gaussian", "binary"] = "gaussian"
    """gaussian: eq. 2's Gaussian over a pre-squash action; binary: the authors' code's choice per token, lower its weight (a = −1) or
    raise it (a = +1), with their procedure's settings below and adjust.multiplicative (docs/controls.md). REINFORCE only."""
    flipped_sampling: float = 0.0
    """binary: the share of the training samples' choices drawn from the flipped probabilities, log π read under the unflipped ones (the
    authors' code: 0.8; 0: as the policy gives them)."""
    raised_penalty: float = 0.0
    """The agent's objective also loses this × (raised tokens / real tokens)² per sample, a token being raised where its action is
    positive (the authors' code: 0.15 with a binary policy; 0: none). REINFORCE only; the reported reward is unchanged."""


@dataclass(init=False, eq=False)
class RewardConfig(PluginSection):
    """``[reward]``: which reward the agent learns from, what the toolkit adds to any reward, and the reward's own
    settings (its registered settings dataclass's fields: the paper's reward, ``drga``, has eq. 5's gamma, sqrt_l0 and
    delta; :class:`PluginSection`). ``closeness`` and ``per_dataset`` are the toolkit's: a closeness term wraps whichever
    reward is chosen (:class:`drga.core.reward.Closeness`), and a data set's tuned values are applied to the chosen
    reward's settings of those names."""

    name: str = "drga"
    """The reward the agent learns from (a registered one, docs/extending.md): drga is eq. 5's, R = log P(y|X) − γ·(N/L + L0·L/N),
    with the settings gamma (γ: the weight of the saliency penalty, 0.2), sqrt_l0 (√L0: the penalty is smallest when N = √L0·L
    highlighted tokens, 0.2) and delta (δ: the cumulative attention mass that defines the highlighted tokens, 0.85).
    """
    closeness: float = 0.0
    """Beyond the paper: the agent's reward also loses closeness × TV(α, α′), the total-variation distance between the network's attention
    and the revised one (0: the paper's eq. 5).
    """
    per_dataset: dict[str, dict[str, float]] = field(default_factory=dict)
    """Values of the chosen reward's settings for particular data sets ([reward.per_dataset.mr] in TOML; the paper's reward: sqrt_l0 and
    delta, tuned on dev by experiments/tune_reward.py); applied for the run's data set unless reward.<setting> is set itself.
    """
    given: dict[str, Any] = field(default_factory=dict)
    """The reward settings set (``reward.KEY = value``; saved flat, not under this name)."""

    KIND = "reward"


@dataclass
class AdjustConfig:
    beta0: float = 0.4
    """β0: adjustment strength at the start of co-training (eq. 3)."""
    beta_half_life_epochs: float = 5.0
    """β's schedule halves every this many co-training epochs (0: no decay)."""
    trainable_beta: bool = True
    """Learn a factor β̃ = exp(ρ) of β through the co-training task loss (eq. 12), starting at 1 and capped so that β ≤ 1."""
    multiplicative: bool = False
    """The agent's actions revise the attention as α·(1 + β·a), renormalised (the authors' code), not as eq. 3's α + β·a."""


@dataclass
class ControlConfig:
    """``[control]``: a positive control's handicap, off by default (docs/controls.md). The network's attention α becomes
    (1 − strength)·α + strength·target everywhere it is read: its own prediction, the agent's state, the adjustment and the
    reward (drga/core/degradation.py)."""

    attention: Literal["learned", "uniform", "random", "masked"] = "learned"
    """learned (no degradation); uniform (1/L on each real token) or random (a fixed peaked attention of each position and sentence
    length, unrelated to the words), mixed in at strength; masked (the network's attention with a fixed share strength of each
    sentence's positions given no weight).
    """
    strength: float = 1.0
    """uniform, random: the target's share of the attention, 0 to 1 (1: the network's own attention is not used at all); masked: the
    share of positions masked."""
    freeze_scorer: bool = False
    """The network's loss does not train its attention scorer (its attention enters detached): at strength < 1 its share stays
    what the untrained scorer gives.
    """


@dataclass
class TrainConfig:
    pretrain_epochs: int = 10
    """Phase 1: epochs of network pretraining."""
    init_from: str | None = None
    """A model checkpoint of this network on this data (another run's pretrain_best.pt, or your own network's) to start from instead of
    pretraining: pretraining is skipped and the checkpoint is reported as the pretrain-only baseline.
    """
    agent_epochs: int = 5
    """Phase 2: epochs of agent pretraining with the network frozen."""
    cotrain_epochs: int = 10
    """Phase 3: epochs of co-training network and agent."""
    fair_baseline: bool = True
    """Also train the pretrained network alone from the same checkpoint (the equal-budget baseline)."""
    baseline_epochs: int | None = None
    """Epochs of the equal-budget baseline; unset: agent_epochs + cotrain_epochs, as many as DRGA's agent and co-training phases together.
    """
    baseline_seconds: float | None = None
    """Beyond the paper: a time budget of the equal-budget baseline. It starts another epoch only while its epochs' seconds so far
    plus the last epoch's fit within this many (a time-matched baseline: as many seconds as a DRGA run's agent and co-training,
    experiments/tuned_study.py); unset: no time limit.
    """
    lr: float = 5e-4
    """Adam learning rate of the network (and β)."""
    weight_decay: float = 0.0
    """Adam weight decay of the network."""
    fused_adam: bool = True
    """Network and agent optimisers: PyTorch's fused Adam kernel (CPU and CUDA, torch ≥ 2.4; older torch falls back, saying so),
    one pass over the parameters instead of several (docs/RESULTS.md, "Throughput"). It rounds differently from the for-each
    Adam, so a run's numbers differ from one with it off in the last bits, then wherever training amplifies them.
    """
    pretrained_lr: float | None = None
    """Learning rate of the network's pretrained body (what its pretrained_parameters() returns: hf-encoder's encoder), its new parts
    (pooling, classifier) keeping lr; unset: lr for all. Warm-up, decay and plateau cuts scale both rates alike.
    """
    lr_schedule: Literal["constant", "warmup-linear"] = "constant"
    """The network's learning rate within each network-training phase: constant, or warmup-linear (linear warm-up from 0 over
    warmup_fraction of the phase's optimiser steps, then linear decay to 0 at its last step; every phase starts it again). Plateau
    cuts (plateau_lr_factor) multiply it (drga/runner/lr_schedule.py).
    """
    warmup_fraction: float = 0.1
    """warmup-linear: the fraction of a phase's optimiser steps spent warming up."""
    accumulation_steps: int = 1
    """Gradient accumulation: sum the gradients of this many consecutive batches before one optimiser step (effective batch
    data.batch_size × accumulation_steps, when that many sentences do not fit in memory at once); an epoch ends with a step.
    """
    grad_clip: float = 5.0
    """Gradient-norm clip for network and agent (0: none)."""
    patience: int = 3
    """Stop a phase after this many epochs without a better dev score (0: never)."""
    plateau_lr_factor: float = 1.0
    """Multiply the network's learning rate by this after every plateau_patience epochs without a better dev score (1: constant), for
    the rest of the phase: on top of any warm-up or decay (drga/runner/lr_schedule.py); it restarts at lr in each phase
    (unless continue_lr).
    """
    plateau_patience: int = 2
    """Epochs without a better dev score before the learning rate falls by plateau_lr_factor (again after as many more)."""
    continue_lr: bool = False
    """Beyond the paper (which trains at lr throughout): the phases after pretraining (the equal-budget baseline, co-training)
    start at the rate their starting network was selected at, lr × plateau_lr_factor ** (pretraining's plateau cuts by then,
    recorded in pretrain_best.pt), not at lr again, so that a network pretrained to a plateau is not trained on at a rate
    it had outgrown (docs/results/nmt.md). Their own plateau cuts go on from there.
    """
    select_mode: Literal["with-agent", "net-only"] = "with-agent"
    """Dev accuracy that picks the best co-training epoch."""
    original_attention_loss: float = 0.0
    """Co-training: weight of an extra task loss on the network's own attention (0 = the paper)."""
    task_loss_samples: int = 0
    """Co-training speed-up, opt-in (changes the math): the network's cross-entropy (eq. 12) back-propagates through only this many of the
    K action samples per sequence; the others' predictions run without gradient, for their rewards only (an unbiased, noisier gradient;
    0: all K).
    """
    track_examples: int = 0
    """Record the attention of this many fixed dev sentences at every evaluation (tracked_attention.json, TensorBoard images; 0: none)."""


@dataclass
class RunConfig:
    seed: int = 0
    """Seeds torch, numpy and the batch order."""
    device: str = "cpu"
    """cpu, cuda, cuda:N (or auto: cuda when available)."""
    logdir: str = "runs"
    """Parent folder of run folders (TensorBoard logs, checkpoints, results)."""
    run_name: str | None = None
    """Run folder name; default <dataset>-<net>-seed<seed>."""
    threads: int = 0
    """torch CPU threads (0: torch's default). The same seed gives the same numbers at the same thread count on the same machine (tested);
    another thread count splits the parallel sums of matrix products differently, so float rounding, and after enough steps any number,
    may differ.
    """
    progress: bool = True
    """Show progress bars."""
    report_to: list[Literal["tensorboard", "csv"]] = field(default_factory=lambda: ["tensorboard"])
    """Where a run logs its curves: tensorboard (tb/, one TensorBoard run per arm), csv (metrics.csv, one row per dev evaluation);
    several, or none ([]). Python code adds callbacks of its own (drga.runner.callbacks, retrofit(callbacks=...)).
    """
    precision: Literal["fp32", "fp16", "bf16"] = "fp32"
    """CUDA only: fp16 or bf16 runs the forward passes under autocast (mixed precision; fp16 with a gradient scaler), weights and
    optimiser in fp32. On the CPU a run stays fp32 and says so.
    """


@dataclass
class ExperimentConfig:
    data: DataConfig = field(default_factory=DataConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    adjust: AdjustConfig = field(default_factory=AdjustConfig)
    control: ControlConfig = field(default_factory=ControlConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        values = dataclasses.asdict(self)
        for section in PLUGIN_SECTIONS:  # the name, the toolkit's fields and the plug-in's settings, flat: their saved form
            values[section] = getattr(self, section).to_dict()
        for section, default in SAVED_WHEN_SET.items():  # a configuration without them saves as it did before they existed
            if getattr(self, section) == default():
                del values[section]
        for (section, key), value in FIELDS_SAVED_WHEN_SET.items():
            if values[section][key] == value:
                del values[section][key]
        return values

    def flat(self) -> dict[str, Any]:
        """``section.key`` → value, for hyperparameter tables."""
        return {f"{s}.{k}": v for s, values in self.to_dict().items() for k, v in values.items()}

    def validate(self) -> None:
        """Raise :class:`ConfigError` listing every value that is not finite or out of its range."""
        problems = [f"{key} must be a finite number, got {value}" for key, value in _numbers(self.to_dict()) if not math.isfinite(value)]
        if problems:  # a NaN passes every comparison below
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
        problems = [
            *_data_problems(self.data, self.agent),
            *_network_problems(self.network),
            *_agent_problems(self.agent),
            *_reward_problems(self.reward),
            *_adjust_problems(self.adjust),
            *(["adjust.multiplicative works with agent.algorithm = reinforce only"]
              if self.adjust.multiplicative and self.agent.algorithm != "reinforce" else []),
            *_control_problems(self.control),
            *_train_problems(self.train),
            *_run_problems(self.run),
        ]
        if problems:
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


#: Sections saved (``to_dict``, config.toml, result files) only where a setting differs from its default: those added
#: since configurations were first saved, and off by default.
SAVED_WHEN_SET: dict[str, Callable[[], Any]] = {"control": ControlConfig}
#: Settings saved only where they differ from their default (the value here), for the same reason.
FIELDS_SAVED_WHEN_SET: dict[tuple[str, str], Any] = {
    ("agent", "policy"): "gaussian", ("agent", "flipped_sampling"): 0.0, ("agent", "raised_penalty"): 0.0,
    ("adjust", "multiplicative"): False,
}


def _must_be_positive(values: dict[str, float]) -> list[str]:
    return [f"{key} must be > 0, got {value}" for key, value in values.items() if not value > 0]


def _must_be_non_negative(values: dict[str, float]) -> list[str]:
    return [f"{key} must be ≥ 0, got {value}" for key, value in values.items() if not value >= 0]


def _data_problems(data: DataConfig, agent: AgentConfig) -> list[str]:
    problems = _must_be_positive({"data.batch_size": data.batch_size, "data.max_length": data.max_length, "data.min_freq": data.min_freq})
    if not 0 <= data.agent_holdout < 0.5:
        problems.append(f"data.agent_holdout must be in [0, 0.5), got {data.agent_holdout}")
    # Only the REINFORCE learner reads the held-out batches; another learner would ignore them without a word.
    if data.agent_holdout > 0 and agent.algorithm != "reinforce":
        problems.append("data.agent_holdout works with agent.algorithm = reinforce only")
    if not 0 < data.train_fraction <= 1:
        problems.append(f"data.train_fraction must be in (0, 1], got {data.train_fraction}")
    return problems


#: The ranges of settings that networks commonly have, checked where the chosen network has one, and where a section
#: sets one for other networks (a network's own checks are its settings dataclass's and its constructor's:
#: ``drga/registry.py``).
NETWORK_SETTING_RANGES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    **{key: ("> 0", lambda value: value > 0) for key in ("embedding_dim", "hidden_size", "attention_size", "classifier_hidden")},
    "dropout": ("in [0, 1)", lambda value: 0 <= value < 1),
    "revise_layers": ("≥ 0", lambda value: value >= 0),
}


def _range_problems(section: PluginSection, ranges: dict[str, tuple[str, Callable[[Any], bool]]]) -> list[str]:
    """Each of ``ranges``' settings that the section's chosen plug-in has, or that is given, and that is out of its range."""
    chosen = section.chosen()
    names = {*(chosen.setting_names if chosen is not None else ()), *section.given}
    problems = []
    for key, (allowed, fits) in ranges.items():
        value = getattr(section, key) if key in names else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not fits(value):
            problems.append(f"{section.KIND}.{key} must be {allowed}, got {value}")
    return problems


def _network_problems(network: NetworkConfig) -> list[str]:
    return _range_problems(network, NETWORK_SETTING_RANGES)


def _agent_problems(agent: AgentConfig) -> list[str]:
    problems = _must_be_positive({"agent.lr": agent.lr}) + _must_be_non_negative({"agent.entropy_coef": agent.entropy_coef})
    if not agent.log_std_min < agent.log_std_max:
        problems.append(f"agent.log_std_min ({agent.log_std_min}) must be below agent.log_std_max ({agent.log_std_max})")
    if agent.samples < 2:
        problems.append(f"agent.samples must be ≥ 2 (the baseline is their mean), got {agent.samples}")
    if agent.sb3_n_envs < 1 or agent.sb3_total_steps < 0 or agent.sb3_n_steps < 0:
        problems.append("agent.sb3_n_envs must be ≥ 1 and agent.sb3_total_steps, agent.sb3_n_steps ≥ 0")
    if agent.sb3_batch_size < 1 or agent.sb3_action_limit <= 0:
        problems.append("agent.sb3_batch_size and agent.sb3_action_limit must be positive")
    if agent.policy not in ("gaussian", "binary"):
        problems.append(f"agent.policy must be gaussian or binary, got '{agent.policy}'")
    if not 0.0 <= agent.flipped_sampling <= 1.0:
        problems.append(f"agent.flipped_sampling must be between 0 and 1, got {agent.flipped_sampling}")
    elif agent.flipped_sampling > 0 and agent.policy != "binary":
        problems.append("agent.flipped_sampling flips a binary policy's choices: it needs agent.policy = binary")
    if not agent.raised_penalty >= 0:
        problems.append(f"agent.raised_penalty must be ≥ 0, got {agent.raised_penalty}")
    if agent.algorithm != "reinforce" and (agent.policy != "gaussian" or agent.raised_penalty > 0):
        problems.append("agent.policy = binary and agent.raised_penalty work with agent.algorithm = reinforce only")
    if registry.find_learner(agent.algorithm) is None:
        problems.append(f"agent.algorithm: unknown learner '{agent.algorithm}'; choose one of: {', '.join(registry.learner_names())}")
    return problems


#: The ranges of reward settings, checked where the chosen reward has the setting (eq. 5's, of the paper's reward).
REWARD_SETTING_RANGES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "delta": ("in (0, 1]", lambda value: 0 < value <= 1),
    "sqrt_l0": ("in (0, 1]", lambda value: 0 < value <= 1),
    "gamma": ("≥ 0", lambda value: value >= 0),
}


def _reward_problems(reward: RewardConfig) -> list[str]:
    problems = []
    for dataset, values in reward.per_dataset.items():
        for key, tuned in values.items():
            allowed, fits = REWARD_SETTING_RANGES.get(key, ("", lambda _: True))
            if isinstance(tuned, (int, float)) and not fits(tuned):
                problems.append(f"reward.per_dataset.{dataset}.{key} must be {allowed}, got {tuned}")
    problems += _range_problems(reward, REWARD_SETTING_RANGES)
    if not reward.closeness >= 0:
        problems.append(f"reward.closeness must be ≥ 0, got {reward.closeness}")
    if registry.find_reward(reward.name) is None:
        problems.append(f"reward.name: unknown reward '{reward.name}'; choose one of: {', '.join(registry.reward_names())}")
    return problems


def _adjust_problems(adjust: AdjustConfig) -> list[str]:
    problems = _must_be_non_negative({"adjust.beta_half_life_epochs": adjust.beta_half_life_epochs})
    if not 0 < adjust.beta0 <= 1:
        problems.append(f"adjust.beta0 must be in (0, 1], got {adjust.beta0}")
    return problems


#: The devices a run, an evaluation or a prediction runs on: cpu, cuda, cuda:N, or auto (cuda when there is one).
DEVICE_PATTERN = re.compile(r"cpu|cuda(:\d+)?|auto")


def _control_problems(control: ControlConfig) -> list[str]:
    problems = []
    if not 0.0 <= control.strength <= 1.0:
        problems.append(f"control.strength must be between 0 and 1, got {control.strength}")
    if control.attention not in ("learned", "uniform", "random", "masked"):
        problems.append(f"control.attention must be learned, uniform, random or masked, got '{control.attention}'")
    return problems


def device_problem(name: str, where: str = "run.device") -> str | None:
    """What is wrong with a device name (:data:`DEVICE_PATTERN`), or None: torch's own error for ``gpu``, ``CPU`` or
    ``mps`` is a traceback naming a dozen device types this toolkit does not run on."""
    if DEVICE_PATTERN.fullmatch(name):
        return None
    close = {"gpu": "cuda", "cuda0": "cuda:0"}.get(name.lower().replace(" ", ""), name.lower())
    hint = f"; did you mean '{close}'?" if close != name and DEVICE_PATTERN.fullmatch(close) else ""
    return f"{where}: '{name}' is not a device this toolkit runs on: cpu, cuda, cuda:N or auto{hint}"


def _run_problems(run: RunConfig) -> list[str]:
    problem = device_problem(run.device)
    return [problem] if problem else []


def _train_problems(train: TrainConfig) -> list[str]:
    problems = _must_be_positive({"train.lr": train.lr})
    problems += _must_be_non_negative({"train.weight_decay": train.weight_decay, "train.grad_clip": train.grad_clip})
    if not 0 < train.plateau_lr_factor <= 1:
        problems.append(f"train.plateau_lr_factor must be in (0, 1], got {train.plateau_lr_factor}")
    if train.baseline_epochs is not None and train.baseline_epochs < 0:
        problems.append("train.baseline_epochs must be ≥ 0")
    if train.baseline_seconds is not None and not train.baseline_seconds > 0:
        problems.append(f"train.baseline_seconds must be > 0, got {train.baseline_seconds}")
    if not 0 <= train.warmup_fraction < 1:
        problems.append(f"train.warmup_fraction must be in [0, 1), got {train.warmup_fraction}")
    if train.accumulation_steps < 1:
        problems.append(f"train.accumulation_steps must be ≥ 1, got {train.accumulation_steps}")
    if train.pretrained_lr is not None and not train.pretrained_lr >= 0:
        problems.append(f"train.pretrained_lr must be ≥ 0, got {train.pretrained_lr}")
    if train.plateau_patience < 1:
        problems.append(f"train.plateau_patience must be ≥ 1, got {train.plateau_patience}")
    for name in ("pretrain_epochs", "agent_epochs", "cotrain_epochs", "patience", "track_examples", "task_loss_samples"):
        if getattr(train, name) < 0:
            problems.append(f"train.{name} must be ≥ 0")
    return problems


class ConfigError(UserError, ValueError):
    """A configuration key or value the toolkit cannot use."""


def _numbers(mapping: dict[str, Any], prefix: str = "") -> list[tuple[str, float]]:
    """Every float in a nested configuration mapping, with its dotted key (lists and tables included)."""
    found = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found += _numbers(value, name + ".")
        elif isinstance(value, (list, tuple)):
            found += [(f"{name}[{i}]", float(v)) for i, v in enumerate(value) if isinstance(v, float)]
        elif isinstance(value, float):
            found.append((name, value))
    return found


def coerce_value(value: Any, annotation: Any, where: str) -> Any:
    """Check a value against a config field's type annotation, and return it in that type.

    Strings (from ``--set`` or the command line) are parsed: ``"true"``/``"false"``, numbers,
    comma-separated lists (``"16,16"`` or ``"[16, 16]"``), ``"none"`` for an optional field.
    Supports ``Literal``, ``Optional[X]``, ``list[X]``, ``bool``, ``int``, ``float`` and ``str``;
    any other annotation passes the value through. ``where`` (e.g. ``"nmt.beam_size"``) names
    the field in the :class:`ConfigError` raised for a value that does not fit.

    Used for every section of :class:`ExperimentConfig` and by other configuration modules with
    sections of their own (``drga/tasks/translation/config.py``'s ``[nmt]``).
    """
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (tuple, Sequence):  # a plug-in's setting: read as a list
        origin, args = list, args[:1] or (Any,)
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(repr, args))}")
        return value
    if type(None) in args:  # Optional[X]
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null", "")):
            return None
        inner = [a for a in args if a is not type(None)]
        return coerce_value(value, inner[0], where)
    if origin is list:
        if isinstance(value, str):
            value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
        return [coerce_value(v, args[0], where) for v in value]
    if annotation is bool:
        if isinstance(value, str):
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if annotation in (int, float, str):
        try:
            if annotation is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            return annotation(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected {annotation.__name__}, got {value!r}") from None
    return value


#: Keys renamed since a release; configs and checkpoints that use the old name still load.
RENAMED_KEYS = {"network.embeddings_path": "network.vectors"}


def set_value(config: ExperimentConfig, dotted: str, value: Any) -> None:
    """Set ``section.key`` of ``config`` to ``value``, checked and converted to the field's type."""
    _set(config, dotted, value)


#: The sections that hold a registered plug-in's settings (``drga/registry.py``; :class:`PluginSection`).
PLUGIN_SECTIONS = ("network", "reward")


def _set(config: ExperimentConfig, dotted: str, value: Any, lenient: bool = False) -> None:
    dotted = RENAMED_KEYS.get(dotted, dotted)
    if "." not in dotted:
        raise ConfigError(f"config key '{dotted}' must be section.key (sections: {', '.join(_sections())})")
    section_name, key = dotted.split(".", 1)
    if section_name not in _sections():
        raise ConfigError(f"unknown config section '{section_name}'{suggest(section_name, _sections())}")
    section = getattr(config, section_name)
    if isinstance(section, PluginSection):
        _set_plugin_setting(section, key, value, dotted, lenient)
        return
    hints = get_type_hints(type(section))
    if key in hints:
        setattr(section, key, coerce_value(value, hints[key], dotted))
        return
    raise ConfigError(f"unknown config key '{dotted}'{suggest(key, list(hints), prefix=section_name + '.')}")


def _set_plugin_setting(section: PluginSection, key: str, value: Any, dotted: str, lenient: bool) -> None:
    """``[network]`` or ``[reward]``: a field of the toolkit's own (``name``, ``vectors``, ``closeness`` ...), else a setting
    of a registered plug-in (kept in ``given``, read as ever: :meth:`PluginSection.annotation`), else an error naming the
    closest key and the chosen plug-in's settings."""
    if key in section.own_fields() and key != "given":
        setattr(section, key, coerce_value(value, get_type_hints(type(section))[key], dotted))
        return
    annotation = section.annotation(key) if key != "given" else None
    if annotation is not None:
        section.given[key] = coerce_value(value, annotation, dotted)
        return
    if lenient and key != "given":  # a saved configuration's setting of a plug-in this program has not registered: kept as it was
        section.given[key] = value
        return
    fields = [name for name in section.own_fields() if name != "given"]
    known = [*fields, *registry.plugin_settings(section.KIND)]
    chosen = section.chosen()
    takes = f" ({section.KIND} '{chosen.name}' takes: {', '.join(chosen.setting_names)})" if chosen is not None else ""
    raise ConfigError(f"unknown config key '{dotted}'{suggest(key, list(dict.fromkeys(known)), prefix=section.KIND + '.')}{takes}")


def _sections() -> list[str]:
    return [f.name for f in dataclasses.fields(ExperimentConfig)]


def section_keys(config: ExperimentConfig) -> dict[str, list[str]]:
    """Each section's keys, by section: a section's fields; for ``[network]`` and ``[reward]``, their own fields and the
    chosen plug-in's settings (where ``drga.api``'s keyword arguments are looked up)."""
    keys: dict[str, list[str]] = {}
    for name in _sections():
        section = getattr(config, name)
        if isinstance(section, PluginSection):
            chosen = section.chosen()
            own = [key for key in section.own_fields() if key != "given"]
            keys[name] = list(dict.fromkeys([*own, *(chosen.setting_names if chosen is not None else ())]))
        else:
            keys[name] = list(get_type_hints(type(section)))
    return keys


#: Names other toolkits give a setting, each → the key it is here: a misspelling of one is pointed to that key.
ALIASES = {
    "learning_rate": "lr", "batch": "batch_size", "hidden_dim": "hidden_size", "embed_dim": "embedding_dim",
    "embedding_size": "embedding_dim", "num_layers": "layers", "num_heads": "heads", "dropout_rate": "dropout",
    "max_len": "max_length", "max_seq_length": "max_length",
}
#: How many of the nearest keys an unknown key with no close match is shown.
NEAREST = 3


def suggest(word: str, options: list[str], prefix: str = "") -> str:
    """What to say after "unknown key 'word'": the close match (an alias of another toolkit's counts, see
    :data:`ALIASES`), else the :data:`NEAREST` nearest of the options, never all of them."""
    aliases = {alias: key for alias, key in ALIASES.items() if key in options}
    close = difflib.get_close_matches(word, [*options, *aliases], n=1)
    if close:
        return f"; did you mean '{prefix}{aliases.get(close[0], close[0])}'?"
    nearest = sorted(options, key=lambda option: -difflib.SequenceMatcher(None, word, option).ratio())[:NEAREST]
    return f"; the nearest of the {len(options)} known: {', '.join(prefix + option for option in nearest)}"


def apply_mapping(config: ExperimentConfig, mapping: dict[str, Any], source: str, lenient: bool = False) -> None:
    """Apply a nested ``{section: {key: value}}`` mapping (a parsed TOML file). ``lenient``: a saved
    configuration, whose settings of a plug-in this program has not registered are kept as they are."""
    for section_name, values in mapping.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: '{section_name}' must be a table like [{section_name}]")
        for key, value in values.items():
            try:
                _set(config, f"{section_name}.{key}", value, lenient)
            except ConfigError as error:
                raise ConfigError(f"{source}: {error}") from None


def network_run_defaults(name: str) -> dict[str, Any]:
    """A registered network's run defaults, ``section.key`` → value: those its registration names (``defaults=``:
    the Transformer's ``agent.samples``, hf-encoder's learning rates). Its own settings' defaults need no step
    here: ``[network]`` reads them from its settings dataclass (:class:`PluginSection`). {} for a name not registered."""
    spec = registry.find_network(name)
    return dict(spec.defaults) if spec is not None else {}


class _NetworkDefaults(Mapping[str, dict[str, Any]]):
    """Network name → its defaults (:func:`network_run_defaults`), for every registered network that has any."""

    def __getitem__(self, name: str) -> dict[str, Any]:
        found = network_run_defaults(name)
        if not found:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in registry.network_names() if network_run_defaults(name)])

    def __len__(self) -> int:
        return len(list(iter(self)))


#: Defaults of particular networks, for settings that neither the TOML file nor an override sets
#: (those always win): a view of the registrations (``defaults=`` of ``register_network``, e.g.
#: the Transformer's two action samples in ``baselines/transformer.py``).
NETWORK_DEFAULTS: Mapping[str, dict[str, Any]] = _NetworkDefaults()


def load_config(
    path: str | Path | None = None, overrides: list[str] | None = None, report: Callable[[str], None] | None = None,
    *, into: ExperimentConfig | None = None,
) -> ExperimentConfig:
    """Defaults, then the TOML file, then ``section.key=value`` overrides, then the data set's tuned
    reward values (``reward.per_dataset``) and the network's own
    defaults (``NETWORK_DEFAULTS``) for what neither set, then validation. ``report`` is told
    which network defaults were applied, and which given ``[network]`` settings the network does not take.
    ``into``: the configuration to fill instead of a fresh :class:`ExperimentConfig` (a task's own class, a
    subclass of it: docs/extending.md, "A new task"); it is returned."""
    config = into if into is not None else ExperimentConfig()
    given: set[str] = set()
    mapping: dict[str, Any] = {}
    if path is not None:
        path = resolve_config_path(path)
        try:
            mapping = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    _choose_plugins(config, mapping, overrides or [])
    if path is not None:
        apply_mapping(config, mapping, str(path))
        given |= {f"{section}.{key}" for section, values in mapping.items() for key in values}
    for item in overrides or []:
        if "=" not in item:
            raise ConfigError(f"override '{item}' must look like section.key=value")
        key, value = item.split("=", 1)
        _set(config, key.strip(), value.strip())
        given.add(key.strip())
    tuned = config.reward.per_dataset.get(config.data.dataset, {})
    reward = config.reward.chosen()
    for name, coefficient in tuned.items():
        if reward is not None and name not in reward.setting_names:
            raise ConfigError(f"reward.per_dataset.{config.data.dataset}: reward '{reward.name}' has no setting '{name}' "
                              f"(it takes: {', '.join(reward.setting_names) or 'no settings'})")
        if f"reward.{name}" not in given:
            _set(config, f"reward.{name}", coefficient)
    if into is None:  # a network that its registration gives to another task would be trained as a classifier
        owner = registry.find_network(config.network.name)
        if owner is not None and owner.task not in (None, registry.DEFAULT_TASK):
            raise ConfigError(f"network '{config.network.name}' is trained by the task '{owner.task}': load its configuration "
                              "with drga.load_config, which gives it that task's")
    apply_network_defaults(config, given, report)
    config.validate()
    return config


def _choose_plugins(config: ExperimentConfig, mapping: dict[str, Any], overrides: list[str]) -> None:
    """Set ``network.name`` and ``reward.name`` to what the file and the overrides ask for (the last word wins)
    before the other settings, so that an unknown setting's error names the chosen network's or reward's."""
    for section in PLUGIN_SECTIONS:
        table = mapping.get(section)
        name = table.get("name") if isinstance(table, dict) else None
        for item in overrides:
            key, _, value = item.partition("=")
            if key.strip() == f"{section}.name" and value.strip():
                name = value.strip()
        if isinstance(name, str):
            getattr(config, section).name = name


def requested_network(path: str | Path | None, overrides: list[str]) -> str | None:
    """The network a config file plus overrides ask for (the last word wins), or None: what says which task
    a run is (``drga/tasks/run_config.py``)."""
    name = None
    if path is not None and Path(path).is_file():
        try:
            name = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("network", {}).get("name", name)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    for item in overrides:
        if item.split("=", 1)[0].strip() == "network.name" and "=" in item:
            name = item.split("=", 1)[1].strip()
    return name


#: ``[network]`` keys that are the toolkit's, not a network's settings: :class:`NetworkConfig`'s own fields.
FRAMEWORK_NETWORK_KEYS = NetworkConfig.own_fields()


def apply_network_defaults(config: ExperimentConfig, given: set[str], report: Callable[[str], None] | None = None) -> None:
    """The network's own defaults (``NETWORK_DEFAULTS``) for the settings not in ``given`` (the same
    whether the configuration came from the command line, a TOML file or the Python API); ``report``
    is also told which given settings this run's network or data set does not read (:func:`note_unread_settings`;
    the command line refuses those of ``--set``: :func:`refuse_unread_settings`)."""
    sections = set(_sections())
    applied = {key: value for key, value in network_run_defaults(config.network.name).items()
               if key not in given and key.split(".", 1)[0] in sections}  # another task's section ([nmt]): its loader's
    for key, value in applied.items():
        _set(config, key, value)
    if report is None:
        return
    if applied:
        settings = " ".join(f"{key}={value}" for key, value in applied.items())
        report(f"{config.network.name} defaults: {settings} (set them to override)")
    note_unread_settings(config, given, report)


#: The ``[data]`` settings that only some data sets read → what they apply to, and those data sets.
DATA_SETTING_SCOPES: dict[str, tuple[str, frozenset[str]]] = {
    **{f"data.{key}": ("the tsv data set (your own label<TAB>text file or folder)", frozenset({"tsv"}))
       for key in ("tsv_path", "tsv_header", "encoding", "encoding_errors", "rare_labels")},
    "data.phrase_level": ("SST (sst, sst2)", frozenset({"sst", "sst2"})),
    **{f"data.{key}": ("documents (movie-reviews)", frozenset({"movie-reviews"})) for key in ("max_sentences", "max_sentence_length")},
}


def unread_settings(config: ExperimentConfig, keys: Iterable[str]) -> dict[str, str]:
    """Of the settings ``keys`` (``section.key``), those this configuration's data set or network does not read, each
    → what it applies to: a ``[data]`` setting of other data sets (:data:`DATA_SETTING_SCOPES`), a ``[network]``
    setting of other networks."""
    unread: dict[str, str] = {}
    spec = registry.find_network(config.network.name)
    for key in sorted(set(keys)):
        key = RENAMED_KEYS.get(key, key)
        section, _, name = key.partition(".")
        if key in DATA_SETTING_SCOPES:
            applies, datasets = DATA_SETTING_SCOPES[key]
            if config.data.dataset not in datasets:
                unread[key] = applies
        elif section == "network" and spec is not None and name not in (*spec.setting_names, *FRAMEWORK_NETWORK_KEYS):
            takers = [other.name for other in registry.network_specs() if name in other.setting_names]
            unread[key] = f"the network{'s' if len(takers) > 1 else ''} {', '.join(takers)}" if takers else "other networks"
    return unread


def refuse_unread_settings(config: ExperimentConfig, settings: Sequence[str]) -> None:
    """Refuse a setting of the command line's ``--set`` (``settings``: its ``section.key=value`` items) that this run's data
    set or network does not read (:func:`unread_settings`): given for this one run, it would be ignored without a word.
    ``drga train``, ``drga sweep`` (for each of its runs) and ``drga tune`` call it; a config file's section, which may
    serve several networks and data sets, and the Python API's settings are only noted (:func:`note_unread_settings`)."""
    given = {item.split("=", 1)[0].strip(): item.split("=", 1)[1].strip() for item in settings if "=" in item}
    unread = unread_settings(config, given)
    if not unread:
        return
    key, applies = next(iter(unread.items()))
    reader = config.data.dataset if key.startswith("data.") else config.network.name
    more = f" (and {', '.join(list(unread)[1:])})" if len(unread) > 1 else ""
    raise ConfigError(
        f"--set {key}={given.get(key, '')} applies to {applies}, and nothing here reads it{more}: this run's "
        f"{'data set' if key.startswith('data.') else 'network'} is {reader}; drop it (a --config file's section may hold the "
        "settings of several data sets and networks: there they are noted, not refused)"
    )


def note_unread_settings(config: ExperimentConfig, keys: Iterable[str], report: Callable[[str], None]) -> None:
    """Tell ``report`` which of ``keys`` (a config file's, or the Python API's) this run does not read: one section serves
    a sweep over several networks and data sets."""
    unread = unread_settings(config, keys)
    network = sorted(key for key in unread if key.startswith("network."))
    data = sorted(key for key in unread if key.startswith("data."))
    if network:
        report(f"{config.network.name} does not take {', '.join(network)} (settings of other networks): not used by this run")
    if data:
        report(f"{config.data.dataset} does not read {', '.join(data)} (settings of other data sets): not used by this run")


#: Configs that ship with the package (``drga/configs/``), found by name: ``--config demo``.
BUNDLED_CONFIGS = Path(__file__).parent / "configs"


def resolve_config_path(name_or_path: str | Path) -> Path:
    """A TOML file's path, or the bundled config of that name (``demo`` → drga/configs/demo.toml)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    bundled = BUNDLED_CONFIGS / f"{name_or_path}.toml"
    if path.suffix == "" and len(path.parts) == 1 and bundled.is_file():
        return bundled
    names = ", ".join(sorted(p.stem for p in BUNDLED_CONFIGS.glob("*.toml")))
    raise ConfigError(f"config file {path} does not exist (bundled configs, by name: {names})")


def config_from_dict(mapping: dict[str, Any]) -> ExperimentConfig:
    """A saved configuration (a checkpoint's, a result file's): every field present, a setting of a plug-in
    this program has not registered kept as it was."""
    config = ExperimentConfig()
    apply_mapping(config, mapping, "checkpoint", lenient=True)
    return config


def config_to_toml(config: ExperimentConfig) -> str:
    """The resolved configuration as TOML (saved next to every run)."""
    lines = []
    for section, values in config.to_dict().items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if value is None:
                lines.append(f"# {key} = (unset)")
            else:
                lines.append(f"{key} = {toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def toml_value(value: Any) -> str:
    """A TOML literal: tables inline, lists, and JSON's spelling of strings, numbers and booleans (TOML's too)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


#: ``drga train`` options → the setting each sets, shared by classification and translation.
COMMON_FLAGS: tuple[tuple[str, str], ...] = (
    ("dataset", "data.dataset"),
    ("net", "network.name"),
    ("seed", "run.seed"),
    ("device", "run.device"),
    ("logdir", "run.logdir"),
    ("run_name", "run.run_name"),
    ("data_dir", "data.data_dir"),
    ("agent", "agent.algorithm"),
    ("report_to", "run.report_to"),
)
#: The options only classification reads.
CLASSIFICATION_FLAGS: tuple[tuple[str, str], ...] = (("tsv", "data.tsv_path"), ("track_examples", "train.track_examples"))


def flag_overrides(args: Any, interactive: bool, extra: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """The ``section.key=value`` overrides of ``drga train``'s options: ``--set`` first, then each
    option given, then no progress bars without ``interactive`` output or with ``--no-progress``."""
    overrides = list(args.set)
    given = {item.split("=", 1)[0].strip(): item.split("=", 1)[1].strip() for item in args.set if "=" in item}
    for flag, key in COMMON_FLAGS + extra:
        value = getattr(args, flag, None)
        if value is not None:
            if key in given and given[key] != str(value):  # the option would win without a word
                raise ConfigError(f"{option_flag(flag)} {value} and --set {key}={given[key]} both set {key}: give one of them")
            overrides.append(f"{key}={value}")
    if args.no_progress or not interactive:
        overrides.append("run.progress=false")
    return overrides


def option_flag(dest: str) -> str:
    """An argparse destination's option as typed: ``track_examples`` → ``--track-examples``."""
    return "--" + dest.replace("_", "-")


def refuse_option(dest: str, applies: str, fix: str) -> ConfigError:
    """The error for an option given where nothing reads it: what it applies to and what to do (exit 2 on the command line)."""
    return ConfigError(f"{option_flag(dest)} applies to {applies}, and nothing here reads it: {fix}")


def tsv_implies_dataset(args: Any) -> None:
    """``--tsv PATH`` is the tsv data set's file: it implies ``--dataset tsv``, and beside another ``--dataset`` it is refused
    (else the file would be ignored and the other data set trained on without a word)."""
    if getattr(args, "tsv", None) is None:
        return
    named = [item.split("=", 1)[1].strip() for item in getattr(args, "set", None) or [] if item.split("=", 1)[0].strip() == "data.dataset"]
    if args.dataset is None and named and named[-1] != "tsv":  # --set data.dataset=mr beside --tsv
        raise refuse_option("tsv", "the tsv data set (your own label<TAB>text file or folder)",
                            f"drop --set data.dataset={named[-1]} to use {args.tsv} (--tsv implies --dataset tsv), or drop --tsv")
    if args.dataset not in (None, "tsv"):
        raise refuse_option(
            "tsv", "the tsv data set (your own label<TAB>text file or folder)",
            f"drop --dataset {args.dataset} to use {args.tsv} (--tsv implies --dataset tsv), or drop --tsv to use {args.dataset}",
        )
    args.dataset = "tsv"


#: What ``--data-dir`` applies to.
DATA_DIR_SCOPE = "finding a data set or word vectors by name"


def refuse_unread_data_dir(args: Any, data: DataConfig, vectors_by_name: bool = False) -> None:
    """``--data-dir`` is where a data set, or word vectors, are found by name: beside the tsv data set whose file is named
    (``--tsv``, or ``data.tsv_path``) and without vectors found by name (``vectors_by_name``), nothing reads it."""
    if getattr(args, "data_dir", None) is None or data.dataset != "tsv" or not data.tsv_path or vectors_by_name:
        return
    raise refuse_option("data_dir", f"{DATA_DIR_SCOPE}, and the tsv data set's file is named ({data.tsv_path})",
                        "the file is read from there; drop --data-dir")


#: Settings that say where a run's files are, how it shows its progress or how its data are checked, not what it computes:
#: left out of its settings fingerprint (the data's own fingerprint stands for the files they came from; train.init_from's
#: network for the pretrained checkpoint, which results record as pretrain_checksum). reward.per_dataset is a table of
#: values for several data sets: those of the run's own are applied to reward.sqrt_l0 and reward.delta, which count.
UNFINGERPRINTED = frozenset({
    "data.data_dir", "data.tsv_path", "data.rare_labels", "train.init_from", "train.track_examples", "reward.per_dataset",
    "run.logdir", "run.run_name", "run.progress", "run.report_to",
    "nmt.train_files", "nmt.dev_files", "nmt.test_files",
})


def flatten(mapping: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested configuration mapping (``to_dict()``, a results file's ``config`` block, a parsed config.toml) as
    ``section.key`` → value; tables that are values (``reward.per_dataset``) stay whole."""
    flat = {}
    for section, values in mapping.items():
        if isinstance(values, dict) and not prefix:
            flat.update({f"{section}.{key}": value for key, value in values.items()})
        else:
            flat[f"{prefix}{section}"] = values
    return flat


#: Settings added since runs began to record fingerprints, each with the value every run before it had: a setting at
#: that value is left out of the fingerprint, so that an earlier run's record still matches (reward.name: the paper's
#: reward, eq. 5, the only one before rewards were registered).
ADDED_SETTINGS: dict[str, Any] = {"reward.name": "drga"}


def fingerprinted(flat: dict[str, Any]) -> dict[str, Any]:
    """The settings of a flat configuration that shape a run's numbers (:data:`UNFINGERPRINTED` left out, and a setting of
    :data:`ADDED_SETTINGS` at its earlier value), as JSON gives them back."""
    return json.loads(json.dumps({key: value for key, value in sorted(flat.items())
                                  if key not in UNFINGERPRINTED and not (key in ADDED_SETTINGS and ADDED_SETTINGS[key] == value)}))


def data_difference(recorded: str, now: str) -> str:
    """How ``drga sweep`` and ``drga tune`` name data that changed under the same settings (their fingerprints as read)."""
    return f"data as read: fingerprint {recorded} → {now} (the files changed)"


def settings_fingerprint(flat: dict[str, Any]) -> str:
    """A short hash of :func:`fingerprinted` settings: two runs with the same one were configured alike."""
    import hashlib

    return hashlib.sha256(json.dumps(fingerprinted(flat), sort_keys=True).encode()).hexdigest()[:16]
