"""Errors that are the user's to fix (bad configuration, a conflicting load, an incompatible schema):
the CLI prints their message without a traceback and exits 1."""


class UserError(RuntimeError):
    pass
