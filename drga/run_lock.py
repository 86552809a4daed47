"""Moved to :mod:`drga.runtime.run_lock`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.runtime.run_lock import *  # noqa: F403

warnings.warn("drga.run_lock moved to drga.runtime.run_lock; import it from there", DeprecationWarning, stacklevel=2)
