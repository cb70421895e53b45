"""Errors the CLI prints as one line, without a traceback: a user mistake exits with code 2, a service that does not
answer with 69 (``EX_UNAVAILABLE`` of sysexits), so that a script can retry an outage and not a bad config."""


class UserError(Exception):
    """Bad input from the user (a path, a name, a config value); the message says what to fix."""

    #: The CLI's exit status for this error.
    exit_code = 2


class ServiceUnavailable(UserError):
    """A service the command needs does not answer (an MLflow tracking server or registry, a Ray cluster's address):
    nothing listens, the connection times out, or its name does not resolve. The address itself was well formed (a
    malformed one is a plain :class:`UserError`); the message says which service and what to check."""

    exit_code = 69
