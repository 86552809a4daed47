"""The optimiser step (:class:`OptimiserStep`): which parameters each phase part trains and with which optimiser,
Adam, gradient clipping, accumulation, mixed precision, β's schedule, and the network's parameter groups with
their base learning rates (``drga/runner/lr_schedule.py`` schedules them)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from drga.baselines.protocol import AttentionNetwork
from drga.checkpoint_format import CheckpointPayload
from drga.config import ExperimentConfig
from drga.core.beta import AdjustmentStrength
from drga.names import Part, modules_by_part
from drga.runner.lr_schedule import LearningRateSchedule
from drga.runtime import distributed


def clip_gradients(params: Iterable[nn.Parameter], grad_clip: float) -> Tensor:
    """Clip the gradient norm of the parameters that have a gradient (``grad_clip`` 0: no clipping);
    the norm before clipping (0 when none has a gradient)."""
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return torch.zeros(())
    return nn.utils.clip_grad_norm_(with_grad, grad_clip if grad_clip > 0 else float("inf"))


def adam(params: list[Any], lr: float, fused: bool, log: Callable[[str], None] | None = None, **options: Any) -> torch.optim.Adam:
    """Adam over ``params`` (parameters or parameter groups); with ``fused`` its fused kernel where this
    torch has one for their device, else the for-each Adam, saying why through ``log``."""
    if fused:
        try:
            return torch.optim.Adam(params, lr=lr, fused=True, **options)
        except (RuntimeError, TypeError) as error:  # a torch without the fused kernel for this device
            if log is not None:
                log(f"train.fused_adam: {error}; using the for-each Adam")
    return torch.optim.Adam(params, lr=lr, **options)


def network_parameter_groups(network: AttentionNetwork, params: Sequence[nn.Parameter], pretrained_lr: float | None) -> list[Any]:
    """The network optimiser's parameters: ``params`` as they are (one group at the optimiser's lr), or with
    ``pretrained_lr`` set two groups, the network's pretrained body (``pretrained_parameters()``) at that rate
    and the rest at the optimiser's lr. A network without a pretrained body gets one group."""
    body = {id(p) for p in network.pretrained_parameters()} if pretrained_lr is not None else set()
    if not body:
        return list(params)
    pretrained = [p for p in params if id(p) in body]
    new = [p for p in params if id(p) not in body]
    return [group for group in ({"params": pretrained, "lr": pretrained_lr}, {"params": new}) if group["params"]]



def mixed_precision(precision: str, device: torch.device, log: Callable[[str], None]) -> torch.dtype | None:
    """The autocast dtype of ``run.precision`` on ``device``; None (fp32) on the CPU, which says so."""
    if precision == "fp32":
        return None
    if device.type != "cuda":
        log(f"run.precision={precision} applies on CUDA only: this {device.type} run stays fp32")
        return None
    return torch.float16 if precision == "fp16" else torch.bfloat16


OptimiserGroup = tuple[torch.optim.Optimizer, Iterable[nn.Parameter]]
#: The order in which the parts' losses are summed and their optimisers stepped.
STEP_ORDER = (Part.NETWORK, Part.AGENT)


class OptimiserStep:
    """Every phase's optimiser step: what each part of the phase trains, backward (under torchrun through DDP),
    the accumulation window, clipping, the network's learning-rate schedule, the Adam steps, β's schedule, and
    mixed precision.

    The loop starts a phase (:meth:`start_phase`: what trains, the optimisers), marks its epochs and batches
    (:meth:`start_epoch`, :meth:`start_batch`) and its plateaus, and it alone steps (:meth:`step`) the losses a
    learner's ``training_step`` returns, keyed by the phase part each trains (``drga/learners/``). Learners never
    see it: they return losses, they do not step."""

    def __init__(self, config: ExperimentConfig, device: torch.device, log: Callable[[str], None]):
        self.config, self.device, self.log = config, device, log
        self.autocast_dtype = mixed_precision(config.run.precision, device, log)
        # fp16 needs its loss scaled (small gradients underflow); bf16 has fp32's exponent range.
        self.scaler = torch.amp.GradScaler("cuda") if self.autocast_dtype == torch.float16 else None
        self.accumulated = 0  #: batches whose gradients the current accumulation window holds
        self.closing_window = True  #: whether the batch being trained ends its window (the epoch's last batch does)
        self.window_norms: list[Tensor] = []  #: the gradient norms of the last optimiser step, reported inside a window
        #: the one optimiser table: each part the phase's learner steps → its optimiser and the modules whose parameters it clips
        self.parts: dict[Part, tuple[torch.optim.Optimizer, tuple[nn.Module, ...]]] = {}
        self.strength: AdjustmentStrength | None = None  #: β, whose schedule advances with each network update of a phase that trains it
        self.lr_schedule: LearningRateSchedule | None = None  #: the network optimiser's learning rates in the current phase
        self.replica: nn.Module | None = None  #: under torchrun: DDP over the modules the phase trains
        self.train_batches: Any = None  #: under torchrun: this process's shards; the ``share`` of the current batch scales its loss

    @property
    def network_optimizer(self) -> torch.optim.Optimizer | None:
        """The network part's optimiser in the current phase (None: the phase's learner steps no network)."""
        entry = self.parts.get(Part.NETWORK)
        return None if entry is None else entry[0]

    @property
    def agent_optimizer(self) -> torch.optim.Optimizer | None:
        """The agent part's optimiser in the current phase (None: no agent, or one its learner trains itself: SB3's)."""
        entry = self.parts.get(Part.AGENT)
        return None if entry is None else entry[0]

    # ------------------------------------------------------------------ a phase, an epoch, a batch

    def start_phase(self, trains: tuple[Part, ...], network: AttentionNetwork, policy: nn.Module, strength: AdjustmentStrength,
                    warmup_steps: int, train_batches: Any, plateau_cuts: int = 0, stepped: tuple[Part, ...] | None = None) -> None:
        """A phase that trains ``trains`` begins: what trains is set (``requires_grad``; ``network.freeze_embeddings``,
        ``adjust.trainable_beta``) and each part its learner steps here (``stepped``, default every part of ``trains``;
        SB3's learner steps none: it has its own optimiser) gets its optimiser. The network part: Adam over the
        network's trainable parameters, and β's learned factor where the phase trains β, in their groups
        (:func:`network_parameter_groups`) with their schedule (starting ``plateau_cuts`` down); the agent part:
        Adam over the agent's. Under torchrun, DDP over what the phase trains, and ``train_batches``: this
        process's shards of the training batches."""
        config, train = self.config, self.config.train
        network_frozen = Part.NETWORK not in trains
        network.requires_grad_(not network_frozen)
        embedding = network.word_embedding()  # every classifier's (baselines/common.py)
        if config.network.setting("freeze_embeddings", False) and embedding is not None:
            embedding.weight.requires_grad_(False)
        strength.log_factor.requires_grad_(Part.BETA in trains and config.adjust.trainable_beta)
        stepped = trains if stepped is None else stepped
        by_part: dict[Part, nn.Module] = modules_by_part(network, policy, strength)
        network_part = tuple(module for part, module in by_part.items() if part in trains and part != Part.AGENT)
        trainable = [p for module in network_part for p in module.parameters() if p.requires_grad]
        groups = None if network_frozen or Part.NETWORK not in stepped else \
            network_parameter_groups(network, trainable, train.pretrained_lr)
        # after requires_grad is set: DDP takes part in the parameters that train
        self.replica = distributed.replicate([module for part, module in by_part.items() if part in trains], self.device)
        self.train_batches = train_batches
        self.parts = {}
        self.lr_schedule = None
        if groups is not None:
            optimizer = adam(groups, train.lr, train.fused_adam, self.log, weight_decay=train.weight_decay)
            self.parts[Part.NETWORK] = (optimizer, network_part)
            self.lr_schedule = LearningRateSchedule.for_phase(optimizer, train, warmup_steps, plateau_cuts)
        if Part.AGENT in trains and Part.AGENT in stepped:
            self.parts[Part.AGENT] = (adam(list(policy.parameters()), config.agent.lr, train.fused_adam, self.log), (policy,))
        self.strength = strength if Part.BETA in trains else None

    def start_epoch(self, epoch: int, epochs: int, batches: int) -> None:
        """Epoch ``epoch`` of ``epochs``, of ``batches`` batches each, begins: a new window, the schedule's position."""
        windows = math.ceil(batches / self.config.train.accumulation_steps)
        self.accumulated = 0
        if self.lr_schedule is not None:
            self.lr_schedule.start_epoch((epoch - 1) * windows, epochs * windows)

    def start_batch(self, closes_window: bool) -> None:
        """The next batch; ``closes_window``: it is the epoch's last, which ends its window whatever its length."""
        self.closing_window = closes_window

    @property
    def plateau_cuts(self) -> int | None:
        """The network's plateau cuts so far in this phase (None: the network does not train in it)."""
        return None if self.lr_schedule is None else self.lr_schedule.plateau_cuts

    def cut_on_plateau(self) -> None:
        """A plateau of the dev score: the network's rates cut (``train.plateau_lr_factor``)."""
        if self.lr_schedule is not None:
            self.lr_schedule.cut_on_plateau()

    def state_dict(self) -> dict[str, Any]:
        """What ``last.pt`` keeps of the phase's optimisers and the network's learning-rate schedule."""
        return {
            "net_optimizer": self.network_optimizer.state_dict() if self.network_optimizer else None,
            "agent_optimizer": self.agent_optimizer.state_dict() if self.agent_optimizer else None,
            "lr_schedule": self.lr_schedule.state_dict() if self.lr_schedule else None,
        }

    def load_state_dict(self, payload: Mapping[str, Any]) -> None:
        """The optimiser states and the network's learning-rate schedule saved in ``last.pt``, for the phase being resumed."""
        saved = CheckpointPayload.of(payload)
        if self.network_optimizer is not None and saved.network_optimizer_state is not None:
            self.network_optimizer.load_state_dict(saved.network_optimizer_state)
            if self.lr_schedule is not None:
                self.lr_schedule.load_state_dict(saved.lr_schedule_state)
        if self.agent_optimizer is not None and saved.agent_optimizer_state is not None:
            self.agent_optimizer.load_state_dict(saved.agent_optimizer_state)

    # ------------------------------------------------------------------ precision

    @contextlib.contextmanager
    def autocast(self) -> Iterator[None]:
        """The forward passes under ``run.precision``'s autocast on CUDA; nothing changes in fp32."""
        if self.autocast_dtype is None:
            yield
            return
        with torch.autocast(self.device.type, dtype=self.autocast_dtype):
            yield

    # ------------------------------------------------------------------ the step

    def step(self, losses: Mapping[Part, Tensor]) -> dict[Part, Tensor]:
        """One update of the parts ``losses`` names, each loss keyed by the part it trains (:meth:`start_phase` made
        each part's optimiser): their sum back-propagated in one pass, each part clipped on its own and stepped,
        network before agent (:meth:`step_groups`); then, where the network's loss trains β too (co-training),
        β's schedule advances one step. Each part's gradient norm before clipping."""
        if not losses:
            raise ValueError("the optimiser step needs the loss of at least one part")
        for part in losses:
            if part not in self.parts:
                raise RuntimeError(f"a loss of the {part} was handed to the optimiser step, but this phase trains no {part}")
        parts = [part for part in STEP_ORDER if part in losses]
        loss = losses[parts[0]]
        for part in parts[1:]:
            loss = loss + losses[part]
        norms = self.step_groups(loss, [(self.parts[part][0], self.part_parameters(part)) for part in parts])
        if self.strength is not None and Part.NETWORK in losses:
            self.strength.advance()
        return dict(zip(parts, norms))

    def part_parameters(self, part: Part) -> list[nn.Parameter]:
        """The parameters ``part`` clips: every parameter of its modules (those without a gradient are skipped)."""
        return [p for module in self.parts[part][1] for p in module.parameters()]

    def step_groups(self, loss: Tensor, groups: Sequence[OptimiserGroup]) -> list[Tensor]:
        """Back-propagate ``loss`` into every optimiser's parameters; at the end of an accumulation window
        (``train.accumulation_steps`` batches, or the epoch's last batch) clip each group to ``train.grad_clip``,
        set the network's learning rates (``drga/runner/lr_schedule.py``) and step the optimisers in order. Returns each group's
        gradient norm before clipping; inside a window, those of the step before (0 before the first)."""
        accumulation = self.config.train.accumulation_steps
        if self.accumulated == 0:
            for optimizer, _ in groups:
                optimizer.zero_grad(set_to_none=True)
        if accumulation > 1:
            loss = loss / accumulation  # the window's gradient is the mean over its batches
        if self.scaler is not None:
            loss = self.scaler.scale(loss)
        with torch.autocast(self.device.type, enabled=False) if self.autocast_dtype is not None else contextlib.nullcontext():
            share = getattr(self.train_batches, "share", 1.0)  # of the global batch being trained (a shard's varies)
            distributed.ddp_loss(self.replica, loss, share).backward()  # under torchrun DDP all-reduces the gradients
        self.accumulated += 1
        if self.accumulated < accumulation and not self.closing_window:
            fits = len(self.window_norms) == len(groups)  # a step of this kind of update before, in this phase
            return self.window_norms if fits else [torch.zeros((), device=self.device) for _ in groups]
        self.accumulated = 0
        norms = []
        for optimizer, params in groups:
            if self.scaler is not None:
                self.scaler.unscale_(optimizer)
            norms.append(clip_gradients(params, self.config.train.grad_clip))
        if self.lr_schedule is not None:
            self.lr_schedule.advance()
        for optimizer, _ in groups:
            if self.scaler is not None:
                self.scaler.step(optimizer)  # skipped when the scaled gradients overflowed
            else:
                optimizer.step()
        if self.scaler is not None:
            self.scaler.update()
        self.window_norms = norms
        return norms
