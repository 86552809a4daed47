"""Moved to :mod:`drga.runtime.eval_mode`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.runtime.eval_mode import *  # noqa: F403

warnings.warn("drga.eval_mode moved to drga.runtime.eval_mode; import it from there", DeprecationWarning, stacklevel=2)
