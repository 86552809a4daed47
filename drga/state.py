"""Moved to :mod:`drga.core.state`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.state import *  # noqa: F403

warnings.warn("drga.state moved to drga.core.state; import it from there", DeprecationWarning, stacklevel=2)
