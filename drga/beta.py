"""Moved to :mod:`drga.core.beta`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.beta import *  # noqa: F403

warnings.warn("drga.beta moved to drga.core.beta; import it from there", DeprecationWarning, stacklevel=2)
