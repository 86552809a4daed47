"""Moved to :mod:`drga.core.scoring`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.core.scoring import *  # noqa: F403

warnings.warn("drga.scoring moved to drga.core.scoring; import it from there", DeprecationWarning, stacklevel=2)
