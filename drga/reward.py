"""Moved to :mod:`drga.core.reward`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.reward import *  # noqa: F403

warnings.warn("drga.reward moved to drga.core.reward; import it from there", DeprecationWarning, stacklevel=2)
