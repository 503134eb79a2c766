"""What a ``final`` frame says a run was refused: restricted records kept from an external model.

The egress gate refuses an external model every restricted record (``mcp.egress_restricted``);
the run goes on without them and its ``final`` frame says so (:attr:`FinalEvent.refusal
<app.core.agent.events.FinalEvent.refusal>`), so a front end can offer to ask a local model
instead without reading tool codes itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.core.agent.events import RESTRICTED_CODE, ErrorEvent
from app.core.errors import ArxiuError


def restricted_refusal() -> ErrorEvent:
    """The refusal a ``final`` frame carries when an external model was kept from restricted
    records."""
    return ErrorEvent.from_error(
        ArxiuError(
            RESTRICTED_CODE,
            "Restricted records are never sent to an external model.",
            hint="Switch to the local model to ask about them privately.",
            category="permission",
        )
    )


def run_refusal(notes: Iterable[Mapping[str, Any]], egress: str) -> ErrorEvent | None:
    """The refusal of a run on a model of ``egress`` whose tool calls were noted as ``notes``
    (the transcript's ``{tool, ok, code}`` entries): :func:`restricted_refusal` when an external
    model was refused restricted records, else ``None``."""
    if egress == "local":
        return None
    refused = any(note.get("code") == RESTRICTED_CODE for note in notes)
    return restricted_refusal() if refused else None
