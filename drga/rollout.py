"""Moved to :mod:`drga.core.rollout`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.rollout import *  # noqa: F403

warnings.warn("drga.rollout moved to drga.core.rollout; import it from there", DeprecationWarning, stacklevel=2)
