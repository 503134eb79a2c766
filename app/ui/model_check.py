"""Settings → Models → Test: stream a short reply from one model and report tokens per second.

The reply goes through the session's own model objects (the same ones a chat uses), streamed
on the loop the session's runs use (the ``arxiu-agent`` thread's,
:data:`~app.core.agent.run_thread.RUNS`), never on the GUI thread's, so a test that passes means
the assistant can use the model, and the dialog stays responsive while it streams; a failure
shows the coded error and its hint.
"""

from __future__ import annotations

import time
from typing import Any

from app.core.agent.run_thread import RUNS
from app.core.errors import ArxiuError
from app.core.models.base import Message, StreamOptions
from app.ui.services import Services

PROMPT = "Reply with one short sentence: what is an archive?"
MAX_TOKENS = 32


async def check_model(services: Services, model_id: str) -> tuple[bool, str]:
    """Stream a short reply from ``model_id``; ``(ok, sentence to show)``."""
    started = time.perf_counter()
    try:
        session = await services.session()
        catalog = session.catalog
        if isinstance(catalog, ArxiuError):
            raise catalog
        model = session.model(catalog.get(model_id))
        text, tokens = await RUNS.call(_reply(model))
    except ArxiuError as error:
        return False, f"{error.code}: {error.message} {error.hint or ''}".strip()
    seconds = max(time.perf_counter() - started, 1e-6)
    sample = " ".join(text.split())[:120]
    return True, f"{tokens / seconds:.1f} tokens/s · {sample!r}"


async def _reply(model: Any) -> tuple[str, int]:
    parts: list[str] = []
    tokens = 0
    options = StreamOptions(max_tokens=MAX_TOKENS, temperature=0.0)
    async for event in model.stream([Message("user", PROMPT)], [], options):
        if event.kind == "text":
            parts.append(event.text)
        elif event.kind == "usage":
            tokens = event.output_tokens
    return "".join(parts), tokens or len(parts)
