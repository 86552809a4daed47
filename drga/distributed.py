"""Moved to :mod:`drga.runtime.distributed`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.runtime.distributed import *  # noqa: F403

warnings.warn("drga.distributed moved to drga.runtime.distributed; import it from there", DeprecationWarning, stacklevel=2)
