"""How ``arxiu ask`` prints a run, local or ``--server``: for a person, or as JSON events.

The answer streams to stdout; tool activity, the model line and errors go to stderr. With
``--json-events`` every event is one line ``{"event": NAME, "data": {...}}`` on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import TextIO, assert_never

from app.commands.ask_citations import citation_lines, claim_lines
from app.commands.cli_words import ENGLISH, error_lines, words
from app.commands.exits import EXIT_OK, exit_code
from app.core.agent.events import (
    ErrorEvent,
    Event,
    FinalEvent,
    IterationEvent,
    StartEvent,
    TextEvent,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
    to_wire,
)


async def print_events(
    events: AsyncIterator[Event], *, json_events: bool
) -> tuple[FinalEvent | None, int]:
    """Print a run's events as they come (seed frames or for a person): its final and exit code."""
    final: FinalEvent | None = None
    code = EXIT_OK
    async for event in events:
        if json_events:
            print(json.dumps(to_wire(event), ensure_ascii=False, default=str), flush=True)
        else:
            render(event, sys.stdout, sys.stderr)
        if isinstance(event, FinalEvent):
            final = event
        if isinstance(event, ErrorEvent):
            code = exit_code(event.category)
    return final, code


COMPOSED_NOTE = ENGLISH.composed
"""What a person reads under an answer the core composed (see ``FinalEvent.composed``), in
English; printed in the CLI's language (:mod:`app.commands.cli_words`)."""


def render(event: Event, out: TextIO, err: TextIO) -> None:
    """Print one event for a person: the answer on ``out``, everything else on ``err``."""
    match event:
        case StartEvent():
            w = words()
            badge = w.egress_local if event.egress == "local" else w.egress_external
            mode = w.mode_write if event.mode == "write" else w.mode_read
            print(f"[{event.model} · {badge} · {mode}]", file=err, flush=True)
        case ThinkingEvent():
            if event.state == "start":
                print(words().thinking, file=err, flush=True)
        case TextEvent():
            out.write(event.delta)
            out.flush()
        case ToolUseEvent():
            print(f"\n→ {event.summary}", file=err, flush=True)
        case ToolResultEvent():
            said = "ok" if event.ok else words().tool_refused.format(code=event.code)
            print(f"  {said}", file=err, flush=True)
        case IterationEvent():
            pass
        case FinalEvent():
            out.write("\n")
            out.flush()
            if event.composed:
                print(words().composed, file=err, flush=True)
            for line in [
                *citation_lines(event.citations),
                *claim_lines(event.answer, event.claims),
            ]:
                print(line, file=err, flush=True)
        case ErrorEvent():  # its code's label in the CLI's language, as a raised error's
            print("\n" + "\n".join(error_lines(event)), file=err, flush=True)
        case _:
            assert_never(event)
