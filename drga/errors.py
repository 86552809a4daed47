"""The one base class of the errors a user can cause and fix: bad settings, data, files, checkpoints.

The command line prints such an error as one message and exits with status 2 (``--debug``
shows the traceback); any other exception is a bug and keeps its traceback. Library users can
catch :class:`UserError` to tell the two apart.
"""

__all__ = ["UserError"]


class UserError(Exception):
    """Something the user can fix: the message says what and how."""
