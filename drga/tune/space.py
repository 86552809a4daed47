"""What ``drga tune`` searches: one :class:`Dimension` per ``--search`` item.

- ``section.key=LOW:HIGH`` a range (whole numbers when both bounds are: ``network.hidden_size=64:256``),
  ``section.key=LOW:HIGH:log`` on a log scale;
- ``section.key=A,B,C`` a choice among values (``reward.delta=0.8,0.85,0.9``, ``train.select_mode=with-agent,net-only``).

Without ``--search`` the reward's coefficients are searched (:data:`REWARD_SEARCH`).

From Python a :class:`Dimension` may also be a *named choice* (:func:`named_choice`): each choice
stands for its own ``section.key=value`` settings, for what one key cannot say (a variant of the
method that sets another key than its neighbours, an agent size that is a list).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drga.config import ConfigError, ExperimentConfig, set_value
from drga.tasks.translation.config import load_translation_config

#: The default search: √L0, δ and γ of eq. 5 and β0 of eq. 3, around the paper's 0.2, 0.85, 0.2 and 0.4.
REWARD_SEARCH = ("reward.sqrt_l0=0.05:0.6", "reward.delta=0.7:0.95", "reward.gamma=0.02:1:log", "adjust.beta0=0.1:1")


@dataclass(frozen=True)
class Dimension:
    """One searched setting: a range (``low``, ``high``, ``log``) or ``choices``."""

    key: str
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    choices: tuple[Any, ...] | None = None
    #: A named choice: (choice, its ``section.key=value`` settings) for each of ``choices``; ``key`` is then a name only.
    settings: tuple[tuple[Any, tuple[str, ...]], ...] | None = None

    def overrides(self, value: Any) -> list[str]:
        """The ``section.key=value`` settings that this dimension's ``value`` stands for."""
        if self.settings is None:
            return [f"{self.key}={value}"]
        return list(dict(self.settings)[value])

    def suggest(self, trial: Any) -> Any:
        """This setting's value for an Optuna trial."""
        if self.choices is not None:
            return trial.suggest_categorical(self.key, list(self.choices))
        low, high = self.bounds()
        if isinstance(low, int) and isinstance(high, int):
            return trial.suggest_int(self.key, low, high, log=self.log)
        return trial.suggest_float(self.key, float(low), float(high), log=self.log)

    def bounds(self) -> tuple[float | int, float | int]:
        """A range's ``low`` and ``high`` (a dimension of choices has none)."""
        if self.low is None or self.high is None:
            raise ConfigError(f"{self.key}: a range needs both bounds, or the dimension choices")
        return self.low, self.high


def _number(text: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None


def parse_dimension(text: str) -> Dimension:
    """``section.key=LOW:HIGH[:log]`` or ``section.key=A,B,...``, checked against the configuration's keys and types."""
    key, _, spec = text.partition("=")
    key, spec = key.strip(), spec.strip()
    if not key or not spec:
        raise ConfigError(f"--search {text!r} must look like section.key=LOW:HIGH, section.key=LOW:HIGH:log or section.key=A,B,C")
    values: list[int | float | str]
    if ":" in spec and "," not in spec:
        parts = spec.split(":")  # two or more: spec holds a colon
        log = len(parts) == 3 and parts[2] == "log"
        low, high = _number(parts[0]), _number(parts[1])
        if len(parts) not in (2, 3) or (len(parts) == 3 and not log) or low is None or high is None:
            raise ConfigError(f"--search {text!r}: a range is LOW:HIGH or LOW:HIGH:log with numbers for LOW and HIGH")
        if isinstance(low, int) != isinstance(high, int):
            low, high = float(low), float(high)
        if not low < high or (log and low <= 0):
            raise ConfigError(f"--search {text!r}: LOW must be below HIGH{' and above 0 on a log scale' if log else ''}")
        dimension = Dimension(key, low, high, log)
        values = [low, high]
    else:
        values = [number if (number := _number(value.strip())) is not None else value.strip() for value in spec.split(",")]
        if any(value == "" for value in values) or len(set(values)) != len(values):
            raise ConfigError(f"--search {text!r}: the choices must be distinct and not empty")
        dimension = Dimension(key, choices=tuple(values))
    for value in values:  # an unknown key, or a value its setting cannot take, is refused now, not in trial 1
        if key.startswith("nmt."):  # translation's own section
            load_translation_config(None, [f"{key}={value}"])
        else:
            set_value(ExperimentConfig(), key, value)
    return dimension


def named_choice(name: str, settings: dict[str, list[str]]) -> Dimension:
    """A choice among named settings (``{"self-critical": ["agent.reward_baseline=self-critical"], ...}``), each checked now."""
    for items in settings.values():
        for item in items:
            key, _, value = item.partition("=")
            set_value(ExperimentConfig(), key.strip(), value.strip())
    if not settings or len(set(settings)) != len(settings):
        raise ConfigError(f"the named choice {name!r} needs at least one choice, each named once")
    return Dimension(name, choices=tuple(settings), settings=tuple((choice, tuple(items)) for choice, items in settings.items()))


def parse_search(items: list[str]) -> list[Dimension]:
    """The ``--search`` items (the reward's coefficients when there are none); a key given twice is refused."""
    dimensions = [parse_dimension(item) for item in (items or REWARD_SEARCH)]
    keys = [dimension.key for dimension in dimensions]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ConfigError(f"--search names {', '.join(twice)} more than once")
    return dimensions


def grid(dimensions: list[Dimension]) -> dict[str, list[Any]]:
    """The grid of ``--sampler grid``: every combination of the choices; a range has none."""
    choices = {dimension.key: dimension.choices for dimension in dimensions}
    ranges = [key for key, among in choices.items() if among is None]
    if ranges:
        raise ConfigError(f"--sampler grid needs choices (A,B,C), not ranges: {', '.join(ranges)}")
    return {key: list(among) for key, among in choices.items() if among is not None}


def overrides(params: dict[str, Any], dimensions: Sequence[Dimension] = ()) -> list[str]:
    """A trial's values as ``section.key=value`` overrides (a named choice of ``dimensions`` as its settings)."""
    named = {dimension.key: dimension for dimension in dimensions}
    return [item for key, value in params.items() for item in (named[key].overrides(value) if key in named else [f"{key}={value}"])]
