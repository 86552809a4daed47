"""Moved to :mod:`drga.runner.tensorboard`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.runner.tensorboard import *  # noqa: F403

warnings.warn("drga.monitor moved to drga.runner.tensorboard; import it from there", DeprecationWarning, stacklevel=2)
