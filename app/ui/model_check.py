"""Settings → Models → Test: stream a short reply from one model and report tokens per second.

The reply goes through the session's own model objects (the same ones a chat uses), streamed
on the loop the session's runs use (the ``arxiu-agent`` thread's,
:data:`~app.core.agent.run_thread.RUNS`), never on the GUI thread's, so a test that passes means
the assistant can use the model, and the dialog stays responsive while it streams; a failure
shows the coded error and its hint.

The figure is the model's own speed: tokens over the time from its first token to its last
(loading the model and reading the prompt are reported apart, as the wait for the first
token). A reply with no text is a failure that says how the stream ended, never
"0.0 tokens/s · ''"; a model that only thought within the test's budget says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from app.core.agent.run_thread import RUNS
from app.core.errors import ArxiuError
from app.core.models.base import Message, StreamOptions
from app.ui.i18n import error_text, tr
from app.ui.services import Services

PROMPT = "Reply with one short sentence: what is an archive?"
MAX_TOKENS = 32
SAMPLE_CHARS = 120
MIN_SPAN_S = 0.05
"""Tokens that came closer together than this (one burst from a server) are timed from the
call, not from the first token: a few milliseconds between them is no figure of speed."""


@dataclass(frozen=True)
class Reply:
    """What a test's stream gave: its text, its thinking, its token count and its times."""

    text: str
    thinking: str
    tokens: int
    first_s: float | None
    """Seconds from the call to the first token (``None``: no token came)."""
    stream_s: float
    """Seconds from the first token to the end of the stream (from the call when the reply
    came in one burst: there is no span between its tokens to time)."""
    stop: str


async def check_model(services: Services, model_id: str) -> tuple[bool, str]:
    """Stream a short reply from ``model_id``; ``(ok, sentence to show)``."""
    try:
        session = await services.session()
        catalog = session.catalog
        if isinstance(catalog, ArxiuError):
            raise catalog
        model = session.model(catalog.get(model_id))
        reply = await RUNS.call(_reply(model))
    except ArxiuError as error:
        return False, f"{error.code}: {error_text(error)}"
    return report(reply)


def report(reply: Reply) -> tuple[bool, str]:
    """``(ok, sentence)`` for a test's reply: its speed and a sample, or why it failed."""
    if not reply.text and not reply.thinking:
        return False, tr("The model answered nothing (the stream ended: {stop}).").format(
            stop=reply.stop
        )
    rate = reply.tokens / reply.stream_s if reply.stream_s > 0 else 0.0
    figure = tr("{rate:.1f} tokens/s ({n} tokens; first after {first:.1f} s)").format(
        rate=rate, n=reply.tokens, first=reply.first_s or 0.0
    )
    if not reply.text:
        thought = " ".join(reply.thinking.split())[:SAMPLE_CHARS]
        return True, figure + " · " + tr("only thinking so far: {text!r}").format(text=thought)
    sample = " ".join(reply.text.split())[:SAMPLE_CHARS]
    return True, f"{figure} · {sample!r}"


async def _reply(model: Any) -> Reply:
    text: list[str] = []
    thinking: list[str] = []
    usage, deltas, stop = 0, 0, "end_turn"
    options = StreamOptions(max_tokens=MAX_TOKENS, temperature=0.0)
    started = time.perf_counter()
    first: float | None = None
    async for event in model.stream([Message("user", PROMPT)], [], options):
        if event.kind in ("text", "thinking_delta") and event.text:
            first = time.perf_counter() if first is None else first
            deltas += 1
            (text if event.kind == "text" else thinking).append(event.text)
        elif event.kind == "usage":
            usage = event.output_tokens
        elif event.kind == "stop":
            stop = event.reason
    ended = time.perf_counter()
    timed_from = first if first is not None and ended - first >= MIN_SPAN_S else started
    return Reply(
        text="".join(text),
        thinking="".join(thinking),
        tokens=usage or deltas,
        first_s=None if first is None else first - started,
        stream_s=ended - timed_from,
        stop=stop,
    )
