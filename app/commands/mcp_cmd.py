"""``arxiu mcp``: serve the archive's tools to an MCP client (a desktop chat app) over stdio.

The client's model is external by definition, so every call is gated as for an external model:
restricted sections and records never leave; record content leaves only with the
``external_content`` setting or ``--external-content``; write tools are not offered. stdout
carries the protocol only; the start line and logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from app.commands.cli_words import number, words
from app.commands.common import add_archive_argument, open_current, shown_archive


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` command."""
    parser = sub.add_parser(
        "mcp", help="serve the archive's tools to an MCP client over stdio (read-only)"
    )
    parser.add_argument(
        "--external-content",
        action="store_true",
        help="let the client read record content (never restricted records); without it, "
        "only the archive's structure is offered unless the external_content setting is on",
    )
    add_archive_argument(parser)
    parser.set_defaults(func=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the client closes stdin."""
    from app.api.context import base_settings
    from app.api.mcp_server import serve_stdio
    from app.api.mcp_tools import ExternalToolbox, LazyIndex
    from app.core.tools.registry import build_registry

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    settings = base_settings()
    with open_current(args) as archive:
        index = LazyIndex(archive)
        toolbox = ExternalToolbox(
            archive,
            build_registry(),
            index,
            external_content=args.external_content or settings.external_content,
            lang=settings.lang,
        )
        print(
            started_line(len(toolbox.offered()), shown_archive(archive), toolbox.external_content),
            file=sys.stderr,
            flush=True,
        )
        try:
            asyncio.run(serve_stdio(toolbox))
        finally:
            index.close()
    return 0


def started_line(tools: int, archive: str, content: bool) -> str:
    """The start line on stderr, in the CLI's language: how many read-only tools over which
    archive, and what leaves (record content, never restricted; else the structure only)."""
    w = words()
    shared = w.mcp_content if content else w.mcp_structure
    return w.mcp_started.format(count=number(tools), archive=archive, shared=shared)
