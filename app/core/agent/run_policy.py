"""What one run may do, decided once before it starts: a small frozen object held with its gate.

A run's :class:`RunPolicy` says

* its shape: *grounded* (the model cannot plan tool calls, so the loop searches on the question
  and the model answers from the hits) or a tool loop, and whether it may propose a change plan
  (write mode) — hence the tools its model is offered;
* what its model may see: every tool call passes the :class:`~app.core.agent.egress.EgressGate`
  at both ends, a failure reads as an external model may read it, the current record's note is
  withheld where gated, and earlier answers that drew on restricted records are withheld from
  an external run (their *taint*);
* what the person may see of a failure (a reader without the restricted right sees a record
  withheld for its restricted links as a missing one);
* whether the run's answer is *tainted* (it may hold text from restricted records).

The policy never changes during a run; the gate it holds keeps the one fact a run adds: whether
it touched restricted content (see :attr:`EgressGate.touched_restricted
<app.core.agent.egress.EgressGate.touched_restricted>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from app.core.agent.egress import EgressGate
from app.core.agent.egress_errors import for_model
from app.core.agent.history_entry import HistoryEntry
from app.core.agent.plans import PROPOSE_SPEC, PROPOSE_TOOL
from app.core.agent.prompts import context_block
from app.core.agent.transcript import withhold_tainted
from app.core.archive.hierarchy import has_contents
from app.core.archive.model import RecordKey
from app.core.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from app.core.agent.answer_language import Composition
    from app.core.agent.request import RecordContext
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.models.base import ToolCall, ToolSpec
    from app.core.tools.registry import ToolRegistry


def egress_gate(
    archive: Archive, egress: str, *, external_content: bool, can_read_restricted: bool
) -> EgressGate:
    """The gate for a run on a model of class ``egress``: for a reader who may not see
    restricted records it guards the run as if its model were external (record content
    allowed, restricted content never)."""
    if can_read_restricted:
        return EgressGate(archive, egress, external_content)
    return EgressGate(archive, "external", external_content or egress == "local")


@dataclass(frozen=True)
class RunPolicy:
    """What one run may do (see the module docstring).

    Attributes:
        gate: the run's egress gate (the one mutable fact: whether it touched restricted
            content).
        grounded: the model cannot plan tool calls: search on the question, answer from it.
        mode: ``write`` offers (and validates) the plan proposal tool.
        can_read_restricted: whether the person may see restricted records' failure codes.
        tainted_history: whether the conversation already drew on restricted records.
        composition: the core composes the answer (the model does not write the question's
            language, or a list question on the bundled model); ``None``: the model answers.
    """

    gate: EgressGate
    grounded: bool = False
    mode: Literal["read", "write"] = "read"
    can_read_restricted: bool = True
    tainted_history: bool = False
    composition: Composition | None = None

    @property
    def external(self) -> bool:
        """Whether the run is guarded as external (an external model, or a reader without
        the restricted right)."""
        return self.gate.external

    # -- tools -------------------------------------------------------------------------------
    def tool_specs(self, registry: ToolRegistry) -> list[ToolSpec]:
        """The tools the model is offered: structure and content, and in write mode the plan
        proposal."""
        specs = registry.specs(["structure", "content"])
        return [*specs, PROPOSE_SPEC] if self.mode == "write" else specs

    def proposes(self, call: ToolCall) -> bool:
        """Whether ``call`` is a plan proposal this run validates instead of running."""
        return call.name == PROPOSE_TOOL and self.mode == "write"

    def tool_context(
        self, archive: Archive, searcher: Searcher | None, lang: str, model_id: str
    ) -> ToolContext:
        """What the run's tools run with (an external run's tools skip restricted records)."""
        return ToolContext(
            archive=archive,
            searcher=searcher,
            lang=lang,
            model_id=model_id,
            egress="external" if self.external else "local",
            exclude_restricted=self.external,
        )

    def for_model(self, result: ToolResult) -> ToolResult:
        """``result`` as the run's model may see it: on a run guarded as external, a failure
        says nothing of restricted records or local files (see
        :mod:`app.core.agent.egress_errors`)."""
        return for_model(result) if self.external else result

    def shown_code(self, result: ToolResult) -> str | None:
        """A failure's code as the person may see it (``None`` for a success)."""
        if result.ok:
            return None
        return result.code if self.can_read_restricted else for_model(result).code

    # -- what the model is sent ----------------------------------------------------------------
    def history(self, history: Sequence[HistoryEntry]) -> tuple[list[HistoryEntry], int]:
        """The earlier history the model is sent, and how many tainted entries were withheld
        (only from a run guarded as external)."""
        if not self.external:
            return list(history), 0
        return withhold_tainted(history)

    def context_note(self, context: RecordContext | None, lang: str) -> str | None:
        """The current-record note for the user's turn (its content withheld where gated)."""
        if context is None:
            return None
        archive = self.gate.archive
        key = RecordKey(context.section_tipo, context.section_id)
        restricted = self.gate.note_context(key)
        shared = not self.external or (self.gate.external_content and not restricted)
        section = (
            archive.section(key.section_tipo) if archive.has_section(key.section_tipo) else None
        )
        return context_block(
            key.section_tipo,
            key.section_id,
            section_label=section.label(lang) if section else "",
            record_label=archive.record_label(key, lang) if shared else "",
            summary=context.summary if shared else "",
            withheld=not shared,
            contents=shared and has_contents(archive, key),
        )

    # -- the answer ----------------------------------------------------------------------------
    def tainted(self, history: Sequence[HistoryEntry]) -> bool:
        """Whether the answer may hold restricted text: a local run that touched restricted
        content, or whose input ``history`` (or conversation) already had."""
        if self.external:
            return False
        inherited = self.tainted_history or any(entry.get("tainted") for entry in history)
        return self.gate.touched_restricted or inherited
