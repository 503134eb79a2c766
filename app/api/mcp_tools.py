"""The archive's tools as an MCP client sees them: an external consumer behind the egress gate.

Whatever model sits behind an MCP client is, for Arxiu, an *external* model: every call runs
through the :class:`~app.core.agent.egress.EgressGate` of an external run, at both ends (the
call's arguments and the result), and searches drop restricted chunks inside the index. So a
restricted section or record never leaves, whatever the client asks.

* ``structure`` tools (sections and fields) are always offered;
* ``content`` tools (records, searches) only when record content may reach external models:
  the ``external_content`` setting, or ``arxiu mcp --external-content`` for this server;
* ``write`` tools are not offered at all (see the README: a change plan needs a person to
  confirm it in Arxiu, and nothing in an MCP conversation is that confirmation);
* a failure that could tell a withheld record from a missing one (a result refused for its
  restricted links, a record that does not exist) is the one ``mcp.not_available`` error
  (:func:`app.core.agent.egress_errors.for_model`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.agent.egress import EgressGate
from app.core.agent.egress_errors import for_model
from app.core.errors import ArxiuError, ToolError
from app.core.phrases import Phrase
from app.core.tools.base import EgressClass, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import SearchFilter, SearchHit, SearchMode
    from app.core.index.opening import ArchiveIndex
    from app.core.tools.registry import ToolRegistry

MODEL_ID = "mcp-client"
MAX_RESULT_CHARS = 48_000
RESTRICTED_HINT = (
    "Restricted records are never sent to MCP clients; an archivist can read them in Arxiu "
    "with the local model."
)


class LazyIndex:
    """The archive's semantic index, opened (and brought up to date) on the first search.

    Opening the index loads the embedding models, so a client that only browses the structure
    never pays for it.
    """

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self._index: ArchiveIndex | None = None
        self._lock = threading.Lock()

    def _opened(self) -> ArchiveIndex:
        with self._lock:
            if self._index is None:
                from app.core.index.opening import open_index

                index = open_index(self.archive)
                if index.pending():
                    index.index_now()
                self._index = index
            return self._index

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
    ) -> list[SearchHit]:
        """Search the index (see :meth:`app.core.index.service.Index.search`)."""
        return self._opened().search(
            query, k=k, mode=mode, filter=filter, group_by_record=group_by_record
        )

    def close(self) -> None:
        """Close the index if it was opened."""
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None


@dataclass
class ExternalToolbox:
    """The tools an external consumer may call, each call gated as for an external model.

    Args:
        archive: the open archive.
        registry: the tool registry.
        searcher: the index for the search tools (``None``: they answer ``index.unavailable``).
        external_content: whether record content (never restricted content) may be sent.
        lang: the language of labels in results.
    """

    archive: Archive
    registry: ToolRegistry
    searcher: Any = None
    external_content: bool = False
    lang: str = "lg-eng"

    def offered(self) -> list[Tool]:
        """The tools offered: structure always, content only when content may leave."""
        classes: tuple[EgressClass, ...] = (
            ("structure", "content") if self.external_content else ("structure",)
        )
        return self.registry.tools(classes)

    async def call(self, name: str, args: dict[str, Any] | None) -> ToolResult:
        """Run one call through the gate; every refusal or failure is a coded result."""
        arguments = dict(args or {})
        offered = {t.name: t for t in self.offered()}
        found = offered.get(name)
        if found is None:
            return failed(not_offered(name, self.registry))
        gate = EgressGate(self.archive, "external", self.external_content)
        refusal = gate.check_call(found, arguments)
        if refusal is not None:
            return gate_refusal(refusal)
        result = await self.registry.call(name, arguments, self._context())
        refusal = gate.check_result(found, result)
        return gate_refusal(refusal) if refusal is not None else withheld(result)

    def _context(self) -> ToolContext:
        return ToolContext(
            archive=self.archive,
            searcher=self.searcher,
            lang=self.lang,
            model_id=MODEL_ID,
            egress="external",
            exclude_restricted=True,
        )


def not_offered(name: str, registry: ToolRegistry) -> ToolError:
    """The refusal for a tool this server does not offer (write tools, content when off)."""
    if name in registry and registry.get(name).egress == "write":
        return ToolError(
            "mcp.write_not_offered",
            Phrase.of(
                "{name} changes the archive; this server does not offer write tools.", name=name
            ),
            hint="Propose the change to an archivist, who can make it in Arxiu.",
            category="permission",
        )
    if name in registry:
        return ToolError(
            "mcp.egress_restricted",
            "Record content is not sent to external consumers from this archive.",
            hint="Start the server with `arxiu mcp --external-content` to share "
            "non-restricted record content.",
            category="permission",
            details={"tool": name},
        )
    return ToolError(
        "mcp.tool_unknown",
        Phrase.of("There is no tool called {name!r}.", name=name),
        hint="List the tools and call one of them.",
        category="input",
    )


def failed(error: ArxiuError, *, hint: str | None = None) -> ToolResult:
    """A refusal as a failed tool result (``hint`` replaces an egress refusal's hint)."""
    if hint is not None and error.code == "mcp.egress_restricted":
        return ToolResult(ok=False, code=error.code, message=error.message, hint=hint)
    return ToolResult(ok=False, code=error.code, message=error.message, hint=error.hint)


def withheld(result: ToolResult) -> ToolResult:
    """``result`` as an external consumer may see it: a failure that could tell a withheld
    record from a missing one (``archive.record_not_found``, a refused result) is the one
    ``mcp.not_available`` error, same words; failures about the call's shape and the archive's
    structure pass unchanged."""
    shown = for_model(result)
    if shown is result:
        return result
    return ToolResult(ok=False, code=shown.code, message=shown.message, hint=RESTRICTED_HINT)


def gate_refusal(error: ToolError) -> ToolResult:
    """A gate refusal as a result: a structure refusal as it is (without details), one that a
    record's links or flags decided as :func:`withheld` makes it."""
    full = ToolResult(ok=False, code=error.code, message=error.message, details=error.details)
    shown = withheld(full)
    return failed(error, hint=RESTRICTED_HINT) if shown is full else shown


def result_payload(result: ToolResult) -> tuple[str, dict[str, Any] | None]:
    """The JSON text a client receives (``{ok, data}`` or ``{ok, error}``) and, when it was not
    cut at :data:`MAX_RESULT_CHARS`, the same object as structured content."""
    payload = result.to_model_payload()
    text = json.dumps(payload, ensure_ascii=False, default=str)
    if len(text) > MAX_RESULT_CHARS:
        return text[:MAX_RESULT_CHARS] + " …[truncated]", None
    return text, json.loads(text)
