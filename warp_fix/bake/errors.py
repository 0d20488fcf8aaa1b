"""Bake's one error type: the message is one line naming what is wrong; nothing was written."""


class BakeError(Exception):
    """Bad input or a refused archive: one line for the user, exit 2."""
