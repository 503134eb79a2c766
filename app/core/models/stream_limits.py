"""Bounds on one streamed model turn: a wall-clock limit, an idle timer and size caps.

A model server may keep a stream open forever: sending ``: ping`` comments (which reset an
ordinary read timeout), trickling text, or one line that never ends. :class:`StreamLimits` says
how far a turn may go; :class:`StreamClock` holds its deadline and idle timer (reset only by real
progress, never by keep-alives); :func:`bounded_lines` splits the response body into lines while
capping the line and the whole reply, so memory stays bounded whatever the server sends. Each
limit has its coded error: ``ai.stream_timeout``, ``ai.stream_idle``, ``ai.stream_too_large``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from app.core.errors import ModelError
from app.core.phrases import Phrase

MAX_TURN_S = 900.0
"""The longest a turn may last (15 minutes), unless the idle timeout itself is longer."""
TURN_FACTOR = 10
"""A turn may last this many idle timeouts (up to :data:`MAX_TURN_S`)."""
MAX_LINE_BYTES = 8 << 20
"""The longest server-sent line (and event) accepted: 8 MiB."""
MAX_REPLY_BYTES = 64 << 20
"""The most bytes one reply may carry: 64 MiB."""


@dataclass(frozen=True)
class StreamLimits:
    """How long and how large one streamed turn may be.

    Attributes:
        idle_s: seconds without progress (keep-alives do not count) before ``ai.stream_idle``.
        turn_s: seconds the whole turn may take, retries included (``ai.stream_timeout``).
        max_line_bytes: the longest line or event (``ai.stream_too_large``).
        max_reply_bytes: the most bytes the reply may carry (``ai.stream_too_large``).
    """

    idle_s: float
    turn_s: float
    max_line_bytes: int = MAX_LINE_BYTES
    max_reply_bytes: int = MAX_REPLY_BYTES

    @classmethod
    def for_timeout(cls, timeout_s: float) -> StreamLimits:
        """The limits of a catalog entry whose idle timeout is ``timeout_s``."""
        turn = max(timeout_s, min(MAX_TURN_S, TURN_FACTOR * timeout_s))
        return cls(idle_s=timeout_s, turn_s=turn)


class StreamClock:
    """The deadline and the idle timer of one turn (created when the turn starts)."""

    def __init__(self, limits: StreamLimits, provider: str) -> None:
        self.limits = limits
        self.provider = provider
        now = time.monotonic()
        self.deadline = now + limits.turn_s
        self.last_progress = now

    def progress(self) -> None:
        """Something real arrived: restart the idle timer (the deadline stays)."""
        self.last_progress = time.monotonic()

    def remaining(self) -> float:
        """Seconds until the first limit runs out (≤ 0: one has)."""
        return min(self.deadline, self.last_progress + self.limits.idle_s) - time.monotonic()

    def expired(self) -> ModelError:
        """The coded error of the limit that ran out."""
        if time.monotonic() >= self.deadline:
            return stream_timeout(self.provider, self.limits.turn_s)
        return stream_idle(self.provider, self.limits.idle_s)


def stream_timeout(provider: str, turn_s: float) -> ModelError:
    """``ai.stream_timeout``: the turn went past its wall-clock limit."""
    return ModelError(
        "ai.stream_timeout",
        Phrase.of(
            "The {provider} reply did not finish within {turn_s:g} s.",
            provider=provider,
            turn_s=turn_s,
        ),
        hint=Phrase.of(
            "The server may be stuck in a loop; try again, or raise timeout_s in the catalog "
            "(a turn may last {factor} times it, at most {most:g} s).",
            factor=TURN_FACTOR,
            most=MAX_TURN_S,
        ),
        details={"provider": provider, "limit_s": turn_s},
    )


def stream_idle(provider: str, idle_s: float) -> ModelError:
    """``ai.stream_idle``: nothing but keep-alives (or nothing at all) for ``idle_s``."""
    return ModelError(
        "ai.stream_idle",
        Phrase.of(
            "The {provider} server sent no reply for {idle_s:g} s (only keep-alives, if anything).",
            provider=provider,
            idle_s=idle_s,
        ),
        hint="The server may be overloaded; try again or raise timeout_s in the catalog.",
        retryable=True,
        details={"provider": provider, "limit_s": idle_s},
    )


def stream_too_large(provider: str, what: Phrase, limit: int) -> ModelError:
    """``ai.stream_too_large``: a line, an event or the whole reply passed its cap (``what``:
    ``a line``, ``an event`` or ``a reply``)."""
    return ModelError(
        "ai.stream_too_large",
        Phrase.of(
            "The {provider} server sent {what} larger than {limit:,} bytes; the reply was dropped.",
            provider=provider,
            what=what,
            limit=limit,
        ),
        hint="Check that the endpoint in the catalog is a chat completions server.",
        details={"provider": provider, "what": what.english(), "limit_bytes": limit},
    )


async def bounded_lines(
    chunks: AsyncIterator[bytes], limits: StreamLimits, provider: str
) -> AsyncIterator[str]:
    """The lines of a byte stream (UTF-8, bad bytes replaced), with the size caps enforced.

    Holds at most one line (≤ ``max_line_bytes``) plus one chunk in memory, and stops reading
    as soon as a cap is passed.

    Raises:
        ModelError: ``ai.stream_too_large``.
    """
    buffer = bytearray()
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > limits.max_reply_bytes:
            raise stream_too_large(provider, Phrase.of("a reply"), limits.max_reply_bytes)
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if end - start > limits.max_line_bytes:
                raise stream_too_large(provider, Phrase.of("a line"), limits.max_line_bytes)
            yield buffer[start:end].decode("utf-8", "replace")
            start = end + 1
        del buffer[:start]
        if len(buffer) > limits.max_line_bytes:
            raise stream_too_large(provider, Phrase.of("a line"), limits.max_line_bytes)
    if buffer:
        yield buffer.decode("utf-8", "replace")
