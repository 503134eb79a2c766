"""A real tool with a bug in it, registered in the real registry: a programming error inside a
run, as every front end meets it (the crash dialog, ``arxiu ask``'s exit code, the server's
``api.internal``)."""

from __future__ import annotations

from app.core.models.scripted import Turn, call
from app.core.tools.base import ToolContext, ToolResult, tool
from app.core.tools.registry import ToolRegistry, build_registry

BROKEN_TOOL = "dedalo_broken_count"
STREAMED = "Let me count the sections."
"""What the model streams before it calls the broken tool (the partial answer kept)."""


@tool("structure", "Count the sections")
async def dedalo_broken_count(ctx: ToolContext) -> ToolResult:
    """Count sections (broken: a bug in the tool)."""
    return ToolResult(ok=True, data={"count": len(ctx.archive.sections()) / 0})


def broken_registry() -> ToolRegistry:
    """The real registry, with the broken tool added."""
    registry = build_registry()
    registry.register(dedalo_broken_count)
    return registry


def broken_turn() -> Turn:
    """A model turn that streams :data:`STREAMED`, then calls the broken tool."""
    return Turn(text=STREAMED, tool_calls=(call(BROKEN_TOOL),))
