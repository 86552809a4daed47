"""Algorithm 1 as a table: what each phase trains, freezes, evaluates, starts from and selects by.

======== ======================== ================================ ===============================
phase    starts from              trains                           picks its best epoch by
======== ======================== ================================ ===============================
pretrain a fresh network          network, cross-entropy (eq. 12)  the dev score, net-only
baseline pretrain's best          network, cross-entropy           the dev score, net-only
agent    pretrain's best, frozen  agent (eqs. 6–7)                 the dev score, with-agent
cotrain  pretrain + agent's best  network on revised α, agent, β   the dev score in train.select_mode
======== ======================== ================================ ===============================

``baseline`` is the *equal-budget baseline*: the pretrained network trained alone for as many
more epochs as the agent and co-training phases get together, with the same selection, so that a
DRGA gain cannot be extra epochs in disguise. ``baseline`` and ``cotrain`` count their starting
point as a candidate, so both select among the same number of network-training epochs. The
order of :data:`PHASES` is the order a run takes (each phase skipped when it gets 0 epochs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass

from drga.config import TrainConfig
from drga.names import Mode, Part, PhaseName, ResultRow
from drga.records import EpochRecord, PhaseCost


@dataclass(frozen=True)
class Phase:
    name: PhaseName
    _: KW_ONLY  # a row of the table names each setting: no positional booleans
    #: What the phase trains: the network, the agent, β's learned factor (``adjust.trainable_beta``).
    trains: tuple[Part, ...]
    #: The dev evaluation modes; the first is the one that selects unless ``selects_by_config``.
    dev_modes: tuple[Mode, ...]
    #: (phase, part) whose best checkpoint the phase starts from, in order; part: network (with β) or agent.
    starts_from: tuple[tuple[PhaseName, Part], ...]
    #: Whether the starting point competes as epoch 0 for the phase's best.
    start_is_candidate: bool
    #: Whether ``train.select_mode`` (rather than the first dev mode) selects the best epoch.
    selects_by_config: bool
    #: The epochs the phase gets from the run's ``[train]`` settings.
    epochs: Callable[[TrainConfig], int]
    #: The final report's row that reads this phase's best checkpoints.
    report_label: ResultRow
    #: What the console's "loss" means in this phase.
    legend: str
    #: Whether the learning rate warms up over the phase's first steps (translation's ``nmt.warmup_steps``).
    warms_up: bool = False
    #: The phase's time budget in seconds of its epochs (None: none): no epoch starts that would, at the last one's pace, pass it.
    seconds_budget: Callable[[TrainConfig], float | None] = lambda train: None

    def out_of_time(self, train: TrainConfig, spent: float, last_epoch: float) -> bool:
        """Whether another epoch as long as the last would take the phase past its time budget (``spent`` seconds so far)."""
        budget = self.seconds_budget(train)
        return budget is not None and spent + last_epoch > budget

    @property
    def network_frozen(self) -> bool:
        return Part.NETWORK not in self.trains

    @property
    def has_agent(self) -> bool:
        """Whether the agent acts in this phase (its training steps are DRGA steps, eqs. 2–7)."""
        return Part.AGENT in self.trains

    @property
    def agent_only(self) -> bool:
        """The agent learns on a frozen network: ``agent.algorithm`` picks the learner."""
        return self.trains == (Part.AGENT,)

    def selection_mode(self, select_mode: str) -> Mode:
        return Mode(select_mode) if self.selects_by_config else self.dev_modes[0]


def _baseline_epochs(train: TrainConfig) -> int:
    if not train.fair_baseline:
        return 0
    return train.agent_epochs + train.cotrain_epochs if train.baseline_epochs is None else train.baseline_epochs


NETWORK_LOSS = "the network's cross-entropy on its own attention, eq. 12"
PHASES: tuple[Phase, ...] = (
    Phase(
        PhaseName.PRETRAIN,
        trains=(Part.NETWORK,),
        dev_modes=(Mode.NET_ONLY,),
        starts_from=(),
        start_is_candidate=False,
        selects_by_config=False,
        epochs=lambda t: 0 if t.init_from else t.pretrain_epochs,
        report_label=ResultRow.PRETRAIN_ONLY,
        legend=NETWORK_LOSS,
        warms_up=True,
    ),
    Phase(
        PhaseName.BASELINE,
        trains=(Part.NETWORK,),
        dev_modes=(Mode.NET_ONLY,),
        starts_from=((PhaseName.PRETRAIN, Part.NETWORK),),
        start_is_candidate=True,
        selects_by_config=False,
        epochs=_baseline_epochs,
        report_label=ResultRow.EQUAL_BUDGET,
        legend=NETWORK_LOSS,
        seconds_budget=lambda t: t.baseline_seconds,
    ),
    Phase(
        PhaseName.AGENT,
        trains=(Part.AGENT,),
        dev_modes=(Mode.WITH_AGENT,),
        starts_from=((PhaseName.PRETRAIN, Part.NETWORK),),
        start_is_candidate=False,
        selects_by_config=False,
        epochs=lambda t: t.agent_epochs,
        report_label=ResultRow.AGENT_ON_FROZEN,
        legend="the frozen network's cross-entropy on the revised attention, reported only",
    ),
    Phase(
        PhaseName.COTRAIN,
        trains=(Part.NETWORK, Part.AGENT, Part.BETA),
        dev_modes=(Mode.NET_ONLY, Mode.WITH_AGENT),
        starts_from=((PhaseName.PRETRAIN, Part.NETWORK), (PhaseName.AGENT, Part.AGENT)),
        start_is_candidate=True,
        selects_by_config=True,
        epochs=lambda t: t.cotrain_epochs,
        report_label=ResultRow.DRGA,
        legend="the network's cross-entropy on the revised attention, eq. 12",
    ),
)
PHASE_NAMES = tuple(phase.name for phase in PHASES)
#: A phase's name (a :class:`PhaseName` or its plain string: the enum's members are their strings) → the phase.
BY_NAME: dict[str, Phase] = {phase.name: phase for phase in PHASES}


def phase_named(name: str) -> Phase:
    if name not in BY_NAME:
        raise ValueError(f"unknown phase {name!r}; one of {PHASE_NAMES}")
    return BY_NAME[name]


def phase_epochs(train: TrainConfig, name: str) -> int:
    """Epochs of phase ``name``; the equal-budget baseline gets the agent's and co-training's
    together unless ``train.baseline_epochs`` says otherwise (0 without ``train.fair_baseline``)."""
    return phase_named(name).epochs(train)


def phase_plan(train: TrainConfig) -> list[Phase]:
    """The phases that run, in order."""
    return [phase for phase in PHASES if phase.epochs(train) > 0]


def epoch_key(phase: Phase, epoch: int) -> int:
    """The key that seeds an epoch's batch order (and its random stream under torchrun)."""
    return PHASES.index(phase) * 10_000 + epoch


def phase_summary(history: Sequence[EpochRecord], train: TrainConfig) -> dict[str, PhaseCost]:
    """Per phase that ran: epochs run of the planned cap, whether early stopping ended it, and its wall seconds."""
    epochs: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for record in history:
        epochs[record.phase] = max(epochs.get(record.phase, 0), record.epoch)
        seconds[record.phase] = round(seconds.get(record.phase, 0.0) + (record.seconds if record.seconds is not None else 0.0), 2)
    return {
        phase: PhaseCost(epochs[phase], cap, seconds[phase], stopped_early=epochs[phase] < cap)
        for phase, cap in ((phase, phase_epochs(train, phase)) for phase in epochs)
    }
