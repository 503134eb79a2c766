"""``arxiu mcp``: the archive's tools over stdio for MCP clients, with the official ``mcp`` SDK.

The server answers ``tools/list`` with the tools an external consumer may call and ``tools/call``
by running the call through :class:`~app.api.mcp_tools.ExternalToolbox` (the egress gate of an
external model, at both ends). A result is one text block holding the JSON the agent's own
model would see (``{ok, data}``), also given as structured content; a refusal or a failed call
is ``isError: true`` with ``{ok: false, error: {code, message, hint?}}``. Write tools are not
offered (see the README's "MCP server" section for why).

Nothing but the protocol goes to stdout: logs go to stderr.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from app import __version__
from app.api.mcp_tools import ExternalToolbox, result_payload

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from app.core.tools.base import Tool

log = logging.getLogger(__name__)

SERVER_NAME = "arxiu"
INSTRUCTIONS = (
    "Tools over an Arxiu archive (Dédalo-shaped: sections of records, fields by tipo). "
    "Resolve names to tipos first (dedalo_resolve, dedalo_list_sections); never guess a tipo. "
    "Cite records as Label (section_tipo/section_id). Restricted sections and records are "
    "never returned to this client, and nothing can be written through it."
)


def tool_listing(found: Tool) -> types.Tool:
    """One tool as MCP lists it: name, description, JSON schema, read-only annotations."""
    return types.Tool(
        name=found.name,
        description=found.description,
        input_schema=dict(found.parameters),
        annotations=types.ToolAnnotations(
            title=found.name,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def build_server(toolbox: ExternalToolbox) -> Server[Any]:
    """The MCP server over ``toolbox``."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_listing(t) for t in toolbox.offered()])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await toolbox.call(params.name, dict(params.arguments or {}))
        if not result.ok:
            log.info("mcp call %s refused: %s", params.name, result.code)
        text, structured = result_payload(result)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=not result.ok,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Arxiu archive",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(toolbox: ExternalToolbox) -> None:
    """Serve ``toolbox`` on stdin/stdout until the client closes the connection."""
    server = build_server(toolbox)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
