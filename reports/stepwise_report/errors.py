"""The one error type the command line turns into exit status 2 (bad input or bad usage)."""


class InputError(Exception):
    """Bad input: the message names the problem and, where there are any, the valid choices."""
