"""Errors caused by user input: the CLI prints them without a traceback and exits with code 2."""


class UserError(Exception):
    """Bad input from the user (a path, a name, a config value); the message says what to fix."""
