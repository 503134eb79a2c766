"""How ``arxiu`` exits: one table for every command.

``0`` done; ``2`` a known error the input caused (category ``input``: a bad argument, an
archive that does not exist); ``3`` any other known error (environment, provider,
permission, conflict, internal); ``1`` a bug (anything not an
:class:`~app.core.errors.ArxiuError`), its traceback logged; ``130`` interrupted; ``141`` the
reader of stdout went away. A known error's exit code follows from its category only, so the
core's errors carry no exit code of their own.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_BUG = 1
EXIT_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 141


def exit_code(category: str) -> int:
    """The exit code of a known error of ``category``."""
    return EXIT_INPUT if category == "input" else EXIT_ENVIRONMENT
