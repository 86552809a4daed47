"""Moved to :mod:`drga.core.building` (the policy and β) and :mod:`drga.runtime.device` (the seeds and the device):
this earlier path re-exports their public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.building import *  # noqa: F403
from drga.runtime.device import *  # noqa: F403

warnings.warn(
    "drga.building moved to drga.core.building and drga.runtime.device (seed_everything, resolve_device); import them from there",
    DeprecationWarning,
    stacklevel=2,
)
