"""Subcommands of the ``arxiu`` CLI, one module per family."""

from __future__ import annotations

import argparse
from types import ModuleType
from typing import Protocol

from app.commands import (
    archive_cmd,
    ask_cmd,
    export_cmd,
    import_cmd,
    index_cmd,
    mcp_cmd,
    models_cmd,
    records_cmd,
    search_cmd,
    serve_cmd,
    users_cmd,
)


class CommandModule(Protocol):
    """A module that adds its subcommands to the parser."""

    def register(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


COMMAND_MODULES: list[ModuleType] = [
    archive_cmd,
    records_cmd,
    import_cmd,
    export_cmd,
    index_cmd,
    search_cmd,
    models_cmd,
    ask_cmd,
    serve_cmd,
    users_cmd,
    mcp_cmd,
]
"""Every registered command module; each defines ``register(sub)``."""
