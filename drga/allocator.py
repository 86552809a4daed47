"""Moved to :mod:`drga.runtime.allocator`: this earlier path re-exports its public names, with a ``DeprecationWarning``."""

import warnings

from drga.runtime.allocator import *  # noqa: F403

warnings.warn("drga.allocator moved to drga.runtime.allocator; import it from there", DeprecationWarning, stacklevel=2)
