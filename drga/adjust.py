"""Moved to :mod:`drga.core.adjust`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.adjust import *  # noqa: F403

warnings.warn("drga.adjust moved to drga.core.adjust; import it from there", DeprecationWarning, stacklevel=2)
